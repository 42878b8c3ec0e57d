"""The complementarity-aware backward (explore_contact_modes): a ball resting on the ground, a loss that
wants it higher (Nimble's BALL_ON_FIXED_GROUND). The solved mode (clamping) gives no gradient to the
force that would lift it; the loss-driven mode (separating) does."""

import numpy as np
import pytest

import rigidiff as rd

DT = 1e-3


def ball_on_ground(mass=1.0):
    world = rd.World(dt=DT)
    ground = rd.Skeleton("ground")
    ground.add_body("ground", joint=rd.FixedJoint("weld")).add_shape(rd.Plane(), friction=0.5)
    world.add_skeleton(ground)
    sk = rd.Skeleton("ball")
    body = sk.add_body("ball", joint=rd.PrismaticJoint("z", axis=(0.0, 0.0, 1.0)),
                       inertia=rd.Inertia.from_shape(rd.Sphere(0.5), mass=mass))
    body.add_shape(rd.Sphere(0.5), friction=0.5)
    world.add_skeleton(sk)
    q = np.array([0.5 - 1e-6])  # resting
    return world, q, np.zeros(1), np.zeros(1)


def test_resting_ball_is_a_saddle_without_exploration_and_lifts_with_it():
    world, q, v, tau = ball_on_ground(mass=2.0)
    gq = np.array([-0.1])  # dL/dq_next: the loss falls as the ball rises
    plain = world.step_vjp(q, v, tau, gq, np.zeros(1))
    assert world.last_contacts().row_classes[0] == "clamping"
    assert plain.tau[0] == 0.0 and plain.v[0] == 0.0
    explored = world.step_vjp(q, v, tau, gq, np.zeros(1), explore_contact_modes=True)
    # the free ball: q' = q + dt (v + dt tau / m)
    assert explored.tau[0] == pytest.approx(-0.1 * DT**2 / 2.0, rel=1e-9)
    assert explored.v[0] == pytest.approx(-0.1 * DT, rel=1e-9)
    assert explored.q[0] == pytest.approx(-0.1, rel=1e-9)
    assert explored.q_next == pytest.approx(plain.q_next)  # the step itself is unchanged


def test_exploration_keeps_the_solved_mode_when_the_loss_pushes_into_the_ground():
    world, q, v, tau = ball_on_ground()
    gq = np.array([0.1])  # the loss falls as the ball sinks: the contact must stay clamping
    plain = world.step_vjp(q, v, tau, gq, np.zeros(1))
    explored = world.step_vjp(q, v, tau, gq, np.zeros(1), explore_contact_modes=True)
    np.testing.assert_array_equal(explored.tau, plain.tau)
    np.testing.assert_array_equal(explored.v, plain.v)


def test_rollout_backward_explores_every_step():
    """Two resting steps and a loss on the final height: with exploration the gradient reaches the first
    torque (dt^2 through the free motion) and v0 (2 dt); without it both are blocked."""
    world, q, v, _ = ball_on_ground()
    taus = np.zeros((2, 1))
    traj = world.rollout(q, v, taus, record=True)
    assert traj.constrained_steps == [0, 1]
    GQ = np.zeros((3, 1))
    GQ[-1] = -0.1
    plain = traj.backward(GQ)
    explored = traj.backward(GQ, explore_contact_modes=True)
    assert np.all(plain.tau == 0.0) and plain.v[0] == 0.0
    assert explored.v[0] == pytest.approx(-0.2 * DT, rel=1e-9)
    assert explored.tau[0, 0] == pytest.approx(-0.1 * 2 * DT**2, rel=1e-9)
    assert explored.tau[1, 0] == pytest.approx(-0.1 * DT**2, rel=1e-9)
