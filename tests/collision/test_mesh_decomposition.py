"""rd.Mesh(..., decompose=True): CoACD's convex parts collide in place of the triangles; mass properties
stay the whole mesh's."""

import numpy as np
import pytest
import trimesh

import rigidiff as rd

from test_mesh_polytope_contacts import world_of
from voxel_meshes import mug

try:
    import coacd  # noqa: F401
except ImportError:
    coacd = None
needs_coacd = pytest.mark.skipif(coacd is None, reason="CoACD (rigidiff[decompose]) is not installed")

MUG = mug()


@needs_coacd
def test_parts_are_convex_cover_the_mug_and_are_cached_and_deterministic():
    mesh = rd.Mesh(MUG, decompose=True)
    parts = mesh.convex_parts()
    assert len(parts) >= 3 and all(p.is_convex for p in parts)  # cup walls and handle need several
    assert mesh.convex_parts() == parts  # cached: the same objects
    again = rd.Mesh(MUG).convex_parts()
    assert len(again) == len(parts)
    for a, b in zip(parts, again):
        np.testing.assert_array_equal(a.vertices, b.vertices)
    # union volume by sampling: a point is covered when it is inside some part
    rng = np.random.default_rng(0)
    lo, hi = MUG.bounds
    x = rng.uniform(lo, hi, (40000, 3))
    covered = np.zeros(len(x), bool)
    for p in parts:  # inside a convex part: behind the plane of each of its faces
        tm = p._merged()
        tm.fix_normals()
        behind = (x @ tm.face_normals.T) <= np.einsum("ij,ij->i", tm.face_normals, tm.triangles[:, 0])
        covered |= behind.all(axis=1)
    union_volume = covered.mean() * np.prod(hi - lo)
    assert abs(union_volume - MUG.volume) < 0.05 * MUG.volume
    assert mesh.volume == pytest.approx(MUG.volume, rel=1e-12)  # mass properties of the mesh itself


def test_bad_threshold_is_refused():
    with pytest.raises(ValueError, match="threshold"):
        rd.Mesh(MUG).convex_parts(threshold=0.0)
    with pytest.raises(TypeError, match="decompose"):
        rd.Mesh(MUG, decompose="yes")


@needs_coacd
def test_a_decomposed_mug_rests_on_a_shelf_touching_through_its_parts():
    world = world_of(rd.Box((0.4, 0.3, 0.02)), rd.Mesh(MUG, decompose=True), mass=0.3)
    q0 = np.array([0.05, 0.02, 0.0105, 0, 0, 0, 1.0])
    c = world.collide(q0 - [0, 0, 0.001, 0, 0, 0, 0])
    mug_names = [name for name in c.shape_a + c.shape_b if "part" in name]
    assert len(c) >= 3 and len(mug_names) == len(c)  # every contact is between the shelf and a part
    Q, _ = world.rollout(q0, np.zeros(6), np.zeros((2000, 6)))
    assert np.linalg.norm(Q[-1, :3] - Q[500, :3]) < 5e-4
    assert abs(Q[-1, 2] - 0.01) < 2e-3


def test_without_coacd_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "coacd", None)  # as if it were not installed
    with pytest.raises(ImportError, match=r"rigidiff\[decompose\]"):
        rd.Mesh(MUG).convex_parts()


@needs_coacd
def test_a_part_friction_set_through_the_parameters_is_the_whole_mesh_friction():
    world = world_of(rd.Box((0.4, 0.3, 0.02)), rd.Mesh(MUG, decompose=True))
    p = world.parameters()
    parts = [i for i, n in enumerate(p.names) if "/part" in n and n.endswith("/friction")]
    assert len(parts) == len(rd.Mesh(MUG).convex_parts())
    values = np.array(p.values)
    values[parts[1]] = 0.9
    world.set_parameters(values)
    after = np.array(world.parameters().values)
    np.testing.assert_array_equal(after[parts], 0.9)
