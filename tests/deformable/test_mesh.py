"""Tetrahedral and hexahedral meshes: validation naming the element, exact volumes and lumped masses (against
an independent high-order quadrature), voxelisation and tetrahedralisation of surfaces."""

import numpy as np
import pytest
import trimesh

import rigidiff as rd

TET = (np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]), np.array([[0, 1, 2, 3]]))


def _two_tets():
    v = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]])
    return v, np.array([[0, 1, 2, 3], [1, 2, 3, 4]])


def test_tet_volume():
    mesh = rd.TetMesh(*_two_tets())
    np.testing.assert_allclose(mesh.element_volumes(), [1 / 6, 1 / 3], rtol=1e-14)
    assert mesh.volume() == pytest.approx(0.5)


@pytest.mark.parametrize("tets, message", [
    (np.array([[0, 1, 2, 3], [0, 2, 1, 3]]), "element 1 is inverted"),
    (np.array([[0, 1, 2, 3], [0, 1, 2, 2]]), "element 1 is degenerate"),
    (np.zeros((0, 4), dtype=int), "no elements"),
    (np.array([[0, 1, 2, 7]]), "element 0 names vertex 7"),
    (np.array([[0, 1, 2]]), r"\(m, 4\)"),
])
def test_bad_tets_name_the_element(tets, message):
    with pytest.raises(ValueError, match=message):
        rd.TetMesh(TET[0], tets)


def test_bad_vertices():
    with pytest.raises(ValueError, match="finite"):
        rd.TetMesh(np.where(TET[0] == 1, np.nan, TET[0]), TET[1])
    with pytest.raises(ValueError, match=r"\(n, 3\)"):
        rd.TetMesh(TET[0][:, :2], TET[1])
    with pytest.raises(ValueError, match="vertex 4 belongs to no element"):
        rd.TetMesh(np.vstack([TET[0], [[2.0, 2, 2]]]), TET[1])
    with pytest.raises(TypeError, match="integer"):
        rd.TetMesh(TET[0], TET[1] + 0.5)


def _distorted_hex():
    mesh = rd.HexMesh.box((1.0, 1.0, 1.0), (1, 1, 1))
    v = mesh.vertices.copy()
    v[7] += (0.3, 0.2, 0.4)  # the far corner moved: a non-affine (trilinear) element
    v[1] += (0.1, -0.1, 0.0)
    return rd.HexMesh(v, mesh.elements)


def _reference_integrals(mesh):
    """Volume and int N_k dV of each hexahedron by a 6-point Gauss-Legendre rule, written independently."""
    x, w = np.polynomial.legendre.leggauss(6)
    x, w = 0.5 * (x + 1), 0.5 * w
    corners = np.array([[k & 1, (k >> 1) & 1, (k >> 2) & 1] for k in range(8)])
    nodal = np.zeros((len(mesh.elements), 8))
    for a, wa in zip(x, w):
        for b, wb in zip(x, w):
            for c, wc in zip(x, w):
                xi = np.array([a, b, c])
                N = np.prod(np.where(corners == 1, xi, 1 - xi), axis=1)
                dN = np.empty((8, 3))
                for d in range(3):
                    e = np.where(corners == 1, xi, 1 - xi)
                    e[:, d] = 2 * corners[:, d] - 1
                    dN[:, d] = np.prod(e, axis=1)
                J = np.einsum("mki,kj->mij", mesh.vertices[mesh.elements], dN)
                nodal += wa * wb * wc * np.linalg.det(J)[:, None] * N[None]
    return nodal


def test_hex_volume_and_masses_are_exact():
    mesh = _distorted_hex()
    nodal = _reference_integrals(mesh)
    assert mesh.volume() == pytest.approx(nodal.sum(), rel=1e-13)
    world = rd.World(dt=1e-2, solver="projective")
    world.add_deformable(mesh, rd.ProjectiveMaterial(1e5, 0.3, 700.0), name="hex")
    expected = np.zeros(len(mesh.vertices))
    np.add.at(expected, mesh.elements.ravel(), 700.0 * nodal.ravel())
    np.testing.assert_allclose(world.masses("hex"), expected, rtol=1e-12)
    # unlike a mass of density times the average element volume per vertex, corners of a distorted element differ
    assert np.ptp(expected) > 0.1 * expected.mean()


def test_tet_masses_are_a_quarter_of_each_element():
    v, t = _two_tets()
    mesh = rd.TetMesh(v, t)
    world = rd.World(dt=1e-2, solver="projective")
    world.add_deformable(mesh, rd.ProjectiveMaterial(1e5, 0.3, 1000.0), name="t")
    vols = mesh.element_volumes()
    expected = np.zeros(5)
    np.add.at(expected, t.ravel(), np.repeat(1000.0 * vols / 4, 4))
    np.testing.assert_allclose(world.masses("t"), expected, rtol=1e-13)


def test_inverted_hex_names_the_element():
    good = rd.HexMesh.box((2.0, 1.0, 1.0), (2, 1, 1))
    hexes = good.elements.copy()
    hexes[1] = hexes[1][[1, 0, 3, 2, 5, 4, 7, 6]]  # mirrored in x: inverted
    with pytest.raises(ValueError, match="element 1 is inverted"):
        rd.HexMesh(good.vertices, hexes)
    flat = good.vertices.copy()
    flat[:, 2] = 0.0
    with pytest.raises(ValueError, match="element 0 is degenerate"):
        rd.HexMesh(flat, good.elements)


def test_box_grid():
    mesh = rd.HexMesh.box((0.3, 0.2, 0.1), (3, 2, 1), origin=(1, 2, 3))
    assert len(mesh.elements) == 6 and len(mesh.vertices) == 4 * 3 * 2
    assert mesh.volume() == pytest.approx(0.006)
    np.testing.assert_allclose(mesh.vertices.min(axis=0), (1, 2, 3))
    with pytest.raises(ValueError, match="cells"):
        rd.HexMesh.box((1, 1, 1), (0, 1, 1))


def test_voxelise_a_sphere():
    sphere = trimesh.creation.icosphere(subdivisions=2, radius=0.1)
    mesh = rd.HexMesh.from_surface(sphere, dx=0.025)
    assert mesh.volume() == pytest.approx(sphere.volume, rel=0.15)
    assert np.allclose(mesh.element_volumes(), 0.025**3)
    fine = rd.HexMesh.from_surface(sphere, dx=0.0125)
    assert abs(fine.volume() - sphere.volume) < abs(mesh.volume() - sphere.volume)


def test_voxelise_a_ring_keeps_its_hole():
    """A ring (not convex: its hole is outside) voxelised into cubes whose centres lie inside it, checked cube by
    cube against the ring's own inequalities; centres within 2 mm of its faceted round walls are left out."""
    r_in, r_out, height, dx = 0.04, 0.1, 0.05, 0.01
    ring = trimesh.creation.annulus(r_min=r_in, r_max=r_out, height=height, sections=64)
    mesh = rd.HexMesh.from_surface(ring, dx=dx)
    centres = mesh.vertices[mesh.elements].mean(axis=1)
    radius = np.hypot(centres[:, 0], centres[:, 1])
    assert np.all(np.abs(centres[:, 2]) < height / 2)
    assert np.all(radius > r_in - 2e-3) and np.all(radius < r_out + 2e-3)
    # every centre of the grid (20 x 20 x 5 cubes over the ring's bounding box) clearly inside the ring is a cube
    g = np.arange(-r_out + dx / 2, r_out, dx)
    x, y, z = (a.ravel() for a in np.meshgrid(g, g, np.arange(-2, 3) * dx, indexing="ij"))
    r = np.hypot(x, y)
    inside = (r > r_in + 2e-3) & (r < r_out * np.cos(np.pi / 64) - 2e-3)
    found = {tuple(np.round(c / 1e-4).astype(int)) for c in centres}
    wanted = {tuple(np.round(p / 1e-4).astype(int)) for p in np.stack([x, y, z], 1)[inside]}
    assert wanted <= found and len(found) < 1.1 * len(wanted)


def test_winding_numbers_are_one_inside_and_zero_outside_even_near_the_surface():
    from rigidiff.deformable.mesh import _winding_numbers

    sphere = trimesh.creation.icosphere(subdivisions=3, radius=0.1)
    rng = np.random.default_rng(5)
    directions = rng.standard_normal((400, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    # the icosphere is inscribed: its faces lie at least 0.1 cos(its largest face angle) from the centre
    points = np.concatenate([0.09 * directions * rng.random((400, 1)) ** (1 / 3), 0.1001 * directions,
                             directions * (0.1001 + rng.random((400, 1)))])
    w = _winding_numbers(sphere.vertices, sphere.faces, points, chunk=5000)
    np.testing.assert_allclose(w[:400], 1.0, atol=1e-9)
    np.testing.assert_allclose(w[400:], 0.0, atol=1e-9)
    # chunking does not change a value
    np.testing.assert_array_equal(w, _winding_numbers(sphere.vertices, sphere.faces, points, chunk=10**7))


def test_voxelise_a_box_of_whole_cubes():
    """A box whose sides are whole numbers of cubes up to rounding is voxelised exactly: 0.15 / 0.025 is
    6.000000000000001 in floating point, and a seventh column would shift the grid off the box by half a cube."""
    box = trimesh.creation.box((0.2, 0.15, 0.05))
    box.apply_translation((0.1, 0.075, 0.025))
    mesh = rd.HexMesh.from_surface(box, dx=0.025)
    assert len(mesh.elements) == 8 * 6 * 2
    np.testing.assert_allclose(mesh.vertices.min(axis=0), (0.0, 0.0, 0.0), atol=1e-12)
    np.testing.assert_allclose(mesh.vertices.max(axis=0), (0.2, 0.15, 0.05), atol=1e-12)


def test_voxelise_refuses_open_surfaces():
    sphere = trimesh.creation.icosphere(subdivisions=2, radius=0.1)
    open_mesh = trimesh.Trimesh(sphere.vertices, sphere.faces[:-3])
    with pytest.raises(ValueError, match="not watertight"):
        rd.HexMesh.from_surface(open_mesh, dx=0.02)
    with pytest.raises(ValueError, match="dx"):
        rd.HexMesh.from_surface(sphere, dx=-1.0)
    # a dx far too small for the surface is named before a grid is allocated (it was numpy's MemoryError for 7 TiB)
    with pytest.raises(ValueError, match=r"dx = 1e-05 cuts the surface's bounding box into 20000 x 20000 x 20000 = "
                                         r"8e\+12 cubes, more than 2e\+07: use a larger dx"):
        rd.HexMesh.from_surface(sphere, dx=1e-5)


def test_tetrahedralise_a_sphere():
    pytest.importorskip("pytetwild")
    sphere = trimesh.creation.icosphere(subdivisions=2, radius=0.1)
    mesh = rd.TetMesh.from_surface(sphere, edge_length_fraction=0.2)
    assert np.all(mesh.element_volumes() > 0)
    assert mesh.volume() == pytest.approx(sphere.volume, rel=0.05)


def test_tetrahedralise_without_pytetwild_says_how_to_get_it(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pytetwild(name, *args, **kwargs):
        if name == "pytetwild":
            raise ImportError("hidden by the test")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pytetwild)
    with pytest.raises(ImportError, match="pip install pytetwild"):
        rd.TetMesh.from_surface(trimesh.creation.icosphere(subdivisions=1))


@pytest.mark.parametrize("make", [lambda: rd.HexMesh.box((0.3, 0.2, 0.1), (3, 2, 2)),
                                  lambda: rd.HexMesh.from_surface(trimesh.creation.icosphere(2, 0.1), dx=0.04),
                                  lambda: rd.TetMesh(*_two_tets())], ids=["box", "voxels", "tets"])
def test_boundary_faces_close_the_volume(make):
    mesh = make()
    surface = trimesh.Trimesh(mesh.vertices, mesh.boundary_faces(), process=False)
    assert surface.is_watertight and surface.is_winding_consistent
    assert surface.volume == pytest.approx(mesh.volume(), rel=1e-12)  # positive: wound outwards


def test_equal_rows_are_grouped_as_numpy_unique_groups_them():
    """The boundary's grouping of element faces (integer sorts) matches np.unique over rows: first index of each
    group and its size, groups in lexicographic order."""
    from rigidiff.deformable.mesh import _first_of_equal_rows

    rng = np.random.default_rng(3)
    for rows in (rng.integers(0, 5, size=(300, 4)), rng.integers(0, 1000, size=(50, 3)), np.zeros((4, 3), int),
                 np.sort(rd.HexMesh.box((1, 1, 1), (3, 2, 2)).elements[:, :4], axis=1)):
        _, index, counts = np.unique(rows, axis=0, return_index=True, return_counts=True)
        first, sizes = _first_of_equal_rows(rows)
        assert np.array_equal(first, index) and np.array_equal(sizes, counts)
