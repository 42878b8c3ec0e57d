"""rd.lcp.solve_boxed_lcp at extreme scales: the checks hold whatever the scale of b, a velocity beyond
double precision's range is not a success, and the symmetry error names A's entries as the caller wrote them."""

import numpy as np
import pytest

import rigidiff as rd


@pytest.mark.parametrize("b", [[-1.0, -2.0], [-1e101, -2e101], [-1e-120, -2e-120]])
def test_a_non_symmetric_a_is_refused_at_any_scale_of_b(b):
    with pytest.raises(ValueError, match=r"A must be symmetric: A\[0, 1\] = 2 but A\[1, 0\] = 0"):
        rd.lcp.solve_boxed_lcp([[1, 2], [0, 1]], b, [-1, -1], [1, 1])


@pytest.mark.parametrize("a,s", [(1.0, 1.0), (1.0, 1e101), (1e-120, 1e-120), (1e150, 1e150)])
def test_a_symmetric_a_is_solved_at_extreme_scales(a, s):
    A = a * np.array([[2.0, 0.5], [0.5, 1.0]])
    r = rd.lcp.solve_boxed_lcp(A, [-s, -2 * s], [0, 0], [np.inf, np.inf])
    assert r.success
    np.testing.assert_allclose(A @ r.x, [s, 2 * s], rtol=1e-12)  # w = 0: A x = -b
    np.testing.assert_allclose(r.w, 0.0, atol=1e-12 * s)


def test_a_velocity_beyond_double_precision_is_not_a_success():
    """A singular A whose separating row's velocity exceeds 1.8e308 once scaled back."""
    r = rd.lcp.solve_boxed_lcp([[1, 1], [1, 1]], [-1e308, 1e308], [0, 0], [np.inf, np.inf])
    assert not r.success and not np.all(np.isfinite(r.w))
