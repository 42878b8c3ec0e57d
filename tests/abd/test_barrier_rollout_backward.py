"""The reverse pass of a recorded barrier rollout (rollout(..., record=True).backward): three cubes with
friction over 50 steps, the gradient of their final poses with respect to the initial velocities, the friction
coefficient and the densities against central differences of whole rollouts, and the chained step_vjp.

The Newton tolerance is 1e-12: the central differences are of the solver as converged, and over 50 steps of
resting contact with smoothed static friction a tolerance of 1e-10 leaves them 2e-6 from the exact
derivative (which moves by 3e-8 between the two tolerances), 1e-12 about 2e-7."""

import numpy as np
import pytest

import rigidiff as rd

BOX = rd.Box((0.2, 0.2, 0.2))
STEPS = 50


def _three_cubes(friction=0.3, densities=(400.0, 500.0, 600.0)):
    """Cube a slides along x into cube b, which carries cube c; all rest within dhat of what is below them."""
    world = rd.World(dt=1e-2, solver="barrier", dhat=5e-3, friction=friction, newton_tolerance=1e-12,
                     max_newton_iterations=500)
    world.add_ground()
    world.add_affine_body(BOX, density=densities[0], pose=rd.Transform((0.0, 0.0, 0.103), rpy=(0.0, 0.0, 0.05)),
                          velocity=(1.6, 0.1, 0.0, 0.0, 0.0, 0.3), name="a")
    world.add_affine_body(BOX, density=densities[1], pose=rd.Transform((0.3, 0.02, 0.103)), name="b")
    world.add_affine_body(BOX, density=densities[2], pose=rd.Transform((0.32, 0.0, 0.306), rpy=(0.0, 0.0, 0.2)),
                          velocity=(0.0, 0.05, 0.0), name="c")
    return world


def _final(world, v0):
    Q, _ = world.rollout(world.q, v0, np.zeros((STEPS, world.nv)))
    return Q[-1]


def test_rollout_backward_matches_central_differences():
    world = _three_cubes()
    rng = np.random.default_rng(3)
    weights = rng.normal(size=world.nq)  # L = weights . q_T: a linear read-out of the final poses
    traj = world.rollout(world.q, world.v, np.zeros((STEPS, world.nv)), record=True)
    # the scene does what it is meant to: a hits b, which moves; every cube stays within dhat of the ground
    assert traj.q[-1, 12] - traj.q[0, 12] > 1e-3
    dL_dQ = np.zeros_like(traj.q)
    dL_dQ[-1] = weights
    g = traj.backward(dL_dQ, None, wrt=["friction", "density"])
    assert g.parameter_names == ("a/density", "b/density", "c/density", "friction")

    def loss(w):
        return weights @ _final(w, w.v)

    # the initial velocities, along three random directions
    for _ in range(3):
        d = rng.normal(size=world.nv)
        h = 1e-6
        fd = (weights @ _final(world, world.v + h * d) - weights @ _final(world, world.v - h * d)) / (2 * h)
        assert abs(g.v @ d - fd) < 1e-6 * max(abs(fd), np.abs(g.v).max()), (g.v @ d, fd)
    # friction and each density: whole rollouts of rebuilt worlds
    for name, make in (("friction", lambda e: _three_cubes(friction=0.3 + e)),
                       ("a/density", lambda e: _three_cubes(densities=(400.0 + e, 500.0, 600.0))),
                       ("b/density", lambda e: _three_cubes(densities=(400.0, 500.0 + e, 600.0))),
                       ("c/density", lambda e: _three_cubes(densities=(400.0, 500.0, 600.0 + e)))):
        h = 1e-6 * (0.3 if name == "friction" else 500.0)
        fd = (loss(make(h)) - loss(make(-h))) / (2 * h)
        assert abs(g.parameter(name) - fd) < 1e-6 * abs(fd) + 1e-9, (name, g.parameter(name), fd)


def test_rollout_backward_is_the_chained_step_vjp():
    world = _three_cubes()
    T = 6
    rng = np.random.default_rng(1)
    taus = rng.normal(scale=0.3, size=(T, world.nv))
    traj = world.rollout(world.q, world.v, taus, record=True)
    dL_dQ, dL_dV = rng.normal(size=traj.q.shape), rng.normal(size=traj.v.shape)
    g = traj.backward(dL_dQ, dL_dV, wrt="all")
    gq, gv = dL_dQ[T], dL_dV[T]
    gp = np.zeros(len(world.parameters()))
    for t in range(T - 1, -1, -1):
        s = world.step_vjp(traj.q[t], traj.v[t], taus[t], gq, gv, wrt="all")
        np.testing.assert_array_equal(s.q_next, traj.q[t + 1])
        np.testing.assert_allclose(g.tau[t], s.tau, rtol=1e-12, atol=1e-12 * np.abs(s.tau).max())
        gq, gv, gp = s.q + dL_dQ[t], s.v + dL_dV[t], gp + s.parameters
    np.testing.assert_allclose(g.q, gq, rtol=1e-12, atol=1e-12 * np.abs(gq).max())
    np.testing.assert_allclose(g.v, gv, rtol=1e-12, atol=1e-12 * np.abs(gv).max())
    np.testing.assert_allclose(g.parameters, gp, rtol=1e-12, atol=1e-12 * np.abs(gp).max())


def test_rollout_backward_refuses_a_changed_world():
    world = _three_cubes()
    traj = world.rollout(world.q, world.v, np.zeros((3, world.nv)), record=True)
    world.friction = 0.5
    with pytest.raises(RuntimeError, match="changed"):
        traj.backward(np.ones_like(traj.q))
    world.friction = 0.3
    traj.backward(np.ones_like(traj.q))  # the same world again
    with pytest.raises(ValueError, match="dL_dQ"):
        traj.backward(np.ones((2, world.nq)))


def _grid(friction=0.4):
    """Nine cubes side by side within dhat of each other and of the ground, jostling: over a thousand contact
    pairs, so that their terms (and the friction frames' derivatives) are shared between two threads."""
    world = rd.World(dt=1e-2, solver="barrier", dhat=5e-3, friction=friction, newton_tolerance=1e-10,
                     max_newton_iterations=500)
    world.add_ground()
    rng = np.random.default_rng(2)
    for i in range(3):
        for j in range(3):
            world.add_affine_body(BOX, density=500.0, pose=rd.Transform((0.203 * i, 0.203 * j, 0.1025)),
                                  velocity=rng.normal(scale=0.2, size=3) * (1.0, 1.0, 0.0), name=f"c{i}{j}")
    return world


def test_rollout_backward_with_many_pairs_matches_central_differences():
    world = _grid()
    T = 3
    taus = np.zeros((T, world.nv))
    world.step(world.q, world.v)
    assert world.last_step["active_pairs"] > 256  # at the first step; the cubes drift apart after it
    traj = world.rollout(world.q, world.v, taus, record=True)
    rng = np.random.default_rng(4)
    weights = rng.normal(size=world.nq)
    dL_dQ = np.zeros_like(traj.q)
    dL_dQ[-1] = weights
    g = traj.backward(dL_dQ, None, wrt="friction")
    d = rng.normal(size=world.nv)
    h = 1e-5
    fd = (weights @ world.rollout(world.q, world.v + h * d, taus)[0][-1]
          - weights @ world.rollout(world.q, world.v - h * d, taus)[0][-1]) / (2 * h)
    assert abs(g.v @ d - fd) < 1e-6 * abs(fd), (g.v @ d, fd)
    h = 1e-5
    fd = (weights @ _grid(0.4 + h).rollout(world.q, world.v, taus)[0][-1]
          - weights @ _grid(0.4 - h).rollout(world.q, world.v, taus)[0][-1]) / (2 * h)
    assert abs(g.parameter("friction") - fd) < 1e-5 * abs(fd), (g.parameter("friction"), fd)
