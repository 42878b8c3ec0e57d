"""A collision mesh is tested (convexity, bad-mesh checks, prisms) once per geometry: a Mesh of the same
vertices and faces, as each load_urdf of a robot makes, reuses the work and still warns on its own."""

import os
import warnings

import numpy as np
import pytest
import trimesh

import rigidiff as rd
from rigidiff import collision, shapes
from rigidiff._geometry_cache import GeometryCache, geometry_key
from rigidiff.collision import triangle_mesh_data

from voxel_meshes import mug


def _fresh(tm):
    return rd.Mesh(trimesh.Trimesh(tm.vertices.copy(), tm.faces.copy(), process=False))


def test_same_geometry_is_prepared_once(monkeypatch):
    tm = mug()
    calls = []
    prepare = collision._prepare_triangle_mesh
    monkeypatch.setattr(collision, "_prepare_triangle_mesh", lambda m: calls.append(m) or prepare(m))
    monkeypatch.setattr(collision, "_PREPARED", GeometryCache())
    first, second = _fresh(tm), _fresh(tm)
    a, b = triangle_mesh_data(first, "a"), triangle_mesh_data(second, "b")
    assert calls == [first]  # the second mesh reused the first one's preparation
    assert a[0] == b[0] and np.array_equal(a[2], b[2])
    for x, y in zip(a[3][:2], b[3][:2]):
        assert np.array_equal(x, y)
        assert x is not y  # each caller owns its arrays
    assert a[3][2] == b[3][2]
    a[3][0][:] = 0.0  # changing what one caller got leaves the cache untouched
    assert np.array_equal(triangle_mesh_data(second, "b")[3][0], b[3][0])
    # another geometry (scaled) is prepared anew
    triangle_mesh_data(rd.Mesh(trimesh.Trimesh(tm.vertices, tm.faces, process=False), scale=2.0), "c")
    assert len(calls) == 2


def test_every_mesh_object_warns_once_even_from_the_cache():
    tm = trimesh.creation.box((1.0, 1.0, 1.0))
    bad = trimesh.Trimesh(tm.vertices, np.vstack([tm.faces, tm.faces[:1]]), process=False)
    first, second = _fresh(bad), _fresh(bad)
    for mesh, name in ((first, "first"), (second, "second")):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            triangle_mesh_data(mesh, name)
        messages = [str(r.message) for r in record]
        assert any(m.startswith(f"{name}: 1 duplicate faces") for m in messages), messages
        assert any(m.startswith(f"{name}: non-manifold edges") for m in messages), messages
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        triangle_mesh_data(second, "second")


def test_a_degenerate_mesh_raises_every_time():
    flat = trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [[0, 1, 2]], process=False)
    for name in ("one", "two"):
        with pytest.raises(ValueError, match=f"{name}: every triangle of the mesh is degenerate"):
            triangle_mesh_data(rd.Mesh(flat), name)


def test_convexity_is_tested_once_per_geometry(monkeypatch):
    tm = trimesh.creation.icosphere(subdivisions=2)
    monkeypatch.setattr(shapes, "_CONVEXITY", GeometryCache())
    tested = []
    merged = rd.Mesh._merged
    monkeypatch.setattr(rd.Mesh, "_merged", lambda self: tested.append(self) or merged(self))
    assert _fresh(tm).is_convex and _fresh(tm).is_convex
    assert len(tested) == 1
    assert not rd.Mesh(mug()).is_convex
    assert len(tested) == 2


def test_geometry_key_tells_geometries_apart():
    v, f = np.eye(3), np.array([[0, 1, 2]])
    assert geometry_key(v, f) == geometry_key(v.copy(), f.astype(np.int32))
    assert geometry_key(v, f) != geometry_key(v + 1e-15, f)
    assert geometry_key(v, f) != geometry_key(v, f[:, ::-1])


def test_cache_forgets_the_least_recently_used():
    cache = GeometryCache(size=2)
    assert cache.get(b"a", lambda: 1) == 1 and cache.get(b"b", lambda: 2) == 2
    assert cache.get(b"a", lambda: 0) == 1  # a is now the most recent
    cache.get(b"c", lambda: 3)
    assert len(cache) == 2
    assert cache.get(b"b", lambda: 20) == 20  # b was forgotten, a kept
    assert cache.get(b"c", lambda: 30) == 3


def test_a_mesh_file_is_read_once_until_it_changes(tmp_path, monkeypatch):
    path = tmp_path / "part.stl"
    trimesh.creation.box((1.0, 2.0, 3.0)).export(path)
    monkeypatch.setattr(shapes, "_FILES", GeometryCache())
    reads = []
    read = rd.Mesh._read
    monkeypatch.setattr(rd.Mesh, "_read", lambda self: reads.append(self.path) or read(self))
    a, b = rd.Mesh(path), rd.Mesh(path, scale=2.0)
    assert len(reads) == 1
    assert np.array_equal(b.vertices, 2.0 * a.vertices) and np.array_equal(a.faces, b.faces)
    assert np.ptp(a.vertices, axis=0).tolist() == [1.0, 2.0, 3.0]
    trimesh.creation.box((1.0, 1.0, 1.0)).export(path)  # a new file: another size
    os.utime(path, ns=(1, 1))
    c = rd.Mesh(path)
    assert len(reads) == 2 and np.ptp(c.vertices, axis=0).tolist() == [1.0, 1.0, 1.0]
    path.write_text("not a mesh")
    with pytest.raises(ValueError, match="part.stl"):  # trimesh reads no triangles from it
        rd.Mesh(path)
    lazy = rd.Mesh(tmp_path / "part.stl", lazy=True)
    path.unlink()
    with pytest.raises(ValueError, match="cannot read mesh file"):
        lazy.vertices
