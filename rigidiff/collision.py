"""Geometry queries between shapes: signed distance, witness points and the contact normal.

    r = rd.distance(rd.Box((1, 1, 1)), pose_a, rd.Sphere(0.3), pose_b)
    r.distance, r.point_a, r.point_b, r.normal

Poses are ``rd.Transform`` objects or (4, 4) homogeneous matrices placing each shape in the world.
Sign convention (DESIGN.md section 2): ``distance`` > 0 is the gap, < 0 minus the penetration depth;
``normal`` is the unit vector from B to A (moving A along it separates the shapes) and
``point_a - point_b == distance * normal``. Spheres, capsules and planes use closed forms; pairs with a
box, a cylinder or a convex mesh use GJK and, when they overlap, EPA.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidiff import _core
from rigidiff._validate import as_array
from rigidiff.shapes import Box, Capsule, Cylinder, Mesh, Plane, Shape, Sphere
from rigidiff.transform import Transform

__all__ = ["distance", "DistanceResult"]

# shape type codes shared with the C++ core (cpp/include/rigidiff/collision/shape.hpp)
SHAPE_CODES = {Sphere: 1, Capsule: 2, Box: 3, Cylinder: 4, Plane: 5, Mesh: 6}
_NO_VERTICES = np.zeros((0, 3))


@dataclass(frozen=True)
class DistanceResult:
    """Signed distance of two shapes with its witness points (world) and the unit normal from B to A."""

    distance: float
    point_a: np.ndarray
    point_b: np.ndarray
    normal: np.ndarray


def shape_data(shape: Shape) -> tuple[int, np.ndarray, np.ndarray]:
    """(type code, 4 parameters, (n, 3) vertices) of a shape for the core."""
    if isinstance(shape, Sphere):
        return 1, np.array([shape.radius, 0.0, 0.0, 0.0]), _NO_VERTICES
    if isinstance(shape, Capsule):
        return 2, np.array([shape.radius, shape.length, 0.0, 0.0]), _NO_VERTICES
    if isinstance(shape, Box):
        return 3, np.array([*shape.size, 0.0]), _NO_VERTICES
    if isinstance(shape, Cylinder):
        return 4, np.array([shape.radius, shape.length, 0.0, 0.0]), _NO_VERTICES
    if isinstance(shape, Plane):
        return 5, np.array([*shape.normal, shape.offset]), _NO_VERTICES
    if isinstance(shape, Mesh):
        if not shape.is_convex:
            raise ValueError("distance queries on a mesh that is not convex are not supported: a non-convex mesh "
                             "is never treated as its convex hull silently; pass "
                             "rd.Mesh(mesh.to_trimesh().convex_hull) if the hull is what you mean")
        return 6, np.zeros(4), np.ascontiguousarray(shape.vertices, dtype=float)
    raise ValueError(f"expected a rigidiff shape (Box, Sphere, Capsule, Cylinder, Plane, Mesh), got "
                     f"{type(shape).__name__}")


def pose_data(pose, name: str) -> np.ndarray:
    """12 numbers (rotation row-major, then translation) of a Transform or a (4, 4) matrix."""
    if isinstance(pose, Transform):
        R, p = pose.rotation, pose.translation
    else:
        T = as_array(pose, (4, 4), name)
        if not np.allclose(T[3], [0.0, 0.0, 0.0, 1.0]):
            raise ValueError(f"{name} must be a homogeneous transform (last row 0 0 0 1), got last row {T[3]}")
        R, p = T[:3, :3], T[:3, 3]
    return np.concatenate([np.asarray(R, dtype=float).ravel(), np.asarray(p, dtype=float)])


def distance(shape_a: Shape, pose_a, shape_b: Shape, pose_b) -> DistanceResult:
    """Signed distance between two shapes placed in the world (see the module docstring).

    Args:
        shape_a, shape_b: rigidiff shapes; meshes must be convex (``Mesh.is_convex``).
        pose_a, pose_b: ``rd.Transform`` or (4, 4) homogeneous matrices.
    Raises:
        ValueError: a non-convex mesh, two planes, a pose that is not a rigid transform.
    """
    ta, pa, va = shape_data(shape_a)
    tb, pb, vb = shape_data(shape_b)
    out = _core._shape_distance(ta, pa, va, pose_data(pose_a, "pose_a"), tb, pb, vb, pose_data(pose_b, "pose_b"))
    return DistanceResult(float(out[0]), out[1:4].copy(), out[4:7].copy(), out[7:10].copy())
