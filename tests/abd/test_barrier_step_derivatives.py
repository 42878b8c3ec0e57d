"""Step Jacobians and step_vjp of barrier worlds (implicit function theorem at the Newton solution) against
central differences of the step itself, with the Newton tolerance tightened."""

import numpy as np
import pytest

import rigidiff as rd
from step_differences import NAMES, assert_vjp_is_transposed_jacobians, central_jacobians


def _cube_sliding_on_ground():
    world = rd.World(dt=1e-2, solver="barrier", dhat=1e-2, newton_tolerance=1e-11, max_newton_iterations=500)
    world.add_ground()
    world.add_affine_body(rd.Box((0.2, 0.2, 0.2)), density=500.0, pose=rd.Transform((0.0, 0.0, 0.106), rpy=(0.02, -0.01, 0.3)),
                          velocity=(0.3, -0.1, -0.05, 0.2, 0.1, 1.0), name="cube")
    return world


def _two_cubes_colliding():
    world = rd.World(dt=1e-2, solver="barrier", dhat=1e-2, newton_tolerance=1e-11, max_newton_iterations=500)
    world.add_affine_body(rd.Box((0.2, 0.2, 0.2)), density=500.0, pose=rd.Transform((0.0, 0.0, 0.0)), name="a")
    tilt = rd.Transform(rpy=(0.1, 0.05, 0.2)).rotation
    lowest = (rd.Box((0.2, 0.2, 0.2)).to_trimesh().vertices @ tilt.T)[:, 2].min()
    world.add_affine_body(rd.Box((0.2, 0.2, 0.2)), density=300.0,
                          pose=rd.Transform((0.03, -0.02, 0.1 + 0.004 - lowest), rotation=tilt),
                          velocity=(0.0, 0.1, -0.6, 0.5, 0.0, 0.3), name="b")
    return world


@pytest.mark.parametrize("make", [_cube_sliding_on_ground, _two_cubes_colliding], ids=["ground", "two_cubes"])
def test_step_jacobians_match_central_differences(make):
    world = make()
    q, v = world.q, world.v
    tau = np.random.default_rng(0).normal(scale=0.5, size=world.nv)
    J = world.step_jacobians(q, v, tau)
    assert world.last_step["active_pairs"] > 0  # the step is in contact: the barrier shapes the Jacobians
    q_next, v_next = world.step(q, v, tau)
    np.testing.assert_array_equal(J.q_next, q_next)
    np.testing.assert_array_equal(J.v_next, v_next)
    fd = central_jacobians(world, q, v, tau, eps=(1e-6, 1e-5, 1e-4))
    for name in NAMES:
        analytic = getattr(J, name)
        scale = np.abs(analytic).max()
        assert scale > 0.0 and not np.array_equal(analytic, fd[name])
        err = np.abs(analytic - fd[name]).max() / scale
        assert err < 2e-6, f"{name}: relative error {err:.2e}"


def test_barrier_shapes_the_jacobian():
    """In contact, dq_dtau differs from the free-flight dt^2 M^-1 (the barrier's Hessian enters H)."""
    world = _cube_sliding_on_ground()
    q, v = world.q, world.v
    J = world.step_jacobians(q, v)
    free = world.dt**2 * np.linalg.inv(world.mass_matrix("cube"))
    assert np.abs(J.dq_dtau - free).max() > 0.1 * np.abs(free).max()


@pytest.mark.parametrize("make", [_cube_sliding_on_ground, _two_cubes_colliding], ids=["ground", "two_cubes"])
def test_step_vjp_is_the_transposed_jacobians(make):
    world = make()
    rng = np.random.default_rng(5)
    q, v = world.q, world.v
    tau = rng.normal(scale=0.5, size=world.nv)
    a, b = rng.normal(size=world.nq), rng.normal(size=world.nv)
    assert_vjp_is_transposed_jacobians(world, q, v, tau, a, b, 1e-9)
