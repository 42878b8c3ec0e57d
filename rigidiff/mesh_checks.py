"""Checks of a triangle mesh before it becomes collision geometry: non-manifold edges, duplicate faces and
self-intersecting surfaces. Contact still works on such a mesh (docs/contact.md, Bad meshes), but the
inside and outside of the surface are ambiguous there, so each problem is reported once with a warning."""

from __future__ import annotations

import warnings

import numpy as np

_SHOWN = 5  # offending faces named in a warning


def _first(items) -> str:
    items = [tuple(int(i) for i in np.atleast_1d(x)) for x in items[:_SHOWN]]
    return ", ".join(str(i[0]) if len(i) == 1 else str(i) for i in items)


def non_manifold_faces(faces: np.ndarray) -> list:
    """Per edge shared by more than two faces, the indices of those faces (in edge order)."""
    edges = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1)
    owner = np.tile(np.arange(len(faces)), 3)
    _, inverse, counts = np.unique(edges, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    bad = np.flatnonzero(counts > 2)
    return [np.sort(owner[inverse == e]) for e in bad[:_SHOWN]] if len(bad) else []


def duplicate_faces(faces: np.ndarray) -> np.ndarray:
    """(k, 2) pairs (first, later) of faces on the same three vertices, whatever their winding."""
    key = np.sort(faces, axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    later = np.flatnonzero(first[inverse] != np.arange(len(faces)))
    return np.column_stack([first[inverse[later]], later])


def _grid(lo: np.ndarray, hi: np.ndarray) -> tuple:
    """(cell edge, origin, first cell of each box, cells each box spans per axis) of a uniform grid: cells
    three typical boxes wide (fastest on robot meshes: fewer cells per box, and the sweep within a cell
    handles its crowd), at least 2^-20 of the largest extent (indices fit an int64 key), doubled while the
    boxes touch more than 16 cells each on average (huge faces among tiny ones)."""
    origin = lo.min(axis=0)
    typical = float(np.median(np.max(hi - lo, axis=1)))
    cell = max(3.0 * typical, float(np.max(hi.max(axis=0) - origin)) * 2.0**-20, 1e-300)
    while True:
        first = np.floor((lo - origin) / cell).astype(np.int64)
        span = np.floor((hi - origin) / cell).astype(np.int64) - first + 1
        if np.sum(np.prod(span, axis=1, dtype=float)) <= 16 * len(lo):
            return cell, origin, first, span
        cell *= 2.0


def _ranges(counts: np.ndarray, starts: np.ndarray) -> tuple:
    """(owner, index): for each i, counts[i] rows (i, starts[i]), (i, starts[i] + 1), ..."""
    owner = np.repeat(np.arange(len(counts)), counts)
    return owner, np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + starts[owner]


def _sweep(lo_x: np.ndarray, hi_x: np.ndarray) -> tuple:
    """(p, q) positions in ``lo_x``'s order (ascending) of every pair whose x ranges overlap."""
    stop = np.searchsorted(lo_x, hi_x, side="right")
    counts = np.maximum(stop - np.arange(1, len(lo_x) + 1), 0)
    return _ranges(counts, np.arange(1, len(lo_x) + 1))


_MANY_LARGE = 64  # large boxes past this count get a grid of their own (fewer: a sweep)


def _candidate_pairs(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """(k, 2) pairs (i < j, sorted) of closed boxes that overlap. One sweep along x over the whole mesh
    meets about n^2 / 60 pairs on robot meshes, so the boxes are binned into the cells of a uniform grid
    they touch: small boxes (at most 2 cells a side) are swept along x within each cell, a large box meets
    the small boxes of its cells, and the large boxes meet each other the same way on a grid sized for them
    (a sweep when they are few). A pair met in several cells is kept in the one holding the low corner of
    the two boxes' overlap."""
    n = len(lo)
    if n < 2:
        return np.zeros((0, 2), dtype=np.intp)
    cell, origin, first, span = _grid(lo, hi)
    box, k = _ranges(np.prod(span, axis=1), np.zeros(n, dtype=np.int64))  # one row per (box, cell it touches)
    sx, sy = span[box, 0], span[box, 1]
    at = first[box] + np.column_stack([k % sx, (k // sx) % sy, k // (sx * sy)])
    dims = at.max(axis=0) + 1
    _, rank = np.unique((at[:, 2] * dims[1] + at[:, 1]) * dims[0] + at[:, 0], return_inverse=True)
    # cell rank * 4 + x scaled into [0, 1] sorts by cell, then x; rounding keeps every lo <= hi comparison
    extent = max(float(np.max(hi[:, 0]) - origin[0]), 1e-300)
    big = np.any(span > 2, axis=1)
    small = np.flatnonzero(~big[box])
    key = rank.ravel()[small] * 4.0 + (lo[box[small], 0] - origin[0]) / extent
    order = np.argsort(key, kind="stable")
    small, key = small[order], key[order]
    p, q = _sweep(key, rank.ravel()[small] * 4.0 + (hi[box[small], 0] - origin[0]) / extent)
    pi, pj, pcell = [box[small[p]]], [box[small[q]]], [at[small[p]]]
    large = np.flatnonzero(big[box])  # each large box's cells against the small boxes there
    lr = rank.ravel()[large] * 4.0
    own, hit = _ranges(np.searchsorted(key, lr + 2.0) - np.searchsorted(key, lr), np.searchsorted(key, lr))
    pi, pj, pcell = pi + [box[large[own]]], pj + [box[small[hit]]], pcell + [at[large[own]]]
    i, j = np.concatenate(pi), np.concatenate(pj)
    keep = np.all((lo[i] <= hi[j]) & (lo[j] <= hi[i]), axis=1)
    i, j, at_ = i[keep], j[keep], np.concatenate(pcell)[keep]
    keep = np.all(np.floor((np.maximum(lo[i], lo[j]) - origin) / cell).astype(np.int64) == at_, axis=1)
    i, j = i[keep], j[keep]
    # large boxes among themselves, once each: on a grid of their own when they are many (the long thin faces
    # of CAD meshes, a third of some: one sweep along x met most of their pairs), else by a sweep
    bl = np.flatnonzero(big)
    if _MANY_LARGE <= len(bl) < n:
        among = _candidate_pairs(lo[bl], hi[bl])
        bi, bj = bl[among[:, 0]], bl[among[:, 1]]
    else:
        bl = bl[np.argsort(lo[bl, 0], kind="stable")]
        p, q = _sweep(lo[bl, 0], hi[bl, 0])
        bi, bj = bl[p], bl[q]
        keep = np.all((lo[bi] <= hi[bj]) & (lo[bj] <= hi[bi]), axis=1)
        bi, bj = bi[keep], bj[keep]
    pairs = np.sort(np.column_stack([np.r_[i, bi], np.r_[j, bj]]), axis=1)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def _segments_cross(p, q, a, b, c, tol) -> np.ndarray:
    """Does segment p-q cross the interior of triangle a-b-c (rowwise)? Moller-Trumbore with open bounds."""
    d = q - p
    e1, e2 = b - a, c - a
    h = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, h)
    scale = np.linalg.norm(d, axis=1) * np.linalg.norm(e1, axis=1) * np.linalg.norm(e2, axis=1)
    ok = np.abs(det) > 1e-12 * np.maximum(scale, 1e-300)  # a segment parallel to the plane is not a crossing
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = p - a
    u = inv * np.einsum("ij,ij->i", s, h)
    qv = np.cross(s, e1)
    v = inv * np.einsum("ij,ij->i", d, qv)
    t = inv * np.einsum("ij,ij->i", e2, qv)
    return ok & (u > tol) & (v > tol) & (u + v < 1 - tol) & (t > tol) & (t < 1 - tol)


def self_intersecting_faces(points: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """(k, 2) pairs of faces sharing no vertex whose triangles cross (an edge of one passes through the
    interior of the other); touching without crossing and coplanar overlaps are not counted."""
    tri = points[faces]
    pairs = _candidate_pairs(tri.min(axis=1), tri.max(axis=1))
    if len(pairs) == 0:
        return pairs
    fi, fj = faces[pairs[:, 0]], faces[pairs[:, 1]]
    shared = np.any(fi[:, :, None] == fj[:, None, :], axis=(1, 2))
    pairs = pairs[~shared]
    crossed = np.zeros(len(pairs), dtype=bool)
    for x, y in ((0, 1), (1, 0)):
        ta, tb = tri[pairs[:, x]], tri[pairs[:, y]]
        for k in range(3):
            crossed |= _segments_cross(ta[:, k], ta[:, (k + 1) % 3], tb[:, 0], tb[:, 1], tb[:, 2], 1e-9)
    return pairs[crossed]


def mesh_problems(points: np.ndarray, faces: np.ndarray, index=None) -> tuple:
    """(non-manifold edges' faces, duplicate face pairs, crossing face pairs) of a mesh, faces numbered
    ``index[i]`` for face i when given (their number in the mesh they were taken from); all empty for a
    clean mesh."""
    index = np.arange(len(faces)) if index is None else np.asarray(index)
    edges = [index[f] for f in non_manifold_faces(faces)]
    return edges, index[duplicate_faces(faces)], index[self_intersecting_faces(points, faces)]


def warn_problems(problems: tuple, name: str, stacklevel: int = 3) -> None:
    """A UserWarning per kind of problem in ``problems`` (from mesh_problems), naming the mesh and its first
    offending faces."""
    edges, dup, crossing = problems
    if edges:
        warnings.warn(f"{name}: non-manifold edges (shared by more than two faces), first faces {_first(edges)}; "
                      "contacts near them come from every face at the edge", UserWarning, stacklevel=stacklevel)
    if len(dup):
        warnings.warn(f"{name}: {len(dup)} duplicate faces (same three vertices), first pairs {_first(dup)}; "
                      "each copy makes its own contacts", UserWarning, stacklevel=stacklevel)
    if len(crossing):
        warnings.warn(f"{name}: self-intersecting surface, {len(crossing)} crossing face pairs, first "
                      f"{_first(crossing)}; inside and outside are ambiguous there and contacts follow each "
                      "face's own normal", UserWarning, stacklevel=stacklevel)
