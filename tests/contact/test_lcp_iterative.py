"""Large islands: their clamping systems solved by Krylov iterations on the Delassus factors (conjugate
gradients when no friction row slides, CGLS when one does) and their cold solves swept by Gauss-Seidel on
the factors before pivoting. The thresholds (BoxedLcpOptions' iterativeClampingSize and sweepsFirstWork)
are lowered here so that small islands, whose dense answers are cheap, take these paths."""

import numpy as np
import pytest

import rigidiff as rd
from rigidiff import _testing

from test_lcp_factors import random_island


def _dense(J, K, b, lo, hi, findex):
    A = J @ K.T
    return rd.lcp.solve_boxed_lcp(0.5 * (A + A.T), b, lo, hi, findex, jacobian=True)


def with_duplicates(island, contacts: int):
    """The island with its first `contacts` contacts (three rows each) listed twice: redundant rows, whose
    clamping system is singular and whose impulses only the minimum-norm rule makes unique."""
    J, K, blocks, b, lo, hi, findex = island
    rows = 3 * contacts
    shifted = np.where(findex[:rows] >= 0, findex[:rows] + len(b), -1)
    return (np.vstack([J, J[:rows]]), np.vstack([K, K[:rows]]), blocks, np.concatenate([b, b[:rows]]),
            np.concatenate([lo, lo[:rows]]), np.concatenate([hi, hi[:rows]]), np.concatenate([findex, shifted]))


@pytest.mark.parametrize("seed, slide, duplicates", [
    (0, 0.0, 0), (1, 0.0, 0),  # symmetric systems: conjugate gradients
    (2, 2.0, 0), (3, 2.0, 0), (4, 5.0, 0),  # sliding rows: CGLS
    (0, 0.0, 25), (1, 0.0, 10), (3, 2.0, 10), (6, 0.0, 25),  # redundant rows: the minimum-norm answer
])
def test_iterative_clamping_solve_gives_the_dense_answer(seed, slide, duplicates):
    J, K, blocks, b, lo, hi, findex = with_duplicates(random_island(seed, slide=slide), duplicates)
    dense = _dense(J, K, b, lo, hi, findex)
    assert dense.success and dense.standardised and not dense.friction_dropped
    classes = np.array([int(c) for c in dense.classes], dtype=np.intc)
    if duplicates:
        clamped = classes == 1
        assert np.linalg.matrix_rank((J @ K.T)[np.ix_(clamped, clamped)]) < clamped.sum()  # singular
    x, w, got, status, dx_db = _testing.boxed_lcp_from_factors(J, K, blocks, b, lo, hi, findex, classes,
                                                               iterative_size=1)
    assert status[0] == int(rd.lcp.LcpSolver.WARM_START) and status[1] == 0 and status[3] == 1
    scale = np.abs(dense.x).max()
    np.testing.assert_allclose(x, dense.x, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(w, dense.w, rtol=0, atol=1e-8 * (1 + np.abs(b).max()))
    np.testing.assert_array_equal(got, classes)
    # the derivatives hold the classification and read the same clamping system
    np.testing.assert_allclose(dx_db, dense.dx_db, rtol=0, atol=1e-9 * np.abs(dense.dx_db).max())
    # the default threshold leaves this small system to the dense decomposition: the answers agree to the
    # iterations' tolerance, not bit for bit (so the iterations, not a dense fallback, answered above)
    x_default = _testing.boxed_lcp_from_factors(J, K, blocks, b, lo, hi, findex, classes)[0]
    assert np.abs(x_default - dense.x).max() <= 1e-12 * scale
    assert not np.array_equal(x_default, x)


def _check_valid(x, w, b, lo, hi, findex, tol=1e-6):
    tx = tol * (1 + np.abs(x).max())
    tw = tol * (1 + np.abs(b).max())
    for i in range(len(x)):
        s = max(0.0, x[findex[i]]) if findex[i] >= 0 else 1.0
        l, u = lo[i] * s, hi[i] * s
        assert l - tx <= x[i] <= u + tx
        if u - l <= tx:
            continue
        if x[i] <= l + tx:
            assert w[i] >= -tw
        if x[i] >= u - tx:
            assert w[i] <= tw
        if l + tx < x[i] < u - tx:
            assert abs(w[i]) <= tw


@pytest.mark.parametrize("seed, mu", [(10, 0.0), (11, 0.0), (12, 0.3), (13, 0.8)])
def test_sweeps_first_solves_a_cold_island_without_forming_a(seed, mu):
    J, K, blocks, b, lo, hi, findex = random_island(seed, bodies=10, contacts=15, mu=mu)
    x, w, classes, status, _ = _testing.boxed_lcp_from_factors(J, K, blocks, b, lo, hi, findex, sweeps_work=0.0)
    assert status[2] == 1
    iterative = (int(rd.lcp.LcpSolver.PROJECTED_CONJUGATE_GRADIENTS), int(rd.lcp.LcpSolver.PROJECTED_GAUSS_SEIDEL))
    assert status[0] in iterative and status[1] == 0  # gradients or sweeps on the factors, A never formed
    np.testing.assert_allclose(w, J @ (K.T @ x) + b, rtol=0, atol=1e-12 * (1 + np.abs(b).max()))
    _check_valid(x, w, b, lo, hi, findex)
    dense = _dense(J, K, b, lo, hi, findex)
    if status[3] == 1 and dense.standardised and [int(c) for c in dense.classes] == list(classes):
        np.testing.assert_allclose(x, dense.x, rtol=0, atol=1e-8 * np.abs(dense.x).max())


def test_a_cold_island_is_pivoted_below_the_sweeps_threshold():
    J, K, blocks, b, lo, hi, findex = random_island(10, bodies=10, contacts=15)
    status = _testing.boxed_lcp_from_factors(J, K, blocks, b, lo, hi, findex)[3]
    assert status[0] == int(rd.lcp.LcpSolver.PIVOTING) and status[1] == 1
