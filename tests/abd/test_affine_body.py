"""Affine bodies: mass matrix from the mesh's volume integrals (against trimesh), the orthogonality energy's
derivatives (against finite differences), and the checks of add_affine_body."""

import numpy as np
import pytest
import trimesh

import rigidiff as rd
from rigidiff import _core


def _world(**kwargs):
    return rd.World(dt=1e-2, solver="barrier", **kwargs)


def _meshes():
    box = trimesh.creation.box(extents=(0.3, 0.2, 0.5))
    box.apply_translation((0.4, -0.1, 0.25))  # body coordinates not at the centre of mass
    ring = trimesh.creation.annulus(r_min=0.2, r_max=0.35, height=0.1)  # non-convex
    ring.apply_translation((0.05, 0.0, 0.1))
    bunny_like = trimesh.creation.icosphere(subdivisions=2, radius=0.3)
    bunny_like.apply_scale((1.0, 0.6, 1.4))
    return {"box": box, "ring": ring, "ellipsoid": bunny_like}


@pytest.mark.parametrize("kind", ["box", "ring", "ellipsoid"])
def test_mass_properties_match_trimesh(kind):
    mesh = _meshes()[kind]
    density = 730.0
    world = _world()
    world.add_affine_body(mesh, density=density, name=kind)
    props = world.mass_properties(kind)
    mesh.density = density
    assert props["mass"] == pytest.approx(mesh.mass, rel=1e-12)
    assert props["volume"] == pytest.approx(mesh.volume, rel=1e-12)
    np.testing.assert_allclose(props["first_moment"], mesh.mass * mesh.center_mass, rtol=1e-12, atol=1e-14)
    # trimesh's inertia is about the centre of mass: I = tr(S_c) I3 - S_c, S_c = S - m c c^T
    c = mesh.center_mass
    S_c = props["second_moment"] - mesh.mass * np.outer(c, c)
    np.testing.assert_allclose(np.trace(S_c) * np.eye(3) - S_c, mesh.moment_inertia, rtol=1e-10, atol=1e-14)


def test_mass_matrix_gives_the_rigid_kinetic_energy():
    mesh = _meshes()["box"]
    world = _world()
    world.add_affine_body(mesh, density=500.0, name="b")
    M = world.mass_matrix("b")
    np.testing.assert_allclose(M, M.T, atol=0.0)
    assert np.all(np.linalg.eigvalsh(M) > 0.0)
    mesh.density = 500.0
    rng = np.random.default_rng(3)
    from rigidiff.barrier_world import _affine_velocity

    for _ in range(5):
        v, w = rng.normal(size=3), rng.normal(size=3)
        qdot = _affine_velocity(np.concatenate([v, w]), np.eye(3), np.zeros(3))  # body frame = world frame
        v_com = v + np.cross(w, mesh.center_mass)
        expected = 0.5 * mesh.mass * v_com @ v_com + 0.5 * w @ mesh.moment_inertia @ w
        assert 0.5 * qdot @ M @ qdot == pytest.approx(expected, rel=1e-10)


def _central(f, x, h=1e-6):
    out = []
    for i in range(len(x)):
        e = np.zeros_like(x)
        e[i] = h
        out.append((f(x + e) - f(x - e)) / (2 * h))
    return np.array(out)


def test_orthogonality_energy_derivatives_match_finite_differences():
    rng = np.random.default_rng(0)
    weight = 2.5
    for _ in range(4):
        q = np.concatenate([rng.normal(size=3), (np.eye(3) + 0.3 * rng.normal(size=(3, 3))).ravel()])
        E, g, H = _core._orthogonality_terms(q, weight)
        A = q[3:].reshape(3, 3)
        assert E == pytest.approx(weight * np.sum((A @ A.T - np.eye(3)) ** 2), rel=1e-14)
        g_fd = _central(lambda x: _core._orthogonality_terms(x, weight)[0], q)
        H_fd = _central(lambda x: _core._orthogonality_terms(x, weight)[1], q)
        np.testing.assert_allclose(g, g_fd, rtol=1e-7, atol=1e-7)
        np.testing.assert_allclose(H, H_fd, rtol=1e-6, atol=1e-6)
        assert np.abs(g[3:]).max() > 1e-3 and not np.array_equal(g, g_fd)
        np.testing.assert_array_equal(g[:3], 0.0)


def test_orthogonality_energy_vanishes_on_rotations():
    R = rd.Transform(rpy=(0.3, -1.1, 2.0)).rotation
    q = np.concatenate([[1.0, 2.0, 3.0], R.ravel()])
    E, g, H = _core._orthogonality_terms(q, 10.0)
    assert E == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(g, 0.0, atol=1e-12)
    assert np.linalg.eigvalsh(H).min() > -1e-9  # a minimum: positive semi-definite there


def test_add_affine_body_rejects_bad_input():
    world = _world()
    box = rd.Box((0.2, 0.2, 0.2))
    with pytest.raises(ValueError, match="density"):
        world.add_affine_body(box, density=0.0)
    with pytest.raises(ValueError, match="density"):
        world.add_affine_body(box, density=-1.0)
    with pytest.raises(ValueError, match="stiffness"):
        world.add_affine_body(box, stiffness=0.0)
    open_mesh = trimesh.creation.box()
    open_mesh = trimesh.Trimesh(open_mesh.vertices, open_mesh.faces[:-1], process=False)
    with pytest.raises(ValueError, match="not closed"):
        world.add_affine_body(open_mesh)
    inverted = trimesh.creation.box()
    with pytest.raises(ValueError, match="inverted"):
        world.add_affine_body((inverted.vertices, inverted.faces[:, ::-1]))
    with pytest.raises(TypeError, match="shape_or_mesh"):
        world.add_affine_body("a box")
    with pytest.raises(ValueError, match="plane"):
        world.add_affine_body(rd.Plane())
    with pytest.raises(ValueError, match="velocity"):
        world.add_affine_body(box, velocity=(1.0, 2.0))
    assert world.nq == 0  # nothing was added by the refused calls
    world.add_affine_body(box, name="a")
    with pytest.raises(ValueError, match="already used"):
        world.add_affine_body(box, name="a", pose=rd.Transform((5.0, 0.0, 0.0)))


def test_bodies_placed_intersecting_are_refused_with_the_pair_named():
    world = _world()
    world.add_affine_body(rd.Box((0.2, 0.2, 0.2)), name="first")
    with pytest.raises(ValueError, match="'first' and 'second'"):
        world.add_affine_body(rd.Box((0.2, 0.2, 0.2)), pose=rd.Transform((0.1, 0.05, 0.0)), name="second")
    with pytest.raises(ValueError, match="'first' and 'inner'"):  # wholly inside: no surfaces cross
        world.add_affine_body(rd.Box((0.05, 0.05, 0.05)), name="inner")
    with pytest.raises(ValueError, match="'first' touches or crosses ground plane"):
        world.add_ground(height=0.0)
    assert world.body_names == ["first"]
    world.add_ground(height=-0.2)
    with pytest.raises(ValueError, match="'low' touches or crosses ground plane 0"):
        world.add_affine_body(rd.Sphere(0.1), pose=rd.Transform((1.0, 0.0, -0.15)), name="low")
    q = world.q
    q[2] = -0.15
    with pytest.raises(ValueError, match="'first' touches or crosses"):
        world.step(q, world.v)


def test_pose_velocity_and_layout():
    world = _world(gravity=(0.0, 0.0, 0.0))
    T = rd.Transform((0.1, 0.2, 0.3), rpy=(0.2, 0.1, -0.4))
    lay = world.add_affine_body(rd.Box((0.2, 0.3, 0.1)), pose=T, velocity=(1.0, 0.0, 0.0, 0.0, 0.0, 2.0), name="b")
    assert lay.kind == "affine" and lay.q == slice(0, 12) and world.layout("b") == lay
    np.testing.assert_allclose(world.body_pose(world.q, "b"), T.matrix if hasattr(T, "matrix") else
                               np.block([[T.rotation, T.translation[:, None]], [np.zeros((1, 3)), 1.0]]), atol=1e-14)
    A, p = world.affine_map(world.q, "b")
    Adot = world.v[3:].reshape(3, 3)
    W = Adot @ A.T  # [w]x for a rigid velocity
    np.testing.assert_allclose(W, -W.T, atol=1e-14)
    np.testing.assert_allclose([W[2, 1], W[0, 2], W[1, 0]], [0.0, 0.0, 2.0], atol=1e-14)
    # a stretched A: the pose is its nearest rotation
    q = world.q
    q[3:] = (np.diag([1.1, 0.9, 1.0]) @ T.rotation).ravel()
    R = world.body_pose(q, "b")[:3, :3]
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(R) == pytest.approx(1.0)
    with pytest.raises(rd.errors.UnknownNameError):
        world.layout("nope")
