"""Rigid-body inertia: mass, centre of mass and rotational inertia, expressed in a body frame."""

from __future__ import annotations

import numpy as np

from rigidiff._validate import as_array, as_scalar
from rigidiff.transform import Transform

__all__ = ["Inertia"]


def _skew(v) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


class Inertia:
    """Inertial properties of a rigid body in its body frame.

    Args:
        mass: mass in kg (>= 0).
        com: (3,) centre of mass in the body frame.
        rotational_inertia: (3, 3) symmetric rotational inertia about the centre of mass, in body-frame
            axes, positive semi-definite and satisfying the triangle inequalities of a physical body.
        check_triangle: check the triangle inequalities (default). Loaders pass False to keep a file's
            positive semi-definite but non-physical placeholder values exactly (and warn instead).

    ``a + b`` sums two inertias given in the same frame; ``inertia.transformed(T)`` re-expresses it in the
    frame in which ``T`` places the current frame.
    """

    __slots__ = ("_mass", "_com", "_I")

    def __init__(self, mass: float, com=(0.0, 0.0, 0.0), rotational_inertia=None, *, check_triangle: bool = True):
        self._mass = as_scalar(mass, "mass", minimum=0.0)
        self._com = as_array(com, (3,), "com").copy()
        I = (np.zeros((3, 3)) if rotational_inertia is None
             else as_array(rotational_inertia, (3, 3), "rotational_inertia"))
        with np.errstate(over="ignore"):  # the inertia about the body origin adds mass * |com|^2 (0 if massless)
            about_origin = np.abs(I).max() + (self._mass * float(self._com @ self._com) if self._mass else 0.0)
        if not np.isfinite(about_origin):
            raise ValueError(f"com {self._com} is too far from the origin for a mass of {self._mass:g} (and this "
                             f"rotational_inertia): the inertia about the origin overflows double precision")
        if not np.allclose(I, I.T, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(I).max())):
            raise ValueError(f"rotational_inertia must be symmetric, got\n{I}")
        I = 0.5 * (I + I.T)
        eig = np.linalg.eigvalsh(I)
        tol = 1e-9 * max(1.0, eig.max(initial=0.0))
        if eig.min() < -tol:
            raise ValueError(f"rotational_inertia must be positive semi-definite, got eigenvalues {eig}")
        # principal moments of a real body obey the triangle inequality I1 + I2 >= I3
        if check_triangle and eig[0] + eig[1] < eig[2] - tol:
            raise ValueError(f"rotational_inertia violates the triangle inequality of a physical body: "
                             f"principal moments {eig}")
        self._I = I
        for arr in (self._com, self._I):
            arr.flags.writeable = False

    @classmethod
    def _unchecked(cls, mass: float, com, rotational_inertia) -> Inertia:
        """An inertia built without the physical checks (finite differences across their boundary)."""
        obj = cls.__new__(cls)
        obj._mass = float(mass)
        obj._com = np.array(com, dtype=float)
        obj._I = np.array(rotational_inertia, dtype=float)
        for arr in (obj._com, obj._I):
            arr.flags.writeable = False
        return obj

    @classmethod
    def zero(cls) -> Inertia:
        """A massless inertia."""
        return cls(0.0)

    @classmethod
    def from_shape(cls, shape, mass=None, density=None, origin=None) -> Inertia:
        """Inertia of a solid ``shape`` of uniform density, expressed in the body frame.

        Args:
            shape: a finite shape (Box, Sphere, Capsule, Cylinder, Mesh).
            mass: total mass; give exactly one of ``mass`` and ``density``.
            density: mass per volume (kg/m^3).
            origin: pose of the shape in the body frame (identity if None).
        """
        if (mass is None) == (density is None):
            raise ValueError("give exactly one of mass and density")
        from rigidiff.shapes import Shape

        if not isinstance(shape, Shape):
            raise TypeError(f"shape must be a rigidiff shape (Box, Sphere, Capsule, Cylinder, Mesh), got {shape!r}")
        volume = shape.volume
        if not np.isfinite(volume) or volume <= 0:
            raise ValueError(f"{type(shape).__name__} has no finite positive volume; it cannot give an inertia")
        if density is not None:
            mass = as_scalar(density, "density", minimum=0.0, strict=True) * volume
        mass = as_scalar(mass, "mass", minimum=0.0, strict=True)
        inertia = shape.inertia(mass)
        return inertia if origin is None else inertia.transformed(origin)

    @property
    def mass(self) -> float:
        """Mass in kg."""
        return self._mass

    @property
    def com(self) -> np.ndarray:
        """(3,) centre of mass in the body frame."""
        return self._com

    @property
    def rotational_inertia(self) -> np.ndarray:
        """(3, 3) rotational inertia about the centre of mass, in body-frame axes."""
        return self._I

    def inertia_about_origin(self) -> np.ndarray:
        """(3, 3) rotational inertia about the frame origin (parallel-axis theorem)."""
        c = _skew(self._com)
        return self._I - self._mass * c @ c

    def spatial_matrix(self) -> np.ndarray:
        """(6, 6) spatial inertia mapping a (linear, angular) velocity at the origin to a momentum."""
        m, c = self._mass, _skew(self._com)
        return np.block([[m * np.eye(3), -m * c], [m * c, self.inertia_about_origin()]])

    def transformed(self, transform: Transform) -> Inertia:
        """The same body's inertia expressed in the frame where ``transform`` places the current frame."""
        if not isinstance(transform, Transform):
            raise ValueError(f"transform must be a rigidiff.Transform, got {type(transform).__name__}")
        R = transform.rotation
        # a rotation keeps the principal moments, so the triangle check done at construction still holds
        return Inertia(self._mass, transform.apply(self._com), R @ self._I @ R.T, check_triangle=False)

    def __add__(self, other: Inertia) -> Inertia:
        if not isinstance(other, Inertia):
            return NotImplemented
        m = self._mass + other._mass
        if m == 0.0:
            return Inertia.zero()
        c = (self._mass * self._com + other._mass * other._com) / m
        I = np.zeros((3, 3))
        for part in (self, other):
            d = _skew(part._com - c)
            I += part._I - part._mass * d @ d
        # a sum of physical bodies is physical; the parts were checked when they were built
        return Inertia(m, c, I, check_triangle=False)

    def __repr__(self) -> str:
        return f"Inertia(mass={self._mass:g}, com={np.array2string(self._com, precision=4, separator=', ')})"
