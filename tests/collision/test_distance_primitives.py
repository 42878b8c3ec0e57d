"""Squared-distance primitives (rigidiff.collision.*_distance, the mollifier, the distance types) against
IPC Toolkit on 10,000 random configurations and on degenerate ones, and their gradients and Hessians
against central finite differences of rigidiff's own values."""

import numpy as np
import pytest

import rigidiff as rd
from rigidiff import collision as rc

ipctk = pytest.importorskip("ipctk")

N_RANDOM = 10_000
RTOL = 1e-10  # relative to the largest entry of ipctk's value, gradient or Hessian of a configuration
FD_RTOL = 1e-6  # central differences with steps of 1e-6 (truncation 1e-12, round-off 1e-10)

# name: (rigidiff function, ipctk value / gradient / Hessian, number of points)
PRIMITIVES = {
    "point_point": (rc.point_point_distance, "point_point_distance", 2),
    "point_line": (rc.point_line_distance, "point_line_distance", 3),
    "point_edge": (rc.point_edge_distance, "point_edge_distance", 3),
    "point_plane": (rc.point_plane_distance, "point_plane_distance", 4),
    "point_triangle": (rc.point_triangle_distance, "point_triangle_distance", 4),
    "line_line": (rc.line_line_distance, "line_line_distance", 4),
    "edge_edge": (rc.edge_edge_distance, "edge_edge_distance", 4),
}
TYPED = {"point_edge": (rc.point_edge_distance_type, rc.POINT_EDGE_TYPES),
         "point_triangle": (rc.point_triangle_distance_type, rc.POINT_TRIANGLE_TYPES),
         "edge_edge": (rc.edge_edge_distance_type, rc.EDGE_EDGE_TYPES)}


def random_points(k, n=N_RANDOM, seed=0):
    """(n, k, 3) points, spread over a few scales so that every distance type occurs."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, k, 3)) * np.exp(rng.uniform(-1.0, 1.0, size=(n, 1, 1)))


def ipctk_reference(name, x, extra=()):
    """(values (n,), gradients (n, 3k), Hessians (n, 3k, 3k)) of ipctk for configurations x (n, k, 3)."""
    f, g, h = (getattr(ipctk, name + s) for s in ("", "_gradient", "_hessian"))
    values = np.array([f(*c, *extra) for c in x])
    gradients = np.array([g(*c, *extra) for c in x])
    hessians = np.array([h(*c, *extra) for c in x])
    return values, gradients, hessians


def ipctk_single(name, c, extra=()):
    return tuple(getattr(ipctk, name + s)(*c, *extra) for s in ("", "_gradient", "_hessian"))


def assert_close(ours, ref, what, rtol=RTOL):
    """Per configuration: |ours - ref| <= rtol * max |ref| (exact zeros of both pass)."""
    ours, ref = np.asarray(ours), np.asarray(ref)
    n = ref.shape[0] if ref.ndim else 1
    ours, ref = ours.reshape(n, -1), ref.reshape(n, -1)
    err = np.max(np.abs(ours - ref), axis=1)
    scale = np.max(np.abs(ref), axis=1)
    bad = err > rtol * scale + 1e-300
    assert not bad.any(), (f"{what}: {bad.sum()} of {n} configurations disagree, worst relative error "
                           f"{np.max(err / np.maximum(scale, 1e-300)):.3g}")


@pytest.mark.parametrize("name", PRIMITIVES)
def test_values_gradients_and_hessians_agree_with_ipctk(name):
    fn, ref_name, k = PRIMITIVES[name]
    x = random_points(k)
    value, gradient, hessian = fn(*x.transpose(1, 0, 2), derivatives=2)
    assert value.shape == (N_RANDOM,) and gradient.shape == (N_RANDOM, 3 * k)
    assert hessian.shape == (N_RANDOM, 3 * k, 3 * k)
    ref = ipctk_reference(ref_name, x)
    for what, ours, theirs in zip(("value", "gradient", "Hessian"), (value, gradient, hessian), ref):
        assert_close(ours, theirs, f"{name} {what}")


@pytest.mark.parametrize("name", TYPED)
def test_classification_agrees_with_ipctk(name):
    classify, names = TYPED[name]
    k = PRIMITIVES[name][2]
    x = random_points(k, seed=1)
    ours = classify(*x.transpose(1, 0, 2))
    theirs = np.array([getattr(ipctk, name + "_distance_type")(*c).name for c in x])
    np.testing.assert_array_equal(ours, theirs)
    assert set(ours) == set(names), "the random configurations reach every type"


def test_auto_derivatives_are_those_of_the_classified_type():
    for name, (classify, names) in TYPED.items():
        fn, _, k = PRIMITIVES[name]
        x = random_points(k, n=300, seed=2)
        types = classify(*x.transpose(1, 0, 2))
        auto = fn(*x.transpose(1, 0, 2), derivatives=2)
        for t in set(types):
            rows = types == t
            forced = fn(*x[rows].transpose(1, 0, 2), derivatives=2, type=t)
            for a, b in zip(auto, forced):
                np.testing.assert_array_equal(a[rows], b)


def test_batched_calls_equal_single_calls():
    x = random_points(4, n=5, seed=3)
    batch = rc.point_triangle_distance(*x.transpose(1, 0, 2), derivatives=2)
    for i, c in enumerate(x):
        d, g, H = rc.point_triangle_distance(*c, derivatives=2)
        assert isinstance(d, float) and g.shape == (12,) and H.shape == (12, 12)
        assert d == batch[0][i]
        np.testing.assert_array_equal(g, batch[1][i])
        np.testing.assert_array_equal(H, batch[2][i])
    # a (3,) point is shared by every configuration
    shared = rc.point_triangle_distance(x[0, 0], *x[:, 1:].transpose(1, 0, 2))
    np.testing.assert_array_equal(shared[0], rc.point_triangle_distance(*x[0]))
    assert rc.point_triangle_distance_type(*x[0]) == rc.point_triangle_distance_type(*x.transpose(1, 0, 2))[0]


def central_differences(fn, x, h=1e-6, **kw):
    """Central differences of fn's value (n,) -> (n, 3k) and of its gradient -> (n, 3k, 3k) at x (n, k, 3)."""
    n, k, _ = x.shape
    flat = x.reshape(n, 3 * k)
    dv = np.empty((n, 3 * k))
    dg = np.empty((n, 3 * k, 3 * k))
    for j in range(3 * k):
        plus, minus = flat.copy(), flat.copy()
        plus[:, j] += h
        minus[:, j] -= h
        vp, gp = fn(*plus.reshape(n, k, 3).transpose(1, 0, 2), derivatives=1, **kw)
        vm, gm = fn(*minus.reshape(n, k, 3).transpose(1, 0, 2), derivatives=1, **kw)
        dv[:, j] = (vp - vm) / (2 * h)
        dg[:, :, j] = (gp - gm) / (2 * h)
    return dv, dg


def check_against_differences(fn, x, **kw):
    _, g, H = fn(*x.transpose(1, 0, 2), derivatives=2, **kw)
    dv, dg = central_differences(fn, x, **kw)
    assert np.abs(g).max() > 0 and np.abs(H).max() > 0
    assert not np.array_equal(g, dv), "the gradient is not a finite difference"
    assert_close(dv, g, "gradient vs differences", FD_RTOL)
    assert_close(dg, H, "Hessian vs differences", FD_RTOL)
    np.testing.assert_allclose(H, H.transpose(0, 2, 1), rtol=0, atol=1e-12 * np.abs(H).max())


@pytest.mark.parametrize("name", PRIMITIVES)
def test_derivatives_match_finite_differences_of_the_values(name):
    """The type is held at the classified one (differences across a type boundary measure the kink)."""
    fn, _, k = PRIMITIVES[name]
    x = random_points(k, n=400, seed=4)
    if name not in TYPED:
        check_against_differences(fn, x)
        return
    types = TYPED[name][0](*x.transpose(1, 0, 2))
    for t in set(types):
        check_against_differences(fn, x[types == t], type=t)


def mollifier_case(n=N_RANDOM, seed=5):
    """Configurations and thresholds with about half of them inside the mollified band x < eps_x."""
    x = random_points(4, n=n, seed=seed)
    cross = np.cross(x[:, 1] - x[:, 0], x[:, 3] - x[:, 2])
    c2 = np.einsum("ij,ij->i", cross, cross)
    eps = c2 * np.random.default_rng(seed).uniform(0.5, 2.0, size=n)
    return x, eps


def test_mollifier_agrees_with_ipctk():
    x, eps = mollifier_case()
    m, g, H = rc.edge_edge_mollifier(*x.transpose(1, 0, 2), eps, derivatives=2)
    inside = m < 1.0
    assert 0.3 < inside.mean() < 0.7
    ref = [np.array([getattr(ipctk, "edge_edge_mollifier" + s)(*c, e) for c, e in zip(x, eps)])
           for s in ("", "_gradient", "_hessian")]
    assert_close(m, ref[0], "mollifier")
    assert_close(g[inside], ref[1][inside], "mollifier gradient")
    assert_close(H[inside], ref[2][inside], "mollifier Hessian")
    assert not g[~inside].any() and not H[~inside].any() and np.all(m[~inside] == 1.0)
    assert not ref[1][~inside].any()


def test_mollifier_derivatives_match_finite_differences():
    x, eps = mollifier_case(n=400, seed=6)
    inside = rc.edge_edge_mollifier(*x.transpose(1, 0, 2), eps) < 0.95  # away from the band's edge

    def mollifier(*points, derivatives):
        return rc.edge_edge_mollifier(*points, eps[inside], derivatives=derivatives)

    check_against_differences(mollifier, x[inside])


def test_mollifier_is_c1_at_its_threshold():
    """Approaching eps_x from below, 1 - m falls like delta^2 and the gradient like delta (delta = 1 - x / eps_x),
    so value and gradient meet the constant 1 beyond the threshold."""
    ea0, ea1, eb0, eb1 = O, E[0], [0.0, 0.0, 1.0], [0.3, 1.0, 1.0]
    x = np.sum(np.cross(E[0], [0.3, 1.0, 0.0]) ** 2)
    rows = []
    for delta in (1e-3, 1e-6):
        m, g = rc.edge_edge_mollifier(ea0, ea1, eb0, eb1, x / (1.0 - delta), derivatives=1)
        assert 1.0 - m == pytest.approx(delta**2, rel=1e-3)  # 1 - m loses digits to rounding at delta = 1e-6
        rows.append(np.linalg.norm(g))
    assert rows[1] / rows[0] == pytest.approx(1e-3, rel=1e-2)
    m, g, H = rc.edge_edge_mollifier(ea0, ea1, eb0, eb1, x * (1.0 - 1e-9), derivatives=2)
    assert m == 1.0 and not g.any() and not H.any()


def test_mollifier_threshold_and_its_derivatives():
    x = random_points(4, n=500, seed=7)
    eps, g, H = rc.edge_edge_mollifier_threshold(*x.transpose(1, 0, 2), derivatives=2)
    np.testing.assert_allclose(eps, [ipctk.edge_edge_mollifier_threshold(*c) for c in x], rtol=RTOL)
    assert_close(g, np.array([ipctk.edge_edge_mollifier_threshold_gradient(*c) for c in x]), "threshold gradient")
    check_against_differences(rc.edge_edge_mollifier_threshold, x)
    ea, eb = x[:, 1] - x[:, 0], x[:, 3] - x[:, 2]
    expected = rc.EDGE_EDGE_MOLLIFIER_SCALE * np.sum(ea * ea, axis=1) * np.sum(eb * eb, axis=1)
    np.testing.assert_allclose(eps, expected, rtol=1e-14)
    # the threshold makes the mollifier 1 for edges crossing at right angles, < 1 near parallel
    assert rc.edge_edge_mollifier([0, 0, 0], [1, 0, 0], [0, 0, 1], [0, 1, 1], 1e-3) == 1.0
    assert rc.edge_edge_mollifier([0, 0, 0], [1, 0, 0], [0, 0, 1], [1, 1e-3, 1], 1e-3) < 1.0


# degenerate configurations: every one is compared with ipctk (value, gradient, Hessian and type)
E = np.eye(3)
O = np.zeros(3)
DEGENERATE_POINT_TRIANGLE = {
    "point on the plane inside": ([0.2, 0.3, 0.0], O, E[0], E[1]),
    "point on the plane outside": ([1.0, 1.0, 0.0], O, E[0], E[1]),
    "point on an edge": ([0.5, 0.0, 0.0], O, E[0], E[1]),
    "point on an edge's line beyond it": ([2.0, 0.0, 0.0], O, E[0], E[1]),
    "point at a vertex": (E[0], O, E[0], E[1]),
    "point above a vertex": ([0.0, 0.0, 0.7], O, E[0], E[1]),
    "point in a vertex region on the plane": ([-1.0, -1.0, 0.0], O, E[0], E[1]),
    "point on the hypotenuse": ([0.5, 0.5, 0.0], O, E[0], E[1]),
    "sliver triangle": ([0.5, 0.3, 0.2], O, E[0], [0.5, 1e-7, 0.0]),
}
DEGENERATE_EDGE_EDGE = {
    "parallel, overlapping": (O, E[0], [0.2, 1.0, 0.0], [0.8, 1.0, 0.0]),
    "parallel, B longer than A": (O, E[0], [-1.0, 1.0, 0.0], [2.0, 1.0, 0.0]),
    "parallel, only eb1 over A, eb0 before": (O, E[0], [-0.5, 1.0, 0.0], [0.5, 1.0, 0.0]),
    "parallel, only eb1 over A, eb0 after": (O, E[0], [1.5, 1.0, 0.0], [0.5, 1.0, 0.0]),
    "parallel, B reversed and longer": (O, E[0], [2.0, 1.0, 0.5], [-1.0, 1.0, 0.5]),
    "parallel, B before A": (O, E[0], [-2.0, 1.0, 0.0], [-1.0, 1.0, 0.0]),
    "parallel, B after A, reversed": (O, E[0], [3.0, 1.0, 0.0], [2.0, 1.0, 0.0]),
    "parallel, B after A": (O, E[0], [2.0, 1.0, 0.0], [3.0, 1.0, 0.0]),
    "parallel, B before A, reversed": (O, E[0], [-1.0, 1.0, 0.0], [-2.0, 1.0, 0.0]),
    "nearly parallel, sin^2 1e-18": (O, E[0], [0.2, 1.0, 0.0], [0.8, 1.0, 0.6e-9]),
    "nearly parallel, sin^2 1e-12": (O, E[0], [0.2, 1.0, 0.0], [0.8, 1.0, 0.6e-6]),
    # across IPC Toolkit's threshold sin^2 = 2.5e-16: end point against edge (EA_EB0), then line-line
    "just under the parallel threshold, sin^2 1e-16": (O, E[0], [0.2, 0.3e-8, 1.0], [0.8, -0.3e-8, 1.0]),
    "just over the parallel threshold, sin^2 1e-15": (O, E[0], [0.2, 0.3 * 10**-7.5, 1.0], [0.8, -0.3 * 10**-7.5, 1.0]),
    "collinear, overlapping": (O, E[0], [0.5, 0.0, 0.0], [1.5, 0.0, 0.0]),
    "crossing (distance 0)": (O, E[0], [0.5, -1.0, 0.0], [0.5, 1.0, 0.0]),
    "sharing an end point": (O, E[0], O, E[1]),
    "end point on the other edge": (O, E[0], [0.5, 0.0, 0.0], [0.5, 1.0, 1.0]),
    "zero-length A": (E[2], E[2], O, E[0]),
    "zero-length B": (O, E[0], [0.5, 1.0, 0.0], [0.5, 1.0, 0.0]),
    "both zero-length": (O, O, E[1], E[1]),
}
# line-line between edges at angle theta amplifies rounding by about 1 / sin(theta) (3e7 here; the gradient
# differs from ipctk by 6e-9)
ILL_CONDITIONED = {"just over the parallel threshold, sin^2 1e-15": 1e-7}
DEGENERATE_POINT_EDGE = {
    "point on the edge": ([0.3, 0.0, 0.0], O, E[0]),
    "point at an end": (E[0], O, E[0]),
    "point on the line beyond": ([-2.0, 0.0, 0.0], O, E[0]),
    "zero-length edge": (E[1], E[0], E[0]),
}


@pytest.mark.parametrize("name, cases", [("point_triangle", DEGENERATE_POINT_TRIANGLE),
                                         ("edge_edge", DEGENERATE_EDGE_EDGE),
                                         ("point_edge", DEGENERATE_POINT_EDGE)])
def test_degenerate_configurations_agree_with_ipctk(name, cases):
    fn, ref_name, _ = PRIMITIVES[name]
    classify = TYPED[name][0]
    for label, points in cases.items():
        points = [np.asarray(p, dtype=float) for p in points]
        ours = fn(*points, derivatives=2)
        ref = ipctk_single(ref_name, points)
        rtol = ILL_CONDITIONED.get(label, RTOL)
        for what, a, b in zip(("value", "gradient", "Hessian"), ours, ref):
            assert_close(np.atleast_1d(a)[None], np.atleast_1d(b)[None], f"{label}: {what}", rtol)
        assert classify(*points) == getattr(ipctk, name + "_distance_type")(*points).name, label


def test_degenerate_types_are_the_expected_features():
    assert rc.point_triangle_distance_type([0.5, 0.0, 0.0], O, E[0], E[1]) == "P_E0"
    assert rc.point_triangle_distance_type([0.2, 0.3, 0.0], O, E[0], E[1]) == "P_T"
    assert rc.edge_edge_distance_type(O, E[0], [0.2, 1.0, 0.0], [0.8, 1.0, 0.0]) == "EA_EB0"
    assert rc.edge_edge_distance_type(*DEGENERATE_EDGE_EDGE["just under the parallel threshold, sin^2 1e-16"]) \
        == "EA_EB0"
    assert rc.edge_edge_distance_type(*DEGENERATE_EDGE_EDGE["just over the parallel threshold, sin^2 1e-15"]) \
        == "EA_EB"
    assert rc.edge_edge_distance_type(O, E[0], [-1.0, 1.0, 0.0], [2.0, 1.0, 0.0]) == "EA0_EB"
    assert rc.edge_edge_distance_type(E[2], E[2], O, E[0]) == "EA0_EB"
    assert rc.edge_edge_distance_type(O, O, E[1], E[1]) == "EA0_EB0"
    assert rc.point_edge_distance_type(E[1], E[0], E[0]) == "P_E0"
    # parallel edges at distance 1: every type gives 1, and the auto derivatives are finite
    d, g, H = rc.edge_edge_distance(O, E[0], [0.2, 1.0, 0.0], [0.8, 1.0, 0.0], derivatives=2)
    assert d == pytest.approx(1.0) and np.isfinite(g).all() and np.isfinite(H).all()
    assert rc.point_point_distance(E[0], E[0], derivatives=1)[1].tolist() == [0.0] * 6


@pytest.mark.parametrize("call, match", [
    (lambda: rc.point_triangle_distance([0, 0], O, E[0], E[1]), r"p must have shape \(3,\) or \(n, 3\)"),
    (lambda: rc.point_triangle_distance(O, np.zeros((2, 2, 3)), E[0], E[1]), "t0 must have shape"),
    (lambda: rc.point_triangle_distance(O, [np.nan, 0, 0], E[0], E[1]), "t0 must be finite"),
    (lambda: rc.edge_edge_distance(O, E[0], [np.inf, 0, 0], E[1]), "eb0 must be finite"),
    (lambda: rc.point_point_distance("abc", O), "p0 must be a real-valued array"),
    (lambda: rc.point_edge_distance(np.zeros((2, 3)), np.zeros((3, 3)), E[0]), "e0 has 3 rows"),
    (lambda: rc.point_point_distance(O, E[0], derivatives=3), "derivatives must be 0"),
    (lambda: rc.point_point_distance(O, E[0], derivatives=True), "derivatives must be 0"),
    (lambda: rc.edge_edge_distance(O, E[0], E[1], E[2], type="EA_EA"), "type must be 'auto' or one of"),
    (lambda: rc.point_triangle_distance(O, E[0], E[1], E[2], type="EA_EB"), "type must be 'auto' or one of"),
    (lambda: rc.point_line_distance(E[1], E[0], E[0]), "zero length"),
    (lambda: rc.line_line_distance(O, E[0], E[1], E[1] + E[0]), "parallel"),
    (lambda: rc.point_plane_distance(E[2], O, E[0], 2 * E[0]), "collinear"),
    (lambda: rc.point_triangle_distance(E[2], O, E[0], 2 * E[0]), "zero area"),
    (lambda: rc.point_triangle_distance_type(E[2], O, E[0], 2 * E[0]), "zero area"),
    (lambda: rc.edge_edge_distance(O, E[0], E[1], E[1] + E[0], type="EA_EB"), "not finite"),
    (lambda: rc.point_line_distance(np.zeros((3, 3)), O, [[1, 0, 0], [1, 0, 0], [0, 0, 0]]),
     "configuration 2: the point-line value is not finite"),
    (lambda: rc.edge_edge_mollifier(O, E[0], E[1], E[2], -1.0), "eps_x must be finite and >= 0"),
    (lambda: rc.edge_edge_mollifier(O, E[0], E[1], E[2], np.nan), "eps_x must be finite and >= 0"),
    (lambda: rc.edge_edge_mollifier(O, E[0], E[1], E[2], True), "eps_x must be a number, not a boolean"),
    (lambda: rc.edge_edge_mollifier(O, E[0], E[1], E[2], [1.0, 2.0]), r"eps_x must be a number or have shape \(1,\)"),
])
def test_bad_input_is_a_value_error_naming_the_problem(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_offered_at_the_package_level():
    assert rd.collision.point_triangle_distance is rd.distance_primitives.point_triangle_distance
    assert "edge_edge_mollifier" in rd.collision.__all__
