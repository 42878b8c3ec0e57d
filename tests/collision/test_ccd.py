"""Continuous collision detection (rigidiff.collision.*_ccd, swept_pairs): conservative times of impact on
random and constructed trajectories (checked by densely sampled distances and against the known first
contact), agreement with IPC Toolkit's additive CCD and Tight Inclusion CCD, degenerate motions, the
swept-box broad phase against brute force, and argument checks."""

import numpy as np
import pytest

from rigidiff import collision as rc

ipctk = pytest.importorskip("ipctk")

# name: (rigidiff query, squared distance of the positions, points per configuration, ipctk method)
PAIRS = {
    "point_point": (rc.point_point_ccd, rc.point_point_distance, 2, "point_point_ccd"),
    "point_edge": (rc.point_edge_ccd, rc.point_edge_distance, 3, "point_edge_ccd"),
    "point_triangle": (rc.point_triangle_ccd, rc.point_triangle_distance, 4, "point_triangle_ccd"),
    "edge_edge": (rc.edge_edge_ccd, rc.edge_edge_distance, 4, "edge_edge_ccd"),
}
N_RANDOM = 2000
SAMPLES = 200


def ccd(name, X, **options):
    """The query on configurations X (n, 2K, 3): the K start points, then the K end points."""
    return PAIRS[name][0](*np.moveaxis(X, 1, 0), **options)


def at(X, t):
    """(n, K, 3) positions at times t (n,) of configurations X (n, 2K, 3)."""
    k = X.shape[1] // 2
    return X[:, :k] + np.asarray(t)[:, None, None] * (X[:, k:] - X[:, :k])


def distance(name, x):
    """(n,) distances of positions x (n, K, 3)."""
    return np.sqrt(PAIRS[name][1](*np.moveaxis(x, 1, 0)))


def min_distance_until(name, X, t_end, samples=SAMPLES):
    """(n,) smallest distance over `samples` evenly spaced times in [0, t_end] of each configuration."""
    return np.min([distance(name, at(X, s * t_end)) for s in np.linspace(0.0, 1.0, samples)], axis=0)


def random_configurations(name, n=N_RANDOM, seed=0):
    """(n, 2K, 3) start and end points over a few scales: many hits and many misses."""
    rng = np.random.default_rng(seed)
    k = PAIRS[name][2]
    return rng.normal(size=(n, 2 * k, 3)) * np.exp(rng.uniform(-1.0, 1.0, size=(n, 1, 1)))


def touching_configurations(name, n=N_RANDOM, seed=1):
    """(n, 2K, 3) random motions rebuilt so that the two primitives touch at a random time tau (n,): a point
    of the second primitive (barycentric weights) is moved onto a point of the first by translating the whole
    second primitive, which keeps its motion linear. The first contact is at or before tau."""
    rng = np.random.default_rng(seed)
    k = PAIRS[name][2]
    X = rng.normal(size=(n, 2 * k, 3))
    tau = rng.uniform(0.02, 1.0, size=n)
    x = at(X, tau)
    first = 2 if name == "edge_edge" else 1  # points 0 .. first - 1 are the first primitive

    def weights(m):
        return rng.dirichlet(np.ones(m), size=n) if m > 1 else np.ones((n, 1))

    on_first = np.einsum("nk,nkd->nd", weights(first), x[:, :first])
    on_second = np.einsum("nk,nkd->nd", weights(k - first), x[:, first:])
    shift = on_first - on_second
    X[:, first:k] += shift[:, None]
    X[:, k + first:] += shift[:, None]
    return X, tau


@pytest.mark.parametrize("name", PAIRS)
@pytest.mark.parametrize("min_distance", [0.0, 0.05])
def test_random_motions_are_conservative(name, min_distance):
    X = random_configurations(name)
    r = ccd(name, X, min_distance=min_distance)
    assert r.hit.sum() > 0.01 * N_RANDOM and (~r.hit).sum() > 0.1 * N_RANDOM  # both outcomes are exercised
    assert not r.exhausted.any()
    assert np.all((r.toi >= 0.0) & (r.toi <= 1.0))
    assert np.all(r.toi[~r.hit] == 1.0)
    # the distance stays above min_distance up to toi, and over all of [0, 1] when there is no hit
    starts_apart = distance(name, at(X, np.zeros(N_RANDOM))) > min_distance
    assert np.all(min_distance_until(name, X, r.toi)[starts_apart] > min_distance)
    assert np.all(r.toi[~starts_apart] == 0.0) and np.all(r.hit[~starts_apart])


@pytest.mark.parametrize("name", PAIRS)
@pytest.mark.parametrize("min_distance", [0.0, 0.05])
def test_known_contacts_are_hits_before_contact(name, min_distance):
    X, tau = touching_configurations(name)
    r = ccd(name, X, min_distance=min_distance)
    assert r.hit.all()
    assert np.all(r.toi <= tau)
    starts_apart = distance(name, at(X, np.zeros(N_RANDOM))) > min_distance
    assert np.all(min_distance_until(name, X, r.toi)[starts_apart] > min_distance)
    # not needlessly early: most configurations advance to within a few tenths of their contact
    assert np.median(r.toi[starts_apart] / tau[starts_apart]) > 0.5


@pytest.mark.parametrize("name", PAIRS)
@pytest.mark.parametrize("min_distance", [0.0, 0.05])
def test_agrees_with_ipctk_additive_ccd(name, min_distance):
    X = random_configurations(name, seed=2)
    r = ccd(name, X, min_distance=min_distance)
    accd = ipctk.AdditiveCCD(max_iterations=1_000_000, conservative_rescaling=0.9)
    method = getattr(accd, PAIRS[name][3])
    ref = np.array([method(*x, min_distance=min_distance) for x in X])
    ref_hit, ref_toi = ref[:, 0].astype(bool), ref[:, 1]
    both = r.hit & ref_hit
    assert both.sum() > 10
    np.testing.assert_allclose(r.toi[both], ref_toi[both], rtol=0, atol=1e-12)
    # ipctk evaluates one advance past t = 1 and may call a near miss there a hit; we never report a hit
    # that ipctk does not, and every configuration ipctk alone calls a hit stays apart over [0, 1]
    assert not np.any(r.hit & ~ref_hit)
    only_ref = ~r.hit & ref_hit
    assert only_ref.sum() < 0.02 * N_RANDOM
    assert np.all(min_distance_until(name, X[only_ref], np.ones(only_ref.sum())) > min_distance)


@pytest.mark.parametrize("name", ["point_triangle", "edge_edge"])
def test_every_contact_found_by_tight_inclusion_is_a_hit(name):
    # Tight Inclusion is an exact (inclusion-based) root finder: where it finds a contact at toi_ti (within
    # its tolerance), ours must report a hit no later; where ours reports none, it must find none
    X = random_configurations(name, n=1000, seed=3)
    r = ccd(name, X)
    tight = getattr(ipctk.TightInclusionCCD(tolerance=1e-6, conservative_rescaling=1.0), PAIRS[name][3])
    ref = np.array([tight(*x) for x in X])
    ref_hit, ref_toi = ref[:, 0].astype(bool), ref[:, 1]
    assert ref_hit.sum() > 50
    assert np.all(r.hit[ref_hit])
    assert np.all(r.toi[ref_hit] <= ref_toi[ref_hit] + 1e-6)


def one(name, points, **options):
    return PAIRS[name][0](*[np.asarray(p, dtype=float) for p in points], **options)


TRIANGLE = [(-1.0, -1.0, 0.0), (1.0, -1.0, 0.0), (0.0, 1.0, 0.0)]


def test_point_through_a_face():
    # straight through the face at t = 0.5 (contact at (1 - xi) / 2 with min_distance xi)
    for xi in (0.0, 0.2):
        r = one("point_triangle", [(0, 0, 1), *TRIANGLE, (0, 0, -1), *TRIANGLE], min_distance=xi)
        assert r.hit and not r.exhausted
        assert 0.8 * (1 - xi) / 2 < r.toi <= (1 - xi) / 2
    # the same motion with the triangle rising to meet it: contact at t = 1/3
    up = [(x, y, 1.0) for x, y, _ in TRIANGLE]
    r = one("point_triangle", [(0, 0, 1), *TRIANGLE, (0, 0, -1), *up])
    assert r.hit and 0.25 < r.toi <= 1 / 3


def test_vertex_hits_an_edge_and_edges_cross():
    r = one("point_edge", [(0, 1, 0), (-1, 0, 0), (1, 0, 0), (0, -1, 0), (-1, 0, 0), (1, 0, 0)])
    assert r.hit and 0.4 < r.toi <= 0.5
    r = one("edge_edge", [(-1, 0, 0), (1, 0, 0), (0, -1, 1), (0, 1, 1), (-1, 0, 0), (1, 0, 0), (0, -1, -1),
                          (0, 1, -1)])
    assert r.hit and 0.4 < r.toi <= 0.5


def test_parallel_edges_slide_into_each_other():
    # collinear: eb0 runs from x = 2 to x = -0.5 and reaches ea1 (x = 1) at t = 0.4
    a = [(0, 0, 0), (1, 0, 0)]
    r = one("edge_edge", [*a, (2, 0, 0), (3, 0, 0), *a, (-0.5, 0, 0), (0.5, 0, 0)])
    assert r.hit and 0.3 < r.toi <= 0.4
    # parallel in a plane, approaching sideways: contact at t = 0.5
    r = one("edge_edge", [*a, (0, 1, 0), (1, 1, 0), *a, (0, -1, 0), (1, -1, 0)])
    assert r.hit and 0.4 < r.toi <= 0.5
    # parallel and sliding along each other without approaching: no contact
    r = one("edge_edge", [*a, (0, 1, 0), (1, 1, 0), *a, (5, 1, 0), (6, 1, 0)])
    assert not r.hit and r.toi == 1.0


def test_contact_exactly_at_the_end_is_a_hit():
    r = one("point_triangle", [(0, 0, 1), *TRIANGLE, (0, 0, 0), *TRIANGLE])
    assert r.hit and r.toi < 1.0
    # and a contact after t_max is not
    r = one("point_triangle", [(0, 0, 1), *TRIANGLE, (0, 0, -1), *TRIANGLE], t_max=0.3)
    assert not r.hit and r.toi == 0.3


def test_degenerate_motions():
    p, still = (0.3, -0.2, 0.7), TRIANGLE
    # no motion, or one common translation of every point: no relative motion, no contact
    assert one("point_triangle", [p, *still, p, *still]) == (False, 1.0, False)
    moved = [tuple(np.add(x, (3.0, -2.0, 5.0))) for x in [p, *still]]
    assert one("point_triangle", [p, *still, *moved]) == (False, 1.0, False)
    # starting in contact or within min_distance: a hit at t = 0, whatever the motion
    assert one("point_triangle", [(0, 0, 0), *still, (0, 0, 1), *still]) == (True, 0.0, False)
    assert one("point_triangle", [(0, 0, 0.1), *still, (0, 0, 1), *still], min_distance=0.2) == (True, 0.0, False)
    assert one("edge_edge", [(0, 0, 0), (1, 0, 0), (0.5, 0, 0), (0.5, 1, 0), (0, 0, 0), (1, 0, 0), (0.5, 0, 1),
                             (0.5, 1, 1)]) == (True, 0.0, False)
    # moving parallel to the face above it: no contact; in its plane into the triangle: a contact
    assert not one("point_triangle", [(0, 0, 0.5), *still, (4, 3, 0.5), *still]).hit
    r = one("point_triangle", [(3, 0, 0), *still, (-3, 0, 0), *still])
    assert r.hit and 0.3 < r.toi <= 5 / 12  # enters across the edge t1 t2 at x = 1/2, t = 5/12
    # zero-length edges and a point-sized triangle are points
    r = one("edge_edge", [(0, 0, 1), (0, 0, 1), (-1, 0, 0), (1, 0, 0), (0, 0, -1), (0, 0, -1), (-1, 0, 0), (1, 0, 0)])
    assert r.hit and 0.4 < r.toi <= 0.5
    dot = [(0.0, 0.0, 0.0)] * 3
    r = one("point_triangle", [(0, 0, 1), *dot, (0, 0, -1), *dot])
    assert r.hit and 0.4 < r.toi <= 0.5


def test_triangle_flattening_on_the_way():
    # t2 sweeps through the edge t0 t1 (the triangle has zero area at t = 0.5)
    start = [(-1, 0, 0), (1, 0, 0), (0, 1, 0)]
    end = [(-1, 0, 0), (1, 0, 0), (0, -1, 0)]
    assert not one("point_triangle", [(0, 0, 2), *start, (0, 0.5, 2), *end]).hit
    # a point resting on the edge t0 t1 is met by t2 at t = 0.5 (it starts touching the triangle)
    assert one("point_triangle", [(0, 0, 0), *start, (0, 0, 0), *end]).toi == 0.0
    # a point just above the flattening triangle is reached only through the zero-area instant
    r = one("point_triangle", [(0, 0, 0.5), *start, (0, 0, -0.5), *end])
    assert r.hit and 0.4 < r.toi <= 0.5


def test_exhausted_iterations_give_the_last_safe_time():
    # a fast slide over a large face with a slow descent needs many advances (each bounded by the sliding
    # speed, while the gap shrinks only at the descent speed): with three allowed the query stops early
    big = [(-100, -100, 0), (100, -100, 0), (0, 100, 0)]
    points = [(-10, 0, 1), *big, (10, 0, -1), *big]
    full = one("point_triangle", points)
    short = one("point_triangle", points, max_iterations=3)
    assert full.hit and not full.exhausted and full.toi > 0.0
    assert short.hit and short.exhausted and 0.0 < short.toi < full.toi
    X = np.asarray([points], dtype=float)
    assert min_distance_until("point_triangle", X, np.array([short.toi]))[0] > 0.0


def test_batches_match_single_queries_and_broadcast():
    X = random_configurations("edge_edge", n=50, seed=4)
    r = ccd("edge_edge", X, min_distance=0.01)
    for i in range(0, 50, 7):
        single = one("edge_edge", X[i], min_distance=0.01)
        assert single == (bool(r.hit[i]), float(r.toi[i]), bool(r.exhausted[i]))
    # (3,) points are shared by all rows
    p = np.array([0.0, 0.0, 1.0])
    ends = np.array([[0.0, 0.0, -1.0], [5.0, 5.0, 1.0]])
    r = rc.point_triangle_ccd(p, *TRIANGLE, ends, *TRIANGLE)
    assert r.hit.tolist() == [True, False] and r.toi.shape == (2,)


def test_bad_arguments():
    good = [(0, 0, 1), *TRIANGLE, (0, 0, -1), *TRIANGLE]
    with pytest.raises(ValueError, match="t2_end"):
        rc.point_triangle_ccd(*good[:7], (0.0, 1.0))
    with pytest.raises(ValueError, match="p_end"):
        rc.point_triangle_ccd(*good[:4], (0.0, np.nan, 1.0), *good[5:])
    with pytest.raises(ValueError, match="ea1"):
        rc.edge_edge_ccd((0, 0, 0), (np.inf, 0, 0), *[(0, 0, 0)] * 6)
    with pytest.raises(ValueError, match="rows"):
        rc.point_point_ccd(np.zeros((2, 3)), np.zeros((3, 3)), np.zeros(3), np.zeros(3))
    for options, word in [({"min_distance": -0.1}, "min_distance"), ({"min_distance": np.nan}, "min_distance"),
                          ({"t_max": 0.0}, "t_max"), ({"t_max": 1.5}, "t_max"),
                          ({"conservative_rescaling": 1.0}, "conservative_rescaling"),
                          ({"conservative_rescaling": 0.0}, "conservative_rescaling"),
                          ({"max_iterations": 0}, "max_iterations"), ({"max_iterations": True}, "max_iterations"),
                          ({"max_iterations": 2.5}, "max_iterations")]:
        with pytest.raises(ValueError, match=word):
            rc.point_triangle_ccd(*good, **options)


def brute_force_pairs(start_a, end_a, start_b, end_b, margin):
    lo_a = np.minimum(start_a.min(axis=1), end_a.min(axis=1))
    hi_a = np.maximum(start_a.max(axis=1), end_a.max(axis=1))
    lo_b = np.minimum(start_b.min(axis=1), end_b.min(axis=1))
    hi_b = np.maximum(start_b.max(axis=1), end_b.max(axis=1))
    overlap = np.all((lo_a[:, None] <= hi_b[None] + margin) & (lo_b[None] <= hi_a[:, None] + margin), axis=2)
    return np.argwhere(overlap)


@pytest.mark.parametrize("ka, kb", [(1, 3), (2, 2), (3, 1)])
@pytest.mark.parametrize("margin", [0.0, 0.1])
@pytest.mark.parametrize("na, nb, spread", [(300, 250, 10.0), (20, 30, 2.0)])  # box trees; pair by pair
def test_swept_pairs_match_brute_force(ka, kb, margin, na, nb, spread):
    rng = np.random.default_rng(5)
    start_a = rng.uniform(0, spread, size=(na, 1, 3)) + rng.normal(scale=0.3, size=(na, ka, 3))
    start_b = rng.uniform(0, spread, size=(nb, 1, 3)) + rng.normal(scale=0.3, size=(nb, kb, 3))
    end_a = start_a + rng.normal(scale=0.5, size=(na, 1, 3))
    end_b = start_b + rng.normal(scale=0.5, size=(nb, 1, 3))
    pairs = rc.swept_pairs(start_a, end_a, start_b, end_b, min_distance=margin)
    expected = brute_force_pairs(start_a, end_a, start_b, end_b, margin)
    assert 0 < len(expected) < na * nb / 3
    np.testing.assert_array_equal(pairs, expected)


def test_swept_pairs_contain_every_hit():
    rng = np.random.default_rng(6)
    points = rng.uniform(0, 3, size=(200, 3))
    points_end = points + rng.normal(scale=0.4, size=(200, 3))
    tris = rng.uniform(0, 3, size=(100, 1, 3)) + rng.normal(scale=0.3, size=(100, 3, 3))
    tris_end = tris + rng.normal(scale=0.4, size=(100, 1, 3))
    candidates = {tuple(p) for p in rc.swept_pairs(points, points_end, tris, tris_end, min_distance=0.05)}
    i, j = np.meshgrid(np.arange(200), np.arange(100), indexing="ij")
    i, j = i.ravel(), j.ravel()
    r = rc.point_triangle_ccd(points[i], *np.moveaxis(tris[j], 1, 0), points_end[i], *np.moveaxis(tris_end[j], 1, 0),
                              min_distance=0.05)
    hits = {(a, b) for a, b in zip(i[r.hit], j[r.hit])}
    assert hits and hits <= candidates


def test_swept_pairs_edge_cases_and_bad_arguments():
    empty = np.zeros((0, 3, 3))
    tri = np.zeros((1, 3, 3))
    assert rc.swept_pairs(empty, empty, tri, tri).shape == (0, 2)
    # (n, 3) is one point per primitive; identical points overlap with a zero margin
    assert rc.swept_pairs(np.zeros((2, 3)), np.zeros((2, 3)), tri, tri).tolist() == [[0, 0], [1, 0]]
    with pytest.raises(ValueError, match="end_a"):
        rc.swept_pairs(tri, np.zeros((1, 2, 3)), tri, tri)
    with pytest.raises(ValueError, match="start_b"):
        rc.swept_pairs(tri, tri, np.zeros((1, 3, 2)), tri)
    with pytest.raises(ValueError, match="end_b"):
        rc.swept_pairs(tri, tri, tri, np.full((1, 3, 3), np.nan))
    with pytest.raises(ValueError, match="min_distance"):
        rc.swept_pairs(tri, tri, tri, tri, min_distance=-1.0)


EPS = float(np.finfo(np.float32).eps)


def test_boundary_grids():
    # edges crossing at right angles as they approach head-on, with the second edge's x offset and the
    # approach distance straddling exact contact by float32 epsilons: contact iff |x| <= 1 and the closing
    # distance reaches the gap of 2, first at t = 2 / closing
    for x in (-1 - EPS, -1, -1 + EPS, -0.5, 0, 0.5, 1 - EPS, 1, 1 + EPS):
        for closing in (-2.0, 0.0, 2 - 2 * EPS, 2.0, 2 + 2 * EPS, 4.0):
            a = [(-1, -1, 0), (1, -1, 0)]
            b = [(x, 1, -1), (x, 1, 1)]
            b_end = [(x, 1 - closing, -1), (x, 1 - closing, 1)]
            r = one("edge_edge", [*a, *b, *a, *b_end])
            if abs(x) <= 1 and closing >= 2:
                assert r.hit and r.toi <= 2 / closing, (x, closing, r)
            if closing <= 0:
                assert not r.hit, (x, closing, r)
            X = np.asarray([[*a, *b, *a, *b_end]], dtype=float)
            assert min_distance_until("edge_edge", X, np.array([r.toi]))[0] > 0.0
    # a point falling onto the triangle near its edges and corners, inside and outside by float32 epsilons
    for x, y, inside in [(0, 0, True), (1 - EPS, -1 + EPS, True), (1 + EPS, -1, False), (0, 1 - EPS, True),
                         (0, 1 + EPS, False), (-1, -1, True), (0.5, 0, True), (0.5 + EPS, 0, False)]:
        for z_end in (0.0, -EPS, EPS, -1.0):
            r = one("point_triangle", [(x, y, 1), *TRIANGLE, (x, y, z_end), *TRIANGLE])
            if inside and z_end <= 0:
                assert r.hit and r.toi <= 1 / (1 - z_end), (x, y, z_end, r)
            X = np.asarray([[(x, y, 1), *TRIANGLE, (x, y, z_end), *TRIANGLE]], dtype=float)
            assert min_distance_until("point_triangle", X, np.array([r.toi]))[0] > 0.0


def test_any_real_array_layout_gives_the_same_answer():
    X = random_configurations("point_triangle", n=40, seed=7)
    expected = ccd("point_triangle", X)
    fortran = [np.asfortranarray(X[:, k]) for k in range(8)]
    np.testing.assert_array_equal(rc.point_triangle_ccd(*fortran).toi, expected.toi)
    single = X.astype(np.float32)
    np.testing.assert_array_equal(ccd("point_triangle", single).toi, ccd("point_triangle", single.astype(float)).toi)
    # lists of ints are points too
    r = rc.point_edge_ccd([0, 1, 0], [-1, 0, 0], [1, 0, 0], [0, -1, 0], [-1, 0, 0], [1, 0, 0])
    assert r.hit and 0.4 < r.toi <= 0.5
    with pytest.raises(ValueError, match="p_end"):
        rc.point_edge_ccd([0, 1, 0], [-1, 0, 0], [1, 0, 0], ["a", "b", "c"], [-1, 0, 0], [1, 0, 0])
