"""Shapes: closed-form mass properties against trimesh's volume integrals, bounds, validation."""

import numpy as np
import pytest
import trimesh
from hypothesis import given, settings
from hypothesis import strategies as st

from rigidiff.inertia import Inertia
from rigidiff.shapes import Box, Capsule, Cylinder, Mesh, Plane, Shape, Sphere
from rigidiff.transform import Transform

MASS = 2.5


def _fine(shape):
    """A finely tessellated trimesh of ``shape`` (independent of to_trimesh's drawing resolution)."""
    if isinstance(shape, Box):
        return trimesh.creation.box(extents=shape.size)
    if isinstance(shape, Sphere):
        return trimesh.creation.icosphere(subdivisions=6, radius=shape.radius)
    if isinstance(shape, Cylinder):
        return trimesh.creation.cylinder(radius=shape.radius, height=shape.length, sections=512)
    if isinstance(shape, Capsule):
        return trimesh.creation.capsule(height=shape.length, radius=shape.radius, count=[256, 256])
    raise TypeError(shape)


def _trimesh_inertia(tm, mass):
    """Rotational inertia about the centroid of ``tm`` with total ``mass``, and its centroid."""
    return tm.moment_inertia * (mass / tm.mass), tm.center_mass


PRIMITIVES = [
    Box((0.3, 1.2, 0.7)),
    Sphere(0.4),
    Cylinder(0.2, 1.5),
    Cylinder(0.9, 0.1),
    Capsule(0.25, 1.0),
    Capsule(0.5, 0.05),
]


@pytest.mark.parametrize("shape", PRIMITIVES, ids=repr)
def test_primitive_inertia_matches_tessellation(shape):
    tm = _fine(shape)
    assert tm.is_watertight
    np.testing.assert_allclose(shape.volume, tm.volume, rtol=2e-3)
    I_ref, c_ref = _trimesh_inertia(tm, MASS)
    inertia = shape.inertia(MASS)
    assert isinstance(inertia, Inertia)
    assert inertia.mass == MASS
    np.testing.assert_allclose(inertia.com, 0.0, atol=1e-12)
    np.testing.assert_allclose(c_ref, 0.0, atol=1e-6 * np.abs(tm.extents).max())
    np.testing.assert_allclose(inertia.rotational_inertia, I_ref, rtol=1e-3, atol=1e-3 * np.abs(I_ref).max())


def test_closed_forms():
    m = 3.0
    np.testing.assert_allclose(np.diag(Box((1, 2, 3)).inertia(m).rotational_inertia),
                               [m * 13 / 12, m * 10 / 12, m * 5 / 12])
    np.testing.assert_allclose(Sphere(2.0).inertia(m).rotational_inertia, np.eye(3) * 0.4 * m * 4)
    np.testing.assert_allclose(np.diag(Cylinder(1.0, 2.0).inertia(m).rotational_inertia),
                               [m * 7 / 12, m * 7 / 12, m / 2])
    # a capsule with a vanishing straight part tends to a sphere
    np.testing.assert_allclose(Capsule(1.0, 1e-9).inertia(m).rotational_inertia, np.eye(3) * 0.4 * m, rtol=1e-7)
    np.testing.assert_allclose(Capsule(0.5, 2.0).volume, np.pi * 0.25 * 2 + 4 / 3 * np.pi * 0.125)
    assert Plane().volume == np.inf


def test_from_shape_density_and_origin():
    box = Box((1.0, 2.0, 0.5))
    inertia = Inertia.from_shape(box, density=1000.0, origin=Transform((0, 0, 1)))
    assert inertia.mass == pytest.approx(1000.0)
    np.testing.assert_allclose(inertia.com, [0, 0, 1])
    with pytest.raises(ValueError, match="volume"):
        Inertia.from_shape(Plane(), mass=1.0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Box((1, 0, 1)),
        lambda: Box((1, -1, 1)),
        lambda: Box((1, 1)),
        lambda: Box((1, np.nan, 1)),
        lambda: Sphere(0.0),
        lambda: Sphere(-1),
        lambda: Sphere(np.inf),
        lambda: Sphere("a"),
        lambda: Capsule(0.1, 0.0),
        lambda: Capsule(-0.1, 1.0),
        lambda: Cylinder(0.1, np.nan),
        lambda: Plane((0, 0, 0)),
        lambda: Plane((0, 0, 1), np.inf),
        lambda: Mesh(trimesh.creation.box(), scale=0.0),
        lambda: Mesh(trimesh.creation.box(), scale=(1, 1)),
        lambda: Mesh(42),
    ],
)
def test_bad_dimensions_raise(make):
    with pytest.raises(ValueError):
        make()


def test_negative_mass_raises():
    with pytest.raises(ValueError, match="mass"):
        Box((1, 1, 1)).inertia(-1.0)
    with pytest.raises(ValueError, match="Plane"):
        Plane().inertia(1.0)


@pytest.mark.parametrize("shape", PRIMITIVES + [Mesh(trimesh.creation.box((1, 2, 3)))], ids=repr)
def test_aabb_contains_rotated_surface(shape):
    T = Transform((0.3, -0.2, 1.0), rpy=(0.3, -0.7, 1.1))
    lo, hi = shape.aabb(T)
    pts = T.apply(_fine(shape).vertices if not isinstance(shape, Mesh) else shape.vertices)
    tol = 1e-9
    assert np.all(pts >= lo - tol) and np.all(pts <= hi + tol)
    # tight: the extreme tessellation points touch the box
    np.testing.assert_allclose(pts.min(axis=0), lo, atol=2e-3)
    np.testing.assert_allclose(pts.max(axis=0), hi, atol=2e-3)


def test_plane():
    p = Plane((0, 0, 2), 0.5)
    np.testing.assert_allclose(p.normal, [0, 0, 1])
    lo, hi = p.aabb(Transform((0, 0, 1)))
    assert hi[2] == pytest.approx(1.5) and np.all(np.isinf(lo)) and np.all(np.isinf(hi[:2]))
    lo, hi = Plane((0, 0, -1), 0.0).aabb()
    assert lo[2] == 0.0 and hi[2] == np.inf
    tm = p.to_trimesh()
    np.testing.assert_allclose(tm.vertices[:, 2], 0.5)


@pytest.mark.parametrize("shape", PRIMITIVES, ids=repr)
def test_to_trimesh(shape):
    tm = shape.to_trimesh()
    assert isinstance(tm, trimesh.Trimesh) and tm.is_watertight
    assert tm.volume == pytest.approx(shape.volume, rel=0.02)
    assert isinstance(shape, Shape) and type(shape).__name__ in repr(shape)


def test_mesh_from_trimesh_inertia_and_scale():
    tm = trimesh.creation.box(extents=(1.0, 2.0, 3.0))
    tm.apply_translation((1.0, 0.0, -2.0))
    mesh = Mesh(tm, scale=(2.0, 1.0, 0.5))
    assert mesh.vertices.dtype == np.float64 and mesh.vertices.shape[1] == 3
    assert mesh.faces.shape[1] == 3 and np.issubdtype(mesh.faces.dtype, np.integer)
    assert mesh.path is None and mesh.is_convex and mesh.is_watertight
    ref = Box((2.0, 2.0, 1.5))
    assert mesh.volume == pytest.approx(ref.volume)
    inertia = mesh.inertia(MASS)
    np.testing.assert_allclose(inertia.com, [2.0, 0.0, -1.0], atol=1e-12)
    np.testing.assert_allclose(inertia.rotational_inertia, ref.inertia(MASS).rotational_inertia, atol=1e-12)
    lo, hi = mesh.aabb()
    np.testing.assert_allclose(lo, [1.0, -1.0, -1.75])
    np.testing.assert_allclose(hi, [3.0, 1.0, -0.25])


def test_mesh_inverted_winding():
    tm = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    tm.invert()
    mesh = Mesh(tm)
    assert mesh.volume == pytest.approx(1.0)
    np.testing.assert_allclose(mesh.inertia(6.0).rotational_inertia, np.eye(3), atol=1e-12)


def test_mesh_not_watertight_uses_hull():
    tm = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    open_box = trimesh.Trimesh(tm.vertices, tm.faces[:-2], process=False)
    mesh = Mesh(open_box)
    assert not mesh.is_watertight
    with pytest.warns(UserWarning, match="convex hull"):
        assert mesh.volume == pytest.approx(1.0)
    np.testing.assert_allclose(mesh.inertia(6.0).rotational_inertia, np.eye(3), atol=1e-12)


def test_mesh_concave():
    a = trimesh.creation.box(extents=(1, 1, 1))
    b = trimesh.creation.box(extents=(1, 1, 1))
    b.apply_translation((1, 0, 0))
    c = trimesh.creation.box(extents=(1, 1, 1))
    c.apply_translation((0, 1, 0))
    verts = np.vstack([a.vertices, b.vertices, c.vertices])
    faces = np.vstack([a.faces, b.faces + 8, c.faces + 16])
    mesh = Mesh(trimesh.Trimesh(verts, faces))
    assert not mesh.is_convex


def test_mesh_files(tmp_path):
    path = tmp_path / "box.stl"
    trimesh.creation.box(extents=(1.0, 2.0, 3.0)).export(path)
    mesh = Mesh(str(path), scale=2.0, lazy=True)
    assert mesh.path == str(path) and not mesh.loaded
    assert mesh.volume == pytest.approx(48.0)
    assert mesh.loaded
    assert "box.stl" in repr(mesh)
    with pytest.raises(FileNotFoundError, match="nope.stl"):
        Mesh(tmp_path / "nope.stl")
    bad = tmp_path / "bad.stl"
    bad.write_bytes(b"\x00garbage" * 3)
    with pytest.raises(ValueError, match="bad.stl"):
        Mesh(bad)
    lazy_bad = Mesh(bad, lazy=True)  # the path exists, so a lazy mesh accepts it until it is read
    with pytest.raises(ValueError, match="bad.stl"):
        _ = lazy_bad.vertices


positive = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["box", "sphere", "capsule", "cylinder"]), a=positive, b=positive, c=positive,
       mass=positive)
def test_inertia_is_physical_and_scales(kind, a, b, c, mass):
    shape = {"box": lambda: Box((a, b, c)), "sphere": lambda: Sphere(a), "capsule": lambda: Capsule(a, b),
             "cylinder": lambda: Cylinder(a, b)}[kind]()
    inertia = shape.inertia(mass)  # Inertia itself checks symmetry, PSD and the triangle inequality
    assert inertia.mass == mass and shape.volume > 0
    np.testing.assert_allclose(shape.inertia(2 * mass).rotational_inertia, 2 * inertia.rotational_inertia,
                               rtol=1e-12)
    from_density = Inertia.from_shape(shape, density=mass / shape.volume)
    np.testing.assert_allclose(from_density.rotational_inertia, inertia.rotational_inertia, rtol=1e-9)


@pytest.mark.parametrize("shape", [Sphere(1e308), Box((1e200, 1e200, 1e200)), Capsule(1e200, 1.0),
                                   Cylinder(1e200, 1e200)], ids=["sphere", "box", "capsule", "cylinder"])
def test_a_volume_that_overflows_names_the_shape(shape):
    # rd.Sphere(1e308).volume used to raise Python's bare OverflowError
    with pytest.raises(ValueError, match=rf"{type(shape).__name__}\(.*too large.*overflows"):
        shape.volume
