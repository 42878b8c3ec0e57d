"""IPC's log barrier and its adaptive stiffness against IPC Toolkit, and the barrier potential of a barrier
world (gradient against finite differences, Hessian symmetric positive semi-definite)."""

import numpy as np
import pytest

import rigidiff as rd
from rigidiff import _core

ipctk = pytest.importorskip("ipctk")


@pytest.mark.parametrize("dhat", [1e-3, 0.5, 2.0])
def test_barrier_and_its_derivatives_match_ipctk(dhat):
    shat = dhat * dhat
    s = np.concatenate([np.geomspace(1e-6 * shat, 0.999 * shat, 25), [shat, 2 * shat]])
    ours = _core._barrier_values(s, dhat)
    # ipctk takes the distance-like argument and its own dhat: squared distances against dhat^2
    ref = np.array([[ipctk.barrier(x, shat), ipctk.barrier_first_derivative(x, shat),
                     ipctk.barrier_second_derivative(x, shat)] for x in s])
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-300)
    assert np.all(ours[:-2, 0] > 0.0) and np.all(ours[-2:] == 0.0)


def test_barrier_oracle_values():
    # the clamped log barrier at a few points (b, b', b'') with dhat^2 = 1
    np.testing.assert_allclose(_core._barrier_values([0.5, 0.25], 1.0),
                               [[0.1732868, -1.1931472, 6.3862944], [0.7797906, -4.3294415, 23.772589]], rtol=1e-6)


@pytest.mark.parametrize("grad", ["zero", "opposed", "huge"])
def test_initial_barrier_stiffness_matches_ipctk(grad):
    rng = np.random.default_rng(1)
    g_b = rng.normal(size=12)
    g_e = {"zero": np.zeros(12), "opposed": -3e5 * g_b + rng.normal(size=12), "huge": -1e12 * g_b}[grad]
    diag, dhat, mass = 1.41421, 2e-3, 1.0
    kappa, kmin, kmax = _core._barrier_stiffness(diag, dhat, mass, g_b @ g_e, g_b @ g_b)
    ref_kappa, ref_kmax = ipctk.initial_barrier_stiffness(diag, ipctk.ClampedLogBarrier(), dhat, mass, g_e, g_b)
    assert kappa == pytest.approx(ref_kappa, rel=1e-10)
    assert kmax == pytest.approx(ref_kmax, rel=1e-10)
    assert kmin == pytest.approx(kmax / 100.0, rel=1e-14)
    if grad == "zero":  # nothing to balance: kappa_min
        assert kappa == pytest.approx(kmin, rel=1e-14)


def _contact_world():
    """A cube resting just above the ground and a tilted cube whose lowest corner is just above it: point–plane,
    point–triangle and edge–edge pairs within dhat."""
    world = rd.World(dt=1e-2, solver="barrier", dhat=2e-2)
    world.add_ground()
    box = rd.Box((0.2, 0.2, 0.2))
    world.add_affine_body(box, pose=rd.Transform((0.0, 0.0, 0.105)), name="low")
    tilt = rd.Transform(rpy=(0.05, 0.4, 0.3))
    corners = box.to_trimesh().vertices @ tilt.rotation.T
    world.add_affine_body(box, pose=rd.Transform((0.03, -0.02, 0.205 + 0.01 - corners[:, 2].min()),
                                                 rotation=tilt.rotation), name="high")
    return world


def test_barrier_potential_gradient_matches_finite_differences():
    world = _contact_world()
    q = world.q
    rng = np.random.default_rng(2)
    q = q + 1e-3 * rng.normal(size=q.size)  # off the symmetric start
    B, g, H = world._bw_barrier_potential(q)
    assert B > 0.0 and world._bw_stats is not None
    h = 1e-7
    g_fd = np.array([(world._bw_barrier_potential(q + h * e)[0] - world._bw_barrier_potential(q - h * e)[0]) / (2 * h)
                     for e in np.eye(q.size)])
    np.testing.assert_allclose(g, g_fd, rtol=1e-5, atol=1e-6 * np.abs(g).max())
    assert np.abs(g[12:]).max() > 0.0 and np.abs(g[:12]).max() > 0.0
    np.testing.assert_allclose(H, H.T, atol=1e-9 * np.abs(H).max())
    assert np.linalg.eigvalsh(H).min() > -1e-9 * np.abs(H).max()


def test_incremental_potential_gradient_matches_finite_differences():
    world = _contact_world()
    rng = np.random.default_rng(4)
    q_n = world.q
    v_n = 0.1 * rng.normal(size=q_n.size)
    tau = rng.normal(size=q_n.size)
    q = q_n + 1e-3 * rng.normal(size=q_n.size)
    kappa = 50.0
    E, g = world._bw_incremental_potential(q, q_n, v_n, tau, kappa)
    h = 1e-7

    def energy(x):
        return world._bw_incremental_potential(x, q_n, v_n, tau, kappa)[0]

    g_fd = np.array([(energy(q + h * e) - energy(q - h * e)) / (2 * h) for e in np.eye(q.size)])
    np.testing.assert_allclose(g, g_fd, rtol=1e-5, atol=1e-6 * np.abs(g).max())


def test_collision_free_step_stops_before_contact():
    world = _contact_world()
    q = world.q
    dq = np.zeros_like(q)
    dq[14] = -0.5  # the high cube straight down through the low one
    alpha = world._bw_collision_free_step(q, dq)
    assert 0.0 < alpha < 1.0
    world.check_state(q + alpha * dq)  # still apart
    dq[:] = 0.0
    dq[2] = -1.0  # the low cube through the ground
    alpha = world._bw_collision_free_step(q, dq)
    assert 0.0 < alpha < 0.005 / 1.0
    world.check_state(q + alpha * dq)
