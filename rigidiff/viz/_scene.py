"""The drawable geometry of a World: shapes as polygons in their bodies' frames, posed and shaded per frame.

Every polygon is a quadrilateral (a triangle repeats its last vertex), so a whole scene is one (N, 4, 3)
array; its normal is the cross product of the diagonals, which is right for triangles, quads and the
quads of a pole whose first two vertices coincide.
"""

from __future__ import annotations

import math

import numpy as np

from rigidiff.shapes import Box, Capsule, Cylinder, Mesh, Plane, Sphere
from rigidiff.viz._common import Camera, check_world

#: most polygons drawn for one mesh; bigger meshes are simplified by vertex clustering
MAX_MESH_FACES = 800
#: most rows of a trajectory posed to fit the view (evenly spaced, the drawn rows always included)
MAX_FIT_ROWS = 1000
_SEGMENTS = 16  # around the axis of spheres, capsules and cylinders
_RINGS = 8  # from pole to pole of a sphere
_TILES = 8  # per side of a plane's checkered patch
_AMBIENT = 0.35
_PALETTE = np.array([[0.12, 0.47, 0.71], [1.00, 0.50, 0.05], [0.17, 0.63, 0.17], [0.84, 0.15, 0.16],
                     [0.58, 0.40, 0.74], [0.55, 0.34, 0.29], [0.89, 0.47, 0.76], [0.74, 0.74, 0.13],
                     [0.09, 0.75, 0.81], [0.50, 0.50, 0.50]])
_GROUND = np.array([[0.82, 0.82, 0.80], [0.68, 0.68, 0.66]])
_LINE = (0.15, 0.15, 0.15)


# ------------------------------------------------------------------------------------------ tessellation


#: radius (m) of the ball drawn for a particle of radius zero
POINT_MARKER_RADIUS = 0.01


def _normals(polys: np.ndarray) -> np.ndarray:
    n = np.cross(polys[:, 2] - polys[:, 0], polys[:, 3] - polys[:, 1])
    length = np.linalg.norm(n, axis=1, keepdims=True)
    return np.where(length > 0, n / np.where(length > 0, length, 1.0), np.array([0.0, 0.0, 1.0]))


def _lathe(radii, heights, segments: int = _SEGMENTS) -> np.ndarray:
    """(len(radii) - 1) * segments outward quads of the profile (r, z), bottom to top, turned about z."""
    theta = np.linspace(0.0, 2.0 * np.pi, segments + 1)
    c, s = np.cos(theta), np.sin(theta)
    r, z = np.asarray(radii, dtype=float), np.asarray(heights, dtype=float)
    rings = np.stack([r[:, None] * c, r[:, None] * s, np.broadcast_to(z[:, None], (len(r), segments + 1))], axis=-1)
    a, b = rings[:-1, :-1], rings[:-1, 1:]
    d, e = rings[1:, :-1], rings[1:, 1:]
    return np.stack([a, b, e, d], axis=2).reshape(-1, 4, 3)


def _box(size) -> np.ndarray:
    h = 0.5 * np.asarray(size, dtype=float)
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float) * h
    # faces counter-clockwise seen from outside (corner index = 4 x + 2 y + z with 0 for -1, 1 for +1)
    quads = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
    return corners[np.array(quads)]


def _sphere_profile(radius: float, rings: int, z_offset: float = 0.0, half: str = "both"):
    phi = np.linspace(-0.5 * np.pi, 0.5 * np.pi, rings + 1)
    if half == "lower":
        phi = phi[phi <= 0]
    elif half == "upper":
        phi = phi[phi >= 0]
    return radius * np.cos(phi), radius * np.sin(phi) + z_offset


def _row_keys(rows: np.ndarray) -> np.ndarray:
    """One integer per row of non-negative integers (n, 3), ordered as the rows are lexicographically: a 1-D
    np.unique on them is many times faster than np.unique(rows, axis=0) and groups the rows alike."""
    base = int(rows.max(initial=0)) + 1
    if base > 2_000_000:  # base**3 would overflow int64: rows of three small integers
        return np.unique(rows, axis=0, return_inverse=True)[1].ravel()
    return (rows[:, 0] * base + rows[:, 1]) * base + rows[:, 2]


def _decimate(vertices: np.ndarray, faces: np.ndarray, max_faces: int):
    """Fewer triangles by vertex clustering: vertices in one grid cell merge at their mean, coarser
    grids until at most ``max_faces`` triangles remain (then every k-th triangle, as a last resort)."""
    lo = vertices.min(axis=0)
    size = float(np.max(vertices.max(axis=0) - lo)) or 1.0
    cells = 2.0 * math.sqrt(max_faces)
    v, f = vertices, faces
    while len(f) > max_faces and cells >= 4:
        cell = np.floor((vertices - lo) / (size / cells)).astype(np.int64)
        _, cluster = np.unique(_row_keys(cell), return_inverse=True)
        cluster = cluster.ravel()
        count = np.bincount(cluster)
        v = np.stack([np.bincount(cluster, vertices[:, k], len(count)) for k in range(3)], axis=1)
        v /= count[:, None]
        f = cluster[faces]
        f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])]
        f = f[np.sort(np.unique(_row_keys(np.sort(f, axis=1)), return_index=True)[1])]
        cells *= 0.75
    if len(f) > max_faces:
        f = f[:: math.ceil(len(f) / max_faces)]
    return v, f


def _triangles(vertices, faces, max_faces: int = MAX_MESH_FACES) -> np.ndarray:
    v = np.asarray(vertices, dtype=float)
    f = np.asarray(faces, dtype=np.int64)
    if len(f) > max_faces:
        v, f = _decimate(v, f, max_faces)
    return v[f[:, [0, 1, 2, 2]]]


def tessellate(shape) -> np.ndarray | None:
    """(F, 4, 3) polygons of a bounded shape's surface in the shape frame (None for a Plane)."""
    if isinstance(shape, Plane):
        return None
    if isinstance(shape, Box):
        return _box(shape.size)
    if isinstance(shape, Sphere):  # a particle without size (radius 0) is drawn as a small ball
        return _lathe(*_sphere_profile(shape.radius if shape.radius > 0.0 else POINT_MARKER_RADIUS, _RINGS))
    if isinstance(shape, Capsule):
        h = 0.5 * shape.length
        r0, z0 = _sphere_profile(shape.radius, _RINGS, -h, "lower")
        r1, z1 = _sphere_profile(shape.radius, _RINGS, h, "upper")
        return _lathe(np.concatenate([r0, r1]), np.concatenate([z0, z1]))
    if isinstance(shape, Cylinder):
        h, r = 0.5 * shape.length, shape.radius
        return _lathe([0.0, r, r, 0.0], [-h, -h, h, h])
    if isinstance(shape, Mesh):
        return _triangles(shape.vertices, shape.faces)
    tm = shape.to_trimesh()  # another Shape subclass: whatever surface it gives
    return _triangles(tm.vertices, tm.faces)


def drawn_shapes(body) -> list:
    """The shapes drawn for a body: its visual shapes, or its collision shapes when it has no visual one
    (a URDF link with only <collision> elements)."""
    visual = [s for s in body.shapes if s.visual]
    return visual if visual else [s for s in body.shapes if s.collide]


def _depth(body) -> int:
    d, b = 0, body.parent
    while b is not None:
        d, b = d + 1, b.parent
    return d


# ------------------------------------------------------------------------------------------ the scene


class Scene:
    """The geometry of a world and a view fitted to the configurations ``Q`` (rows ``fit_rows``).

    Polygons are kept in body frames (``_polys``, ``_normals``, owner body ``_owner``); planes as a
    point and normal in their body frame (body None: the world's frame). A world whose surfaces move by
    coordinates of their own (a projective world's deformable bodies: ``world._viz_surfaces(q)``) has them
    posed from q at every frame. A world with no bounded geometry is drawn as its kinematic tree (body
    origins joined parent to child).
    """

    def __init__(self, world, Q: np.ndarray, camera: Camera, dt: float = 0.0):
        check_world(world)
        self.world = world
        self.camera = camera
        self.dt = dt
        eye = camera.eye_direction
        light = eye + np.array([0.0, 0.0, 1.5])
        self.light = light / np.linalg.norm(light)
        self._collect()
        self._fit(Q)

    # -------------------------------------------------------------- geometry
    def _collect(self):
        world = self.world
        polys, owner, colors, corners, corner_owner, planes = [], [], [], [], [], []
        palette_of: dict = {}
        bodies = [world.body(i) for i in range(world.nbodies)]
        for i, body in enumerate(bodies):
            for inst in drawn_shapes(body):
                R, t = inst.origin.rotation, inst.origin.translation
                if isinstance(inst.shape, Plane):
                    n = inst.shape.normal
                    planes.append((i, R @ n, R @ (inst.shape.offset * n) + t))
                    continue
                p = tessellate(inst.shape) @ R.T + t
                key = id(body.skeleton)
                if key not in palette_of:
                    palette_of[key] = _PALETTE[len(palette_of) % len(_PALETTE)]
                base = palette_of[key]
                color = base if _depth(body) % 2 == 0 else 0.6 * base + 0.4
                polys.append(p)
                owner.append(np.full(len(p), i))
                colors.append(np.broadcast_to(color, (len(p), 3)))
                flat = p.reshape(-1, 3)
                lo, hi = flat.min(axis=0), flat.max(axis=0)
                corners.append(np.stack(np.meshgrid(*zip(lo, hi), indexing="ij"), axis=-1).reshape(8, 3))
                corner_owner.append(i)
        # surfaces posed by q itself (deformable bodies), and planes given in the world's frame
        self._surfaces = getattr(world, "_viz_surfaces", None)
        self._surface_colors: dict = {}
        if self._surfaces is not None:
            for n, p in world._viz_planes():
                planes.append((None, np.asarray(n, dtype=float), np.asarray(p, dtype=float)))
        self.has_geometry = bool(polys) or self._surfaces is not None
        if polys:
            self._polys = np.concatenate(polys)
            self._normals = _normals(self._polys)
            self._owner = np.concatenate(owner)
            self._colors = np.concatenate(colors)
        self._corners = np.array(corners).reshape(-1, 8, 3)
        self._corner_owner = np.array(corner_owner, dtype=np.int64)
        self._planes = planes
        # the kinematic tree, drawn when there is no bounded geometry
        index = {id(b): i for i, b in enumerate(bodies)}
        self._tree = [(index[id(b.parent)], i) for i, b in enumerate(bodies)
                      if b.parent is not None and id(b.parent) in index]

    # -------------------------------------------------------------- view
    def _fit(self, Q: np.ndarray):
        rows = np.arange(len(Q))
        if len(rows) > MAX_FIT_ROWS:
            rows = np.unique(np.round(np.linspace(0, len(Q) - 1, MAX_FIT_ROWS)).astype(int))
        poses = np.stack([self.world.body_poses(Q[r]) for r in rows])  # (K, nbodies, 4, 4)
        self._first_poses = poses[0]
        self._first_q = Q[0]
        if len(self._corners):
            P = poses[:, self._corner_owner]  # (K, C, 4, 4)
            points = np.einsum("kcij,cmj->kcmi", P[..., :3, :3], self._corners) + P[:, :, None, :3, 3]
        else:
            points = poses[:, :, :3, 3]
        points = [points.reshape(-1, 3)]
        if self._surfaces is not None:
            for r in rows:
                points += [tri.reshape(-1, 3) for _, tri in self._surfaces(Q[r])]
        points = np.concatenate(points)
        if not len(points):
            points = np.zeros((1, 3))
        lo, hi = points.min(axis=0), points.max(axis=0)
        centre = 0.5 * (lo + hi)
        for body, n, p in self._planes:  # bring the ground into view below the bodies
            n_w, p_w = self._plane_in_world(None if body is None else poses[0][body], n, p)
            foot = centre - np.dot(centre - p_w, n_w) * n_w
            lo, hi = np.minimum(lo, foot), np.maximum(hi, foot)
        span = float(np.max(hi - lo))
        margin = 0.08 * span if span > 0 else 0.5
        centre = 0.5 * (lo + hi)
        half = 0.5 * (hi - lo) + margin
        cam = self.camera
        if cam.target is not None:
            target = np.array(cam.target)
            half = np.maximum(np.abs(hi + margin - target), np.abs(lo - margin - target))
            centre = target
        if cam.extent is not None:
            half = np.full(3, cam.extent)
        self.centre, self.half = centre, half

    @staticmethod
    def _plane_in_world(pose, n: np.ndarray, p: np.ndarray):
        if pose is None:  # given in the world's frame
            return n, p
        R, t = pose[:3, :3], pose[:3, 3]
        return R @ n, R @ p + t

    def _shade(self, colors: np.ndarray, normals: np.ndarray) -> np.ndarray:
        lit = _AMBIENT + (1.0 - _AMBIENT) * np.clip(normals @ self.light, 0.0, 1.0)
        return np.clip(colors * lit[:, None], 0.0, 1.0)

    def bodies(self, poses: np.ndarray, q=None):
        """(polygons (N, 4, 3), RGB colours (N, 3)) of the bounded shapes posed by ``poses``, and of the
        surfaces that q poses (deformable bodies; triangles repeat their last corner)."""
        polys, colors = [np.zeros((0, 4, 3))], [np.zeros((0, 3))]
        if hasattr(self, "_polys"):
            P = poses[self._owner]
            R, t = P[:, :3, :3], P[:, :3, 3]
            polys.append(np.einsum("nij,nkj->nki", R, self._polys) + t[:, None, :])
            colors.append(self._shade(self._colors, np.einsum("nij,nj->ni", R, self._normals)))
        if self._surfaces is not None and q is not None:
            for key, tri in self._surfaces(q):
                if key not in self._surface_colors:
                    self._surface_colors[key] = _PALETTE[(len(self._surface_colors) + 1) % len(_PALETTE)]
                quads = tri[:, [0, 1, 2, 2]]
                normals = _normals(quads)
                # closed surfaces: the triangles facing away are hidden, and matplotlib's depth sort by
                # centroid would draw some of them over the front ones
                front = normals @ self.camera.eye_direction > 0.0
                polys.append(quads[front])
                colors.append(self._shade(np.broadcast_to(self._surface_colors[key], (int(front.sum()), 3)),
                                          normals[front]))
        return np.concatenate(polys), np.concatenate(colors)

    def plane(self, k: int, poses: np.ndarray):
        """(polygons, colours, in front) of plane k: a checkered patch covering the view box; ``in front``
        when the eye is on the solid side (the plane then hides what is behind it)."""
        body, n, p = self._planes[k]
        n_w, p_w = self._plane_in_world(None if body is None else poses[body], n, p)
        foot = self.centre - np.dot(self.centre - p_w, n_w) * n_w
        e1 = np.cross(n_w, np.eye(3)[np.argmin(np.abs(n_w))])
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(n_w, e1)
        a1, a2 = np.abs(e1) @ self.half, np.abs(e2) @ self.half
        g = np.linspace(-1.0, 1.0, _TILES + 1)
        grid = foot + g[:, None, None] * a1 * e1 + g[None, :, None] * a2 * e2  # (T+1, T+1, 3)
        quads = np.stack([grid[:-1, :-1], grid[1:, :-1], grid[1:, 1:], grid[:-1, 1:]], axis=2).reshape(-1, 4, 3)
        checker = (np.add.outer(np.arange(_TILES), np.arange(_TILES)) % 2).ravel()
        colors = self._shade(_GROUND[checker], np.broadcast_to(n_w, (len(quads), 3)))
        return quads, colors, bool(np.dot(n_w, self.camera.eye_direction) < 0)

    def tree(self, poses: np.ndarray):
        """(segments (E, 2, 3), body origins (nbodies, 3)) of the kinematic tree."""
        origins = poses[:, :3, 3]
        segments = np.array([[origins[a], origins[b]] for a, b in self._tree]).reshape(-1, 2, 3)
        return segments, origins

    # -------------------------------------------------------------- matplotlib
    def attach(self, ax) -> Drawing:
        """Set up a 3D matplotlib Axes for this scene: limits, aspect, view and artists."""
        from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection

        # artists made with content (matplotlib < 3.10 cannot add an empty line collection), then limits
        ax.computed_zorder = False  # zorder by artist: planes behind (or in front of) the bodies
        poses = self._first_poses
        drawing = Drawing(self, ax)
        for k in range(len(self._planes)):
            polys, colors, _ = self.plane(k, poses)
            coll = Poly3DCollection(polys, facecolors=colors, edgecolors=colors, zorder=1, linewidths=0.3)
            ax.add_collection3d(coll)
            drawing.planes.append(coll)
        if self.has_geometry:
            polys, colors = self.bodies(poses, self._first_q)
            drawing.body_polys = Poly3DCollection(polys, facecolors=colors, edgecolors=colors, zorder=2,
                                                  linewidths=0.3)
            ax.add_collection3d(drawing.body_polys)
        else:
            segments, origins = self.tree(poses)
            if len(segments):
                drawing.tree_lines = Line3DCollection(segments, colors=[_LINE], linewidths=2.0, zorder=2)
                ax.add_collection3d(drawing.tree_lines)
            (drawing.tree_points,) = ax.plot(*origins.T, "o", color=_PALETTE[0], markersize=5, zorder=3)
        lo, hi = self.centre - self.half, self.centre + self.half
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
        ax.set_zlim(lo[2], hi[2])
        ax.set_box_aspect(tuple(hi - lo))
        ax.view_init(elev=self.camera.elevation, azim=self.camera.azimuth)
        if self.camera.distance is None:
            ax.set_proj_type("ortho")
        else:
            # matplotlib puts the eye 10 * focal_length box units from the centre; a unit is this many metres
            metres = np.linalg.norm(hi - lo) / (1.8294640721620434 * 25 / 24)
            try:
                ax.set_proj_type("persp", focal_length=max(self.camera.distance / (10.0 * metres), 0.05))
            except TypeError:  # matplotlib < 3.6: no focal length
                ax.set_proj_type("persp")
        return drawing


class Drawing:
    """The matplotlib artists of a Scene in one Axes; ``show(poses, q)`` moves them to a configuration."""

    def __init__(self, scene: Scene, ax):
        self.scene = scene
        self.ax = ax
        self.planes: list = []
        self.body_polys = None
        self.tree_lines = None
        self.tree_points = None
        self.label = None

    def show(self, poses: np.ndarray, q=None) -> None:
        """Move the artists to the body poses ``poses`` (and to q, for surfaces that q poses)."""
        scene = self.scene
        for k, coll in enumerate(self.planes):
            polys, colors, in_front = scene.plane(k, poses)
            coll.set_verts(polys)
            coll.set_facecolor(colors)
            coll.set_edgecolor(colors)
            coll.set_zorder(3 if in_front else 1)
        if self.body_polys is not None:
            polys, colors = scene.bodies(poses, q)
            self.body_polys.set_verts(polys)
            self.body_polys.set_facecolor(colors)
            self.body_polys.set_edgecolor(colors)
        if self.tree_points is not None:
            segments, origins = scene.tree(poses)
            if self.tree_lines is not None:
                self.tree_lines.set_segments(segments)
            self.tree_points.set_data_3d(origins[:, 0], origins[:, 1], origins[:, 2])

    def set_label(self, text: str | None) -> None:
        """A line of text in the lower left corner (the time of the frame)."""
        if text is None:
            return
        if self.label is None:
            self.label = self.ax.text2D(0.03, 0.03, text, transform=self.ax.transAxes, fontsize=9,
                                        color="0.2", zorder=5)
        else:
            self.label.set_text(text)
