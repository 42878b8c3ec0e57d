"""Derivatives with external wrenches (world axes at the body origins, fixed in the world while the
bodies move): inverse and forward dynamics, the step Jacobians and step_vjp against central
differences on every joint type and on a real robot."""

import numpy as np
import pytest
from rdsupport import assert_close, fd_tangent, robot_world, tree_world


def wrenches(world, rng, bodies):
    return {b: rng.normal(size=6) for b in bodies}


@pytest.fixture
def case():
    world = tree_world(1)
    rng = np.random.default_rng(1)
    q = world.random_configuration(rng)
    v, a, tau = rng.normal(size=(3, world.nv))
    f_ext = wrenches(world, rng, ["tip", "weld", "table", "gantry", "base", "turret"])
    return world, q, v, a, tau, f_ext


def test_inverse_and_forward_dynamics_derivatives(case):
    world, q, v, a, tau, f_ext = case
    dq, dv = world.inverse_dynamics_derivatives(q, v, a, f_ext=f_ext)
    assert_close(dq, fd_tangent(world, lambda x: world.inverse_dynamics(x, v, a, f_ext=f_ext), q), rtol=1e-7, floor=1.0)
    np.testing.assert_allclose(dv, world.inverse_dynamics_derivatives(q, v, a)[1], rtol=1e-12, atol=1e-12)
    assert np.abs(dq - world.inverse_dynamics_derivatives(q, v, a)[0]).max() > 1e-3  # the wrenches matter
    aq, av, at = world.forward_dynamics_derivatives(q, v, tau, f_ext=f_ext)
    fd = fd_tangent(world, lambda x: world.forward_dynamics(x, v, tau, f_ext=f_ext), q)
    assert_close(aq, fd, rtol=1e-6, floor=1.0)
    np.testing.assert_allclose(at, world.mass_matrix_inverse(q), rtol=1e-9, atol=1e-12)


def test_step_jacobians_and_vjp_with_wrenches(case):
    world, q, v, _, tau, f_ext = case
    J = world.step_jacobians(q, v, tau, f_ext=f_ext, wrt="gravity")
    qn, vn = world.step(q, v, tau, f_ext=f_ext)
    np.testing.assert_array_equal(J.v_next, vn)
    fd_v = fd_tangent(world, lambda x: world.step(x, v, tau, f_ext=f_ext)[1], q)
    fd_qn = fd_tangent(world, lambda x: world.difference(qn, world.step(x, v, tau, f_ext=f_ext)[0]), q)
    assert_close(J.dv_dq, fd_v, rtol=1e-6, floor=1.0, what="dv_dq")
    assert_close(J.dq_dq, fd_qn, rtol=1e-6, floor=1.0, what="dq_dq")
    rng = np.random.default_rng(5)
    gq, gv = rng.normal(size=(2, world.nv))
    g = world.step_vjp(q, v, tau, gq, gv, wrt="gravity", f_ext=f_ext)
    cot = np.concatenate([gq, gv])
    assert_close(np.concatenate([g.q, g.v]), J.A.T @ cot, rtol=1e-10, floor=1.0)
    assert_close(g.tau, J.B.T @ cot, rtol=1e-10, floor=1.0)
    assert_close(g.parameters, J.P.T @ cot, rtol=1e-10, floor=1.0)


def test_on_a_floating_robot(robots_dir):
    world = robot_world(robots_dir, "solo12")
    rng = np.random.default_rng(2)
    q = world.random_configuration(rng)
    v, a = rng.normal(size=(2, world.nv))
    f_ext = {name: rng.normal(size=6) for name in world.body_names if name.endswith("FOOT")}
    assert len(f_ext) == 4
    dq, _ = world.inverse_dynamics_derivatives(q, v, a, f_ext=f_ext)
    assert_close(dq, fd_tangent(world, lambda x: world.inverse_dynamics(x, v, a, f_ext=f_ext), q), rtol=1e-7, floor=1.0)
