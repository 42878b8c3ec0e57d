"""Step derivatives of barrier worlds with IPC's lagged friction (the frame frozen at the start state
differentiated through it), and with respect to the parameters (density, stiffness, friction, dhat), against
central differences of the step itself with the Newton tolerance tightened; the reverse mode against the
transposed Jacobians."""

import numpy as np
import pytest

import rigidiff as rd
from step_differences import (NAMES, assert_parameter_jacobians, assert_step_jacobians, central_jacobians,
                              central_parameter_jacobians, relative_error)

BOX = rd.Box((0.2, 0.2, 0.2))


def _world(friction=0.5, dhat=1e-2):
    return rd.World(dt=1e-2, solver="barrier", dhat=dhat, friction=friction, newton_tolerance=1e-11,
                    max_newton_iterations=500)


def _cube_on_ground(speed, friction=0.5, density=500.0, stiffness=1e8, dhat=1e-2):
    """A slightly tilted cube resting within dhat of the ground, sliding at speed (m/s) along x."""
    world = _world(friction, dhat)
    world.add_ground()
    tilt = rd.Transform(rpy=(0.01, -0.02, 0.3)).rotation
    lowest = (BOX.to_trimesh().vertices @ tilt.T)[:, 2].min()
    world.add_affine_body(BOX, density=density, stiffness=stiffness,
                          pose=rd.Transform((0.0, 0.0, 0.004 - lowest), rotation=tilt),
                          velocity=(speed, 0.4 * speed, 0.0, 0.0, 0.0, 2.0 * speed), name="cube")
    return world


def _sliding(**kw):
    return _cube_on_ground(0.5, **kw)


def _sticking(**kw):
    # 2e-4 m/s: slower than eps_v = 1e-3 m/s, in the smoothed static zone
    return _cube_on_ground(2e-4, **kw)


def _two_cubes(friction=0.4, density=500.0, stiffness=1e8, dhat=1e-2):
    """A cube resting on another within dhat, both in the air, the top one sliding across the bottom one."""
    world = _world(friction, dhat)
    world.add_affine_body(BOX, density=density, stiffness=stiffness, pose=rd.Transform((0.0, 0.0, 0.0)),
                          velocity=(0.0, 0.0, 0.1), name="a")
    tilt = rd.Transform(rpy=(0.03, 0.02, 0.2)).rotation
    lowest = (BOX.to_trimesh().vertices @ tilt.T)[:, 2].min()
    world.add_affine_body(BOX, density=300.0, stiffness=2e8, pose=rd.Transform((0.03, -0.02, 0.1 + 0.004 - lowest),
                                                                               rotation=tilt),
                          velocity=(0.4, 0.1, -0.2, 0.0, 0.0, 0.5), name="b")
    return world


def _on_incline(theta, friction, density=500.0, stiffness=1e8, dhat=1e-2):
    """A cube resting within dhat of the ground plane tilted by theta about y, starting at rest: it slides
    down when tan(theta) > friction and sticks otherwise."""
    world = _world(friction, dhat)
    n = np.array([np.sin(theta), 0.0, np.cos(theta)])
    world.add_ground(normal=n)
    R = rd.Transform(rpy=(0.0, theta, 0.0)).rotation  # the cube's bottom face parallel to the plane
    world.add_affine_body(BOX, density=density, stiffness=stiffness, pose=rd.Transform(n * 0.104, rotation=R),
                          name="cube")
    return world


def _incline_sliding(friction=0.3, **kw):
    return _on_incline(np.radians(30.0), friction, **kw)


def _incline_sticking(friction=0.5, **kw):
    return _on_incline(np.radians(15.0), friction, **kw)


def _on_static_ramp(friction=0.3, density=500.0, stiffness=1e8, dhat=1e-2):
    """A cube resting within dhat of a static slab tilted by 30 degrees, sliding across it and down: the slab's
    own coordinates are inputs of the step (moving it pushes the cube) but not unknowns (the step keeps them)."""
    world = _world(friction, dhat)
    world.newton_tolerance = 1e-12  # its slab makes the scene larger, and the tolerance is relative to its size
    tilt = rd.Transform(rpy=(0.0, np.radians(30.0), 0.0)).rotation
    normal = tilt @ np.array([0.0, 0.0, 1.0])
    world.add_static_mesh(rd.Box((0.8, 0.6, 0.1)), pose=rd.Transform(rotation=tilt), name="ramp")
    spin = rd.Transform(rpy=(0.0, 0.0, 0.2)).rotation
    world.add_affine_body(BOX, density=density, stiffness=stiffness,
                          pose=rd.Transform(normal * 0.154, rotation=tilt @ spin),
                          velocity=np.concatenate([tilt @ np.array([0.1, 0.3, 0.0]), [0.0, 0.0, 0.0]]), name="cube")
    return world


SCENES = {"sliding": _sliding, "sticking": _sticking, "two_cubes": _two_cubes, "incline_sliding": _incline_sliding,
          "incline_sticking": _incline_sticking, "static_ramp": _on_static_ramp}


@pytest.mark.parametrize("scene", SCENES)
def test_step_jacobians_through_friction_match_central_differences(scene):
    world = SCENES[scene]()
    q, v = world.q, world.v
    tau = np.random.default_rng(0).normal(scale=0.5, size=world.nv)
    J = world.step_jacobians(q, v, tau)
    assert world.last_step["active_pairs"] > 0
    # a step in q small enough for the smoothed static friction, stiff at small slips: the truncation error
    # falls as the step squared (on the incline 1.4e-3 relative at 1e-5, 1.6e-7 at 1e-7)
    assert_step_jacobians(J, central_jacobians(world, q, v, tau, eps=(1e-7, 1e-5, 1e-4)))


@pytest.mark.parametrize("scene", SCENES)
def test_friction_shapes_the_state_jacobian(scene):
    """The friction's dependence on the start state is a real part of dq'/dq: without it the Jacobian misses
    the central differences by far more than their error (the frictionless world's differs as well)."""
    world = SCENES[scene]()
    q, v = world.q, world.v
    with_friction = world.step_jacobians(q, v).dq_dq
    world.friction = 0.0
    without = world.step_jacobians(q, v).dq_dq
    assert np.abs(with_friction - without).max() > 1e-3 * np.abs(with_friction).max()


@pytest.mark.parametrize("scene", SCENES)
def test_step_vjp_is_the_transposed_jacobians(scene):
    world = SCENES[scene]()
    rng = np.random.default_rng(5)
    q, v = world.q, world.v
    tau = rng.normal(scale=0.5, size=world.nv)
    a, b = rng.normal(size=world.nq), rng.normal(size=world.nv)
    J = world.step_jacobians(q, v, tau, wrt="all")
    g = world.step_vjp(q, v, tau, a, b, wrt="all")
    assert g.parameter_names == J.parameter_names == world.parameters().names
    for got, want in ((g.q, J.dq_dq.T @ a + J.dv_dq.T @ b), (g.v, J.dq_dv.T @ a + J.dv_dv.T @ b),
                      (g.tau, J.dq_dtau.T @ a + J.dv_dtau.T @ b), (g.parameters, J.dq_dp.T @ a + J.dv_dp.T @ b)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
    np.testing.assert_array_equal(g.q_next, J.q_next)


def _with(make, values, name, value):
    kw = dict(values)
    kw[name] = value
    return make(**kw)


# relative central-difference steps: large enough that the Newton tolerance's noise (about 1e-13 m in q') stays
# below 1e-6 of the derivative, small enough for the truncation error
PARAMETER_STEPS = {"density": 1e-4, "stiffness": 1e-4, "friction": 3e-5, "dhat": 1e-5}


@pytest.mark.parametrize("scene", SCENES)
def test_parameter_jacobians_match_central_differences(scene):
    make = SCENES[scene]
    # a soft body (kappa = 1e4 Pa): at ABD's stiff 1e8 the step moves by 1e-15 per Pa, below the solve's noise
    world = make(stiffness=1e4)
    body = world.parameters().names[0].split("/")[0]  # the body whose density and stiffness the builder takes
    q, v = world.q, world.v
    J = world.step_jacobians(q, v, wrt="all")
    p = world.parameters()
    values = {"density": p[f"{body}/density"], "stiffness": p[f"{body}/stiffness"], "friction": p["friction"],
              "dhat": p["dhat"]}
    for field, value in values.items():
        name = f"{body}/{field}" if field in ("density", "stiffness") else field
        h = PARAMETER_STEPS[field] * value
        qp, vp = _with(make, values, field, value + h).step(q, v)
        qm, vm = _with(make, values, field, value - h).step(q, v)
        col = J.parameter_names.index(name)
        for analytic, fd in ((J.dq_dp[:, col], (qp - qm) / (2 * h)), (J.dv_dp[:, col], (vp - vm) / (2 * h))):
            err = relative_error(analytic, fd)
            assert err < 1e-6, f"{scene} {name}: relative error {err:.2e}"


def test_friction_gradient_at_zero_friction():
    """d/dmu at mu = 0 (no friction pairs in the step) comes from the pairs' unit forces."""
    world = _sliding(friction=0.0)
    q, v = world.q, world.v
    J = world.step_jacobians(q, v, wrt="friction")
    h = 1e-6
    qp, _ = _sliding(friction=h).step(q, v)
    q0, _ = _sliding(friction=0.0).step(q, v)
    fd = (qp - q0) / h  # one-sided: mu cannot go below 0
    assert relative_error(J.dq_dp[:, 0], fd) < 1e-4


def test_wrt_selection_and_names():
    world = _two_cubes()
    assert world.parameters().names == ("a/density", "a/stiffness", "b/density", "b/stiffness", "gravity_x",
                                        "gravity_y", "gravity_z", "friction", "dhat")
    assert world.parameters()["b/stiffness"] == 2e8 and world.parameters()["friction"] == 0.4
    q, v = world.q, world.v
    a, b = np.ones(world.nq), np.zeros(world.nv)
    g = world.step_vjp(q, v, None, a, b, wrt=["density", "dhat"])
    assert g.parameter_names == ("a/density", "b/density", "dhat")
    full = world.step_vjp(q, v, None, a, b, wrt="all")
    assert g.parameter("dhat") == full.parameter("dhat")
    assert world.step_vjp(q, v, None, a, b).parameter_names == ()
    with pytest.raises(rd.UnknownNameError, match="mass"):
        world.step_vjp(q, v, None, a, b, wrt="mass")
    with pytest.raises(ValueError, match="wrt"):
        world.step_jacobians(q, v, wrt=3)


@pytest.mark.parametrize("scene", SCENES)
def test_gravity_jacobians_match_central_differences(scene):
    """Gravity's three components (each body's generalised force m g on p, g_k rho int xbar on a_k) against
    central differences of the step, gravity moved by set_parameters."""
    world = SCENES[scene](stiffness=1e4)
    q, v = world.q, world.v
    J = world.step_jacobians(q, v, wrt="gravity")
    assert J.parameter_names == ("gravity_x", "gravity_y", "gravity_z")
    # at this Newton tolerance (1e-11) the solve's noise needs steps that move the state by 1e-6
    fd = central_parameter_jacobians(world, q, v, np.zeros(world.nv), J, J.parameter_names, zero_move=1e-6)
    assert_parameter_jacobians(J, fd)


def test_set_parameters_matches_a_world_built_with_them():
    """A body's density and stiffness, friction, dhat and gravity set by set_parameters step as a world built with
    them does; a bad value changes nothing and names the parameter."""
    world = _two_cubes()
    other = _two_cubes()
    body = world.parameters().names[0].split("/")[0]
    changes = {f"{body}/density": 700.0, f"{body}/stiffness": 3e7, "friction": 0.2, "dhat": 2e-3, "gravity_x": 1.0}
    world.set_parameters(changes)
    assert all(world.parameters()[name] == value for name, value in changes.items())
    np.testing.assert_allclose(world.mass_matrix(body), other.mass_matrix(body) * 700.0 / other.parameters()[
        f"{body}/density"], rtol=1e-14)
    before = world.parameters()
    for bad, match in (({f"{body}/density": 0.0}, "density"), ({"friction": -0.1}, "friction"),
                       ({"dhat": float("nan")}, "dhat")):
        with pytest.raises(ValueError, match=match):
            world.set_parameters({**bad, "gravity_y": 5.0})
        np.testing.assert_array_equal(world.parameters().values, before.values)
    with pytest.raises(rd.UnknownNameError, match="mass"):
        world.set_parameters({"mass": 1.0})
    world.set_parameters(before.values)  # the full vector
    np.testing.assert_array_equal(world.parameters().values, before.values)


def test_static_mesh_coordinates_are_inputs_not_unknowns():
    """The ramp's rows: q' = q (identity in dq_dq, zero elsewhere), v' = 0; its columns: moving the ramp
    pushes the cube, as central differences of the step say on their own scale."""
    world = _on_static_ramp()
    ramp, cube = world.layout("ramp").q, world.layout("cube").q
    q, v = world.q, world.v
    J = world.step_jacobians(q, v, wrt="all")
    np.testing.assert_array_equal(J.dq_dq[ramp, ramp], np.eye(12))
    for name in NAMES:
        block = getattr(J, name)[ramp]
        if name != "dq_dq":
            assert not block.any(), name
    assert not J.dq_dq[ramp, cube].any() and not J.dq_dp[ramp].any() and not J.dv_dp[ramp].any()
    fd = central_jacobians(world, q, v, np.zeros(world.nv), eps=(1e-7, 1e-5, 1e-4))
    for name in ("dq_dq", "dv_dq"):
        analytic = getattr(J, name)[cube, ramp]
        err = relative_error(analytic, fd[name][cube, ramp])
        assert err < 1e-6, f"{name}: relative error {err:.2e}"
    g = world.step_vjp(q, v, None, np.ones(world.nq), np.ones(world.nv))
    np.testing.assert_allclose(g.q, J.dq_dq.T @ np.ones(world.nq) + J.dv_dq.T @ np.ones(world.nv), rtol=1e-9,
                               atol=1e-9 * np.abs(g.q).max())
    assert not g.v[ramp].any() and not g.tau[ramp].any()
