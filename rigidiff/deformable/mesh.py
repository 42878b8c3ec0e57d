"""Volume meshes of deformable bodies: tetrahedra (``TetMesh``) and trilinear hexahedra (``HexMesh``).

A hexahedron lists its 8 vertices in the order of the unit cube's corners, vertex k at
(k & 1, (k >> 1) & 1, (k >> 2) & 1), x fastest: (0,0,0), (1,0,0), (0,1,0), (1,1,0), (0,0,1), ... A
tetrahedron (v0, v1, v2, v3) is positively oriented: (v1 - v0) x (v2 - v0) . (v3 - v0) > 0.
"""

from __future__ import annotations

import numpy as np

from rigidiff._validate import real_array
from rigidiff.barrier_world import _mesh_of

__all__ = ["TetMesh", "HexMesh"]

# |J| below this times the element's size cubed is a degenerate element (as the C++ core tests)
_DEGENERATE = 1e-9
#: the most cubes HexMesh.from_surface lays over a surface's bounding box (each centre is tested for inside; a
#: dx a thousand times too small would ask for terabytes)
MAX_VOXEL_GRID = 2e7
_G = 0.5 / np.sqrt(3.0)
_CORNERS = np.array([[k & 1, (k >> 1) & 1, (k >> 2) & 1] for k in range(8)], dtype=np.float64)
_GAUSS = 0.5 + _G * (2.0 * _CORNERS - 1.0)


def _shape_gradients(xi: np.ndarray) -> np.ndarray:
    """d N_k / d xi (8, 3) of the trilinear shape functions at the reference point xi (3,)."""
    c = _CORNERS
    factors = np.where(c == 1.0, xi, 1.0 - xi)  # (8, 3)
    sign = 2.0 * c - 1.0
    out = np.empty((8, 3))
    for d in range(3):
        others = [e for e in range(3) if e != d]
        out[:, d] = sign[:, d] * factors[:, others[0]] * factors[:, others[1]]
    return out


def _elements(elements, nodes: int, n_vertices: int, what: str) -> np.ndarray:
    e = np.asarray(elements)
    if e.ndim != 2 or e.shape[1] != nodes:
        raise ValueError(f"{what} must be an integer (m, {nodes}) array, got shape {e.shape}")
    if e.shape[0] == 0:
        raise ValueError(f"{what}: the mesh has no elements")
    if e.dtype.kind not in "iu":
        if e.dtype.kind != "f" or not np.all(np.isfinite(e)) or not np.all(e == np.round(e)):
            raise TypeError(f"{what} must hold integer vertex indices, got dtype {e.dtype}")
    e = e.astype(np.int64)
    bad = np.argwhere((e < 0) | (e >= n_vertices))
    if len(bad):
        i, k = bad[0]
        raise ValueError(f"{what}: element {i} names vertex {e[i, k]}, but there are {n_vertices} vertices")
    return e


def _vertices(vertices) -> np.ndarray:
    v = real_array(vertices, "vertices", "(n, 3)")
    if v.ndim != 2 or v.shape[1] != 3:
        raise ValueError(f"vertices must be an (n, 3) array, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError("vertices must be finite (no NaN or inf)")
    return v


def _positions(positions, vertices: np.ndarray) -> np.ndarray:
    """positions (n, 3) of a mesh's n vertices, checked (the rest vertices if None)."""
    if positions is None:
        return vertices
    x = real_array(positions, "positions", "(n, 3)")
    if x.shape != vertices.shape:
        raise ValueError(f"positions must have shape {vertices.shape} (one row per vertex of the mesh), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("positions must be finite (no NaN or inf)")
    return x


def _sizes(vertices: np.ndarray, elements: np.ndarray) -> np.ndarray:
    p = vertices[elements]
    return (p.max(axis=1) - p.min(axis=1)).max(axis=1)


class TetMesh:
    """A tetrahedral mesh: vertices (n, 3) in metres and positively oriented tetrahedra (m, 4).

    ValueError naming the element for an inverted or degenerate tetrahedron, for no elements, bad shapes,
    NaN or an index out of range; every vertex must belong to a tetrahedron.
    """

    nodes = 4

    def __init__(self, vertices, tets):
        self.vertices = _vertices(vertices)
        self.elements = _elements(tets, 4, len(self.vertices), "tets")
        volumes = self.element_volumes()
        size = _sizes(self.vertices, self.elements)
        bad = np.flatnonzero(~(6.0 * volumes > _DEGENERATE * size**3))
        if len(bad):
            i = bad[0]
            kind = "inverted" if volumes[i] < 0 else "degenerate"
            raise ValueError(f"tets: element {i} is {kind} (signed volume {volumes[i]:.3g} of its vertices "
                             f"{self.elements[i].tolist()}); a tetrahedron (v0, v1, v2, v3) needs "
                             "(v1 - v0) x (v2 - v0) . (v3 - v0) > 0")
        _check_used(self)

    def element_volumes(self, positions=None) -> np.ndarray:
        """Signed volume of each tetrahedron at positions (n, 3), the rest vertices if None."""
        x = _positions(positions, self.vertices)
        p = x[self.elements]
        return np.einsum("ij,ij->i", np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), p[:, 3] - p[:, 0]) / 6.0

    def volume(self, positions=None) -> float:
        """Total volume at positions (n, 3) (the rest vertices if None)."""
        return float(self.element_volumes(positions).sum())

    def boundary_faces(self) -> np.ndarray:
        """(k, 3) triangles of the faces that belong to a single tetrahedron, wound counter-clockwise seen from
        outside: the surface to draw or to collide."""
        return _boundary_triangles(self.elements, _TET_FACES)

    @classmethod
    def from_surface(cls, shape_or_mesh, edge_length_fraction: float = 0.05, **options) -> "TetMesh":
        """Tetrahedralise a closed surface (a rigidiff shape, a trimesh.Trimesh or (vertices, faces)) with fTetWild.

        Needs the optional package pytetwild (``pip install pytetwild``); ImportError saying so otherwise.
        edge_length_fraction is the target edge length relative to the surface's bounding-box diagonal;
        options go to ``pytetwild.tetrahedralize``.
        """
        try:
            import pytetwild
        except ImportError as exc:
            raise ImportError(f"TetMesh.from_surface needs the optional package pytetwild, which did not import "
                              f"({exc}): pip install pytetwild (or build a TetMesh from your own (vertices, tets) "
                              "arrays)") from None
        vertices, faces = _mesh_of(shape_or_mesh)
        v, t = pytetwild.tetrahedralize(vertices, faces, edge_length_fac=edge_length_fraction, **options)
        v = np.asarray(v, dtype=np.float64)
        t = np.asarray(t, dtype=np.int64)
        flip = TetMesh.__new__(TetMesh)
        flip.vertices, flip.elements = v, t
        negative = flip.element_volumes() < 0.0
        t[negative] = t[negative][:, [0, 2, 1, 3]]
        return cls(v, t)

    def __repr__(self) -> str:
        return f"TetMesh({len(self.vertices)} vertices, {len(self.elements)} tetrahedra)"


class HexMesh:
    """A trilinear hexahedral mesh: vertices (n, 3) in metres and hexahedra (m, 8) in the unit-cube corner
    order of this module's docstring.

    ValueError naming the element for a hexahedron inverted or degenerate at a corner or a quadrature point,
    for no elements, bad shapes, NaN or an index out of range.
    """

    nodes = 8

    def __init__(self, vertices, hexes):
        self.vertices = _vertices(vertices)
        self.elements = _elements(hexes, 8, len(self.vertices), "hexes")
        size = _sizes(self.vertices, self.elements)
        for label, points in (("corner", _CORNERS), ("quadrature point", _GAUSS)):
            dets = self._jacobian_determinants(self.vertices, points)
            bad = np.argwhere(~(dets > _DEGENERATE * size[:, None] ** 3))
            if len(bad):
                i, k = bad[0]
                kind = "inverted" if dets[i, k] < 0 else "degenerate"
                raise ValueError(f"hexes: element {i} is {kind} at its {label} {k} (its vertices "
                                 f"{self.elements[i].tolist()}; vertex k of a hexahedron sits at (k & 1, (k >> 1) & 1, "
                                 "(k >> 2) & 1) of the unit cube)")
        _check_used(self)

    def _jacobian_determinants(self, x: np.ndarray, points: np.ndarray) -> np.ndarray:
        p = x[self.elements]  # (m, 8, 3)
        out = np.empty((len(self.elements), len(points)))
        for s, xi in enumerate(points):
            J = np.einsum("mki,kj->mij", p, _shape_gradients(xi))
            out[:, s] = np.linalg.det(J)
        return out

    def element_volumes(self, positions=None) -> np.ndarray:
        """Volume of each hexahedron at positions (n, 3) (the rest vertices if None): the 2 x 2 x 2 Gauss
        rule, exact for trilinear elements."""
        x = _positions(positions, self.vertices)
        return self._jacobian_determinants(x, _GAUSS).sum(axis=1) / 8.0

    def volume(self, positions=None) -> float:
        """Total volume at positions (n, 3) (the rest vertices if None)."""
        return float(self.element_volumes(positions).sum())

    def boundary_faces(self) -> np.ndarray:
        """(k, 3) triangles (two per quadrilateral) of the faces that belong to a single hexahedron, wound
        counter-clockwise seen from outside: the surface to draw or to collide."""
        return _boundary_triangles(self.elements, _HEX_FACES)

    @classmethod
    def box(cls, size, cells, origin=(0.0, 0.0, 0.0)) -> "HexMesh":
        """A box of size (3,) metres cut into cells (3,) hexahedra per axis, its lowest corner at origin."""
        size = np.asarray(size, dtype=np.float64)
        cells = np.asarray(cells)
        if size.shape != (3,) or not np.all(size > 0) or not np.all(np.isfinite(size)):
            raise ValueError(f"size must be three positive lengths, got {size}")
        if cells.shape != (3,) or cells.dtype.kind not in "iu" or not np.all(cells >= 1):
            raise ValueError(f"cells must be three integers >= 1, got {cells}")
        occupied = np.ones(tuple(cells), dtype=bool)
        return cls._from_voxels(occupied, size / cells, np.asarray(origin, dtype=np.float64))

    @classmethod
    def from_surface(cls, shape_or_mesh, dx: float) -> "HexMesh":
        """Voxelise a closed surface (a rigidiff shape, a trimesh.Trimesh or (vertices, faces)) into cubes of edge dx: the cubes
        whose centres lie inside. ValueError for a surface that is not watertight or too small for dx."""
        import trimesh

        dx = float(dx)
        if not (dx > 0.0) or not np.isfinite(dx):
            raise ValueError(f"dx must be a positive length, got {dx}")
        vertices, faces = _mesh_of(shape_or_mesh)
        mesh = trimesh.Trimesh(vertices, faces, process=True)
        if not mesh.is_watertight:
            raise ValueError("shape_or_mesh: the surface is not watertight (closed and manifold): it has no inside to voxelise")
        lo, hi = mesh.bounds
        # a size that is a whole number of cubes up to rounding (0.15 / 0.025 = 6.000000000000001) takes that
        # number, not one more that would shift the grid by half a cube
        cells = np.maximum(np.ceil((hi - lo) / dx - 1e-9), 1.0)  # as floats: a tiny dx must not overflow
        if np.prod(cells) > MAX_VOXEL_GRID:
            raise ValueError(f"dx = {dx} cuts the surface's bounding box into {' x '.join(f'{c:.0f}' for c in cells)} "
                             f"= {np.prod(cells):.3g} cubes, more than {MAX_VOXEL_GRID:.0e}: use a larger dx")
        counts = cells.astype(int)
        start = 0.5 * (lo + hi) - 0.5 * counts * dx
        centres = np.stack(np.meshgrid(*[start[d] + dx * (np.arange(counts[d]) + 0.5) for d in range(3)],
                                       indexing="ij"), axis=-1).reshape(-1, 3)
        occupied = (_winding_numbers(mesh.vertices, mesh.faces, centres) > 0.5).reshape(tuple(counts))
        if not occupied.any():
            raise ValueError(f"shape_or_mesh: no cube of edge dx = {dx} has its centre inside the surface")
        return cls._from_voxels(occupied, np.full(3, dx), start)

    @classmethod
    def _from_voxels(cls, occupied: np.ndarray, cell: np.ndarray, origin: np.ndarray) -> "HexMesh":
        """Hexahedra of the occupied cells of a grid (i, j, k) with cell size (3,) and lowest corner origin."""
        cells = np.argwhere(occupied)
        corners = cells[:, None, :] + _CORNERS[None].astype(np.int64)  # (m, 8, 3) grid corners
        flat = corners.reshape(-1, 3)
        unique, inverse = np.unique(flat, axis=0, return_inverse=True)
        hexes = inverse.reshape(-1, 8)
        return cls(origin + unique * cell, hexes)

    def __repr__(self) -> str:
        return f"HexMesh({len(self.vertices)} vertices, {len(self.elements)} hexahedra)"


def _winding_numbers(vertices: np.ndarray, faces: np.ndarray, points: np.ndarray, chunk: int = 65_536) -> np.ndarray:
    """The winding number of a closed, outward-wound triangle surface around each point (1 inside, 0
    outside): the triangles' solid angles (Van Oosterom and Strackee) summed over 4 pi, in chunks of about
    `chunk` point-triangle pairs. Coordinates are kept as separate (points, faces) arrays: a chunk's
    temporaries then stay in cache, six times faster than (points, faces, 3) arrays with cross and einsum."""
    tri = vertices[faces]  # (F, 3, 3)
    corners = [np.ascontiguousarray(tri[:, i, k]) for i in range(3) for k in range(3)]
    out = np.empty(len(points))
    step = max(1, chunk // max(1, len(faces)))
    for start in range(0, len(points), step):
        p = points[start:start + step]
        ax, ay, az, bx, by, bz, cx, cy, cz = (c - p[:, k % 3, None] for k, c in enumerate(corners))
        la, lb, lc = np.sqrt(ax * ax + ay * ay + az * az), np.sqrt(bx * bx + by * by + bz * bz), \
            np.sqrt(cx * cx + cy * cy + cz * cz)
        det = ax * (by * cz - bz * cy) + ay * (bz * cx - bx * cz) + az * (bx * cy - by * cx)
        den = (la * lb * lc + (ax * bx + ay * by + az * bz) * lc + (ax * cx + ay * cy + az * cz) * lb
               + (bx * cx + by * cy + bz * cz) * la)
        out[start:start + step] = np.arctan2(det, den).sum(axis=1) / (2.0 * np.pi)
    return out


# each element face as vertex slots, wound counter-clockwise seen from outside a positively oriented element
_TET_FACES = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
_HEX_FACES = np.array([[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]])


def _boundary_triangles(elements: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Triangles (k, 3) of the element faces that belong to a single element, outward wound (quads split)."""
    all_faces = elements[:, faces].reshape(-1, faces.shape[1])
    index, counts = _first_of_equal_rows(np.sort(all_faces, axis=1))
    outer = all_faces[np.sort(index[counts == 1])]
    if faces.shape[1] == 3:
        return outer
    return np.concatenate([outer[:, [0, 1, 2]], outer[:, [0, 2, 3]]])


def _first_of_equal_rows(rows: np.ndarray) -> tuple:
    """(index of the first row of each group of equal rows, the group's size), groups in the rows' lexicographic
    order: np.unique(rows, axis=0, return_index=True, return_counts=True) by integer sorts, many times faster
    (a world's surface is taken at every frame drawn)."""
    order = np.lexsort(rows.T[::-1])  # stable: the first of equal rows comes first
    ordered = rows[order]
    starts = np.flatnonzero(np.concatenate([[True], np.any(ordered[1:] != ordered[:-1], axis=1)]))
    return order[starts], np.diff(np.append(starts, len(rows)))


def _check_used(mesh) -> None:
    used = np.zeros(len(mesh.vertices), dtype=bool)
    used[mesh.elements.ravel()] = True
    if not used.all():
        raise ValueError(f"vertices: vertex {int(np.flatnonzero(~used)[0])} belongs to no element")

