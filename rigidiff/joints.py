"""Joint descriptions: what a body's joint to its parent allows, its limits and its passive terms.

Each joint class is constructed with its name first. Coordinates (docs/conventions.md):

============== ==== ==== =======================================================================
joint          nq   nv   q / v
============== ==== ==== =======================================================================
fixed          0    0    --
revolute       1    1    angle about ``axis`` / angular rate (no limits = continuous)
prismatic      1    1    offset along ``axis`` / its rate
ball           4    3    quaternion (x, y, z, w) / angular velocity in the child frame
free           7    6    (x, y, z, qx, qy, qz, qw) / (linear, angular) velocity in the child frame
planar         3    3    (x, y, theta) in the plane normal to ``normal`` / (vx, vy, wz) in the child frame
universal      2    2    angles about ``axis1`` then ``axis2`` / their rates
translational  3    3    (x, y, z) / their rates
============== ==== ==== =======================================================================

Per-dof passive terms (arrays of length nv, or scalars broadcast to them): ``damping`` (N·m·s/rad or
N·s/m), ``stiffness`` (spring towards ``rest_position``), ``armature`` (rotor inertia added to the
diagonal of the mass matrix), ``friction`` (Coulomb value, used by the contact solver), and the limits
``velocity_limit`` and ``effort_limit`` (the step clips torques to ``effort_limit``). Position limits
``lower`` / ``upper`` have length nq; quaternion entries ignore them. Setting any of these later
(``joint.damping = 0.5``, then ``world.rebuild()``) is checked and broadcast as in the constructor.
"""

from __future__ import annotations

import numpy as np

from rigidiff._validate import as_array, as_name, real_array

__all__ = [
    "Joint",
    "FixedJoint",
    "RevoluteJoint",
    "PrismaticJoint",
    "BallJoint",
    "FreeJoint",
    "PlanarJoint",
    "UniversalJoint",
    "TranslationalJoint",
]

# joint type codes shared with the C++ core (cpp/include/rigidiff/multibody/joint.hpp)
JOINT_CODES = {
    "revolute": 1,
    "prismatic": 2,
    "ball": 3,
    "free": 4,
    "planar": 5,
    "universal": 6,
    "translational": 7,
}


def _unit(axis, name: str) -> np.ndarray:
    a = as_array(axis, (3,), name)
    n = np.linalg.norm(a)
    if n < 1e-12:
        raise ValueError(f"{name} must be a non-zero 3-vector, got {a}")
    return a / n


def _per(value, n: int, name: str, *, minimum=None, default=0.0) -> np.ndarray:
    if value is None:
        return np.full(n, default, dtype=float)
    try:  # real numbers only: a numeric string or a complex value is not read as a float
        arr = real_array(value, name)
    except ValueError:
        raise ValueError(f"{name} must be a real number or {n} real numbers, got {value!r}") from None
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    arr = as_array(arr, (n,), name, finite=False)
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} must not contain NaN, got {arr}")
    if minimum is not None and np.any(arr < minimum):
        raise ValueError(f"{name} must be >= {minimum}, got {arr}")
    return arr


def _per_coordinate(name: str, per: str, default: float, doc: str, minimum=None, finite: bool = False) -> property:
    """A joint attribute of nq (limits) or nv (passive terms) numbers, checked whenever it is set, in the
    constructor or later (``joint.damping = 0.5`` broadcasts as the constructor does; ``lower`` above ``upper``,
    a negative damping or NaN raise ValueError naming the joint)."""
    slot = "_" + name

    def get(joint):
        return joint.__dict__[slot]

    def set_(joint, value):
        n = joint.nq if per == "nq" else joint.nv
        arr = _per(value, n, f"joint {joint.name!r} {name}", minimum=minimum, default=default)
        if finite and not np.all(np.isfinite(arr)):
            raise ValueError(f"joint {joint.name!r}: {name} must be finite, got {arr}")
        other = {"lower": "_upper", "upper": "_lower"}.get(name)
        if other in joint.__dict__:
            lower, upper = (arr, joint.__dict__[other]) if name == "lower" else (joint.__dict__[other], arr)
            if np.any(lower > upper):
                raise ValueError(f"joint {joint.name!r}: lower limit {lower} exceeds upper limit {upper}")
        joint.__dict__[slot] = arr

    return property(get, set_, doc=doc + "; settable (a scalar broadcasts), checked as in the constructor.")


class Joint:
    """Base class of all joints. Use one of the subclasses."""

    type: str = ""
    nq: int = 0
    nv: int = 0

    lower = _per_coordinate("lower", "nq", -np.inf, "(nq,) lower position limits (-inf: none)")
    upper = _per_coordinate("upper", "nq", np.inf, "(nq,) upper position limits (+inf: none)")
    velocity_limit = _per_coordinate("velocity_limit", "nv", np.inf,
                                     "(nv,) velocity limits (stored, not enforced by the step)", minimum=0.0)
    effort_limit = _per_coordinate("effort_limit", "nv", np.inf, "(nv,) effort limits; the step clips torques to them",
                                   minimum=0.0)
    damping = _per_coordinate("damping", "nv", 0.0, "(nv,) viscous damping, applied implicitly by the step",
                              minimum=0.0, finite=True)
    stiffness = _per_coordinate("stiffness", "nv", 0.0,
                                "(nv,) spring stiffness towards `rest_position`, applied implicitly by the step",
                                minimum=0.0, finite=True)
    armature = _per_coordinate("armature", "nv", 0.0, "(nv,) rotor inertia added to the diagonal of the mass matrix",
                               minimum=0.0, finite=True)
    friction = _per_coordinate("friction", "nv", 0.0, "(nv,) Coulomb friction torque or force: a boxed constraint of "
                               "the step when `contact_options(joint_friction=True)`", minimum=0.0, finite=True)

    def __init__(
        self,
        name: str,
        *,
        lower=None,
        upper=None,
        velocity_limit=None,
        effort_limit=None,
        damping=None,
        stiffness=None,
        rest_position=None,
        armature=None,
        friction=None,
    ):
        self.name = as_name(name, "joint name")
        nq = self.nq
        self.lower, self.upper = lower, upper
        self.velocity_limit, self.effort_limit = velocity_limit, effort_limit
        self.damping, self.stiffness, self.armature, self.friction = damping, stiffness, armature, friction
        if rest_position is None:
            self.rest_position = self.neutral()
        else:
            what = f"joint {name!r} rest_position"
            self.rest_position = as_array(np.atleast_1d(real_array(rest_position, what, f"({nq},)")), (nq,), what)
            quat = self._quaternion_slice()
            if quat is not None:
                norm = np.linalg.norm(self.rest_position[quat])
                if abs(norm - 1.0) > 1e-6:
                    raise ValueError(f"joint {name!r} rest_position: the quaternion (x, y, z, w) must have unit "
                                     f"norm, got norm {norm:g}")

    # geometry-specific data sent to the C++ core: up to 6 floats (axes)
    def _axis_data(self) -> np.ndarray:
        return np.zeros(6)

    def neutral(self) -> np.ndarray:
        """Neutral configuration of this joint (zeros; identity quaternion for ball and free joints)."""
        return np.zeros(self.nq)

    def _quaternion_slice(self):
        """Where the joint's quaternion sits in its q, or None."""
        return {"ball": slice(0, 4), "free": slice(3, 7)}.get(self.type)

    @property
    def has_position_limits(self) -> bool:
        """True if any coordinate has a finite lower or upper limit."""
        return bool(np.any(np.isfinite(self.lower)) or np.any(np.isfinite(self.upper)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class FixedJoint(Joint):
    """A weld: the child body moves with its parent (or with the world when it has no parent)."""

    type, nq, nv = "fixed", 0, 0


class RevoluteJoint(Joint):
    """Rotation about ``axis`` (in the joint frame). Without ``lower``/``upper`` it is continuous."""

    type, nq, nv = "revolute", 1, 1

    def __init__(self, name: str, axis=(0.0, 0.0, 1.0), lower=None, upper=None, **kwargs):
        self.axis = _unit(axis, f"joint {name!r} axis")
        super().__init__(name, lower=lower, upper=upper, **kwargs)

    @property
    def continuous(self) -> bool:
        """True when the joint has no position limits."""
        return not self.has_position_limits

    def _axis_data(self):
        return np.concatenate([self.axis, np.zeros(3)])


class PrismaticJoint(Joint):
    """Translation along ``axis`` (in the joint frame)."""

    type, nq, nv = "prismatic", 1, 1

    def __init__(self, name: str, axis=(0.0, 0.0, 1.0), lower=None, upper=None, **kwargs):
        self.axis = _unit(axis, f"joint {name!r} axis")
        super().__init__(name, lower=lower, upper=upper, **kwargs)

    def _axis_data(self):
        return np.concatenate([self.axis, np.zeros(3)])


class BallJoint(Joint):
    """Spherical joint: q is a unit quaternion (x, y, z, w), v the angular velocity in the child frame."""

    type, nq, nv = "ball", 4, 3

    def neutral(self):
        return np.array([0.0, 0.0, 0.0, 1.0])


class FreeJoint(Joint):
    """Six-dof joint: q = (x, y, z, qx, qy, qz, qw), v = (linear, angular) velocity in the child frame."""

    type, nq, nv = "free", 7, 6

    def neutral(self):
        return np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


class PlanarJoint(Joint):
    """Motion in the plane normal to ``normal``: q = (x, y, theta), v = (vx, vy, wz) in the child frame.

    The in-plane axes are e1 (the world axis least aligned with ``normal``, projected on the plane) and
    e2 = normal x e1; for the default normal (0, 0, 1) they are x and y.
    """

    type, nq, nv = "planar", 3, 3

    def __init__(self, name: str, normal=(0.0, 0.0, 1.0), **kwargs):
        self.normal = _unit(normal, f"joint {name!r} normal")
        super().__init__(name, **kwargs)

    def _axis_data(self):
        return np.concatenate([self.normal, np.zeros(3)])


class UniversalJoint(Joint):
    """Two rotations: about ``axis1`` (joint frame), then about ``axis2`` (frame after the first)."""

    type, nq, nv = "universal", 2, 2

    def __init__(self, name: str, axis1=(1.0, 0.0, 0.0), axis2=(0.0, 1.0, 0.0), **kwargs):
        self.axis1 = _unit(axis1, f"joint {name!r} axis1")
        self.axis2 = _unit(axis2, f"joint {name!r} axis2")
        if np.linalg.norm(np.cross(self.axis1, self.axis2)) < 1e-6:
            raise ValueError(f"joint {name!r}: axis1 and axis2 must not be parallel")
        super().__init__(name, **kwargs)

    def _axis_data(self):
        return np.concatenate([self.axis1, self.axis2])


class TranslationalJoint(Joint):
    """Three translations along the joint-frame axes: q = (x, y, z)."""

    type, nq, nv = "translational", 3, 3
