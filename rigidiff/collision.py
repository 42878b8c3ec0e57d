"""Geometry queries between shapes: signed distance, witness points and the contact normal.

    r = rd.distance(rd.Box((1, 1, 1)), pose_a, rd.Sphere(0.3), pose_b)
    r.distance, r.point_a, r.point_b, r.normal

Poses are ``rd.Transform`` objects or (4, 4) homogeneous matrices placing each shape in the world.
Sign convention (docs/architecture.md, Conventions): ``distance`` > 0 is the gap, < 0 minus the penetration depth (the
shortest translation of A that separates the shapes); ``normal`` is the unit vector from B to A (moving A
along it separates the shapes) and ``point_a - point_b == distance * normal``, with ``point_a`` on the
surface of A and ``point_b`` on the surface of B.

Spheres, capsules and planes use closed forms, and so does any shape against a plane. Pairs with a box, a
cylinder or a convex mesh use GJK (distances exact to about 1e-11 of the shapes' size) and, when they
overlap, EPA: exact penetration depths for boxes and meshes, and to about 1e-10 of the size with a
cylinder (1e-8 in coaxial poses, where a whole circle of directions is equally deep). Moving A by
``-distance`` along ``normal`` always brings the shapes exactly into touching contact. When the depth is
realised by several directions (concentric spheres, crossing capsule axes) ``normal`` is one of them.
A mesh that is not convex is its triangles, never its hull (docs/contact.md, Distances to meshes).

The squared-distance primitives of mesh contact (point–triangle, edge–edge, ... with exact gradients and
Hessians, and their distance types) live in rigidiff.distance_primitives and are offered here too:
``rd.collision.point_triangle_distance(p, t0, t1, t2, derivatives=2)`` (docs/distance.md). Continuous
collision detection of moving primitives (earliest time of impact, swept-box broad phase) lives in
rigidiff.ccd and is offered here too: ``rd.collision.point_triangle_ccd(...)`` (docs/ccd.md).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from rigidiff import _core
from rigidiff._geometry_cache import GeometryCache
from rigidiff._validate import MAX_COLLISION_LENGTH, as_array
from rigidiff.ccd import CCDResult, edge_edge_ccd, point_edge_ccd, point_point_ccd, point_triangle_ccd, swept_pairs
from rigidiff.mesh_checks import mesh_problems, warn_problems
from rigidiff.distance_primitives import (EDGE_EDGE_MOLLIFIER_SCALE, EDGE_EDGE_TYPES, POINT_EDGE_TYPES,
                                          POINT_TRIANGLE_TYPES, edge_edge_distance, edge_edge_distance_type,
                                          edge_edge_mollifier, edge_edge_mollifier_threshold, line_line_distance,
                                          point_edge_distance, point_edge_distance_type, point_line_distance,
                                          point_plane_distance, point_point_distance, point_triangle_distance,
                                          point_triangle_distance_type)
from rigidiff.shapes import Box, Capsule, Cylinder, Mesh, Plane, Shape, Sphere
from rigidiff.transform import Transform

__all__ = ["distance", "DistanceResult", "POINT_EDGE_TYPES", "POINT_TRIANGLE_TYPES", "EDGE_EDGE_TYPES",
           "EDGE_EDGE_MOLLIFIER_SCALE", "point_point_distance", "point_line_distance", "point_edge_distance",
           "point_plane_distance", "point_triangle_distance", "line_line_distance", "edge_edge_distance",
           "edge_edge_mollifier", "edge_edge_mollifier_threshold", "point_edge_distance_type",
           "point_triangle_distance_type", "edge_edge_distance_type", "CCDResult", "point_point_ccd",
           "point_edge_ccd", "point_triangle_ccd", "edge_edge_ccd", "swept_pairs"]

# shape type codes shared with the C++ core (cpp/include/rigidiff/collision/shape.hpp)
SHAPE_CODES = {Sphere: 1, Capsule: 2, Box: 3, Cylinder: 4, Plane: 5, Mesh: 6}
_NO_VERTICES = np.zeros((0, 3))
# vertices of the meshes found convex (the check runs trimesh once per mesh)
_CONVEX_VERTICES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# meshes that have warned of their non-manifold edges, duplicate faces and self-intersection (once each)
_CHECKED: weakref.WeakSet = weakref.WeakSet()
# geometry key -> _PreparedMesh: the checks and the prisms' data, the same for every Mesh of that geometry
_PREPARED = GeometryCache()


@dataclass(frozen=True)
class DistanceResult:
    """Signed distance of two shapes, its witness points (world) and the unit normal from B to A.

    Attributes:
        distance: the gap (> 0) or minus the penetration depth (< 0).
        point_a: (3,) point on the surface of A.
        point_b: (3,) point on the surface of B; ``point_a - point_b == distance * normal``.
        normal: (3,) unit vector from B to A.
    """

    distance: float
    point_a: np.ndarray
    point_b: np.ndarray
    normal: np.ndarray


def _mesh_vertices(mesh: Mesh, name: str) -> np.ndarray:
    vertices = _CONVEX_VERTICES.get(mesh)
    if vertices is None:
        if not mesh.is_convex:
            raise ValueError(f"{name} is a mesh that is not convex (or not closed); distance queries need a convex "
                             "mesh and never replace one by its convex hull silently: pass "
                             "rd.Mesh(mesh.to_trimesh().convex_hull) if the hull is what you mean")
        vertices = np.ascontiguousarray(mesh.vertices, dtype=np.float64)
        _CONVEX_VERTICES[mesh] = vertices
    return vertices


def shape_data(shape: Shape, name: str = "shape") -> tuple[int, np.ndarray, np.ndarray]:
    """(type code, 4 parameters, (n, 3) vertices) of a shape for the core (see bind/api.hpp)."""
    code = next((c for cls, c in SHAPE_CODES.items() if isinstance(shape, cls)), None)
    if code is None:
        raise ValueError(f"{name} must be a rigidiff shape (Box, Sphere, Capsule, Cylinder, Plane, Mesh), got "
                         f"{type(shape).__name__}")
    params, vertices = np.zeros(4), _NO_VERTICES
    if isinstance(shape, Sphere):
        params[0] = shape.radius
    elif isinstance(shape, (Capsule, Cylinder)):
        params[:2] = shape.radius, shape.length
    elif isinstance(shape, Box):
        params[:3] = shape.size
    elif isinstance(shape, Plane):
        params[:3], params[3] = shape.normal, shape.offset
    else:
        vertices = _mesh_vertices(shape, name)
    check_reach(shape, name)
    return code, params, vertices


def check_reach(shape: Shape, name: str = "shape") -> None:
    """ValueError naming the shape when a size, plane offset or mesh vertex coordinate exceeds
    MAX_COLLISION_LENGTH (a shape that large cannot collide)."""
    if isinstance(shape, Mesh):
        values = shape.vertices
    elif isinstance(shape, Box):
        values = shape.size
    elif isinstance(shape, Plane):
        values = np.array([shape.offset])
    elif isinstance(shape, (Capsule, Cylinder)):
        values = np.array([shape.radius, shape.length])
    else:
        values = np.array([shape.radius])
    reach = float(np.abs(values).max(initial=0.0))
    if reach > MAX_COLLISION_LENGTH:
        raise ValueError(f"{name} ({shape!r}) is too large to collide: a size or vertex coordinate of {reach:g} m, "
                         f"beyond {MAX_COLLISION_LENGTH:g} m (its squared distances would overflow and its contacts "
                         f"vanish)")


#: code of a triangle mesh that is not convex (cpp/include/rigidiff/collision/shape.hpp)
TRIANGLE_MESH_CODE = 7


def triangle_mesh_data(mesh: Mesh, name: str = "mesh") -> tuple[int, np.ndarray, np.ndarray, tuple]:
    """(type code, parameters, convex-hull vertices, (points, faces, prism thickness)) of a mesh that is
    not convex, for the core's per-triangle collision (docs/contact.md). A closed mesh gets outward
    faces (trimesh's fix_normals) and prisms a quarter of its smallest extent deep; an open surface
    (terrain) keeps its winding (counter-clockwise seen from the free side) and prisms a tenth of its
    largest extent deep. Non-manifold edges, duplicate faces and a self-intersecting surface give a
    UserWarning (once per mesh) naming the first offending faces (indices into ``mesh.faces``). The work
    is done once per geometry: a mesh loaded again (another load_urdf of the same robot) reuses it."""
    check_reach(mesh, name)  # before the preparation, whose checks a huge mesh would confuse
    prepared = _PREPARED.get(mesh._geometry_key(), lambda: _prepare_triangle_mesh(mesh))
    if mesh not in _CHECKED:
        _CHECKED.add(mesh)
        warn_problems(prepared.problems, name)
    if prepared.error:
        raise ValueError(f"{name}: {prepared.error}")
    # copies: the caller owns what it gets, the cache keeps its own
    return (TRIANGLE_MESH_CODE, np.zeros(4), prepared.hull.copy(),
            (prepared.points.copy(), prepared.faces.copy(), prepared.thickness))


@dataclass(frozen=True)
class _PreparedMesh:
    """What triangle_mesh_data finds for one geometry: its problems (mesh_problems) and either the prisms'
    data or why the mesh cannot collide (``error``)."""

    problems: tuple
    error: str = ""
    hull: np.ndarray | None = None
    points: np.ndarray | None = None
    faces: np.ndarray | None = None
    thickness: float = 0.0


def _prepare_triangle_mesh(mesh: Mesh) -> _PreparedMesh:
    import trimesh

    tm = trimesh.Trimesh(np.asarray(mesh.vertices, dtype=float), np.asarray(mesh.faces), process=True)
    proper = tm.area_faces > 1e-12 * max(float(np.max(tm.extents, initial=0.0)), 1e-300) ** 2
    kept = np.flatnonzero(proper)  # merged vertices, faces still in the mesh's order
    problems = mesh_problems(np.asarray(tm.vertices), np.asarray(tm.faces)[kept], kept)
    tm.update_faces(proper)
    tm.remove_unreferenced_vertices()
    if len(tm.faces) == 0:
        return _PreparedMesh(problems, "every triangle of the mesh is degenerate (zero area); nothing can touch it")
    extent = tm.extents
    if tm.is_watertight:
        tm.fix_normals()
        thickness = 0.25 * float(np.min(extent))
    else:
        thickness = 0.1 * float(np.max(extent))
    if not thickness > 0.0:
        return _PreparedMesh(problems, "the mesh is degenerate (zero extent)")
    hull_points = tm.vertices
    if not tm.is_watertight:  # a surface: its prisms' back faces bound the solid (and a flat one has volume)
        hull_points = np.vstack([tm.vertices, tm.vertices - thickness * tm.vertex_normals])
    hull = np.ascontiguousarray(trimesh.convex.convex_hull(hull_points).vertices, dtype=np.float64)
    points = np.ascontiguousarray(tm.vertices, dtype=np.float64)
    faces = np.ascontiguousarray(tm.faces, dtype=np.intc)
    return _PreparedMesh(problems, "", hull, points, faces, thickness)


def _inside_closed_mesh(points: np.ndarray, faces: np.ndarray, x: np.ndarray) -> bool:
    """Is x strictly inside the closed triangle surface (points, faces)? The parity of the faces that a
    ray from x crosses (a direction no axis-aligned mesh edge or face contains)."""
    d = np.array([0.5366, 0.6234, 0.5687])
    a, b, c = points[faces[:, 0]], points[faces[:, 1]], points[faces[:, 2]]
    e1, e2 = b - a, c - a
    h = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, h)
    ok = np.abs(det) > 1e-300
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = x - a
    u = inv * np.einsum("ij,ij->i", s, h)
    q = np.cross(s, e1)
    v = inv * (q @ d)
    t = inv * np.einsum("ij,ij->i", e2, q)
    hits = ok & (u >= 0.0) & (v >= 0.0) & (u + v <= 1.0) & (t > 0.0)
    return bool(np.count_nonzero(hits) % 2)


def pose_data(pose, name: str) -> np.ndarray:
    """12 numbers (rotation row-major, then translation) of a Transform or a (4, 4) rigid transform matrix."""
    if isinstance(pose, Transform):
        R, p = pose.rotation, pose.translation
    else:
        T = as_array(pose, (4, 4), name)
        if not np.allclose(T[3], [0.0, 0.0, 0.0, 1.0]):
            raise ValueError(f"{name} must be a homogeneous transform (last row 0 0 0 1), got last row {T[3]}")
        R, p = T[:3, :3], T[:3, 3]
        if np.linalg.norm(R.T @ R - np.eye(3)) > 1e-6 or np.linalg.det(R) < 0.0:
            raise ValueError(f"{name} must be a rigid transform: its rotation block is not a rotation matrix "
                             f"(R^T R = I, det R = 1), got\n{R}")
    return np.concatenate([np.asarray(R, dtype=np.float64).ravel(), np.asarray(p, dtype=np.float64)])


def distance(shape_a: Shape, pose_a, shape_b: Shape, pose_b) -> DistanceResult:
    """Signed distance between two shapes placed in the world (conventions in the module docstring).

    Args:
        shape_a, shape_b: rigidiff shapes; at most one plane. A mesh that is not convex is its triangles
            (never its convex hull), against a sphere, a capsule, a box, a plane or another mesh (not a
            cylinder): apart, the exact distance between the surfaces; in penetration, the deepest of the
            contacts the narrow phase reports (docs/contact.md), a local depth rather than the shortest
            separating translation of two non-convex solids.
        pose_a, pose_b: ``rd.Transform`` or (4, 4) homogeneous rigid transforms (world from shape).
    Returns:
        DistanceResult: distance (negative in penetration), point_a, point_b (world) and the normal from
        B to A.
    Raises:
        ValueError: not a shape, a non-convex mesh against a cylinder, two planes, a pose that is not
            finite or not rigid.
        RuntimeError: the result overflows double precision, two overlapping shapes are too thin for
            the penetration search (thinner than 1e-9 of their size), or a shape lies deeper inside a
            non-convex mesh than the mesh's prism thickness (no depth is defined there).
    """
    # a mesh that is not convex is its triangles; a convex mesh facing one is too
    triangles = any(isinstance(s, Mesh) and not s.is_convex for s in (shape_a, shape_b))
    data, meshes = [], []
    for shape, name in ((shape_a, "shape_a"), (shape_b, "shape_b")):
        if isinstance(shape, Cylinder) and triangles:
            raise ValueError(f"{name}: the distance between a cylinder and a mesh that is not convex is not "
                             "available")
        if triangles and isinstance(shape, Mesh):
            code, params, hull, mesh = triangle_mesh_data(shape, name)
            data.append((code, params, hull))
            meshes.append(mesh)
        else:
            data.append(shape_data(shape, name))
            meshes.append(None)
    (ta, pa, va), (tb, pb, vb) = data
    Ma, Mb = pose_data(pose_a, "pose_a"), pose_data(pose_b, "pose_b")
    out = _core._shape_distance(ta, pa, va, Ma, tb, pb, vb, Mb, meshes[0], meshes[1])
    if triangles and out[0] > 0.0:
        # apart, no point of either shape lies inside the other; a point deeper inside a closed mesh than
        # its prisms makes no contact, and the nearest contact found may then be a far one
        for (mesh, M), (other, shape, M_other) in (((meshes[0], Ma), (meshes[1], shape_b, Mb)),
                                                   ((meshes[1], Mb), (meshes[0], shape_a, Ma))):
            point = other[0][0] if other is not None else np.zeros(3)
            if isinstance(shape, Plane) or mesh is None:
                continue
            local = M[:9].reshape(3, 3).T @ (M_other[:9].reshape(3, 3) @ point + M_other[9:] - M[9:])
            if _inside_closed_mesh(mesh[0], mesh[1], local):
                raise RuntimeError("no contact between the mesh and the other shape: it lies deeper inside the mesh "
                                   "than the mesh's prism thickness, where no depth is defined")
    return DistanceResult(float(out[0]), out[1:4].copy(), out[4:7].copy(), out[7:10].copy())
