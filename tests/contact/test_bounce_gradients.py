"""The continuous-time bounce correction of the position Jacobians (docs/contact.md): bounces are
differentiated as if they happened at their time of impact, so the gradients of trajectories through
elastic impacts are those of the physical motion, for body-body impacts and in any units."""

import numpy as np
import pytest

import rigidiff as rd


def two_balls(e=1.0, dt=1e-3):
    """Two equal balls on the x axis, no gravity, restitution e."""
    world = rd.World(dt=dt, gravity=(0.0, 0.0, 0.0))
    for name in ("left", "right"):
        sk = rd.Skeleton(name)
        body = sk.add_body(name, joint=rd.PrismaticJoint("x", axis=(1.0, 0.0, 0.0)),
                           inertia=rd.Inertia.from_shape(rd.Sphere(0.1), mass=1.0))
        body.add_shape(rd.Sphere(0.1), friction=0.0, restitution=e)
        world.add_skeleton(sk)
    return world


def test_two_equal_balls_exchange_their_sensitivities():
    """Ball 1 at x1 = 0 moving at 1 m/s hits ball 2 at x2 = 0.5 moving at 0.2 m/s; e = 1 exchanges the
    velocities. After T = 1 s, x2(T) = x1 + 2r + v1 T, so d x2(T) / d(x1, x2, v1, v2) = (1, 0, T, 0)
    (Nimble issue #97 reports (0.75, 0.25, 0.91, 0.08)); the discrete step alone gives (0, 1, ., .)."""
    world = two_balls()
    T = 1000
    q0, v0 = np.array([0.0, 0.5]), np.array([1.0, 0.2])
    traj = world.rollout(q0, v0, np.zeros((T, 2)), record=True)
    assert len(traj.constrained_steps) == 1
    np.testing.assert_allclose(traj.v[-1], [0.2, 1.0], atol=1e-9)
    GQ = np.zeros((T + 1, 2))
    GQ[-1] = [0.0, 1.0]
    g = traj.backward(GQ)
    np.testing.assert_allclose(np.concatenate([g.q, g.v]), [1.0, 0.0, 1.0, 0.0], atol=1e-9)
    # the same for ball 1, which leaves with ball 2's velocity: x1(T) = x2 - 2r + v2 T
    GQ[-1] = [1.0, 0.0]
    g = traj.backward(GQ)
    np.testing.assert_allclose(np.concatenate([g.q, g.v]), [0.0, 1.0, 0.0, 1.0], atol=1e-9)
    world.contact_options(bounce_correction=False)
    g = world.rollout(q0, v0, np.zeros((T, 2)), record=True).backward(GQ)
    assert abs(g.q[0]) > 0.5  # the discrete derivative misses the impact time (it gives 1)


@pytest.mark.parametrize("arm", [0.5, 2.0])
@pytest.mark.parametrize("e", [1.0, 0.5])
def test_a_lever_bounce_is_minus_e_in_any_units(arm, e):
    """A ball on a lever of length `arm` (a revolute joint) hits the ground: the angle after the
    bouncing step responds to the angle before by -e and to the angular velocity by -e dt, whatever the
    lever's length (the correction uses the time of impact, not the Jacobian's scale)."""
    world = rd.World(dt=1e-3, gravity=(0.0, 0.0, 0.0))
    ground = rd.Skeleton("ground")
    ground.add_body("ground", joint=rd.FixedJoint("weld")).add_shape(rd.Plane(), friction=0.0, restitution=e)
    world.add_skeleton(ground)
    sk = rd.Skeleton("lever")
    body = sk.add_body("lever", joint=rd.RevoluteJoint("hinge", axis=(0.0, 1.0, 0.0)),
                       joint_origin=rd.Transform(translation=(0.0, 0.0, 0.2)),
                       inertia=rd.Inertia(mass=1.0, com=(arm, 0.0, 0.0), rotational_inertia=np.eye(3) * 1e-3))
    body.add_shape(rd.Sphere(0.1), origin=rd.Transform(translation=(arm, 0.0, 0.0)), friction=0.0, restitution=e)
    world.add_skeleton(sk)
    theta = np.arcsin(0.1 / arm) + 1e-5  # the ball 1e-5 rad past touching (the lever turns down for theta > 0)
    q, v = np.array([theta]), np.array([1.0 / arm])
    jac = world.step_jacobians(q, v, np.zeros(1))
    assert jac.contacts.row_classes == ["clamping"]
    assert jac.v_next[0] == pytest.approx(-e / arm, rel=1e-6)
    assert jac.dq_dq[0, 0] == pytest.approx(-e, rel=1e-3)
    assert jac.dq_dv[0, 0] == pytest.approx(-e * world.dt, rel=1e-3)
