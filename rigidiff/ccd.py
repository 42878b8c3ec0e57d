"""Continuous collision detection (CCD) of moving points, edges and triangles: additive CCD.

Every point moves linearly from its start position (``p``, ``t0``, ...) at t = 0 to its end position
(``p_end``, ``t0_end``, ...) at t = 1. A query returns the earliest time ``toi`` up to which the pair provably
keeps a distance above ``min_distance``; a Newton solver with a barrier scales its step by it. Available as
``rigidiff.collision.*``; docs/ccd.md explains the method and its guarantees.

    r = rd.collision.point_triangle_ccd(p, t0, t1, t2, p_end, t0_end, t1_end, t2_end)
    r.hit, r.toi, r.exhausted        # bool, float in [0, t_max], bool

Points are (3,) arrays, or (n, 3) for n configurations at once ((3,) points are then shared by all n); the
result's fields are then (n,) arrays. ``swept_pairs`` is the broad phase in front of these queries.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from rigidiff import _core
from rigidiff._validate import as_scalar, real_array
from rigidiff.distance_primitives import _check_finite, _stack

__all__ = ["CCDResult", "point_point_ccd", "point_edge_ccd", "point_triangle_ccd", "edge_edge_ccd", "swept_pairs"]

# pair codes of the core (cpp/include/rigidiff/bind/api_ccd.hpp)
_POINT_POINT, _POINT_EDGE, _POINT_TRIANGLE, _EDGE_EDGE = 0, 1, 2, 3
_INT_MAX = 2**31 - 1


class CCDResult(NamedTuple):
    """Outcome of a CCD query (arrays of shape (n,) for batched points).

    Attributes:
        hit: False when the distance provably stays above min_distance over all of [0, t_max] (then
            ``toi == t_max``). True when the pair may come closer: its gap (distance - min_distance) shrank to
            (1 - conservative_rescaling) of the gap at t = 0, or it starts within min_distance (``toi == 0``),
            or the iterations ran out (``exhausted``).
        toi: a time in [0, t_max] up to which the distance provably stays above min_distance. It never lies
            after a contact, and a contact before t_max always gives ``hit``.
        exhausted: max_iterations ran out before the query could decide; toi is the last proven-safe time.
    """

    hit: bool | np.ndarray
    toi: float | np.ndarray
    exhausted: bool | np.ndarray


def _options(min_distance, t_max, conservative_rescaling, max_iterations) -> tuple:
    # plain floats and ints in range pass without the general checks, which cost more than a query
    if (type(min_distance) is float and 0.0 <= min_distance < np.inf and type(t_max) is float and 0.0 < t_max <= 1.0
            and type(conservative_rescaling) is float and 0.0 < conservative_rescaling < 1.0
            and type(max_iterations) is int and 1 <= max_iterations <= _INT_MAX):
        return min_distance, t_max, conservative_rescaling, max_iterations
    min_distance = as_scalar(min_distance, "min_distance", minimum=0.0)
    t_max = as_scalar(t_max, "t_max", minimum=0.0, strict=True)
    if t_max > 1.0:
        raise ValueError(f"t_max must be in (0, 1], got {t_max}")
    s = as_scalar(conservative_rescaling, "conservative_rescaling", minimum=0.0, strict=True)
    if s >= 1.0:
        raise ValueError(f"conservative_rescaling must be in (0, 1), got {s}")
    if (isinstance(max_iterations, bool) or not isinstance(max_iterations, numbers.Integral)
            or not 1 <= max_iterations <= _INT_MAX):
        raise ValueError(f"max_iterations must be an integer in [1, {_INT_MAX}], got {max_iterations!r}")
    return min_distance, t_max, s, int(max_iterations)


def _query(pair: int, points: dict, options: tuple) -> CCDResult:
    stacked, batched = _stack(points)
    try:
        hit, toi, exhausted = _core._primitive_ccd(pair, stacked, *options)
    except ValueError:
        _check_finite(points)
        raise
    if not batched:
        return CCDResult(bool(hit[0]), float(toi[0]), bool(exhausted[0]))
    return CCDResult(hit, toi, exhausted)


def point_point_ccd(p0, p1, p0_end, p1_end, min_distance=0.0, t_max=1.0, conservative_rescaling=0.9,
                    max_iterations=1_000_000) -> CCDResult:
    """Earliest time of impact of two moving points.

    Args:
        p0, p1: (3,) or (n, 3) start positions.
        p0_end, p1_end: (3,) or (n, 3) end positions.
        min_distance: the separation to keep (>= 0).
        t_max: the end of the searched interval [0, t_max], in (0, 1].
        conservative_rescaling: fraction in (0, 1) of each proven-safe advance taken (0.9 as in IPC); the
            query stops once the gap shrank to (1 - conservative_rescaling) of its start.
        max_iterations: cap (>= 1) on the advances of one configuration.
    Returns:
        CCDResult(hit, toi, exhausted).
    Raises:
        ValueError: a point of the wrong shape or not finite, an option out of range.
    """
    return _query(_POINT_POINT, {"p0": p0, "p1": p1, "p0_end": p0_end, "p1_end": p1_end},
                  _options(min_distance, t_max, conservative_rescaling, max_iterations))


def point_edge_ccd(p, e0, e1, p_end, e0_end, e1_end, min_distance=0.0, t_max=1.0, conservative_rescaling=0.9,
                   max_iterations=1_000_000) -> CCDResult:
    """Earliest time of impact of a moving point p and a moving segment (e0, e1).

    Args:
        p, e0, e1: (3,) or (n, 3) start positions.
        p_end, e0_end, e1_end: (3,) or (n, 3) end positions.
        min_distance, t_max, conservative_rescaling, max_iterations: as point_point_ccd.
    Returns:
        CCDResult(hit, toi, exhausted).
    Raises:
        ValueError: a point of the wrong shape or not finite, an option out of range.
    """
    return _query(_POINT_EDGE, {"p": p, "e0": e0, "e1": e1, "p_end": p_end, "e0_end": e0_end, "e1_end": e1_end},
                  _options(min_distance, t_max, conservative_rescaling, max_iterations))


def point_triangle_ccd(p, t0, t1, t2, p_end, t0_end, t1_end, t2_end, min_distance=0.0, t_max=1.0,
                       conservative_rescaling=0.9, max_iterations=1_000_000) -> CCDResult:
    """Earliest time of impact of a moving point p and a moving triangle (t0, t1, t2).

    A triangle that passes through a flat (zero-area) shape on its way counts there as its three edges.

    Args:
        p, t0, t1, t2: (3,) or (n, 3) start positions.
        p_end, t0_end, t1_end, t2_end: (3,) or (n, 3) end positions.
        min_distance, t_max, conservative_rescaling, max_iterations: as point_point_ccd.
    Returns:
        CCDResult(hit, toi, exhausted).
    Raises:
        ValueError: a point of the wrong shape or not finite, an option out of range.
    """
    points = {"p": p, "t0": t0, "t1": t1, "t2": t2, "p_end": p_end, "t0_end": t0_end, "t1_end": t1_end,
              "t2_end": t2_end}
    return _query(_POINT_TRIANGLE, points, _options(min_distance, t_max, conservative_rescaling, max_iterations))


def edge_edge_ccd(ea0, ea1, eb0, eb1, ea0_end, ea1_end, eb0_end, eb1_end, min_distance=0.0, t_max=1.0,
                  conservative_rescaling=0.9, max_iterations=1_000_000) -> CCDResult:
    """Earliest time of impact of the moving segments (ea0, ea1) and (eb0, eb1).

    Parallel and zero-length edges are handled by the edge–edge distance (docs/distance.md).

    Args:
        ea0, ea1, eb0, eb1: (3,) or (n, 3) start positions.
        ea0_end, ea1_end, eb0_end, eb1_end: (3,) or (n, 3) end positions.
        min_distance, t_max, conservative_rescaling, max_iterations: as point_point_ccd.
    Returns:
        CCDResult(hit, toi, exhausted).
    Raises:
        ValueError: a point of the wrong shape or not finite, an option out of range.
    """
    points = {"ea0": ea0, "ea1": ea1, "eb0": eb0, "eb1": eb1, "ea0_end": ea0_end, "ea1_end": ea1_end,
              "eb0_end": eb0_end, "eb1_end": eb1_end}
    return _query(_EDGE_EDGE, points, _options(min_distance, t_max, conservative_rescaling, max_iterations))


def _primitives(x, name: str) -> np.ndarray:
    """x as an (n, k, 3) float64 array of n primitives of k points; (n, 3) means k = 1."""
    a = real_array(x, name, "(n, 3) or (n, k, 3)")
    if a.ndim == 2:
        a = a[:, None, :]
    if a.ndim != 3 or a.shape[2] != 3 or a.shape[1] < 1:
        raise ValueError(f"{name} must have shape (n, 3) or (n, k, 3) with k >= 1, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return a


def swept_pairs(start_a, end_a, start_b, end_b, min_distance=0.0) -> np.ndarray:
    """Broad phase of CCD: the pairs of primitives that may come within min_distance during the motion.

    Each primitive is k points (1 for vertices, 2 for edges, 3 for triangles) moving linearly from start to
    end; its swept box holds all of them at both ends, hence the whole motion. The pairs (i of set a, j of
    set b) whose swept boxes, grown by min_distance, overlap are found with a box tree over each set (not by
    testing every pair). Pairs that share a vertex are not removed.

    Args:
        start_a, end_a: (na, ka, 3) start and end points of set a ((na, 3) for single points).
        start_b, end_b: (nb, kb, 3) start and end points of set b.
        min_distance: the separation the CCD queries keep (>= 0).
    Returns:
        (m, 2) int64 array of the pairs (i, j), sorted.
    Raises:
        ValueError: shapes that disagree or are not (n, 3) / (n, k, 3), non-finite points, a negative
            min_distance.
    """
    min_distance = as_scalar(min_distance, "min_distance", minimum=0.0)
    sa, ea = _primitives(start_a, "start_a"), _primitives(end_a, "end_a")
    sb, eb = _primitives(start_b, "start_b"), _primitives(end_b, "end_b")
    if ea.shape != sa.shape:
        raise ValueError(f"end_a must have the shape of start_a {sa.shape}, got {ea.shape}")
    if eb.shape != sb.shape:
        raise ValueError(f"end_b must have the shape of start_b {sb.shape}, got {eb.shape}")
    return _core._swept_pairs(np.ascontiguousarray(sa.reshape(-1, 3)), np.ascontiguousarray(ea.reshape(-1, 3)),
                              sa.shape[1], np.ascontiguousarray(sb.reshape(-1, 3)),
                              np.ascontiguousarray(eb.reshape(-1, 3)), sb.shape[1], min_distance)
