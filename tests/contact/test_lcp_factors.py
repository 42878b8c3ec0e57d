"""The boxed LCP of a large island given by its factors A = J K^T (K = M^-1 J^T, rows on whole body
blocks): a warm-started solve reads only what it needs from the factors and never forms A, a cold one
forms A from them; both must give the dense solver's answer and derivatives on the same problem."""

import numpy as np
import pytest

import rigidiff as rd
from rigidiff import _testing

BODY = 6  # dofs per body block


def random_island(seed: int, bodies: int = 12, contacts: int = 40, mu: float = 0.5, slide: float = 0.0):
    """Point contacts (a normal and two friction rows each) on one body or between two, at random points and
    normals, among free bodies with random masses and inertias: J, K, block starts, b, lo, hi, findex.
    b = J v0 for random body velocities v0 (stopping every body is feasible, so the LCP has a solution);
    `slide` scales v0's share that is not along the normals, so that some contacts slide."""
    rng = np.random.default_rng(seed)
    dim = bodies * BODY
    centres = rng.uniform(-1.0, 1.0, (bodies, 3))
    Minv = np.zeros((dim, dim))
    for k in range(bodies):
        R = rng.standard_normal((3, 3))
        inertia = R @ R.T + 0.1 * np.eye(3)
        block = np.zeros((BODY, BODY))
        block[:3, :3] = np.eye(3) / rng.uniform(0.5, 2.0)
        block[3:, 3:] = np.linalg.inv(inertia)
        Minv[k * BODY:(k + 1) * BODY, k * BODY:(k + 1) * BODY] = block
    J, lo, hi, findex = [], [], [], []
    for _ in range(contacts):
        pair = rng.choice(bodies, size=rng.integers(1, 3), replace=False)
        p = centres[pair].mean(axis=0) + 0.1 * rng.standard_normal(3)
        n = rng.standard_normal(3)
        n /= np.linalg.norm(n)
        t1 = np.cross(n, [1.0, 0.0, 0.0] if abs(n[0]) < 0.9 else [0.0, 1.0, 0.0])
        t1 /= np.linalg.norm(t1)
        directions = (n, t1, np.cross(n, t1))
        rows = np.zeros((3, dim))
        for sign, k in zip((1.0, -1.0), pair):
            for r, d in enumerate(directions):
                rows[r, k * BODY:k * BODY + 3] = sign * d
                rows[r, k * BODY + 3:(k + 1) * BODY] = sign * np.cross(p - centres[k], d)
        normal = len(J)
        J += list(rows)
        lo += [0.0, -mu, -mu]
        hi += [np.inf, mu, mu]
        findex += [-1, normal, normal]
    J = np.array(J)
    v0 = rng.standard_normal(dim)
    b = J @ v0
    b[np.array(findex) >= 0] *= slide
    return J, (Minv @ J.T).T, np.arange(0, dim + 1, BODY), b, np.array(lo), np.array(hi), np.array(findex)


@pytest.mark.parametrize("seed, slide", [(0, 0.0), (1, 0.0), (2, 2.0), (3, 2.0), (4, 5.0)])
def test_warm_solve_from_factors_equals_dense(seed, slide):
    J, K, blocks, b, lo, hi, findex = random_island(seed, slide=slide)
    A = J @ K.T
    A = 0.5 * (A + A.T)
    dense = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex, jacobian=True)
    assert dense.success and dense.standardised and not dense.friction_dropped
    classes = np.array([int(c) for c in dense.classes], dtype=np.intc)
    if slide > 0.0:
        assert np.isin(classes, (2, 3)).sum() >= 3  # some friction rows at a bound: A_CU couples them
    x, w, got, status, dx_db = _testing.boxed_lcp_from_factors(J, K, blocks, b, lo, hi, findex, classes)
    assert status[0] == int(rd.lcp.LcpSolver.WARM_START) and status[1] == 0  # A never formed
    scale = np.abs(dense.x).max()
    np.testing.assert_allclose(x, dense.x, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(w, dense.w, rtol=0, atol=1e-10 * (1 + np.abs(b).max()))
    np.testing.assert_array_equal(got, classes)
    np.testing.assert_allclose(dx_db, dense.dx_db, rtol=0, atol=1e-9 * np.abs(dense.dx_db).max())


@pytest.mark.parametrize("seed", [5, 6])
def test_cold_solve_forms_a_from_factors(seed):
    J, K, blocks, b, lo, hi, findex = random_island(seed, slide=1.0)
    A = J @ K.T
    dense = rd.lcp.solve_boxed_lcp(0.5 * (A + A.T), b, lo, hi, findex, jacobian=True)
    x, w, classes, status, dx_db = _testing.boxed_lcp_from_factors(J, K, blocks, b, lo, hi, findex)
    assert status[1] == 1 and status[2] == 1  # A formed for pivoting; solved
    np.testing.assert_allclose(x, dense.x, rtol=0, atol=1e-9 * np.abs(dense.x).max())
    np.testing.assert_allclose(dx_db, dense.dx_db, rtol=0, atol=1e-8 * np.abs(dense.dx_db).max())
