"""The boxed LCP with friction (rigidiff.lcp, cpp/include/rigidiff/contact/): validity on random problems,
frictionless answers against independent references, redundant contacts, friction modes, warm start,
degenerate and bad inputs, and the derivatives against central finite differences."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize

import rigidiff as rd
from rigidiff.lcp import LcpClass, LcpSolver

INF = np.inf


# ---------------------------------------------------------------------------------------------- helpers
def effective_bounds(lo, hi, findex, x):
    lo, hi = np.array(lo, dtype=float), np.array(hi, dtype=float)
    if findex is not None:
        for i, j in enumerate(findex):
            if j >= 0:
                s = max(0.0, x[j])
                lo[i], hi[i] = lo[i] * s, hi[i] * s
    return lo, hi


def assert_valid(A, b, lo, hi, findex, x, tol=1e-5):
    """Bounds and complementarity of x, w = A x + b (same relative tolerances as the solver's check)."""
    A, b, x = np.asarray(A), np.asarray(b), np.asarray(x)
    assert np.all(np.isfinite(x))
    w = A @ x + b
    tx = tol * (1 + np.max(np.abs(x), initial=0.0))
    tw = tol * (1 + np.max(np.abs(b), initial=0.0))
    lo, hi = effective_bounds(lo, hi, findex, x)
    for i in range(len(b)):
        assert lo[i] - tx <= x[i] <= hi[i] + tx, f"row {i}: x = {x[i]} outside [{lo[i]}, {hi[i]}]"
        if hi[i] - lo[i] <= tx:
            continue
        at_lo, at_hi = x[i] <= lo[i] + tx, x[i] >= hi[i] - tx
        if at_lo:
            assert w[i] >= -tw, f"row {i} at its lower bound with w = {w[i]}"
        elif at_hi:
            assert w[i] <= tw, f"row {i} at its upper bound with w = {w[i]}"
        else:
            assert abs(w[i]) <= tw, f"row {i} inside its bounds with w = {w[i]}"


def contact_rows(nc, mu):
    """lo, hi, findex of nc contacts, each a normal row then two friction rows."""
    lo = np.tile([0.0, -mu, -mu], nc)
    hi = np.tile([INF, mu, mu], nc)
    findex = np.array([[-1, 3 * k, 3 * k] for k in range(nc)]).ravel()
    return lo, hi, findex


def random_contact_problem(rng, nc, ndof, mu):
    J = rng.normal(size=(3 * nc, ndof))
    R = rng.normal(size=(ndof, ndof))
    Minv = np.linalg.inv(R @ R.T + ndof * np.eye(ndof))
    A = J @ Minv @ J.T
    A = 0.5 * (A + A.T)
    b = J @ rng.normal(size=ndof)
    return A, b, *contact_rows(nc, mu)


def random_spd(rng, n, rank=None):
    """A = G G^T (+ 0.1 I when full rank) and a b = G u in its range (a semi-definite LCP with b outside the
    range of A can be infeasible; b = J v of a contact problem never is)."""
    G = rng.normal(size=(n, rank or n))
    A = G @ G.T + (0.1 * np.eye(n) if rank is None else 0.0)
    return 0.5 * (A + A.T), G @ rng.normal(size=G.shape[1])


def enumerate_lcp(A, b):
    """The solution of the frictionless LCP with A SPD by trying every clamping set (n <= 8)."""
    n = len(b)
    for size in range(n + 1):
        for C in itertools.combinations(range(n), size):
            C = list(C)
            x = np.zeros(n)
            if C:
                x[C] = np.linalg.solve(A[np.ix_(C, C)], -b[C])
            w = A @ x + b
            if np.all(x >= -1e-12) and np.all(w >= -1e-10):
                return x
    raise AssertionError("no solution found")


def box_on_plane(mu=0.5, m=2.0, half=(0.3, 0.2, 0.1), v0=(0.0, 0.0, -0.0981, 0.0, 0.0, 0.0)):
    """A box resting on z = 0 with its four bottom corners in contact; rows (normal, tx, ty) per corner.
    Generalized velocity (linear, angular) at the centre, world axes. Returns (A, b, lo, hi, findex, J, Minv)."""
    a, bb, c = half
    inertia = m / 3.0 * np.diag([bb**2 + c**2, a**2 + c**2, a**2 + bb**2])
    Minv = np.zeros((6, 6))
    Minv[:3, :3] = np.eye(3) / m
    Minv[3:, 3:] = np.linalg.inv(inertia)
    rows = []
    for sx, sy in [(1, 1), (-1, 1), (-1, -1), (1, -1)]:
        r = np.array([sx * a, sy * bb, -c])
        for d in np.eye(3)[[2, 0, 1]]:
            rows.append(np.concatenate([d, np.cross(r, d)]))
    J = np.array(rows)
    A = J @ Minv @ J.T
    b = J @ np.asarray(v0)
    return (0.5 * (A + A.T), b, *contact_rows(4, mu), J, Minv)


# ---------------------------------------------------------------------------------------------- validity
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13, 21, 34])
def test_random_frictionless_spd_and_psd_problems_are_valid(n):
    rng = np.random.default_rng(n)
    for trial in range(10):
        A, b = random_spd(rng, n, rank=None if trial % 2 == 0 else max(1, n // 2))
        lo, hi = np.zeros(n), np.full(n, INF)
        res = rd.lcp.solve_boxed_lcp(A, b, lo, hi)
        assert res.success and res.solver in (LcpSolver.PIVOTING, LcpSolver.PROJECTED_GAUSS_SEIDEL)
        assert_valid(A, b, lo, hi, None, res.x)
        np.testing.assert_allclose(res.w, A @ res.x + b, atol=1e-10)


@pytest.mark.parametrize("nc", [1, 2, 3, 4, 6, 9])
def test_random_friction_problems_are_valid(nc):
    rng = np.random.default_rng(100 + nc)
    solved_with_friction = 0
    trials = 12
    for trial in range(trials):
        ndof = [2, 3 * nc, 3 * nc + 4][trial % 3]
        mu = [0.1, 0.5, 1.2][trial % 3]
        A, b, lo, hi, findex = random_contact_problem(rng, nc, ndof, mu)
        res = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex)
        assert res.success
        if res.friction_dropped:
            assert res.solver == LcpSolver.FRICTIONLESS_PGS
            assert np.all(res.x[findex >= 0] == 0.0)
            assert_valid(A, b, np.where(findex >= 0, 0.0, lo), np.where(findex >= 0, 0.0, hi), None, res.x)
        else:
            solved_with_friction += 1
            # the closest answer with friction is within 100 times the tolerance (1e-6), exact ones within it
            approximate = res.solver == LcpSolver.APPROXIMATE_FRICTION
            assert_valid(A, b, lo, hi, findex, res.x, tol=1e-4 if approximate else 1e-5)
    assert solved_with_friction >= trials - 2


def test_general_box_rows_with_finite_bounds():
    rng = np.random.default_rng(7)
    for n in (3, 6, 10):
        A, _ = random_spd(rng, n)
        b = 3 * rng.normal(size=n)
        lo, hi = -rng.uniform(0.1, 1, size=n), rng.uniform(0.1, 1, size=n)
        res = rd.lcp.solve_boxed_lcp(A, b, lo, hi)
        assert res.success and res.standardised
        assert_valid(A, b, lo, hi, None, res.x)
        assert any(c in (LcpClass.UPPER_BOUND, LcpClass.LOWER_BOUND) for c in res.classes)


# ---------------------------------------------------------------------------------------------- references
@pytest.mark.parametrize("n", range(1, 9))
def test_frictionless_matches_active_set_enumeration(n):
    rng = np.random.default_rng(200 + n)
    for _ in range(5):
        A, _ = random_spd(rng, n)
        b = rng.normal(size=n)
        res = rd.lcp.solve_boxed_lcp(A, b, np.zeros(n), np.full(n, INF))
        np.testing.assert_allclose(res.x, enumerate_lcp(A, b), atol=1e-9)


@pytest.mark.parametrize("n", [10, 20, 30])
def test_frictionless_matches_bound_constrained_qp(n):
    # the LCP with A SPD is the KKT system of min 1/2 x^T A x + b^T x subject to x >= 0
    rng = np.random.default_rng(300 + n)
    A, _ = random_spd(rng, n)
    b = rng.normal(size=n)
    qp = minimize(lambda x: 0.5 * x @ A @ x + b @ x, np.zeros(n), jac=lambda x: A @ x + b, method="L-BFGS-B",
                  bounds=[(0, None)] * n, options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000})
    res = rd.lcp.solve_boxed_lcp(A, b, np.zeros(n), np.full(n, INF))
    np.testing.assert_allclose(res.x, qp.x, atol=1e-5)
    obj = lambda x: 0.5 * x @ A @ x + b @ x  # noqa: E731
    assert obj(res.x) <= obj(qp.x) + 1e-12


@pytest.mark.parametrize("n", [40, 80])
def test_box_rows_with_many_pivots_match_the_bound_constrained_qp(n):
    # finite bounds on both sides: rows join the clamped set and leave it for a bound many times over,
    # which exercises the pivoting's row-by-row updates of its Cholesky factor
    rng = np.random.default_rng(400 + n)
    A, _ = random_spd(rng, n)
    b = 4 * rng.normal(size=n)
    lo, hi = -rng.uniform(0.05, 0.5, size=n), rng.uniform(0.05, 0.5, size=n)
    qp = minimize(lambda x: 0.5 * x @ A @ x + b @ x, np.zeros(n), jac=lambda x: A @ x + b, method="L-BFGS-B",
                  bounds=list(zip(lo, hi)), options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 20000})
    res = rd.lcp.solve_boxed_lcp(A, b, lo, hi)
    assert res.success and res.solver == LcpSolver.PIVOTING
    at_bound = sum(c in (LcpClass.UPPER_BOUND, LcpClass.LOWER_BOUND) for c in res.classes)
    assert n // 4 <= at_bound <= n - n // 4
    assert_valid(A, b, lo, hi, None, res.x)
    np.testing.assert_allclose(res.x, qp.x, atol=1e-5)


# ---------------------------------------------------------------------------------------------- redundancy
def test_box_on_plane_gets_the_symmetric_standardised_solution():
    m, g, dt = 2.0, 9.81, 0.01
    A, b, lo, hi, findex, J, _ = box_on_plane(m=m, v0=(0, 0, -g * dt, 0, 0, 0))
    assert np.linalg.matrix_rank(A) == 6  # 12 rows, rank-deficient
    res = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex)
    assert res.success and res.standardised and not res.friction_dropped
    np.testing.assert_allclose(res.x[0::3], m * g * dt / 4, rtol=1e-8)
    np.testing.assert_allclose(res.x[1::3], 0.0, atol=1e-10)
    np.testing.assert_allclose(res.x[2::3], 0.0, atol=1e-10)
    np.testing.assert_allclose(res.w, 0.0, atol=1e-10)  # the box stops
    assert all(c == LcpClass.CLAMPING for c in res.classes)  # pushing normals, static friction at zero


def test_box_on_plane_sliding_is_symmetric_and_at_the_friction_bound():
    m, g, dt, mu = 2.0, 9.81, 0.01, 0.3
    A, b, lo, hi, findex, _, _ = box_on_plane(mu=mu, m=m, v0=(1.0, 0, -g * dt, 0, 0, 0))
    res = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex)
    assert res.success and res.standardised and not res.friction_dropped
    assert_valid(A, b, lo, hi, findex, res.x)
    normals = res.x[0::3]
    np.testing.assert_allclose(res.x[1::3], -mu * normals, rtol=1e-8)  # sliding along +x: friction at -mu
    assert all(res.classes[3 * k + 1] == LcpClass.LOWER_BOUND for k in range(4))
    assert np.sum(normals) == pytest.approx(m * g * dt, rel=1e-8)
    # mirror symmetry about the sliding direction: corners (+,+)~(+,-) and (-,+)~(-,-)
    assert normals[0] == pytest.approx(normals[3], rel=1e-8)
    assert normals[1] == pytest.approx(normals[2], rel=1e-8)


def test_duplicate_contact_column_splits_equally():
    a, v = 0.5, 0.2
    A = np.full((2, 2), a)
    b = np.array([-v, -v])
    res = rd.lcp.solve_boxed_lcp(A, b, np.zeros(2), np.full(2, INF))
    np.testing.assert_allclose(res.x, [v / (2 * a)] * 2, rtol=1e-10)
    # the same with friction rows: two coincident contacts of a point mass
    A, b, lo, hi, findex = np.kron(np.ones((2, 2)), np.eye(3)), np.tile([-0.1, 0.0, 0.0], 2), *contact_rows(2, 0.5)
    res = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex)
    np.testing.assert_allclose(res.x, [0.05, 0, 0, 0.05, 0, 0], atol=1e-12)


# ---------------------------------------------------------------------------------------------- friction modes
@pytest.mark.parametrize("vt", [0.0, 0.02, -0.04, 0.2, -1.0])
def test_single_contact_sticks_or_slides(vt):
    m, g, dt, mu = 1.5, 9.81, 0.01, 0.4
    A = np.eye(3) / m
    b = np.array([-g * dt, vt, 0.0])
    lo, hi, findex = contact_rows(1, mu)
    res = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex)
    xn = m * g * dt
    assert res.x[0] == pytest.approx(xn, rel=1e-10)
    if m * abs(vt) <= mu * xn:  # sticking: the tangential velocity is stopped
        assert res.x[1] == pytest.approx(-m * vt, abs=1e-12)
        assert res.w[1] == pytest.approx(0.0, abs=1e-12)
        assert res.classes[1] == LcpClass.CLAMPING
    else:  # sliding: friction at the cone, opposing the motion
        assert res.x[1] == pytest.approx(-np.sign(vt) * mu * xn, rel=1e-10)
        assert np.sign(res.w[1]) == np.sign(vt)
        assert res.classes[1] == (LcpClass.LOWER_BOUND if vt > 0 else LcpClass.UPPER_BOUND)
    assert res.x[2] == pytest.approx(0.0, abs=1e-12)


def test_separating_contact_has_no_impulse():
    lo, hi, findex = contact_rows(1, 0.5)
    res = rd.lcp.solve_boxed_lcp(np.eye(3), [0.3, 1.0, -2.0], lo, hi, findex)
    np.testing.assert_array_equal(res.x, 0.0)
    assert res.classes == (LcpClass.SEPARATING,) * 3


# ---------------------------------------------------------------------------------------------- warm start
def test_warm_start_with_the_right_classes_is_used_and_gives_the_same_answer():
    A, b, lo, hi, findex, _, _ = box_on_plane(v0=(0.5, 0.1, -0.1, 0.0, 0.0, 0.3))
    cold = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex)
    assert cold.solver == LcpSolver.PIVOTING
    warm = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex, warm_start=cold.classes)
    assert warm.solver == LcpSolver.WARM_START and warm.success
    np.testing.assert_allclose(warm.x, cold.x, atol=1e-12)
    assert warm.classes == cold.classes
    # names and integer codes are accepted too
    names = [c.name.lower() for c in cold.classes]
    assert rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex, warm_start=names).solver == LcpSolver.WARM_START


def test_previous_step_classes_warm_start_the_next_problem():
    # a box slowing down while sliding: consecutive steps keep their classification
    dt, g, mu = 0.01, 9.81, 0.3
    A, b, lo, hi, findex, J, _ = box_on_plane(mu=mu, v0=(1.0, 0, -g * dt, 0, 0, 0))
    first = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex)
    b_next = J @ np.array([1.0 - mu * g * dt, 0, -g * dt, 0, 0, 0])
    warm = rd.lcp.solve_boxed_lcp(A, b_next, lo, hi, findex, warm_start=first.classes)
    cold = rd.lcp.solve_boxed_lcp(A, b_next, lo, hi, findex)
    assert warm.solver == LcpSolver.WARM_START
    np.testing.assert_allclose(warm.x, cold.x, atol=1e-12)


def test_normal_tie_is_separating():
    # x = 0 and w = 0 on a normal row: separating (deterministic tie-break)
    lo, hi, findex = contact_rows(1, 0.5)
    res = rd.lcp.solve_boxed_lcp(np.eye(3), np.zeros(3), lo, hi, findex)
    assert res.classes == (LcpClass.SEPARATING,) * 3
    res = rd.lcp.solve_boxed_lcp(np.eye(3), [0.0, 0.2, 0.0], lo, hi, findex)
    assert res.classes == (LcpClass.SEPARATING,) * 3


def test_wrong_warm_start_falls_back_to_the_solvers():
    A, b, lo, hi, findex, _, _ = box_on_plane()
    res = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex, warm_start=[LcpClass.SEPARATING] * 12)
    assert res.solver == LcpSolver.PIVOTING and res.success
    np.testing.assert_allclose(res.x[0::3], 2.0 * 0.0981 / 4, rtol=1e-8)


# ---------------------------------------------------------------------------------------------- degenerate inputs
def test_empty_problem():
    res = rd.lcp.solve_boxed_lcp(np.zeros((0, 0)), np.zeros(0), np.zeros(0), np.zeros(0))
    assert res.success and res.x.shape == (0,) and res.classes == ()


def test_zero_rows_never_nan():
    A = np.diag([1.0, 0.0, 2.0])
    res = rd.lcp.solve_boxed_lcp(A, [-1.0, 0.5, -1.0], np.zeros(3), np.full(3, INF))
    assert res.success
    np.testing.assert_allclose(res.x, [1.0, 0.0, 0.5])
    assert res.classes[1] == LcpClass.SEPARATING
    # a zero row that needs an infinite impulse (w = b < 0 whatever x): unsolvable, reported, no NaN
    res = rd.lcp.solve_boxed_lcp(A, [-1.0, -0.5, -1.0], np.zeros(3), np.full(3, INF))
    assert not res.success and res.solver == LcpSolver.NONE
    np.testing.assert_array_equal(res.x, 0.0)
    assert np.all(np.isfinite(res.w))
    res = rd.lcp.solve_boxed_lcp(np.zeros((3, 3)), np.zeros(3), *contact_rows(1, 0.5))
    assert res.success and np.all(res.x == 0.0)


@pytest.mark.parametrize("scale", [1e-150, 1e-8, 1e8, 1e150])
def test_huge_and_tiny_values_never_nan(scale):
    rng = np.random.default_rng(5)
    A, b, lo, hi, findex = random_contact_problem(rng, 3, 9, 0.5)
    res = rd.lcp.solve_boxed_lcp(A * scale, b * scale, lo, hi, findex, jacobian=True)
    assert np.all(np.isfinite(res.x)) and np.all(np.isfinite(res.w)) and np.all(np.isfinite(res.dx_db))
    if res.success and not res.friction_dropped:
        assert_valid(A * scale, b * scale, lo, hi, findex, res.x)


# ---------------------------------------------------------------------------------------------- bad inputs
def _ok():
    return np.eye(3), np.array([-1.0, 0.0, 0.0]), *contact_rows(1, 0.5)


@pytest.mark.parametrize(
    "change, name",
    [
        (lambda a: a.__setitem__(0, np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]])), "A must be symmetric"),
        (lambda a: a.__setitem__(0, np.eye(2)), "A"),
        (lambda a: a.__setitem__(0, np.full((3, 3), np.nan)), "A"),
        (lambda a: a.__setitem__(1, np.array([np.nan, 0, 0])), "b"),
        (lambda a: a.__setitem__(1, np.ones((3, 1))), "b"),
        (lambda a: a.__setitem__(2, np.array([0.5, -0.5, -0.5])), "lo"),
        (lambda a: a.__setitem__(2, np.zeros(4)), "lo"),
        (lambda a: a.__setitem__(3, np.array([INF, -0.5, 0.5])), "hi"),
        (lambda a: a.__setitem__(3, np.array([np.nan, 0.5, 0.5])), "hi"),
        (lambda a: a.__setitem__(4, np.array([-1, 3, 0])), "findex"),
        (lambda a: a.__setitem__(4, np.array([-1, 1, 0])), "findex"),
        (lambda a: a.__setitem__(4, np.array([-1, 2, 0])), "findex"),
        (lambda a: a.__setitem__(4, np.array([-1, 0])), "findex"),
        (lambda a: a.__setitem__(4, np.array([-1, 0.5, 0])), "findex"),
        (lambda a: a.__setitem__(4, np.array([-2, 0, 0])), "findex"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_argument(change, name):
    args = list(_ok())
    change(args)
    with pytest.raises(ValueError, match=name):
        rd.lcp.solve_boxed_lcp(*args)


def test_friction_row_needs_finite_coefficients_and_a_normal_with_zero_lower_bound():
    A, b, lo, hi, findex = _ok()
    with pytest.raises(ValueError, match="friction row 1"):
        rd.lcp.solve_boxed_lcp(A, b, lo, np.array([INF, INF, 0.5]), findex)
    with pytest.raises(ValueError, match="lo = 0"):
        rd.lcp.solve_boxed_lcp(A, b, np.array([-1.0, -0.5, -0.5]), hi, findex)


@pytest.mark.parametrize("warm", [[0, 1, 7], [0, 1], "clamping", ["clamping", "sliding", "separating"]])
def test_bad_warm_start_raises(warm):
    with pytest.raises(ValueError, match="warm_start"):
        rd.lcp.solve_boxed_lcp(*_ok(), warm_start=warm)


def test_bad_tolerance_raises():
    with pytest.raises(ValueError, match="tolerance"):
        rd.lcp.solve_boxed_lcp(*_ok(), tolerance=0.0)


# ---------------------------------------------------------------------------------------------- derivatives
def central_jacobian(f, x0, eps):
    cols = []
    for k in range(len(x0)):
        d = np.zeros_like(x0)
        d[k] = eps
        cols.append((f(x0 + d) - f(x0 - d)) / (2 * eps))
    return np.array(cols).T


def stable_problem_cases():
    """Problems whose classification does not change under small perturbations of b (no ties)."""
    rng = np.random.default_rng(11)
    A, _ = random_spd(rng, 6)
    b = rng.normal(size=6)
    yield "frictionless", A, b, np.zeros(6), np.full(6, INF), None
    m, g, dt = 1.5, 9.81, 0.01
    lo, hi, findex = contact_rows(1, 0.4)
    R = np.array([[1.0, 0.2, -0.1], [0.2, 1.3, 0.1], [-0.1, 0.1, 0.9]]) / m
    yield "sticking", R, np.array([-g * dt, 0.02, -0.01]), lo, hi, findex
    yield "sliding", R, np.array([-g * dt, 0.5, 0.01]), lo, hi, findex
    A, b, lo, hi, findex = random_contact_problem(np.random.default_rng(3), 3, 12, 0.3)
    yield "three_contacts", A, b, lo, hi, findex


@pytest.mark.parametrize("case", list(stable_problem_cases()), ids=lambda c: c[0])
def test_dx_db_and_vjp_match_finite_differences(case):
    _, A, b, lo, hi, findex = case
    res = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex, jacobian=True)
    assert res.success and res.standardised and not res.friction_dropped
    classes = res.classes

    def solve(bb):
        r = rd.lcp.solve_boxed_lcp(A, bb, lo, hi, findex)
        assert r.classes == classes  # the finite differences stay in one mode
        return r.x

    fd = central_jacobian(solve, b, 1e-7)
    assert np.max(np.abs(res.dx_db)) > 1e-3
    assert not np.array_equal(res.dx_db, fd)
    np.testing.assert_allclose(res.dx_db, fd, atol=1e-6)

    g = np.random.default_rng(1).normal(size=len(b))
    grad_b, grad_A = rd.lcp.boxed_lcp_vjp(A, b, lo, hi, g, findex)
    np.testing.assert_allclose(grad_b, res.dx_db.T @ g, atol=1e-12)
    # dL/dA against differences along symmetric perturbations E_ij + E_ji
    n = len(b)
    for i, j in [(0, 0), (0, 1), (n - 1, 0), (n // 2, n - 1)]:
        E = np.zeros((n, n))
        E[i, j] += 1.0
        E[j, i] += 1.0
        eps = 1e-7
        lp = g @ rd.lcp.solve_boxed_lcp(A + eps * E, b, lo, hi, findex).x
        lm = g @ rd.lcp.solve_boxed_lcp(A - eps * E, b, lo, hi, findex).x
        assert np.sum(grad_A * E) == pytest.approx((lp - lm) / (2 * eps), abs=1e-6)
    assert np.max(np.abs(grad_A)) > 1e-3


def test_derivatives_of_a_redundant_box_through_its_jacobian():
    # A = J M^-1 J^T is rank-deficient (12 rows, 6 dof): the pseudo-inverse path, chained through J and v0
    v0 = np.array([0.01, -0.005, -0.0981, 0.0, 0.0, 0.02])
    A, b, lo, hi, findex, J, Minv = box_on_plane(mu=0.8, v0=v0)
    res = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex, jacobian=True)
    assert res.standardised and all(c == LcpClass.CLAMPING for c in res.classes)
    g = np.random.default_rng(2).normal(size=12)

    def loss_v(v):
        r = rd.lcp.solve_boxed_lcp(A, J @ v, lo, hi, findex)
        assert r.classes == res.classes
        return r.x

    fd = central_jacobian(loss_v, v0, 1e-7)
    np.testing.assert_allclose(res.dx_db @ J, fd, atol=1e-6)
    assert np.max(np.abs(res.dx_db @ J)) > 1e-2

    grad_b, grad_A = rd.lcp.boxed_lcp_vjp(A, b, lo, hi, g, findex)
    grad_J = (grad_A + grad_A.T) @ J @ Minv + np.outer(grad_b, v0)

    def loss_J(Jf):
        Jm = Jf.reshape(J.shape)
        Am = Jm @ Minv @ Jm.T
        r = rd.lcp.solve_boxed_lcp(0.5 * (Am + Am.T), Jm @ v0, lo, hi, findex)
        assert r.classes == res.classes
        return np.array([g @ r.x])

    fd_J = central_jacobian(loss_J, J.ravel(), 1e-7).reshape(J.shape)
    assert np.max(np.abs(grad_J)) > 1e-3
    np.testing.assert_allclose(grad_J, fd_J, atol=1e-6)


@pytest.mark.parametrize("scale", [1e300, 1e-300, 1e120])
def test_extreme_scales_are_solved_at_unit_scale(scale):
    """(s A, s b) has the solution x of (A, b), w scaled by s and dx/db by 1/s; entries near 1e300 would
    overflow in the solver's products, so it solves them at unit scale."""
    rng = np.random.default_rng(1)
    J = rng.standard_normal((6, 4))
    A, b = J @ J.T + 0.1 * np.eye(6), rng.standard_normal(6)
    lo = np.array([0, -0.5, -0.5, 0, -0.5, -0.5])
    hi = np.array([np.inf, 0.5, 0.5, np.inf, 0.5, 0.5])
    findex = [-1, 0, 0, -1, 3, 3]
    ref = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex, jacobian=True)
    res = rd.lcp.solve_boxed_lcp(scale * A, scale * b, lo, hi, findex, jacobian=True)
    assert res.success and res.classes == ref.classes
    np.testing.assert_allclose(res.x, ref.x, atol=1e-12)
    np.testing.assert_allclose(res.w / scale, ref.w, atol=1e-12)
    np.testing.assert_allclose(res.dx_db * scale, ref.dx_db, atol=1e-12)
    g = rng.standard_normal(6)
    gb, gA = rd.lcp.boxed_lcp_vjp(A, b, lo, hi, g, findex)
    Gb, GA = rd.lcp.boxed_lcp_vjp(scale * A, scale * b, lo, hi, g, findex)
    np.testing.assert_allclose(Gb * scale, gb, atol=1e-12)
    np.testing.assert_allclose(GA * scale, gA, atol=1e-11)
