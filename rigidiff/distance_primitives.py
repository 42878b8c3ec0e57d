"""Squared distances between points, edges and triangles, with exact gradients and Hessians.

These are the building blocks of barrier contact between meshes (IPC): the squared distance of a
point–triangle or edge–edge pair, its gradient with respect to the stacked point coordinates and its
Hessian, and the classification that says which closed form (point–point, point–line, point–plane,
line–line) realises the distance. All values are SQUARED distances. Available as ``rigidiff.collision.*``;
docs/distance.md explains the types, the degenerate cases and the mollifier.

    d = rd.collision.point_triangle_distance(p, t0, t1, t2)                       # float
    d, g, H = rd.collision.point_triangle_distance(p, t0, t1, t2, derivatives=2)  # (12,), (12, 12)

Every point argument is a (3,) array, or (n, 3) for n configurations at once (points of shape (3,) are
then shared by all n); the results gain a leading axis of length n. Gradients stack the coordinates of the
arguments in order: (p, t0, t1, t2) gives 12 entries, p's x, y, z first.
"""

from __future__ import annotations

import numbers

import numpy as np

from rigidiff import _core
from rigidiff._validate import real_array

__all__ = [
    "POINT_EDGE_TYPES", "POINT_TRIANGLE_TYPES", "EDGE_EDGE_TYPES", "EDGE_EDGE_MOLLIFIER_SCALE",
    "point_point_distance", "point_line_distance", "point_edge_distance", "point_plane_distance",
    "point_triangle_distance", "line_line_distance", "edge_edge_distance", "edge_edge_mollifier",
    "edge_edge_mollifier_threshold", "point_edge_distance_type", "point_triangle_distance_type",
    "edge_edge_distance_type",
]

#: Point–edge types: the closest point of edge (e0, e1) is e0, e1, or inside the edge (point–line).
POINT_EDGE_TYPES = ("P_E0", "P_E1", "P_E")
#: Point–triangle types: a vertex (P_T0..P_T2), an edge (P_E0 = t0t1, P_E1 = t1t2, P_E2 = t2t0), or the
#: inside of the face (P_T, point–plane).
POINT_TRIANGLE_TYPES = ("P_T0", "P_T1", "P_T2", "P_E0", "P_E1", "P_E2", "P_T")
#: Edge–edge types: two end points (EA0_EB1: ea0 and eb1), an end point against the other edge (EA_EB0:
#: eb0 against edge A; EA1_EB: ea1 against edge B), or the insides of both (EA_EB, line–line).
EDGE_EDGE_TYPES = ("EA0_EB0", "EA0_EB1", "EA1_EB0", "EA1_EB1", "EA_EB0", "EA_EB1", "EA0_EB", "EA1_EB", "EA_EB")
#: eps_x = EDGE_EDGE_MOLLIFIER_SCALE * |ea1 - ea0|^2 * |eb1 - eb0|^2 at rest (edge_edge_mollifier_threshold).
EDGE_EDGE_MOLLIFIER_SCALE = 1e-3

# primitive codes of the core (cpp/include/rigidiff/bind/api_distance.hpp)
_POINT_POINT, _POINT_LINE, _POINT_EDGE, _POINT_PLANE, _POINT_TRIANGLE = 0, 1, 2, 3, 4
_LINE_LINE, _EDGE_EDGE, _MOLLIFIER, _THRESHOLD = 5, 6, 7, 8
_TYPES = {_POINT_EDGE: POINT_EDGE_TYPES, _POINT_TRIANGLE: POINT_TRIANGLE_TYPES, _EDGE_EDGE: EDGE_EDGE_TYPES}


def _stack(points: dict) -> tuple[np.ndarray, bool]:
    """The named points as one (n, 3K) array of configurations, and whether the inputs were batched.
    Finiteness is checked by the core (see _evaluate), which keeps a single call cheap."""
    values = list(points.values())
    if all(type(x) is np.ndarray and x.dtype == np.float64 and x.shape == (3,) for x in values):
        return np.concatenate(values)[None], False  # the common single configuration, without conversions
    arrays = [real_array(x, name, "(3,) or (n, 3)") for name, x in points.items()]
    if all(a.shape == (3,) for a in arrays):
        return np.concatenate(arrays)[None], False
    n = None
    for name, a in zip(points, arrays):
        if a.ndim not in (1, 2) or a.shape[-1] != 3:
            raise ValueError(f"{name} must have shape (3,) or (n, 3), got {a.shape}")
        if a.ndim == 2:
            if n is not None and a.shape[0] != n:
                raise ValueError(f"{name} has {a.shape[0]} rows but an earlier point has {n}: batched points "
                                 "must share their first axis")
            n = a.shape[0]
    return np.ascontiguousarray(np.hstack([np.broadcast_to(a, (n, 3)) for a in arrays])), True


def _check_finite(points: dict) -> None:
    """Names the first argument with a NaN or an infinity (after the core refused one)."""
    for name, x in points.items():
        a = np.asarray(x, dtype=np.float64)
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite, got {a}")


def _thresholds(eps_x, n: int) -> np.ndarray:
    if isinstance(eps_x, (float, int)) and not isinstance(eps_x, bool) and 0.0 <= eps_x < np.inf:
        return np.full(n, float(eps_x))
    if isinstance(eps_x, bool) or np.asarray(eps_x).dtype.kind == "b":
        raise ValueError(f"eps_x must be a number, not a boolean, got {eps_x!r}")
    eps = real_array(eps_x, "eps_x", "() or (n,)")
    if eps.ndim > 1 or (eps.ndim == 1 and eps.shape[0] != n):
        raise ValueError(f"eps_x must be a number or have shape ({n},), got {eps.shape}")
    if not np.all(np.isfinite(eps)) or np.any(eps < 0.0):
        raise ValueError(f"eps_x must be finite and >= 0, got {eps_x!r}")
    return np.ascontiguousarray(np.broadcast_to(eps, (n,)))


def _order(derivatives) -> int:
    if isinstance(derivatives, bool) or not isinstance(derivatives, numbers.Integral) or derivatives not in (0, 1, 2):
        raise ValueError(f"derivatives must be 0 (value), 1 (value, gradient) or 2 (value, gradient, Hessian), "
                         f"got {derivatives!r}")
    return int(derivatives)


def _type_code(primitive: int, type: str) -> int:
    names = _TYPES[primitive]
    if isinstance(type, str) and type == "auto":
        return len(names)
    if not isinstance(type, str) or type not in names:
        raise ValueError(f"type must be 'auto' or one of {', '.join(names)}, got {type!r}")
    return names.index(type)


def _evaluate(primitive: int, points: dict, derivatives, type_code: int = 0, eps_x=None):
    order = _order(derivatives)
    stacked, batched = _stack(points)
    eps = None if eps_x is None else _thresholds(eps_x, stacked.shape[0])
    try:
        value, gradient, hessian = _core._primitive_distances(primitive, type_code, stacked, eps, order)
    except ValueError:
        _check_finite(points)
        raise
    if not batched:
        value = float(value[0])
        gradient = None if gradient is None else gradient[0]
        hessian = None if hessian is None else hessian[0]
    return (value, (value, gradient), (value, gradient, hessian))[order]


def _classify(primitive: int, points: dict):
    stacked, batched = _stack(points)
    try:
        codes = _core._primitive_distance_types(primitive, stacked)
    except ValueError:
        _check_finite(points)
        raise
    names = np.array(_TYPES[primitive])[codes]
    return names if batched else str(names[0])


def point_point_distance(p0, p1, derivatives: int = 0):
    """Squared distance |p0 - p1|^2.

    Args:
        p0, p1: (3,) or (n, 3) points.
        derivatives: 0 returns the value; 1 the tuple (value, gradient); 2 (value, gradient, Hessian).
    Returns:
        float (array (n,) for batched points); the gradient is (6,) and the Hessian (6, 6) with respect to
        (p0, p1) (with a leading n axis for batched points).
    Raises:
        ValueError: a point of the wrong shape or not finite, derivatives not 0, 1 or 2.
    """
    return _evaluate(_POINT_POINT, {"p0": p0, "p1": p1}, derivatives)


def point_line_distance(p, e0, e1, derivatives: int = 0):
    """Squared distance between point p and the infinite line through e0 and e1.

    Args:
        p, e0, e1: (3,) or (n, 3) points.
        derivatives: 0, 1 or 2 (as point_point_distance); gradient (9,), Hessian (9, 9) w.r.t. (p, e0, e1).
    Raises:
        ValueError: bad shapes or non-finite points, or e0 == e1 (no line).
    """
    return _evaluate(_POINT_LINE, {"p": p, "e0": e0, "e1": e1}, derivatives)


def point_edge_distance(p, e0, e1, derivatives: int = 0, type: str = "auto"):
    """Squared distance between point p and the segment (e0, e1).

    Args:
        p, e0, e1: (3,) or (n, 3) points.
        derivatives: 0, 1 or 2 (as point_point_distance); gradient (9,), Hessian (9, 9) w.r.t. (p, e0, e1).
        type: "auto" classifies each configuration (point_edge_distance_type) and differentiates the closed
            form of its type; one of POINT_EDGE_TYPES forces that form.
    Raises:
        ValueError: bad shapes or non-finite points; type "P_E" with e0 == e1.
    """
    return _evaluate(_POINT_EDGE, {"p": p, "e0": e0, "e1": e1}, derivatives, _type_code(_POINT_EDGE, type))


def point_plane_distance(p, t0, t1, t2, derivatives: int = 0):
    """Squared distance between point p and the plane through t0, t1 and t2.

    Args:
        p, t0, t1, t2: (3,) or (n, 3) points.
        derivatives: 0, 1 or 2 (as point_point_distance); gradient (12,), Hessian (12, 12) w.r.t.
            (p, t0, t1, t2).
    Raises:
        ValueError: bad shapes or non-finite points, or collinear t0, t1, t2 (no plane).
    """
    return _evaluate(_POINT_PLANE, {"p": p, "t0": t0, "t1": t1, "t2": t2}, derivatives)


def point_triangle_distance(p, t0, t1, t2, derivatives: int = 0, type: str = "auto"):
    """Squared distance between point p and the triangle (t0, t1, t2).

    Args:
        p, t0, t1, t2: (3,) or (n, 3) points.
        derivatives: 0, 1 or 2 (as point_point_distance); gradient (12,), Hessian (12, 12) w.r.t.
            (p, t0, t1, t2).
        type: "auto" classifies each configuration (point_triangle_distance_type) and differentiates the
            closed form of its type; one of POINT_TRIANGLE_TYPES forces that form.
    Raises:
        ValueError: bad shapes or non-finite points; a triangle of zero area under "auto" or "P_T".
    """
    return _evaluate(_POINT_TRIANGLE, {"p": p, "t0": t0, "t1": t1, "t2": t2}, derivatives,
                     _type_code(_POINT_TRIANGLE, type))


def line_line_distance(ea0, ea1, eb0, eb1, derivatives: int = 0):
    """Squared distance between the infinite lines through (ea0, ea1) and (eb0, eb1).

    Args:
        ea0, ea1, eb0, eb1: (3,) or (n, 3) points.
        derivatives: 0, 1 or 2 (as point_point_distance); gradient (12,), Hessian (12, 12) w.r.t.
            (ea0, ea1, eb0, eb1).
    Raises:
        ValueError: bad shapes or non-finite points, or parallel lines (the closed form divides by
            |ea x eb|^2).
    """
    return _evaluate(_LINE_LINE, {"ea0": ea0, "ea1": ea1, "eb0": eb0, "eb1": eb1}, derivatives)


def edge_edge_distance(ea0, ea1, eb0, eb1, derivatives: int = 0, type: str = "auto"):
    """Squared distance between the segments (ea0, ea1) and (eb0, eb1).

    Args:
        ea0, ea1, eb0, eb1: (3,) or (n, 3) points.
        derivatives: 0, 1 or 2 (as point_point_distance); gradient (12,), Hessian (12, 12) w.r.t.
            (ea0, ea1, eb0, eb1).
        type: "auto" classifies each configuration (edge_edge_distance_type; parallel and zero-length
            edges get an end-point type) and differentiates the closed form of its type; one of
            EDGE_EDGE_TYPES forces that form.
    Raises:
        ValueError: bad shapes or non-finite points; a forced type undefined here (EA_EB for parallel
            edges, an end point against a zero-length edge).
    """
    return _evaluate(_EDGE_EDGE, {"ea0": ea0, "ea1": ea1, "eb0": eb0, "eb1": eb1}, derivatives,
                     _type_code(_EDGE_EDGE, type))


def edge_edge_mollifier(ea0, ea1, eb0, eb1, eps_x, derivatives: int = 0):
    """Mollifier m(x) of nearly parallel edges, x = |(ea1 - ea0) x (eb1 - eb0)|^2:
    m = -x^2 / eps_x^2 + 2 x / eps_x for x < eps_x, else 1.

    Multiplying the edge–edge barrier by m removes its kink where the edges become parallel.

    Args:
        ea0, ea1, eb0, eb1: (3,) or (n, 3) points.
        eps_x: threshold >= 0 (a float, or (n,) for batched points), usually
            edge_edge_mollifier_threshold of the rest positions.
        derivatives: 0, 1 or 2 (as point_point_distance); gradient (12,), Hessian (12, 12) w.r.t.
            (ea0, ea1, eb0, eb1), eps_x held fixed.
    Raises:
        ValueError: bad shapes or non-finite points, eps_x negative, not finite or of the wrong length.
    """
    return _evaluate(_MOLLIFIER, {"ea0": ea0, "ea1": ea1, "eb0": eb0, "eb1": eb1}, derivatives, eps_x=eps_x)


def edge_edge_mollifier_threshold(ea0_rest, ea1_rest, eb0_rest, eb1_rest, derivatives: int = 0):
    """eps_x = EDGE_EDGE_MOLLIFIER_SCALE * |ea1 - ea0|^2 * |eb1 - eb0|^2 of the rest positions.

    Args:
        ea0_rest, ea1_rest, eb0_rest, eb1_rest: (3,) or (n, 3) points.
        derivatives: 0, 1 or 2 (as point_point_distance); gradient (12,), Hessian (12, 12) w.r.t. the
            four rest points.
    Raises:
        ValueError: bad shapes or non-finite points.
    """
    return _evaluate(_THRESHOLD, {"ea0_rest": ea0_rest, "ea1_rest": ea1_rest, "eb0_rest": eb0_rest,
                                  "eb1_rest": eb1_rest}, derivatives)


def point_edge_distance_type(p, e0, e1):
    """Which closed form gives the point–edge distance: a name of POINT_EDGE_TYPES.

    P_E0 / P_E1 when p projects before e0 / after e1 on the edge's line, else P_E; P_E0 for a
    zero-length edge. Batched points give an (n,) array of names.
    """
    return _classify(_POINT_EDGE, {"p": p, "e0": e0, "e1": e1})


def point_triangle_distance_type(p, t0, t1, t2):
    """Which closed form gives the point–triangle distance: a name of POINT_TRIANGLE_TYPES.

    An edge type when p lies outside the triangle across that edge and projects inside it, a vertex type
    when p lies in the vertex's corner region, else P_T (p projects into the face). Batched points give
    an (n,) array of names.

    Raises:
        ValueError: bad shapes or non-finite points, or a triangle of zero area.
    """
    return _classify(_POINT_TRIANGLE, {"p": p, "t0": t0, "t1": t1, "t2": t2})


def edge_edge_distance_type(ea0, ea1, eb0, eb1):
    """Which closed form gives the edge–edge distance: a name of EDGE_EDGE_TYPES.

    Edges with sin^2 of their angle below 2.5e-16 count as parallel and get an end point against the
    other edge (or two end points); a zero-length edge counts as its first point. Batched points give an
    (n,) array of names.
    """
    return _classify(_EDGE_EDGE, {"ea0": ea0, "ea1": ea1, "eb0": eb0, "eb1": eb1})
