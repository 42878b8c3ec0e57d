"""The projective world: building, stepping, bad input named, solver failures raised with the residual."""

import numpy as np
import pytest

import rigidiff as rd


def _block(world, name="block", origin=(0.0, 0.0, 0.0), cells=(2, 2, 2), **kwargs):
    mesh = rd.HexMesh.box((0.1, 0.1, 0.1), cells, origin=origin)
    return world.add_deformable(mesh, rd.ProjectiveMaterial(1e5, 0.3, 1000.0, kind=("corotated", "volume")),
                                name=name, **kwargs)


def test_dispatch_and_layout():
    world = rd.World(dt=5e-3, solver="projective", gravity=(0, 0, -1))
    assert isinstance(world, rd.ProjectiveWorld) and world.solver == "projective"
    assert world.dt == 5e-3 and np.allclose(world.gravity, (0, 0, -1))
    a = _block(world, "a")
    b = _block(world, "b", origin=(1, 0, 0), cells=(1, 1, 1))
    assert a.kind == "deformable" and a.q == slice(0, 81) and b.q == slice(81, 105)
    assert world.nq == world.nv == 105 and world.body_names == ["a", "b"]
    np.testing.assert_allclose(world.positions(world.q, "b"), world.mesh("b").vertices)
    assert world.masses("a").sum() == pytest.approx(1.0)
    points, triangles = world.surface(world.q, "b")
    assert points.shape == (8, 3) and triangles.shape == (12, 3)
    assert len(world.surface_vertices("a")) == 26  # every vertex of a 3 x 3 x 3 grid but the centre
    with pytest.raises(rd.UnknownNameError, match="no deformable body named 'c'"):
        world.layout("c")
    with pytest.raises(ValueError, match="already used"):
        _block(world, "a")


def test_free_fall_is_exact():
    # a body moving rigidly stays undeformed: the step is x = q + dt v + dt^2 g exactly
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-12)
    _block(world, pose=rd.Transform((0, 0, 1.0)), velocity=(0.5, 0.0, 1.0))
    q, v = world.q, world.v
    q1, v1 = world.step(q, v)
    expected = q + world.dt * v + world.dt**2 * np.tile(world.gravity, world.nq // 3)
    np.testing.assert_allclose(q1, expected, atol=1e-13)
    np.testing.assert_allclose(v1, (q1 - q) / world.dt, atol=1e-10)


def test_fixed_vertices_stay_and_others_move():
    world = rd.World(dt=1e-2, solver="projective")
    mesh = rd.HexMesh.box((0.2, 0.05, 0.05), (4, 1, 1))
    fixed = np.flatnonzero(mesh.vertices[:, 0] == 0.0)
    world.add_deformable(mesh, rd.ProjectiveMaterial(1e5, 0.3, 1000.0), name="beam", fixed=fixed)
    np.testing.assert_array_equal(world.fixed_vertices("beam"), fixed)
    q, v = world.q, world.v
    for _ in range(3):
        q, v = world.step(q, v)
    x = world.positions(q, "beam")
    np.testing.assert_array_equal(x[fixed], mesh.vertices[fixed])
    assert x[:, 2].min() < -1e-4  # the free end sags
    world.set_fixed("beam", None)
    assert len(world.fixed_vertices("beam")) == 0


@pytest.mark.parametrize("kwargs, message", [
    ({"dt": 0.0}, "dt"),
    ({"tolerance": -1.0}, "tolerance"),
    ({"max_iterations": 0}, "max_iterations"),
    ({"contact_stiffness": 0.0}, "contact_stiffness"),
    ({"gravity": (0, 0)}, "gravity"),
])
def test_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rd.World(solver="projective", **kwargs)


def test_bad_input_is_named():
    world = rd.World(dt=1e-2, solver="projective")
    with pytest.raises(ValueError, match="no deformable body"):
        world.step(np.zeros(0), np.zeros(0))
    _block(world)
    q, v = world.q, world.v
    with pytest.raises(ValueError, match="q"):
        world.step(q[:-1], v)
    with pytest.raises(ValueError, match="v must be finite"):
        world.step(q, np.full_like(v, np.nan))
    with pytest.raises(ValueError, match="f"):
        world.step(q, v, np.zeros(3))
    with pytest.raises(TypeError, match="mesh"):
        world.add_deformable("mesh", rd.ProjectiveMaterial(1e5))
    with pytest.raises(TypeError, match="material"):
        world.add_deformable(world.mesh("block"), 1e5)
    with pytest.raises(ValueError, match="fixed: vertex index 99"):
        world.add_deformable(world.mesh("block"), rd.ProjectiveMaterial(1e5), name="x", fixed=[99])
    with pytest.raises(ValueError, match="every vertex is fixed"):
        world.set_fixed("block", np.arange(27))
    with pytest.raises(TypeError, match="rigidiff.Skeleton"):
        world.add_skeleton(None)
    with pytest.raises(NotImplementedError):
        world.add_particles(None)


@pytest.mark.parametrize("kwargs, message", [
    ({"youngs_modulus": 0.0}, "youngs_modulus"),
    ({"youngs_modulus": -1.0}, "youngs_modulus"),
    ({"poisson_ratio": 0.5}, "poisson_ratio"),
    ({"poisson_ratio": -0.1}, "poisson_ratio"),
    ({"density": 0.0}, "density"),
    ({"density": -5.0}, "density"),
    ({"kind": "stvk"}, "kind"),
    ({"kind": ("volume", "volume")}, "kind"),
])
def test_material_validation(kwargs, message):
    args = {"youngs_modulus": 1e5, "poisson_ratio": 0.3, "density": 1000.0} | kwargs
    with pytest.raises(ValueError, match=message):
        rd.ProjectiveMaterial(**args)


def test_material_lame():
    mu, lam = rd.ProjectiveMaterial(2.6e5, 0.3).lame
    assert mu == pytest.approx(1e5) and lam == pytest.approx(1.5e5)


def test_non_convergence_raises_with_the_residual():
    world = rd.World(dt=1e-2, solver="projective", max_iterations=1, tolerance=1e-12)
    world.add_ground()
    _block(world, origin=(0, 0, -0.01))
    with pytest.raises(RuntimeError, match=r"did not converge: \|grad g\| = .* after 1 iterations"):
        world.step(world.q, world.v)
    # on_failure="warn": the last iterate, finite and better than the start, with a warning naming the residual
    world.on_failure = "warn"
    with pytest.warns(RuntimeWarning, match=r"did not converge: \|grad g\| is .* after 1 iterations"):
        q1, v1 = world.step(world.q, world.v)
    assert np.isfinite(q1).all() and np.isfinite(v1).all()
    assert world.last_step["converged"] is False
    assert world.positions(q1, world.body_names[0])[:, 2].min() > -0.01  # pushed up out of the ground
    world.max_iterations = 1000
    world.step(world.q, world.v)
    assert world.last_step["converged"] is True
    with pytest.raises(ValueError, match="on_failure"):
        world.on_failure = "ignore"


def test_advance_and_rollout_agree():
    world = rd.World(dt=1e-2, solver="projective")
    world.add_ground()
    _block(world, origin=(0, 0, 0.01))
    Q, V = world.rollout(world.q, world.v, np.zeros((3, world.nv)))
    world.advance(n_steps=3)
    np.testing.assert_allclose(world.q, Q[-1])
    assert world.time == pytest.approx(0.03)


@pytest.mark.parametrize("friction", [0.0, 0.4])
def test_methods_agree(friction):
    # the three solvers of a step (L-BFGS, Newton-CG, Newton-Cholesky) find the same minimiser, and their
    # adjoints the same cotangents
    results = {}
    for method in ("pd", "newton", "newton-cholesky"):
        world = rd.World(dt=1e-2, solver="projective", tolerance=1e-11, method=method, friction=friction)
        world.add_ground()
        _block(world, origin=(0, 0, 0.002), velocity=(0.3, 0.0, -0.5))
        assert world.solver_options()["method"] == method
        Q, V = world.rollout(world.q, world.v, np.zeros((10, world.nv)))
        g = world.step_vjp(Q[-2], V[-2], None, np.linspace(-1.0, 1.0, world.nq), np.ones(world.nv))
        results[method] = Q[-1], g.q, g.v
    scale = np.abs(results["pd"][0] - Q[0]).max()
    for method in ("newton", "newton-cholesky"):
        assert np.abs(results["pd"][0] - results[method][0]).max() < 1e-8 * scale
        for a, b in zip(results["pd"][1:], results[method][1:]):
            np.testing.assert_allclose(b, a, rtol=0, atol=1e-8 * np.abs(a).max())
    with pytest.raises(ValueError, match="method must be one of"):
        world.solver_options(method="cholesky")
