"""Meshes that are non-manifold, hold duplicate faces or cross themselves warn, naming their faces, when
they become collision geometry; clean meshes do not."""

import warnings

import numpy as np
import pytest
import trimesh

import rigidiff as rd
from rigidiff.collision import triangle_mesh_data
from rigidiff.mesh_checks import _candidate_pairs, duplicate_faces, non_manifold_faces, self_intersecting_faces

from voxel_meshes import holed_block, mug


def _box(center=(0, 0, 0), size=1.0):
    return trimesh.creation.box((size, size, size), trimesh.transformations.translation_matrix(center))


def _no_warning(mesh):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        triangle_mesh_data(mesh, "clean")


def test_clean_meshes_give_no_warning():
    _no_warning(rd.Mesh(mug()))
    _no_warning(rd.Mesh(holed_block(cells=2)))


def test_non_manifold_edge_names_its_faces():
    # two boxes sharing one edge: the edge at x = y = 0.5 belongs to four faces
    a, b = _box(), _box((1.0, 1.0, 0.0))
    tm = trimesh.util.concatenate([a, b])
    tm.merge_vertices()
    mesh = rd.Mesh(tm)
    bad = non_manifold_faces(np.asarray(mesh.faces))
    assert len(bad) > 0 and all(len(f) == 4 for f in bad)
    with pytest.warns(UserWarning, match=r"edgy: non-manifold edges.*first faces \(") as record:
        triangle_mesh_data(mesh, "edgy")
    assert str(tuple(int(i) for i in bad[0])) in str(record[0].message)


def test_duplicate_face_names_the_pair():
    tm = _box()
    faces = np.vstack([tm.faces, tm.faces[3][::-1]])  # face 3 again, the other way round
    mesh = rd.Mesh(trimesh.Trimesh(tm.vertices, faces, process=False))
    assert duplicate_faces(np.asarray(mesh.faces)).tolist() == [[3, 12]]
    with pytest.warns(UserWarning, match=r"twice: 1 duplicate faces .*first pairs \(3, 12\)"):
        triangle_mesh_data(mesh, "twice")


def test_self_intersection_names_the_crossing_faces():
    a, b = _box(), _box((0.5, 0.3, 0.2))  # two overlapping boxes in one surface
    tm = trimesh.Trimesh(np.vstack([a.vertices, b.vertices]), np.vstack([a.faces, b.faces + len(a.vertices)]),
                         process=False)
    mesh = rd.Mesh(tm)
    pairs = self_intersecting_faces(np.asarray(mesh.vertices), np.asarray(mesh.faces))
    assert len(pairs) > 0
    assert np.all(pairs[:, 0] < 12) and np.all(pairs[:, 1] >= 12)  # each crossing is one face of each box
    with pytest.warns(UserWarning, match=r"crossed: self-intersecting surface") as record:
        triangle_mesh_data(mesh, "crossed")
    assert str(tuple(int(i) for i in pairs[0])) in str(record[0].message)


@pytest.mark.parametrize("seed", range(6))
def test_box_tree_finds_every_overlapping_pair_of_boxes_once(seed):
    """The box tree's pairs against all pairs: boxes of very different sizes (a few spanning most of the
    mesh, some flat or points), some only touching on a shared coordinate (closed boxes overlap)."""
    rng = np.random.default_rng(seed)
    n, digits, scale = 300, 1 + seed % 2, (1e-3, 1.0, 1e3)[seed % 3]
    lo = np.round(rng.normal(scale=0.5, size=(n, 3)), digits)
    size = rng.exponential(scale=0.15, size=(n, 3)) * (rng.random((n, 3)) < 0.9)
    size[:4] *= 20.0  # huge faces among small ones
    lo, hi = lo * scale, np.round(lo + size, digits) * scale
    i, j = np.triu_indices(n, 1)
    overlap = np.all((lo[i] <= hi[j]) & (lo[j] <= hi[i]), axis=1)
    expected = np.column_stack([i[overlap], j[overlap]])
    assert len(expected) > n // 2
    np.testing.assert_array_equal(_candidate_pairs(lo, hi), expected)


@pytest.mark.parametrize("seed", range(3))
def test_box_tree_finds_every_pair_when_a_third_of_the_boxes_are_long(seed):
    """Long thin faces (a third of some CAD meshes): boxes of very different lengths along different axes, every
    overlapping pair once."""
    rng = np.random.default_rng(seed)
    n = 1500
    centre = rng.uniform(0.0, 1.0, (n, 3))
    size = rng.uniform(0.0, 0.01, (n, 3))
    long = rng.random(n) < 0.35
    size[long, rng.integers(0, 3, long.sum())] *= rng.uniform(10.0, 60.0, long.sum())
    lo, hi = centre - size, centre + size
    i, j = np.triu_indices(n, 1)
    overlap = np.all((lo[i] <= hi[j]) & (lo[j] <= hi[i]), axis=1)
    np.testing.assert_array_equal(_candidate_pairs(lo, hi), np.column_stack([i[overlap], j[overlap]]))


def test_touching_boxes_do_not_cross():
    a, b = _box(), _box((1.0, 0.0, 0.0))  # faces touch in the plane x = 0.5, no crossing
    tm = trimesh.Trimesh(np.vstack([a.vertices, b.vertices]), np.vstack([a.faces, b.faces + len(a.vertices)]),
                         process=False)
    assert len(self_intersecting_faces(tm.vertices, tm.faces)) == 0


def test_warning_is_given_once_per_mesh():
    tm = _box()
    mesh = rd.Mesh(trimesh.Trimesh(tm.vertices, np.vstack([tm.faces, tm.faces[:1]]), process=False))
    with pytest.warns(UserWarning, match="duplicate"):
        triangle_mesh_data(mesh, "m")
    _no_warning(mesh)


def test_degenerate_triangles_are_left_out_and_indices_kept():
    tm = _box()
    sliver = [[tm.faces[0][0], tm.faces[0][0], tm.faces[0][1]]]  # zero area, on an edge of face 0
    faces = np.vstack([sliver, tm.faces, tm.faces[5:6]])
    mesh = rd.Mesh(trimesh.Trimesh(tm.vertices, faces, process=False))
    with pytest.warns(UserWarning) as record:
        triangle_mesh_data(mesh, "sliver")
    messages = [str(r.message) for r in record]
    assert any("first pairs (6, 13)" in m for m in messages)  # numbered as in mesh.faces, sliver included
