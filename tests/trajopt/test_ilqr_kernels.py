"""The C++ kernels under iLQR: trajectory Jacobians, the closed-loop rollout and the Riccati pass."""

import numpy as np
import pytest
from rdsupport import tree_world
from trajopt_scenes import resting_ball_world

from rigidiff import _core


def trajectory(world, T, seed):
    rng = np.random.default_rng(seed)
    TAU = rng.normal(size=(T, world.nv))
    Q, V = world.rollout(world.random_configuration(rng), 0.3 * rng.normal(size=world.nv), TAU)
    return Q, V, TAU


@pytest.mark.parametrize("make", [lambda: tree_world(seed=4, dt=0.01), resting_ball_world],
                         ids=["every joint type", "contact"])
def test_trajectory_jacobians_are_the_step_jacobians(make):
    world = make()
    Q, V, TAU = trajectory(world, 5, 0) if world.nq > 1 else (np.full((6, 1), 0.499), np.zeros((6, 1)),
                                                                np.linspace(-1, 1, 5)[:, None])
    jac = world._core_trajectory_jacobians(Q, V, TAU).transpose(0, 1, 3, 2)
    for t in range(5):
        J = world.step_jacobians(Q[t], V[t], TAU[t])
        for i, block in enumerate((J.dq_dq, J.dq_dv, J.dq_dtau, J.dv_dq, J.dv_dv, J.dv_dtau)):
            np.testing.assert_array_equal(jac[t, i], block)


def test_closed_loop_rollout_follows_its_law():
    world = tree_world(seed=5, dt=0.01)
    nv, T = world.nv, 6
    Qr, Vr, TAU = trajectory(world, T, 1)
    S = np.eye(nv)[:, ::2]  # every other dof actuated
    Ur = TAU[:, ::2]
    Qr, Vr = world.rollout(Qr[0], Vr[0], Ur @ S.T)
    rng = np.random.default_rng(2)
    k = rng.normal(size=Ur.shape)
    K = 0.1 * rng.normal(size=(T, S.shape[1], 2 * nv))
    lo, hi = -np.full(Ur.shape, 1.5), np.full(Ur.shape, 1.5)
    q0 = world.integrate(Qr[0], 0.05 * rng.normal(size=nv))
    Q, V, U = world._core_closed_loop_rollout(q0, Vr[0], Qr, Vr, Ur, k, K, 0.5, S, lo, hi)
    q, v = q0, Vr[0]
    for t in range(T):  # the same law, step by step in Python
        dx = np.concatenate([world.difference(Qr[t], q), v - Vr[t]])
        u = np.clip(Ur[t] + 0.5 * k[t] + K[t] @ dx, lo[t], hi[t])
        np.testing.assert_allclose(U[t], u, atol=1e-12)
        q, v = world.step(q, v, S @ u)
        np.testing.assert_allclose(Q[t + 1], q, atol=1e-12)
        np.testing.assert_allclose(V[t + 1], v, atol=1e-12)
    # zero gains from the reference's own start reproduce the reference
    Q0, V0, U0 = world._core_closed_loop_rollout(Qr[0], Vr[0], Qr, Vr, Ur, 0 * k, 0 * K, 1.0, S, -np.inf, np.inf)
    np.testing.assert_allclose(Q0, Qr, atol=1e-12)
    np.testing.assert_array_equal(U0, Ur)


def test_riccati_pass_is_the_lqr_solution():
    # one step of a linear system with a quadratic cost: k, K minimise the exact quadratic
    rng = np.random.default_rng(3)
    nx, nu = 4, 2
    A = rng.normal(size=(1, nx, nx))
    B = rng.normal(size=(1, nx, nu))
    M = rng.normal(size=(nx, nx))
    lxx = np.stack([np.eye(nx), M @ M.T])
    lx = rng.normal(size=(2, nx))
    luu = np.eye(nu)[None] * 0.5
    lu = rng.normal(size=(1, nu))
    k, K, dV = _core._riccati_backward(A, B, lx, lxx, lu, luu, None, None, np.zeros((1, nu)), 0.0)
    H = luu[0] + B[0].T @ lxx[1] @ B[0]
    g = lu[0] + B[0].T @ lx[1]
    np.testing.assert_allclose(k[0], -np.linalg.solve(H, g))
    np.testing.assert_allclose(K[0], -np.linalg.solve(H, B[0].T @ lxx[1] @ A[0]))
    np.testing.assert_allclose(dV, [k[0] @ g, 0.5 * k[0] @ H @ k[0]])
    # not positive definite: None; NaN in the cost: ValueError
    assert _core._riccati_backward(A, B, lx, lxx, lu, -10 * luu - B[0].T @ lxx[1] @ B[0], None, None,
                                   np.zeros((1, nu)), 0.0) is None
    with pytest.raises(ValueError, match="cost"):
        _core._riccati_backward(A, B, np.full_like(lx, np.nan), lxx, lu, luu, None, None, np.zeros((1, nu)), 0.0)
    with pytest.raises(ValueError, match="shape"):
        _core._riccati_backward(A[:, :3], B, lx, lxx, lu, luu, None, None, np.zeros((1, nu)), 0.0)


def riccati_reference(A, B, lx, lxx, lu, luu, mu):
    """The unbounded backward pass, written out with numpy."""
    T, nu = len(A), B.shape[2]
    Vx, Vxx = lx[T], lxx[T]
    k, K, dV = np.zeros((T, nu)), np.zeros((T, nu, A.shape[1])), np.zeros(2)
    for t in reversed(range(T)):
        Qx, Qu = lx[t] + A[t].T @ Vx, lu[t] + B[t].T @ Vx
        Qxx, Qux = lxx[t] + A[t].T @ Vxx @ A[t], B[t].T @ Vxx @ A[t]
        Quu = luu[t] + B[t].T @ Vxx @ B[t]
        R = Quu + mu * np.eye(nu)
        k[t], K[t] = -np.linalg.solve(R, Qu), -np.linalg.solve(R, Qux)
        dV += [k[t] @ Qu, 0.5 * k[t] @ Quu @ k[t]]
        Vx = Qx + K[t].T @ Quu @ k[t] + K[t].T @ Qu + Qux.T @ k[t]
        Vxx = Qxx + K[t].T @ Quu @ K[t] + K[t].T @ Qux + Qux.T @ K[t]
        Vxx = 0.5 * (Vxx + Vxx.T)
    return k, K, dV


@pytest.mark.parametrize("nx, nu", [(8, 3), (64, 20), (76, 32)])  # from 64 states the pass takes the dense kernel
def test_riccati_pass_of_every_size_is_the_recursion(nx, nu):
    rng = np.random.default_rng(nx)
    T = 5
    A = np.eye(nx) + 0.1 * rng.normal(size=(T, nx, nx))
    B = rng.normal(size=(T, nx, nu)) / np.sqrt(nx)
    M = rng.normal(size=(T + 1, nx, nx)) / np.sqrt(nx)
    lxx, lx = M @ M.transpose(0, 2, 1), rng.normal(size=(T + 1, nx))
    lu, luu = rng.normal(size=(T, nu)), np.broadcast_to(np.eye(nu), (T, nu, nu)).copy()
    ref = riccati_reference(A, B, lx, lxx, lu, luu, 1e-3)
    ours = _core._riccati_backward(A, B, lx, lxx, lu, luu, None, None, np.zeros((T, nu)), 1e-3)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9 * np.abs(b).max())
    # bounds that hold nothing leave the pass as it is; bounds that hold some controls keep k inside them
    wide = _core._riccati_backward(A, B, lx, lxx, lu, luu, -1e6, 1e6, np.zeros((T, nu)), 1e-3)
    for a, b in zip(wide, ours):
        np.testing.assert_array_equal(a, b)
    bound = 0.5 * np.abs(ours[0]).max()
    k, K, _ = _core._riccati_backward(A, B, lx, lxx, lu, luu, -bound, bound, np.zeros((T, nu)), 1e-3)
    assert np.all(np.abs(k) <= bound + 1e-12) and np.any(np.abs(k) == bound)
    held = np.abs(k) == bound
    assert not np.any(K[held])  # a control held at its bound has no feedback
