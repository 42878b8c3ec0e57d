"""Passive terms of World.step: implicit joint damping and springs, armature, effort limits.

The step (cpp/include/rigidiff/world/step.hpp):
    tau_c = clip(tau, +-effort_limit)
    (M + dt D + dt^2 K) (v' - v) = dt (tau_c - b(q, v) - D v - K (d + dt v) + J^T f),  d = difference(rest, q)
    q' = integrate(q, dt v')
"""

import numpy as np
import pytest
from rdsupport import assert_close, world_of

import rigidiff as rd


def slider(mass=2.0, gravity=(0.0, 0.0, 0.0), dt=1e-3, **joint_kwargs):
    """One body on a prismatic joint along x."""
    sk = rd.Skeleton("slider")
    sk.add_body("cart", joint=rd.PrismaticJoint("x", axis=(1.0, 0.0, 0.0), **joint_kwargs),
                inertia=rd.Inertia(mass, rotational_inertia=np.diag([0.01, 0.01, 0.01])))
    return world_of(sk, dt=dt, gravity=gravity)


def test_damping_follows_the_implicit_closed_form():
    """No gravity, no spring: v' = v m / (m + dt d) each step, so v_n = v0 (m / (m + dt d))^n."""
    m, d, dt = 2.0, 3.0, 1e-3
    world = slider(m, dt=dt, damping=d)
    steps = 3000
    Q, V = world.rollout(np.array([0.2]), np.array([1.5]), np.zeros((steps, 1)))
    n = np.arange(steps + 1)
    v_expected = 1.5 * (m / (m + dt * d)) ** n
    np.testing.assert_allclose(V[:, 0], v_expected, rtol=1e-12)
    np.testing.assert_allclose(Q[1:, 0], 0.2 + dt * np.cumsum(v_expected[1:]), rtol=1e-12)
    # the continuous solution v0 exp(-d t / m) is matched to first order in dt
    np.testing.assert_allclose(V[:, 0], 1.5 * np.exp(-d * n * dt / m), rtol=5e-3)


def test_gravity_across_the_axis_does_not_move_a_horizontal_slider():
    world = slider(gravity=(0.0, 0.0, -9.81), damping=3.0)
    q, v = world.step(np.array([0.0]), np.array([0.0]), np.array([0.0]))
    assert q[0] == 0.0 and v[0] == 0.0


def test_huge_damping_is_stable():
    """Implicit damping: even with dt d / m = 1e4 the velocity decays monotonically without changing
    sign (explicit damping would flip and blow up)."""
    world = slider(1.0, damping=1e7)
    _, V = world.rollout(np.zeros(1), np.array([3.0]), np.zeros((50, 1)))
    assert np.all(V[:, 0] >= 0.0) and np.all(np.diff(V[:, 0]) <= 0.0)
    assert V[1, 0] == pytest.approx(3.0 / (1.0 + 1e-3 * 1e7), rel=1e-12)


def test_damped_pendulum_logarithmic_decrement():
    """Small oscillations of a damped pendulum: each period multiplies the amplitude by exp(-d T / (2 I))."""
    L, m, d = 1.0, 1.0, 0.05
    sk = rd.Skeleton("pendulum")
    sk.add_body("bob", joint=rd.RevoluteJoint("hinge", axis=(0.0, 1.0, 0.0), damping=d),
                inertia=rd.Inertia(m, com=(0.0, 0.0, -L)))
    world = world_of(sk)
    steps = 10_000
    Q, _ = world.rollout(np.array([0.02]), np.zeros(1), np.zeros((steps, 1)))
    theta = Q[:, 0]
    peaks = [i for i in range(1, steps) if theta[i - 1] < theta[i] >= theta[i + 1] and theta[i] > 0]
    assert len(peaks) >= 4
    I = m * L**2
    omega_d = np.sqrt(9.81 / L - (d / (2 * I)) ** 2)
    ratios = theta[peaks[1:]] / theta[peaks[:-1]]
    np.testing.assert_allclose(ratios, np.exp(-d / (2 * I) * 2 * np.pi / omega_d), rtol=1e-2)
    undamped, _ = world_of(pendulum_without_damping(L, m)).rollout(np.array([0.02]), np.zeros(1),
                                                                   np.zeros((steps, 1)))
    assert np.abs(undamped[-2000:, 0]).max() > 1.15 * np.abs(theta[-2000:]).max()  # damping did act


def pendulum_without_damping(L, m):
    sk = rd.Skeleton("pendulum")
    sk.add_body("bob", joint=rd.RevoluteJoint("hinge", axis=(0.0, 1.0, 0.0)), inertia=rd.Inertia(m, com=(0, 0, -L)))
    return sk


def test_spring_period():
    """A prismatic spring oscillates about its rest position with period 2 pi sqrt(m / k)."""
    m, k, rest = 1.5, 60.0, 0.3
    world = slider(m, stiffness=k, rest_position=rest)
    steps = 5000
    Q, V = world.rollout(np.array([rest + 0.1]), np.zeros(1), np.zeros((steps, 1)))
    x = Q[:, 0] - rest
    t = np.arange(steps + 1) * world.dt
    up = np.nonzero((x[:-1] < 0) & (x[1:] >= 0))[0]
    crossings = t[up] - x[up] * world.dt / (x[up + 1] - x[up])
    assert len(crossings) >= 3
    assert np.mean(np.diff(crossings)) == pytest.approx(2 * np.pi * np.sqrt(m / k), rel=1e-2)
    assert abs(np.mean(x)) < 0.01  # it oscillates about the rest position
    assert np.abs(x).max() == pytest.approx(0.1, rel=2e-2)  # implicit springs lose a little energy only


def test_stiff_spring_is_stable():
    world = slider(0.1, stiffness=1e9)
    Q, V = world.rollout(np.array([0.5]), np.zeros(1), np.zeros((200, 1)))
    assert np.all(np.isfinite(Q)) and np.abs(Q[-1, 0]) < 0.5


def test_armature_adds_to_the_mass_matrix_diagonal():
    def arm(armature):
        sk = rd.Skeleton("arm")
        b = sk.add_body("l1", joint=rd.RevoluteJoint("j1", axis=(0, 0, 1), armature=armature[0]),
                        inertia=rd.Inertia(1.0, (0.3, 0.0, 0.0), np.diag([0.01, 0.02, 0.02])))
        b = sk.add_body("l2", joint=rd.PrismaticJoint("j2", axis=(1, 0, 0), armature=armature[1]), parent=b,
                        joint_origin=rd.Transform((0.5, 0.0, 0.0)),
                        inertia=rd.Inertia(0.5, (0.1, 0.0, 0.0), np.diag([0.01, 0.01, 0.01])))
        sk.add_body("l3", joint=rd.BallJoint("j3", armature=armature[2:5]), parent=b,
                    joint_origin=rd.Transform((0.2, 0.0, 0.0)),
                    inertia=rd.Inertia(0.3, (0.0, 0.0, -0.1), np.diag([0.002, 0.003, 0.004])))
        return world_of(sk)

    armature = np.array([0.5, 0.25, 0.1, 0.2, 0.3])
    w0, w1 = arm(np.zeros(5)), arm(armature)
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, v, a, tau = w0.random_configuration(rng), rng.normal(size=5), rng.normal(size=5), rng.normal(size=5)
        assert_close(w1.mass_matrix(q), w0.mass_matrix(q) + np.diag(armature), 1e-12, what="M")
        assert_close(w1.inverse_dynamics(q, v, a), w0.inverse_dynamics(q, v, a) + armature * a, 1e-12, what="ID")
        assert_close(w1.forward_dynamics(q, v, tau), np.linalg.solve(w1.mass_matrix(q), tau - w1.bias_forces(q, v)),
                     1e-10, what="FD")
        assert_close(w1.mass_matrix_inverse(q), np.linalg.inv(w1.mass_matrix(q)), 1e-10, what="Minv")
        assert w1.kinetic_energy(q, v) == pytest.approx(0.5 * v @ w1.mass_matrix(q) @ v, rel=1e-12)
        assert_close(w1.step(q, v, tau)[1], v + w1.dt * w1.forward_dynamics(q, v, tau), 1e-12, what="step")


def test_effort_limits_clip_tau_in_step():
    sk = rd.Skeleton("arm")
    b = sk.add_body("l1", joint=rd.RevoluteJoint("j1", axis=(0, 1, 0), effort_limit=2.0),
                    inertia=rd.Inertia(1.0, (0.0, 0.0, -0.3), np.diag([0.01, 0.01, 0.01])))
    sk.add_body("l2", joint=rd.RevoluteJoint("j2", axis=(0, 1, 0), effort_limit=0.5), parent=b,
                joint_origin=rd.Transform((0, 0, -0.5)), inertia=rd.Inertia(0.5, (0, 0, -0.2), np.diag([0.01] * 3)))
    sk.add_body("l3", joint=rd.RevoluteJoint("j3", axis=(0, 1, 0)), parent="l2",  # unlimited
                joint_origin=rd.Transform((0, 0, -0.4)), inertia=rd.Inertia(0.3, (0, 0, -0.1), np.diag([0.01] * 3)))
    world = world_of(sk)
    q, v = np.array([0.3, -0.2, 0.1]), np.array([0.5, 0.1, -0.4])
    tau = np.array([10.0, -3.0, 0.7])
    clipped = np.array([2.0, -0.5, 0.7])
    for x, y in zip(world.step(q, v, tau), world.step(q, v, clipped)):
        np.testing.assert_array_equal(x, y)
    unclipped = v + world.dt * world.forward_dynamics(q, v, tau)
    assert np.abs(world.step(q, v, tau)[1] - unclipped).max() > 0.1  # clipping changed the step
    # within the limits nothing is clipped; the third joint has no limit at all
    inside = np.array([1.9, -0.4, 1e6])
    np.testing.assert_array_equal(world.step(q, v, inside)[1], v + world.dt * world.forward_dynamics(q, v, inside))
    # rollout and step_batch clip the same way
    Q, V = world.rollout(q, v, tau[None])
    np.testing.assert_array_equal(V[1], world.step(q, v, clipped)[1])
    Qb, Vb = world.step_batch(q[None], v[None], tau[None])
    np.testing.assert_array_equal(Vb[0], world.step(q, v, clipped)[1])
    # forward_dynamics itself is the rigid-body map: it does not clip
    a = world.forward_dynamics(q, v, tau)
    assert_close(world.inverse_dynamics(q, v, a), tau, 1e-10, what="FD unclipped")


def test_step_matches_its_formula_with_every_passive_term():
    """A chain with revolute, prismatic and ball joints, all with damping, springs (rest positions away
    from neutral), armature and effort limits: step() equals the documented formula evaluated here."""
    sk = rd.Skeleton("passive")
    b = sk.add_body("a", joint=rd.RevoluteJoint("r", axis=(0, 1, 0), damping=0.7, stiffness=5.0, rest_position=0.4,
                                                armature=0.05, effort_limit=3.0),
                    inertia=rd.Inertia(1.0, (0.0, 0.0, -0.3), np.diag([0.02, 0.02, 0.01])))
    b = sk.add_body("b", joint=rd.PrismaticJoint("p", axis=(0, 0, 1), damping=2.0, stiffness=40.0, rest_position=-0.1),
                    parent=b, joint_origin=rd.Transform((0, 0, -0.5)),
                    inertia=rd.Inertia(0.8, (0.05, 0.0, -0.1), np.diag([0.01, 0.01, 0.01])))
    rest_quat = rd.Transform(rpy=(0.3, -0.2, 0.5)).quaternion
    sk.add_body("c", joint=rd.BallJoint("s", damping=[0.1, 0.2, 0.3], stiffness=[1.0, 2.0, 3.0],
                                        rest_position=rest_quat),
                parent=b, joint_origin=rd.Transform((0.1, 0, -0.2)),
                inertia=rd.Inertia(0.5, (0.0, 0.1, -0.1), np.diag([0.004, 0.005, 0.006])))
    world = world_of(sk, dt=2e-3)
    D = np.diag([0.7, 2.0, 0.1, 0.2, 0.3])
    K = np.diag([5.0, 40.0, 1.0, 2.0, 3.0])
    limit = np.array([3.0, np.inf, np.inf, np.inf, np.inf])
    rest = np.array([0.4, -0.1, *rest_quat])
    dt = world.dt
    rng = np.random.default_rng(2)
    for _ in range(10):
        q, v, tau = world.random_configuration(rng), rng.normal(size=5), rng.normal(scale=5.0, size=5)
        F = rng.normal(size=(world.nbodies, 6))
        d = world.difference(rest, q)
        tau_c = np.clip(tau, -limit, limit)
        JtF = sum(world.body_jacobian(q, i, "world").T @ F[i] for i in range(world.nbodies))
        A = world.mass_matrix(q) + dt * D + dt**2 * K
        rhs = dt * (tau_c - world.bias_forces(q, v) - D @ v - K @ (d + dt * v) + JtF)
        v_expected = v + np.linalg.solve(A, rhs)
        q1, v1 = world.step(q, v, tau, F)
        assert_close(v1, v_expected, 1e-10, what="v'")
        assert_close(q1, world.integrate(q, dt * v1), 1e-12, what="q'")
        # the passive terms matter: they change the result
        assert np.abs(v1 - (v + dt * world.forward_dynamics(q, v, tau, F))).max() > 1e-4
