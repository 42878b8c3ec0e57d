"""Reverse mode: step_vjp against the transposed step Jacobians, recorded rollouts against finite
differences of the whole rollout, and the coordinate form of configuration gradients."""

import numpy as np
import pytest
from rdsupport import (
    ROBOTS,
    TREE,
    assert_close,
    build_skeleton,
    robot_world,
    tree_world,
    with_passive_terms,
    world_of,
)


def random_state(world, rng, scale=0.5):
    q = world.random_configuration(rng)
    v, tau = scale * rng.normal(size=(2, world.nv))
    return q, v, tau


# ---------------------------------------------------------------------------------------------- one step
def check_vjp_is_transposed_jacobian(world, rng):
    q, v, tau = random_state(world, rng)
    gq, gv = rng.normal(size=(2, world.nv))
    J = world.step_jacobians(q, v, tau, wrt="all")
    g = world.step_vjp(q, v, tau, gq, gv, wrt="all")
    cot = np.concatenate([gq, gv])
    ref = J.A.T @ cot
    assert_close(np.concatenate([g.q, g.v]), ref, rtol=1e-10, floor=1.0, what="state")
    assert_close(g.tau, J.B.T @ cot, rtol=1e-10, floor=1.0, what="tau")
    assert_close(g.parameters, J.P.T @ cot, rtol=1e-10, floor=1.0, what="parameters")
    assert g.parameter_names == J.parameter_names
    np.testing.assert_array_equal(g.q_next, J.q_next)
    np.testing.assert_array_equal(g.v_next, J.v_next)
    assert np.abs(g.q).max() > 1e-6 and np.abs(g.parameters).max() > 1e-6


@pytest.mark.parametrize("robot", [r[0] for r in ROBOTS])
def test_step_vjp_equals_transposed_jacobians_on_robots(robot, robots_dir):
    world = with_passive_terms(robot_world(robots_dir, robot), seed=1)
    check_vjp_is_transposed_jacobian(world, np.random.default_rng(7))


@pytest.mark.parametrize("seed,dt", [(0, 1e-3), (3, 2e-2)])
def test_step_vjp_equals_transposed_jacobians_on_every_joint_type(seed, dt):
    check_vjp_is_transposed_jacobian(tree_world(seed, dt), np.random.default_rng(seed))


def test_step_vjp_with_effort_limits_zeroes_clipped_torques():
    sk = build_skeleton(TREE, 0)
    for body in sk.bodies:
        body.joint.effort_limit[:] = 0.3
    world = world_of(sk)
    rng = np.random.default_rng(0)
    q, v, _ = random_state(world, rng)
    tau = np.where(np.arange(world.nv) % 2 == 0, 1.0, 0.1)
    g = world.step_vjp(q, v, tau, *rng.normal(size=(2, world.nv)))
    assert np.all(g.tau[::2] == 0.0) and np.all(g.tau[1::2] != 0.0)


def test_step_vjp_in_coordinates_matches_finite_differences():
    world = tree_world(2)
    rng = np.random.default_rng(2)
    q, v, tau = random_state(world, rng)
    cq, cv = rng.normal(size=world.nq), rng.normal(size=world.nv)

    def loss(qc):
        qn, vn = world.step(world.normalize(qc), v, tau)
        return cq @ qn + cv @ vn

    g = world.step_vjp(q, v, tau, cq, cv, coordinates=True)
    assert g.q.shape == (world.nq,)
    h = 1e-6
    fd = np.array([(loss(q + h * e) - loss(q - h * e)) / (2 * h) for e in np.eye(world.nq)])
    assert_close(g.q, fd, rtol=1e-6, floor=1.0, what="coordinate gradient")


def test_step_vjp_bad_input():
    world = tree_world()
    q, v, tau = random_state(world, np.random.default_rng(0))
    with pytest.raises(ValueError, match="dL_dq_next must have shape"):
        world.step_vjp(q, v, tau, np.zeros(world.nq), np.zeros(world.nv))
    with pytest.raises(ValueError, match=r"dL_dv_next\[0\] is not finite"):
        world.step_vjp(q, v, tau, np.zeros(world.nv), np.full(world.nv, np.nan))
    with pytest.raises(ValueError, match="no parameter named"):
        world.step_vjp(q, v, tau, np.zeros(world.nv), np.zeros(world.nv), wrt="nothing")


# ---------------------------------------------------------------------------------------------- rollouts
def rollout_loss(world, CQ, CV):
    def loss(q0, v0, taus):
        Q, V = world.rollout(q0, v0, taus)
        return np.sum(CQ * Q) + np.sum(CV * V)
    return loss


def check_rollout_gradient(world, q0, v0, taus, rng, n_tau=12, h=1e-6, rtol=1e-6):
    T = taus.shape[0]
    CQ, CV = rng.normal(size=(T + 1, world.nq)), rng.normal(size=(T + 1, world.nv))
    loss = rollout_loss(world, CQ, CV)
    traj = world.rollout(q0, v0, taus, record=True)
    assert len(traj) == T and traj.q.shape == (T + 1, world.nq)
    g = traj.backward(CQ, CV, wrt=["gravity", "damping", world.parameters().names[0]], coordinates=True)

    def central(f, x, idx):
        xp, xm = x.copy(), x.copy()
        xp[idx] += h
        xm[idx] -= h
        return (f(xp) - f(xm)) / (2 * h)

    fd_q = np.array([central(lambda x: loss(world.normalize(x), v0, taus), q0, i) for i in range(world.nq)])
    fd_v = np.array([central(lambda x: loss(q0, x, taus), v0, i) for i in range(world.nv)])
    assert_close(g.q, fd_q, rtol=rtol, floor=1.0, what="q0")
    assert_close(g.v, fd_v, rtol=rtol, floor=1.0, what="v0")
    entries = [(rng.integers(T), rng.integers(world.nv)) for _ in range(n_tau)]
    fd_t = np.array([central(lambda x: loss(q0, v0, x), taus, e) for e in entries])
    assert_close(np.array([g.tau[e] for e in entries]), fd_t, rtol=rtol, floor=np.abs(g.tau).max(), what="tau")
    p0 = world.parameters()
    fd_p = []
    for name in g.parameter_names:
        vals = []
        for s in (1, -1):
            world.set_parameters({name: p0[name] + s * h})
            vals.append(loss(q0, v0, taus))
        world.set_parameters(p0.values)
        fd_p.append((vals[0] - vals[1]) / (2 * h))
    assert_close(g.parameters, np.array(fd_p), rtol=rtol, floor=1.0, what="parameters")
    return g


@pytest.mark.parametrize("robot", ["panda", "solo12"])
def test_100_step_rollout_gradient_matches_finite_differences(robot, robots_dir):
    world = with_passive_terms(robot_world(robots_dir, robot), seed=3)
    rng = np.random.default_rng(8)
    q0, v0, _ = random_state(world, rng, 0.3)
    taus = 0.3 * rng.normal(size=(100, world.nv))
    check_rollout_gradient(world, q0, v0, taus, rng)


def test_rollout_gradient_on_every_joint_type():
    world = tree_world(4, dt=5e-3)
    rng = np.random.default_rng(4)
    q0, v0, _ = random_state(world, rng, 0.3)
    check_rollout_gradient(world, q0, v0, 0.3 * rng.normal(size=(100, world.nv)), rng)


def test_rollout_backward_chains_step_vjps():
    world = tree_world(5)
    rng = np.random.default_rng(5)
    q0, v0, _ = random_state(world, rng)
    T = 20
    taus = rng.normal(size=(T, world.nv))
    GQ, GV = rng.normal(size=(2, T + 1, world.nv))
    traj = world.rollout(q0, v0, taus, record=True)
    g = traj.backward(GQ, GV, wrt="all")
    gq, gv, gp = GQ[T], GV[T], 0.0
    gtau = np.zeros((T, world.nv))
    for t in reversed(range(T)):
        s = world.step_vjp(traj.q[t], traj.v[t], taus[t], gq, gv, wrt="all")
        gq, gv, gp = s.q + GQ[t], s.v + GV[t], gp + s.parameters
        gtau[t] = s.tau
    assert_close(g.q, gq, rtol=1e-10, floor=1.0)
    assert_close(g.v, gv, rtol=1e-10, floor=1.0)
    assert_close(g.tau, gtau, rtol=1e-10, floor=1.0)
    assert_close(g.parameters, gp, rtol=1e-10, floor=1.0)


def test_rollout_backward_edge_cases_and_errors():
    world = tree_world(6)
    rng = np.random.default_rng(6)
    q0, v0, _ = random_state(world, rng)
    traj = world.rollout(q0, v0, np.zeros((0, world.nv)), record=True)
    GQ, GV = rng.normal(size=(2, 1, world.nv))
    g = traj.backward(GQ, GV)
    np.testing.assert_array_equal(g.q, GQ[0])
    np.testing.assert_array_equal(g.v, GV[0])
    assert g.tau.shape == (0, world.nv)

    traj = world.rollout(q0, v0, rng.normal(size=(5, world.nv)), record=True)
    g = traj.backward(dL_dV=np.ones((6, world.nv)))  # dL_dQ omitted: zeros
    assert g.tau.shape == (5, world.nv) and np.abs(g.tau).max() > 0
    with pytest.raises(ValueError, match=r"dL_dQ must have shape \(6, "):
        traj.backward(np.zeros((5, world.nv)))
    world.set_parameters({"tip/mass": 3.0})
    with pytest.raises(RuntimeError, match="does not follow from step"):
        traj.backward(dL_dV=np.ones((6, world.nv)))
    world.dt = 2e-3
    with pytest.raises(RuntimeError, match="dt changed"):
        traj.backward(dL_dV=np.ones((6, world.nv)))


def test_rollout_without_record_is_unchanged():
    world = tree_world(7)
    rng = np.random.default_rng(7)
    q0, v0, _ = random_state(world, rng)
    taus = rng.normal(size=(10, world.nv))
    Q, V = world.rollout(q0, v0, taus)
    traj = world.rollout(q0, v0, taus, record=True)
    np.testing.assert_array_equal(traj.q, Q)
    np.testing.assert_array_equal(traj.v, V)
    np.testing.assert_array_equal(traj.tau, taus)


def test_talos_reverse_pass_runs(robots_dir):
    world = robot_world(robots_dir, "talos")
    rng = np.random.default_rng(9)
    q0 = world.neutral_configuration()
    traj = world.rollout(q0, np.zeros(world.nv), 0.1 * rng.normal(size=(50, world.nv)), record=True)
    g = traj.backward(dL_dV=np.ones((51, world.nv)), wrt="all")
    assert np.all(np.isfinite(g.tau)) and np.abs(g.parameters).max() > 0
