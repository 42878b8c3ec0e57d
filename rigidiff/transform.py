"""Rigid transforms (poses) used to place joints, bodies and shapes.

A :class:`Transform` maps points of a child frame into its parent frame: ``x_parent = R @ x_child + t``.
Quaternions are in (x, y, z, w) order, scalar last, as everywhere in rigidiff (docs/conventions.md).
"""

from __future__ import annotations

import numpy as np

from rigidiff._validate import as_array, real_array

__all__ = ["Transform", "rpy_to_matrix", "matrix_to_rpy", "quaternion_to_matrix", "matrix_to_quaternion"]


def rpy_to_matrix(rpy) -> np.ndarray:
    """Rotation matrix of roll-pitch-yaw angles (URDF convention: R = Rz(yaw) @ Ry(pitch) @ Rx(roll))."""
    r, p, y = as_array(rpy, (3,), "rpy")
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def matrix_to_rpy(R) -> np.ndarray:
    """Roll-pitch-yaw angles of a rotation matrix (inverse of :func:`rpy_to_matrix`; pitch in [-pi/2, pi/2])."""
    R = as_array(R, (3, 3), "R")
    pitch = np.arctan2(-R[2, 0], np.hypot(R[0, 0], R[1, 0]))
    if np.hypot(R[0, 0], R[1, 0]) < 1e-12:  # gimbal lock: put all of the rotation into yaw
        return np.array([0.0, pitch, np.arctan2(-R[0, 1], R[1, 1])])
    return np.array([np.arctan2(R[2, 1], R[2, 2]), pitch, np.arctan2(R[1, 0], R[0, 0])])


def quaternion_to_matrix(quat) -> np.ndarray:
    """Rotation matrix of a quaternion (x, y, z, w); the quaternion is normalised first."""
    return _quaternion_matrix(quat, "quaternion")


def _quaternion_matrix(quat, name: str) -> np.ndarray:
    q = as_array(quat, (4,), name)
    n = np.linalg.norm(q)
    if not n >= 1e-12 or not np.isfinite(n):  # a norm that overflows has no direction left to normalise
        raise ValueError(f"{name} must have a finite norm >= 1e-12, got {q} (norm {n:.3g})")
    x, y, z, w = q / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quaternion(R) -> np.ndarray:
    """Unit quaternion (x, y, z, w) with w >= 0 of a rotation matrix."""
    R = as_array(R, (3, 3), "R")
    tr = np.trace(R)
    # pick the largest of (w, x, y, z) as pivot for numerical stability
    if tr > 0:
        s = 2.0 * np.sqrt(1.0 + tr)
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, 0.25 * s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s, (R[2, 1] - R[1, 2]) / s]
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s, (R[0, 2] - R[2, 0]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s, (R[1, 0] - R[0, 1]) / s]
    q = np.array(q)
    q /= np.linalg.norm(q)
    return -q if q[3] < 0 else q


def _as_rotation(rotation) -> np.ndarray:
    arr = real_array(rotation, "rotation", "(3, 3) or (4,)")
    if arr.shape == (4,):
        return _quaternion_matrix(arr, "rotation (an (x, y, z, w) quaternion)")
    R = as_array(arr, (3, 3), "rotation (a 3x3 matrix or an (x, y, z, w) quaternion)")
    if abs(np.linalg.det(R) - 1.0) > 1e-6 or not np.allclose(R.T @ R, np.eye(3), atol=1e-6):
        raise ValueError(f"rotation must be a proper orthonormal 3x3 matrix (R^T R = I, det = 1), got\n{R}")
    # remove the round-off left by the caller so that composed transforms stay orthonormal
    u, _, vt = np.linalg.svd(R)
    return u @ vt


class Transform:
    """A rigid transform: rotation ``R`` (3x3) and translation ``t`` (3,), mapping child to parent.

    Args:
        translation: (3,) translation of the child origin in the parent frame.
        rotation: a 3x3 rotation matrix or a quaternion (x, y, z, w) (normalised).
        rpy: roll-pitch-yaw angles (URDF convention); give either ``rotation`` or ``rpy``.

    Transforms compose with ``@``: ``(a @ b).apply(x) == a.apply(b.apply(x))``.
    """

    __slots__ = ("_R", "_t")

    def __init__(self, translation=(0.0, 0.0, 0.0), rotation=None, rpy=None):
        if rotation is not None and rpy is not None:
            raise ValueError("give either rotation or rpy, not both")
        self._t = as_array(translation, (3,), "translation").copy()
        if rpy is not None:
            self._R = rpy_to_matrix(rpy)
        elif rotation is not None:
            self._R = _as_rotation(rotation)
        else:
            self._R = np.eye(3)
        self._t.flags.writeable = False
        self._R.flags.writeable = False

    @classmethod
    def identity(cls) -> Transform:
        """The identity transform."""
        return cls()

    @classmethod
    def from_matrix(cls, matrix) -> Transform:
        """Transform from a 4x4 homogeneous matrix."""
        m = as_array(matrix, (4, 4), "matrix")
        if not np.allclose(m[3], [0, 0, 0, 1]):
            raise ValueError(f"the last row of a homogeneous matrix must be (0, 0, 0, 1), got {m[3]}")
        return cls(translation=m[:3, 3], rotation=m[:3, :3])

    @property
    def translation(self) -> np.ndarray:
        """(3,) translation (read-only)."""
        return self._t

    @property
    def rotation(self) -> np.ndarray:
        """(3, 3) rotation matrix (read-only)."""
        return self._R

    @property
    def quaternion(self) -> np.ndarray:
        """Rotation as a unit quaternion (x, y, z, w), w >= 0."""
        return matrix_to_quaternion(self._R)

    @property
    def rpy(self) -> np.ndarray:
        """Rotation as roll-pitch-yaw angles."""
        return matrix_to_rpy(self._R)

    @property
    def matrix(self) -> np.ndarray:
        """(4, 4) homogeneous matrix."""
        m = np.eye(4)
        m[:3, :3] = self._R
        m[:3, 3] = self._t
        return m

    def inverse(self) -> Transform:
        """The inverse transform (parent to child)."""
        return Transform(translation=-self._R.T @ self._t, rotation=self._R.T)

    def apply(self, points) -> np.ndarray:
        """Map points (3,) or (N, 3) from the child frame to the parent frame."""
        p = real_array(points, "points", "(3,) or (N, 3)")
        if p.shape[-1:] != (3,) or p.ndim > 2:
            raise ValueError(f"points must have shape (3,) or (N, 3), got {p.shape}")
        return p @ self._R.T + self._t

    def __matmul__(self, other: Transform) -> Transform:
        if not isinstance(other, Transform):
            return NotImplemented
        return Transform(translation=self._R @ other._t + self._t, rotation=self._R @ other._R)

    def is_identity(self, tol: float = 1e-12) -> bool:
        """True when rotation and translation are the identity within ``tol``."""
        return bool(np.allclose(self._R, np.eye(3), atol=tol) and np.allclose(self._t, 0.0, atol=tol))

    def __eq__(self, other) -> bool:
        return isinstance(other, Transform) and np.array_equal(self._R, other._R) and np.array_equal(self._t, other._t)

    def __hash__(self):
        return hash((self._R.tobytes(), self._t.tobytes()))

    def __repr__(self) -> str:
        t = np.array2string(self._t, precision=4, separator=", ")
        q = np.array2string(self.quaternion, precision=4, separator=", ")
        return f"Transform(translation={t}, quaternion_xyzw={q})"
