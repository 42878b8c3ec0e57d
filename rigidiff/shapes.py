"""Collision and visual shapes: Box, Sphere, Capsule, Cylinder, Plane and triangle Mesh.

Every shape lives in its own frame. Box, Sphere, Capsule and Cylinder are centred on the frame origin;
capsules and cylinders have their axis along z, and their ``length`` is the length of the straight part
(a capsule's total length is ``length + 2 * radius``). A Plane is the half-space ``{x : n . x <= offset}``
(solid below the plane when ``n`` points up). A Mesh keeps its own vertex coordinates.

Each shape offers ``volume``, ``inertia(mass)`` (a :class:`rigidiff.inertia.Inertia` of a solid of uniform
density, in the shape frame), ``aabb(transform)`` and ``to_trimesh()`` (a ``trimesh.Trimesh`` for drawing).
Conventions: docs/conventions.md and docs/architecture.md.
"""

from __future__ import annotations

import abc
import functools
import os
import warnings

import numpy as np

from rigidiff._geometry_cache import GeometryCache, geometry_key
from rigidiff._validate import as_array, as_bool, as_scalar, real_array
from rigidiff.inertia import Inertia
from rigidiff.transform import Transform

__all__ = ["Shape", "Box", "Sphere", "Capsule", "Cylinder", "Plane", "Mesh"]

# geometry key -> is the mesh a closed convex surface (trimesh's test takes tens of ms on a robot's mesh)
_CONVEXITY = GeometryCache()
# (path, modification time, size) -> the file's (vertices, faces): a robot loaded again reads no file
_FILES = GeometryCache()
# tessellation used by to_trimesh() for round shapes
_SECTIONS = 48


def _positive(x, name: str) -> float:
    return as_scalar(x, name, minimum=0.0, strict=True)


def _finite_volume(volume, shape) -> float:
    """The volume, or ValueError naming the shape when its size makes the volume overflow double precision."""
    with np.errstate(over="ignore"):
        v = float(volume())
    if not np.isfinite(v):
        raise ValueError(f"{shape!r} is too large: its volume overflows double precision (max ~1.8e308)")
    return v


def _too_large(shape, m) -> ValueError:
    return ValueError(f"{shape!r} is too large for a mass of {m:g}: its inertia overflows double precision "
                      f"(max ~1.8e308)")


def _solid(shape, m, rotational_inertia, com=(0.0, 0.0, 0.0)) -> Inertia:
    """Inertia(m, com, rotational_inertia) of a shape, or ValueError naming the shape when its size and the
    mass made the inertia overflow (rather than an error about a rotational_inertia the caller never gave)."""
    if not (np.all(np.isfinite(rotational_inertia)) and np.all(np.isfinite(com))):
        raise _too_large(shape, m)
    return Inertia(m, com=com, rotational_inertia=rotational_inertia)


def _overflow_checked(inertia):
    """Shape.inertia with the overflow of Python floats (``r**2`` of a huge radius) reported as _too_large."""

    @functools.wraps(inertia)
    def checked(self, mass):
        m = self._mass(mass)
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                return inertia(self, m)
        except OverflowError:
            raise _too_large(self, m) from None

    return checked


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _check_transform(transform) -> Transform:
    if transform is None:
        return Transform()
    if not isinstance(transform, Transform):
        raise ValueError(f"transform must be a rigidiff.Transform or None, got {type(transform).__name__}")
    return transform


class Shape(abc.ABC):
    """Abstract base class of all shapes. Use one of the subclasses."""

    @property
    @abc.abstractmethod
    def volume(self) -> float:
        """Volume in m^3 (``inf`` for unbounded shapes)."""

    @abc.abstractmethod
    def inertia(self, mass: float) -> Inertia:
        """Inertia of a solid of uniform density and total ``mass``, expressed in the shape frame."""

    @abc.abstractmethod
    def aabb(self, transform: Transform | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned bounding box ``(lower, upper)`` of the shape placed by ``transform`` (identity if None)."""

    @abc.abstractmethod
    def to_trimesh(self):
        """A ``trimesh.Trimesh`` of the shape surface in the shape frame (for drawing and tests)."""

    def _mass(self, mass) -> float:
        return as_scalar(mass, f"{type(self).__name__} mass", minimum=0.0)


class Box(Shape):
    """A box centred on the origin with full side lengths ``size = (lx, ly, lz)``."""

    def __init__(self, size=(1.0, 1.0, 1.0)):
        s = as_array(size, (3,), "Box size")
        if np.any(s <= 0):
            raise ValueError(f"Box size must have three positive side lengths, got {s}")
        self.size = s.copy()
        self.size.flags.writeable = False

    @property
    def half_extents(self) -> np.ndarray:
        """(3,) half side lengths."""
        return 0.5 * self.size

    @property
    def volume(self) -> float:
        return _finite_volume(lambda: np.prod(self.size), self)

    @_overflow_checked
    def inertia(self, mass: float) -> Inertia:
        m = self._mass(mass)
        x2, y2, z2 = self.size**2
        return _solid(self, m, np.diag([y2 + z2, x2 + z2, x2 + y2]) * (m / 12.0))

    def aabb(self, transform=None):
        T = _check_transform(transform)
        r = np.abs(T.rotation) @ self.half_extents
        return T.translation - r, T.translation + r

    def to_trimesh(self):
        import trimesh

        return trimesh.creation.box(extents=self.size)

    def __repr__(self) -> str:
        return f"Box(size=({', '.join(_fmt(v) for v in self.size)}))"


class Sphere(Shape):
    """A sphere of ``radius`` centred on the origin."""

    def __init__(self, radius: float = 0.5):
        self.radius = _positive(radius, "Sphere radius")

    @property
    def volume(self) -> float:
        return _finite_volume(lambda: 4.0 / 3.0 * np.pi * np.float64(self.radius) ** 3, self)

    @_overflow_checked
    def inertia(self, mass: float) -> Inertia:
        m = self._mass(mass)
        return _solid(self, m, np.eye(3) * (0.4 * m * self.radius**2))

    def aabb(self, transform=None):
        T = _check_transform(transform)
        return T.translation - self.radius, T.translation + self.radius

    def to_trimesh(self):
        import trimesh

        return trimesh.creation.icosphere(subdivisions=3, radius=self.radius)

    def __repr__(self) -> str:
        return f"Sphere(radius={_fmt(self.radius)})"


class _Axial(Shape):
    """Shared parts of the z-axis shapes (Capsule, Cylinder)."""

    def __init__(self, radius: float, length: float):
        kind = type(self).__name__
        self.radius = _positive(radius, f"{kind} radius")
        self.length = _positive(length, f"{kind} length")

    def _segment_aabb(self, T: Transform, lateral: np.ndarray):
        half_axis = np.abs(T.rotation[:, 2]) * (0.5 * self.length)
        r = half_axis + lateral
        return T.translation - r, T.translation + r

    def __repr__(self) -> str:
        return f"{type(self).__name__}(radius={_fmt(self.radius)}, length={_fmt(self.length)})"


class Cylinder(_Axial):
    """A solid cylinder of ``radius`` and ``length`` along z, centred on the origin."""

    @property
    def volume(self) -> float:
        return _finite_volume(lambda: np.pi * np.float64(self.radius) ** 2 * self.length, self)

    @_overflow_checked
    def inertia(self, mass: float) -> Inertia:
        m, r, h = self._mass(mass), self.radius, self.length
        ixx = m * (3.0 * r**2 + h**2) / 12.0
        return _solid(self, m, np.diag([ixx, ixx, 0.5 * m * r**2]))

    def aabb(self, transform=None):
        T = _check_transform(transform)
        # the rim circle of radius r in a plane with normal a spans r * sqrt(1 - a_i^2) along world axis i
        a = T.rotation[:, 2]
        return self._segment_aabb(T, self.radius * np.sqrt(np.clip(1.0 - a**2, 0.0, 1.0)))

    def to_trimesh(self):
        import trimesh

        return trimesh.creation.cylinder(radius=self.radius, height=self.length, sections=_SECTIONS)


class Capsule(_Axial):
    """A capsule: a cylinder of ``radius`` and ``length`` along z capped by two hemispheres.

    The total length is ``length + 2 * radius``.
    """

    @property
    def volume(self) -> float:
        r = np.float64(self.radius)
        return _finite_volume(lambda: np.pi * r**2 * self.length + 4.0 / 3.0 * np.pi * r**3, self)

    @_overflow_checked
    def inertia(self, mass: float) -> Inertia:
        m, r, h = self._mass(mass), self.radius, self.length
        # the cylinder's share of the volume, pi r^2 h / (pi r^2 h + 4/3 pi r^3), with r^2 cancelled: a radius
        # whose square underflows leaves a rod, not 0 / 0
        m_cyl = m * h / (h + 4.0 / 3.0 * r)
        m_sph = m - m_cyl  # both hemispheres together
        # each hemisphere: 2/5 m r^2 about its flat face centre, centroid 3r/8 from it, which is h/2 + 3r/8
        # from the capsule centre; shifting to the centroid and back out gives the terms below
        ixx_cyl = m_cyl * (3.0 * r**2 + h**2) / 12.0
        ixx_sph = m_sph * (0.4 * r**2 + 0.25 * h**2 + 0.375 * h * r)
        izz = 0.5 * m_cyl * r**2 + 0.4 * m_sph * r**2
        ixx = ixx_cyl + ixx_sph
        return _solid(self, m, np.diag([ixx, ixx, izz]))

    def aabb(self, transform=None):
        T = _check_transform(transform)
        return self._segment_aabb(T, np.full(3, self.radius))

    def to_trimesh(self):
        import trimesh

        return trimesh.creation.capsule(height=self.length, radius=self.radius, count=[_SECTIONS, _SECTIONS])


class Plane(Shape):
    """The half-space ``{x : normal . x <= offset}``; ``normal`` is normalised and points out of the solid."""

    def __init__(self, normal=(0.0, 0.0, 1.0), offset: float = 0.0):
        n = as_array(normal, (3,), "Plane normal")
        norm = np.linalg.norm(n)
        if norm < 1e-12:
            raise ValueError(f"Plane normal must be a non-zero 3-vector, got {n}")
        self.normal = n / norm
        self.normal.flags.writeable = False
        self.offset = as_scalar(offset, "Plane offset")

    @property
    def volume(self) -> float:
        return float("inf")

    def inertia(self, mass: float) -> Inertia:
        raise ValueError("a Plane has no finite volume, so it has no inertia; give the body an explicit Inertia")

    def aabb(self, transform=None):
        """Bounds are infinite except along a world axis that the plane normal is aligned with."""
        T = _check_transform(transform)
        n = T.rotation @ self.normal
        d = self.offset + n @ T.translation
        lo, hi = np.full(3, -np.inf), np.full(3, np.inf)
        for i in range(3):
            if abs(abs(n[i]) - 1.0) < 1e-12:
                if n[i] > 0:
                    hi[i] = d
                else:
                    lo[i] = -d
        return lo, hi

    def to_trimesh(self, extent: float = 10.0):
        """A square of side ``extent`` on the plane surface, centred on the point closest to the origin."""
        import trimesh

        extent = _positive(extent, "Plane extent")
        n = self.normal
        e1 = np.cross(n, np.eye(3)[np.argmin(np.abs(n))])
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(n, e1)
        c = self.offset * n
        h = 0.5 * extent
        verts = np.array([c + h * (sx * e1 + sy * e2) for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
        return trimesh.Trimesh(verts, np.array([[0, 1, 2], [0, 2, 3]]), process=False)

    def __repr__(self) -> str:
        return f"Plane(normal=({', '.join(_fmt(v) for v in self.normal)}), offset={_fmt(self.offset)})"


class Mesh(Shape):
    """A triangle mesh, from a file (any format trimesh reads) or a ``trimesh.Trimesh``.

    Args:
        path_or_trimesh: a file path (str or os.PathLike) or a ``trimesh.Trimesh``.
        scale: a non-zero scalar or 3-vector multiplying the vertex coordinates. A negative entry mirrors
            the mesh; when the mirror flips orientation the triangles are re-wound to keep them outward.
        lazy: for a path, defer reading the file until the geometry is first used (``vertices``, ``faces``,
            ``volume``, ...). The path is checked at once either way; a file that trimesh cannot read
            raises ValueError when it is read.
        decompose: collide through the convex parts of ``convex_parts()`` (one geometry each, on the body
            that holds the mesh) instead of the exact triangles. Needs CoACD (``rigidiff[decompose]``).
            Mass properties stay those of the whole mesh.

    Mass properties (``volume``, ``inertia``) are the exact volume integrals of a watertight mesh. For a
    mesh that is not watertight there is no enclosed volume; the convex hull is used instead and a
    ``UserWarning`` says so (once per Mesh). A watertight mesh with inward-facing triangles is handled
    by flipping the sign of its volume integrals.
    """

    def __init__(self, path_or_trimesh, scale=1.0, *, lazy: bool = False, decompose: bool = False):
        self.decompose = as_bool(decompose, "Mesh decompose")
        lazy = as_bool(lazy, "Mesh lazy")
        self._parts: dict = {}
        s = real_array(scale, "Mesh scale", "(3,) or a number")
        s = as_array(np.full(3, float(s)) if s.ndim == 0 else s, (3,), "Mesh scale")
        if np.any(s == 0):
            raise ValueError(f"Mesh scale must be non-zero, got {s}")
        self.scale = s
        self.scale.flags.writeable = False
        self.path: str | None = None
        self._vertices: np.ndarray | None = None
        self._faces: np.ndarray | None = None
        self._mass_mesh = None
        self._key: bytes | None = None
        source = path_or_trimesh
        if isinstance(source, (str, os.PathLike)):
            path = os.path.abspath(os.fspath(source))
            if not os.path.isfile(path):
                raise FileNotFoundError(f"mesh file not found: {path}")
            self.path = path
            if not lazy:
                self._load()
            return
        import trimesh  # only now: a lazy mesh from a file does not pay for importing trimesh

        if isinstance(source, trimesh.Trimesh):
            self._set_geometry(source.vertices, source.faces, "Mesh")
        else:
            raise ValueError(f"Mesh path_or_trimesh must be a file path or a trimesh.Trimesh, "
                             f"got {type(source).__name__}")

    def _set_geometry(self, vertices, faces, what: str):
        v = np.asarray(vertices, dtype=np.float64)
        f = np.asarray(faces)
        if v.ndim != 2 or v.shape[1] != 3 or len(v) == 0:
            raise ValueError(f"{what} has no usable vertices (shape {v.shape})")
        if f.ndim != 2 or f.shape[1] != 3 or len(f) == 0:
            raise ValueError(f"{what} has no triangles (faces shape {f.shape})")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{what} has non-finite vertex coordinates")
        f = f.astype(np.int64)
        if f.min() < 0 or f.max() >= len(v):
            raise ValueError(f"{what} has face indices outside [0, {len(v)})")
        self._vertices = v * self.scale
        self._faces = f[:, ::-1].copy() if np.prod(self.scale) < 0 else f
        self._vertices.flags.writeable = False
        self._faces.flags.writeable = False

    def _load(self):
        try:
            stat = os.stat(self.path)
        except OSError:  # gone since the Mesh was made: reading it says so
            vertices, faces = self._read()
        else:
            vertices, faces = _FILES.get((self.path, stat.st_mtime_ns, stat.st_size), self._read)
        self._set_geometry(vertices, faces, f"mesh file {self.path}")

    def _read(self) -> tuple:
        """(vertices, faces) of the file, read-only, before scale."""
        import trimesh

        try:
            # unprocessed first: processing drops non-finite vertices and their faces without a word
            loaded = trimesh.load(self.path, force="mesh", process=False)
        except Exception as exc:  # trimesh raises many types for unreadable files
            raise ValueError(f"cannot read mesh file {self.path}: {type(exc).__name__}: {exc}") from None
        if not isinstance(loaded, trimesh.Trimesh):
            raise ValueError(f"mesh file {self.path} holds no triangle mesh (trimesh gave {type(loaded).__name__})")
        bad = np.flatnonzero(~np.isfinite(np.asarray(loaded.vertices)).all(axis=1))
        if len(bad):
            raise ValueError(f"mesh file {self.path} has {len(bad)} vertices with non-finite coordinates (NaN or "
                             f"inf), the first vertex {bad[0]}")
        loaded.process()  # merges duplicate vertices, as loading with processing does
        vertices, faces = np.array(loaded.vertices, dtype=np.float64), np.array(loaded.faces)
        vertices.flags.writeable = False
        faces.flags.writeable = False
        return vertices, faces

    def convex_parts(self, threshold: float = 0.05, seed: int = 0) -> list:
        """Convex meshes whose union approximates this one (CoACD, cached per threshold and seed).

        Args:
            threshold: CoACD's concavity bound, in (0, 1]; smaller gives more, tighter parts.
            seed: CoACD's random seed; the same seed gives the same parts.
        Returns:
            a list of convex ``Mesh`` objects in this mesh's frame (scale applied).
        Raises:
            ImportError: CoACD is not installed (``pip install 'rigidiff[decompose]'``).
            ValueError: threshold outside (0, 1].
        """
        if not 0.0 < float(threshold) <= 1.0:
            raise ValueError(f"convex_parts threshold must be in (0, 1], got {threshold}")
        key = (float(threshold), int(seed))
        if key not in self._parts:
            import trimesh

            from rigidiff.mesh_decomposition import coacd_parts

            self._parts[key] = [Mesh(trimesh.Trimesh(v, f, process=True))
                                for v, f in coacd_parts(self.vertices, self.faces, *key)]
        return list(self._parts[key])

    @property
    def loaded(self) -> bool:
        """True once the vertices are in memory."""
        return self._vertices is not None

    @property
    def vertices(self) -> np.ndarray:
        """(N, 3) float64 vertex coordinates, scale applied (read-only)."""
        if self._vertices is None:
            self._load()
        return self._vertices

    @property
    def faces(self) -> np.ndarray:
        """(M, 3) int64 vertex indices of the triangles (read-only)."""
        if self._faces is None:
            self._load()
        return self._faces

    def to_trimesh(self):
        import trimesh

        return trimesh.Trimesh(self.vertices.copy(), self.faces.copy(), process=False)

    @property
    def is_watertight(self) -> bool:
        """True if the surface is closed (every edge shared by exactly two triangles)."""
        return bool(self._merged().is_watertight)

    @property
    def is_convex(self) -> bool:
        """True if the mesh is a closed convex surface (tested once per geometry)."""
        return _CONVEXITY.get(self._geometry_key(), lambda: bool(self._merged().is_convex))

    def _geometry_key(self) -> bytes:
        """A digest of the vertices (scale applied) and faces: equal for meshes of the same geometry."""
        if self._key is None:
            self._key = geometry_key(self.vertices, self.faces)
        return self._key

    def _merged(self):
        import trimesh

        return trimesh.Trimesh(self.vertices.copy(), self.faces.copy(), process=True)

    def _mass_properties_mesh(self):
        """The watertight mesh whose volume integrals give the mass properties (cached)."""
        if self._mass_mesh is None:
            tm = self._merged()
            if tm.is_watertight and abs(tm.volume) > 0:
                if tm.volume < 0:
                    tm.invert()
            else:
                where = self.path or "the mesh"
                if np.any(self.scale != 1.0):  # a tiny scale can flatten a mesh that is fine unscaled
                    where += f" (Mesh scale {self.scale})"
                warnings.warn(f"{where} is not watertight; its volume and inertia are those of its convex hull",
                              UserWarning, stacklevel=3)
                from scipy.spatial import QhullError

                try:
                    tm = tm.convex_hull
                except QhullError:  # fewer than four distinct points, or all of them on a line or a plane
                    raise ValueError(f"{where} is degenerate (its vertices span no volume: they lie on a point, "
                                     f"a line or a plane); it has no inertia") from None
                if not tm.volume > 0:
                    raise ValueError(f"{where} is flat (its convex hull has no volume); it has no inertia")
            self._mass_mesh = tm
        return self._mass_mesh

    @property
    def volume(self) -> float:
        return _finite_volume(lambda: self._mass_properties_mesh().volume, self)

    @_overflow_checked
    def inertia(self, mass: float) -> Inertia:
        """Inertia in the mesh frame: ``com`` is the volume centroid (not the origin)."""
        m = self._mass(mass)
        tm = self._mass_properties_mesh()
        I = np.asarray(tm.moment_inertia, dtype=float) * (m / tm.mass)  # trimesh uses density 1
        return _solid(self, m, 0.5 * (I + I.T), tm.center_mass)

    def aabb(self, transform=None):
        T = _check_transform(transform)
        p = T.apply(self.vertices)
        return p.min(axis=0), p.max(axis=0)

    def __repr__(self) -> str:
        src = repr(self.path) if self.path is not None else f"<{len(self.vertices)} vertices>"
        scale = "" if np.all(self.scale == 1.0) else f", scale=({', '.join(_fmt(v) for v in self.scale)})"
        return f"Mesh({src}{scale})"
