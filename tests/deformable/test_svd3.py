"""The deformable solver's 3 x 3 SVD (Jacobi eigenvectors of F^T F, then a Givens QR of F V) against numpy's:
reconstruction, rotations U and V, the singular values' order and signs, on random, rotated, repeated,
near-singular and reflected matrices."""

import numpy as np
import pytest

from rigidiff import _testing


def _cases():
    rng = np.random.default_rng(7)
    R = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    R *= np.sign(np.linalg.det(R))
    yield from (rng.standard_normal((3, 3)) for _ in range(300))
    yield from (np.eye(3) + 1e-3 * rng.standard_normal((3, 3)) for _ in range(100))  # near rest
    yield np.eye(3)
    yield np.zeros((3, 3))
    yield -np.eye(3)
    yield np.diag([2.0, 2.0, -1.0])
    yield np.diag([1.0, 1.0, 1e-12])
    yield np.diag([1.0, 1.0, 0.0])
    yield R @ np.diag([1.0, 1.0 + 1e-9, 1.0 - 1e-9])
    yield np.diag([1e-8, 1.0, 1.0]) @ R
    yield 1e6 * R
    yield 1e-6 * rng.standard_normal((3, 3))


@pytest.mark.parametrize("F", list(_cases()))
def test_svd3(F):
    U, s, V = _testing.svd3(F)
    scale = max(1.0, np.abs(F).max())
    np.testing.assert_allclose(U @ np.diag(s) @ V.T, F, atol=1e-14 * scale)
    for Q in (U, V):
        np.testing.assert_allclose(Q.T @ Q, np.eye(3), atol=1e-14)
        assert abs(np.linalg.det(Q) - 1.0) < 1e-14
    np.testing.assert_allclose(np.abs(s), np.linalg.svd(F, compute_uv=False), atol=1e-14 * scale)
    assert s[0] >= abs(s[1]) - 1e-15 * scale and s[1] >= abs(s[2]) - 1e-15 * scale
    assert s[0] >= 0.0 and s[1] >= 0.0
    if abs(np.linalg.det(F)) > 1e-12 * scale ** 3:
        assert np.sign(s[2]) == np.sign(np.linalg.det(F))
