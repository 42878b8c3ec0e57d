"""The box tree of collision/bvh.hpp (through rigidiff._testing) against brute force over every triangle pair.

Boxes are the triangles' axis-aligned boxes in their own mesh frames. The self, box and refit queries
compare those boxes directly, so they must give exactly the brute-force set. The two-mesh query places
B's boxes in A's frame as oriented boxes and separates them along the 15 axes of the two boxes: the
brute force does the same, and the sets must agree except for pairs within rounding of touching.
python-fcl's intersecting triangles are an independent check that every true contact is among the pairs.
"""

import fcl
import numpy as np
import pytest
import trimesh
from scipy.spatial import cKDTree
from scipy.spatial.transform import Rotation

from rigidiff import _testing

TOUCH = 1e-9  # pairs whose separation is within this of zero may go either way under rounding


def pose(rotvec=(0.0, 0.0, 0.0), t=(0.0, 0.0, 0.0)):
    """A pose as the bindings take it: rotation row-major, then translation."""
    return np.r_[Rotation.from_rotvec(rotvec).as_matrix().ravel(), t]


def boxes(verts, tris):
    tri = np.asarray(verts, dtype=float)[np.asarray(tris)]
    return tri.min(axis=1), tri.max(axis=1)


def as_set(pairs):
    return {tuple(p) for p in np.asarray(pairs).tolist()}


def shares_vertex(tris, i, j):
    return (tris[i][:, :, None] == tris[j][:, None, :]).any(axis=(1, 2))


def brute_self(verts, tris, margin, inflate=0.0):
    lo, hi = boxes(verts, tris)
    lo, hi = lo - inflate, hi + inflate
    i, j = np.triu_indices(len(tris), k=1)
    hit = ~((lo[i] - margin > hi[j]) | (lo[j] > hi[i] + margin)).any(axis=1)
    i, j = i[hit], j[hit]
    keep = ~shares_vertex(np.asarray(tris), i, j)
    return set(zip(i[keep].tolist(), j[keep].tolist()))


def separation(verts_a, tris_a, pose_a, verts_b, tris_b, pose_b, margin, i, j):
    """Largest separation over the 15 box axes (unit length) of A's box i grown by margin and B's box j
    placed in A's frame, for each pair (i, j) of the index arrays: > 0 separated, <= 0 overlapping."""
    Ra, Rb = pose_a[:9].reshape(3, 3), pose_b[:9].reshape(3, 3)
    R = Ra.T @ Rb
    p = Ra.T @ (pose_b[9:] - pose_a[9:])
    lo_a, hi_a = boxes(verts_a, tris_a)
    lo_b, hi_b = boxes(verts_b, tris_b)
    ha = 0.5 * (hi_a[i] - lo_a[i]) + margin
    hb = 0.5 * (hi_b[j] - lo_b[j])
    t = 0.5 * (lo_b[j] + hi_b[j]) @ R.T + p - 0.5 * (lo_a[i] + hi_a[i])
    absR = np.abs(R)
    gaps = [np.abs(t) - ha - hb @ absR.T, np.abs(t @ R) - ha @ absR - hb]
    for k in range(3):
        k1, k2 = (k + 1) % 3, (k + 2) % 3
        for m in range(3):
            m1, m2 = (m + 1) % 3, (m + 2) % 3
            norm = np.sqrt(max(0.0, 1.0 - R[k, m] ** 2))
            if norm < 1e-9:  # a and b axes parallel: no axis here
                continue
            ra = ha[:, k1] * absR[k2, m] + ha[:, k2] * absR[k1, m]
            rb = hb[:, m1] * absR[k, m2] + hb[:, m2] * absR[k, m1]
            gaps.append(((np.abs(t[:, k2] * R[k1, m] - t[:, k1] * R[k2, m]) - ra - rb) / norm)[:, None])
    return np.concatenate(gaps, axis=1).max(axis=1)


def check_pairs(verts_a, tris_a, pose_a, verts_b, tris_b, pose_b, margin):
    """The two-mesh query against the brute force over every pair; returns its pairs."""
    got = _testing.bvh_mesh_pairs(verts_a, tris_a, pose_a, verts_b, tris_b, pose_b, margin)
    assert np.array_equal(got, np.unique(got, axis=0)), "pairs not sorted or repeated"
    i, j = (x.ravel() for x in np.indices((len(tris_a), len(tris_b))))
    gap = separation(verts_a, tris_a, pose_a, verts_b, tris_b, pose_b, margin, i, j).reshape(len(tris_a), -1)
    found = np.zeros(gap.shape, dtype=bool)
    if len(got):
        found[got[:, 0], got[:, 1]] = True
    sure = np.abs(gap) > TOUCH
    assert np.array_equal(found[sure], (gap <= 0.0)[sure])
    assert (gap < -TOUCH).sum() > 0, "the case has no overlapping pair"
    return got


def placed_pair(mesh, seed):
    """Random poses of mesh and of a second mesh centred on one of mesh's vertices, so that they touch."""
    rng = np.random.default_rng(seed)
    Ra = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
    pa = rng.normal(size=3)
    centre = mesh.vertices[rng.integers(len(mesh.vertices))]
    return np.r_[Ra.ravel(), pa], pose(rng.normal(size=3), Ra @ centre + pa)


def soup(n, seed, size=0.15):
    """n random triangles in the cube [-0.5, 0.5]^3: random positions, shapes and sizes."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-0.5, 0.5, size=(n, 1, 3))
    verts = (centres + rng.normal(scale=size, size=(n, 3, 3))).reshape(-1, 3)
    return verts, np.arange(3 * n).reshape(n, 3)


MESHES = {
    "icosphere": lambda: trimesh.creation.icosphere(subdivisions=2),
    "torus": lambda: trimesh.creation.torus(major_radius=1.0, minor_radius=0.3, major_sections=24, minor_sections=12),
    "box": lambda: trimesh.creation.box(extents=(1.0, 0.5, 0.3)),
    "soup": lambda: trimesh.Trimesh(*soup(300, 1), process=False),
}


@pytest.mark.parametrize("name", sorted(MESHES))
@pytest.mark.parametrize("margin", [0.0, 0.05])
def test_mesh_pairs_match_brute_force(name, margin):
    mesh = MESHES[name]()
    other = trimesh.creation.icosphere(subdivisions=2, radius=0.45)
    for seed in range(3):
        pa, pb = placed_pair(mesh, seed)
        check_pairs(mesh.vertices, mesh.faces, pa, other.vertices, other.faces, pb, margin)


def test_mesh_pairs_against_itself_at_identity_are_the_overlapping_boxes():
    """With both meshes at one pose the test is plain box overlap, with no rounding to excuse."""
    mesh = MESHES["torus"]()
    got = as_set(_testing.bvh_mesh_pairs(mesh.vertices, mesh.faces, pose(), mesh.vertices, mesh.faces, pose(), 0.0))
    lo, hi = boxes(mesh.vertices, mesh.faces)
    hit = ~((lo[:, None] > hi[None]) | (lo[None] > hi[:, None])).any(axis=2)
    assert got == set(zip(*np.nonzero(hit)))


def test_every_intersecting_triangle_pair_is_found():
    """fcl's intersecting triangles (an independent test on the triangles themselves) are among the pairs."""
    a = trimesh.creation.torus(major_radius=1.0, minor_radius=0.3, major_sections=30, minor_sections=15)
    b = trimesh.creation.icosphere(subdivisions=3, radius=0.5)
    pa, pb = pose((0.2, 0.1, 0.0)), pose((0.0, 0.4, 0.3), (1.0, 0.1, 0.05))
    got = as_set(_testing.bvh_mesh_pairs(a.vertices, a.faces, pa, b.vertices, b.faces, pb, 0.0))
    objects = []
    for mesh, p in ((a, pa), (b, pb)):
        model = fcl.BVHModel()
        model.beginModel(len(mesh.vertices), len(mesh.faces))
        model.addSubModel(mesh.vertices, mesh.faces)
        model.endModel()
        objects.append(fcl.CollisionObject(model, fcl.Transform(p[:9].reshape(3, 3), p[9:])))
    result = fcl.CollisionResult()
    fcl.collide(*objects, fcl.CollisionRequest(num_max_contacts=100000, enable_contact=True), result)
    touching = {(c.b1, c.b2) for c in result.contacts}
    assert len(touching) > 10
    assert touching <= got


def test_ten_thousand_triangle_meshes_in_contact():
    """Two 10k-triangle tori cutting through each other: the pairs are those of the brute force (boxes
    compared in chunks)."""
    mesh = trimesh.creation.torus(major_radius=1.0, minor_radius=0.3, major_sections=100, minor_sections=50)
    assert len(mesh.faces) == 10000
    pa, pb = pose((0.1, -0.2, 0.3), (0.5, 0.0, 0.0)), pose((0.4, 0.0, 0.0), (0.7, 0.1, 0.1))
    got = _testing.bvh_mesh_pairs(mesh.vertices, mesh.faces, pa, mesh.vertices, mesh.faces, pb, 0.01)
    # candidates: pairs whose boxes' bounding spheres meet (the others are certainly apart)
    lo, hi = boxes(mesh.vertices, mesh.faces)
    centre, radius = 0.5 * (lo + hi), 0.5 * np.linalg.norm(hi - lo, axis=1)
    Ra, Rb = pa[:9].reshape(3, 3), pb[:9].reshape(3, 3)
    centre_b = (centre @ Rb.T + pb[9:] - pa[9:]) @ Ra  # in A's frame
    near = cKDTree(centre_b).query_ball_point(centre, radius + radius.max() + 0.02 + 1e-6)
    i = np.repeat(np.arange(len(near)), [len(n) for n in near])
    j = np.concatenate([np.asarray(n, dtype=int) for n in near])
    gap = separation(mesh.vertices, mesh.faces, pa, mesh.vertices, mesh.faces, pb, 0.01, i, j)
    expected = set(zip(i[gap < -TOUCH].tolist(), j[gap < -TOUCH].tolist()))
    ambiguous = set(zip(i[np.abs(gap) <= TOUCH].tolist(), j[np.abs(gap) <= TOUCH].tolist()))
    got = as_set(got)
    assert len(expected) > 100
    assert expected <= got <= expected | ambiguous


@pytest.mark.parametrize("name", sorted(MESHES))
@pytest.mark.parametrize("margin", [0.0, 0.02])
def test_self_pairs_are_brute_force_minus_adjacent(name, margin):
    mesh = MESHES[name]()
    got = _testing.bvh_self_pairs(mesh.vertices, mesh.faces, margin)
    assert np.array_equal(got, np.unique(got, axis=0))
    assert (got[:, 0] < got[:, 1]).all() if len(got) else True
    assert as_set(got) == brute_self(mesh.vertices, mesh.faces, margin)


def test_self_pairs_of_a_folded_sheet():
    """A strip folded back on itself: far-apart triangles in the index order meet across the fold."""
    grid = trimesh.creation.box(extents=(1.0, 1.0, 1.0)).subdivide().subdivide()
    verts = grid.vertices.copy()
    verts[:, 2] = np.where(verts[:, 0] > 0.0, 0.01 - verts[:, 2] * 0.0, verts[:, 2])  # fold the +x half flat
    got = as_set(_testing.bvh_self_pairs(verts, grid.faces, 0.0))
    assert len(got) > len(grid.faces)
    assert got == brute_self(verts, grid.faces, 0.0)


@pytest.mark.parametrize("inflate", [0.0, 0.01])
def test_refit_equals_rebuild_after_deformation(inflate):
    rng = np.random.default_rng(5)
    mesh = trimesh.creation.torus(major_radius=1.0, minor_radius=0.3, major_sections=40, minor_sections=20)
    for step in range(3):
        bent = mesh.vertices + rng.normal(scale=0.05 * (step + 1), size=mesh.vertices.shape)
        bent[:, 2] += 0.3 * np.sin(2.0 * mesh.vertices[:, 0])  # a large smooth bend on top of the noise
        refit = _testing.bvh_refit_pairs(mesh.vertices, bent, mesh.faces, inflate, 0.01)
        rebuilt = _testing.bvh_refit_pairs(bent, bent, mesh.faces, inflate, 0.01)
        assert np.array_equal(refit, rebuilt)
        assert as_set(refit) == brute_self(bent, mesh.faces, 0.01, inflate)
        # the tree built on the old shape and not refitted would miss pairs of the new one
        if inflate == 0.0 and step == 2:
            stale = as_set(_testing.bvh_self_pairs(mesh.vertices, mesh.faces, 0.01))
            assert stale != as_set(refit)


def test_one_tree_refitted_along_a_deformation_answers_as_a_fresh_one():
    """A tree kept across many refits (inflated boxes) gives every query of a tree built on the last shape."""
    mesh = trimesh.creation.torus(major_radius=1.0, minor_radius=0.3, major_sections=30, minor_sections=15)
    other = trimesh.creation.icosphere(subdivisions=2, radius=0.4)
    other_tree = _testing.BvhMesh(other.vertices, other.faces)
    pa, pb = pose((0.2, 0.3, -0.1)), pose((1.0, -0.5, 0.2), (0.9, 0.2, 0.1))
    tree = _testing.BvhMesh(mesh.vertices, mesh.faces, 0.01)
    for t in np.linspace(0.1, 1.0, 6):
        wave = mesh.vertices + 0.2 * t * np.sin(4.0 * mesh.vertices[:, [2, 0, 1]])
        tree.refit(wave, 0.01)
        fresh = _testing.BvhMesh(wave, mesh.faces, 0.01)
        assert np.array_equal(tree.self_pairs(0.02), fresh.self_pairs(0.02))
        assert np.array_equal(tree.pairs(other_tree, pa, pb, 0.02), fresh.pairs(other_tree, pa, pb, 0.02))
        assert np.array_equal(tree.box_query((0.5, 0, -1), (2, 1, 1)), fresh.box_query((0.5, 0, -1), (2, 1, 1)))
        assert len(tree.pairs(other_tree, pa, pb, 0.02)) > 0


def test_refit_keeps_pairs_of_a_rigid_motion():
    mesh = MESHES["icosphere"]()
    moved = mesh.vertices @ Rotation.from_rotvec((0.3, -0.2, 0.9)).as_matrix().T + (5.0, -2.0, 1.0)
    assert len(_testing.bvh_refit_pairs(mesh.vertices, moved, mesh.faces, 0.0, 0.05)) > 0
    assert np.array_equal(_testing.bvh_refit_pairs(mesh.vertices, moved, mesh.faces, 0.0, 0.05),
                          _testing.bvh_self_pairs(moved, mesh.faces, 0.05))


@pytest.mark.parametrize("margin", [0.0, 0.1])
def test_box_query_matches_brute_force(margin):
    verts, tris = soup(2000, 3)
    lo, hi = boxes(verts, tris)
    for qlo, size in np.random.default_rng(4).uniform(-0.7, 0.5, size=(10, 2, 3)):
        qhi = qlo + size + 0.7
        got = _testing.bvh_box_query(verts, tris, qlo, qhi, margin)
        hit = ~((lo > qhi + margin) | (qlo - margin > hi)).any(axis=1)
        assert np.array_equal(got, np.nonzero(hit)[0])


@pytest.mark.parametrize("margin", [0.0, 0.05])
def test_halfspace_query_matches_brute_force(margin):
    verts, tris = soup(2000, 6)
    lo, hi = boxes(verts, tris)
    normals = np.random.default_rng(7).normal(size=(10, 3))
    for normal, offset in zip(normals / np.linalg.norm(normals, axis=1)[:, None], np.linspace(-0.6, 0.2, 10)):
        got = set(_testing.bvh_halfspace_query(verts, tris, normal, offset, margin).tolist())
        lowest = np.where(normal > 0.0, lo, hi) @ normal - offset - margin
        sure = np.abs(lowest) > TOUCH
        assert {i for i in np.nonzero(sure)[0] if lowest[i] <= 0.0} == {i for i in got if sure[i]}
        assert 0 < len(got) < len(tris)


def test_tree_is_balanced_with_small_leaves_and_deterministic():
    mesh = trimesh.creation.torus(major_radius=1.0, minor_radius=0.3, major_sections=100, minor_sections=50)
    nodes, depth, leaf = _testing.bvh_tree_shape(mesh.vertices, mesh.faces)
    assert leaf <= 4
    assert depth <= int(np.ceil(np.log2(len(mesh.faces))))
    assert nodes < 2 * len(mesh.faces)
    first = _testing.bvh_self_pairs(mesh.vertices, mesh.faces, 0.01)
    assert np.array_equal(first, _testing.bvh_self_pairs(mesh.vertices, mesh.faces, 0.01))


def test_empty_meshes_give_no_pairs():
    none = np.zeros((0, 3))
    empty = np.zeros((0, 3), dtype=int)
    mesh = MESHES["box"]()
    assert _testing.bvh_mesh_pairs(none, empty, pose(), mesh.vertices, mesh.faces, pose(), 0.1).shape == (0, 2)
    assert _testing.bvh_mesh_pairs(mesh.vertices, mesh.faces, pose(), none, [], pose(), 0.1).shape == (0, 2)
    assert _testing.bvh_self_pairs(none, empty).shape == (0, 2)
    assert _testing.bvh_refit_pairs(none, none, empty).shape == (0, 2)
    assert _testing.bvh_box_query(none, empty, (0, 0, 0), (1, 1, 1)).shape == (0,)
    assert _testing.bvh_halfspace_query(none, empty, (0, 0, 1), 0.0).shape == (0,)
    assert _testing.bvh_tree_shape(none, empty) == (0, 0, 0)


def test_zero_area_triangles_and_duplicate_vertices():
    """Degenerate triangles (a point, a segment) still have boxes; duplicated vertices are not shared ones."""
    verts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 0], [1, 0, 0], [0.5, 0, 0], [0.2, 0.2, 0]], float)
    tris = np.array([[0, 1, 2], [3, 4, 5], [6, 6, 6], [3, 4, 6]])
    got = as_set(_testing.bvh_self_pairs(verts, tris, 0.0))
    assert got == brute_self(verts, tris, 0.0)
    assert (0, 1) in got and (0, 2) in got and (0, 3) in got  # no index in common with face 0
    assert (1, 3) not in got and (2, 3) not in got  # share vertices 3, 4 and 6
    other = as_set(_testing.bvh_mesh_pairs(verts, tris, pose(), verts, tris, pose(), 0.0))
    lo, hi = boxes(verts, tris)
    assert other == {(i, j) for i in range(4) for j in range(4) if (lo[i] <= hi[j]).all() and (lo[j] <= hi[i]).all()}
    assert (1, 2) not in other and (2, 2) in other


def test_bad_input_is_named():
    mesh = MESHES["box"]()
    verts = mesh.vertices.copy()
    verts[3, 1] = np.nan
    with pytest.raises(ValueError, match="verts_b"):
        _testing.bvh_mesh_pairs(mesh.vertices, mesh.faces, pose(), verts, mesh.faces, pose())
    with pytest.raises(ValueError, match="verts"):
        _testing.bvh_self_pairs(verts, mesh.faces)
    with pytest.raises(ValueError, match="verts_refit"):
        _testing.bvh_refit_pairs(mesh.vertices, verts, mesh.faces)
    with pytest.raises(ValueError, match="verts_refit"):
        _testing.bvh_refit_pairs(mesh.vertices, mesh.vertices[:-1], mesh.faces[:2])
    with pytest.raises(ValueError, match="verts_build"):
        _testing.bvh_refit_pairs(mesh.vertices[:, :2], mesh.vertices, mesh.faces)
    tree = _testing.BvhMesh(mesh.vertices, mesh.faces)
    with pytest.raises(ValueError, match="verts"):
        tree.refit(mesh.vertices[:-1])
    with pytest.raises(ValueError, match="other_pose"):
        tree.pairs(tree, pose(), pose()[:11])
    with pytest.raises(TypeError):
        tree.pairs(mesh, pose(), pose())
    with pytest.raises(ValueError, match="tris"):
        _testing.bvh_self_pairs(mesh.vertices, mesh.faces + len(mesh.vertices))
    with pytest.raises(ValueError, match="tris"):
        _testing.bvh_self_pairs(mesh.vertices, -mesh.faces - 1)
    with pytest.raises(ValueError, match="tris"):
        _testing.bvh_self_pairs(mesh.vertices, mesh.faces[:, :2])
    with pytest.raises(TypeError, match="tris"):
        _testing.bvh_self_pairs(mesh.vertices, mesh.faces.astype(float))
    with pytest.raises(ValueError, match="verts"):
        _testing.bvh_self_pairs(mesh.vertices[:, :2], mesh.faces)
    with pytest.raises(ValueError, match="pose_a"):
        _testing.bvh_mesh_pairs(mesh.vertices, mesh.faces, np.r_[2 * np.eye(3).ravel(), 0, 0, 0], mesh.vertices,
                                mesh.faces, pose())
    with pytest.raises(ValueError, match="pose_b"):
        _testing.bvh_mesh_pairs(mesh.vertices, mesh.faces, pose(), mesh.vertices, mesh.faces, pose()[:9])
    with pytest.raises(ValueError, match="margin"):
        _testing.bvh_self_pairs(mesh.vertices, mesh.faces, -0.1)
    with pytest.raises(ValueError, match="inflate"):
        _testing.bvh_refit_pairs(mesh.vertices, mesh.vertices, mesh.faces, inflate=np.inf)
    with pytest.raises(ValueError, match="lo"):
        _testing.bvh_box_query(mesh.vertices, mesh.faces, (np.nan, 0, 0), (1, 1, 1))
    with pytest.raises(ValueError, match="offset"):
        _testing.bvh_halfspace_query(mesh.vertices, mesh.faces, (0, 0, 1), np.nan)
