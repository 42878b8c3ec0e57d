"""Barrier worlds: affine bodies under IPC's barrier contact (``rd.World(dt, solver="barrier")``).

An affine body has 12 coordinates q = (p, a1, a2, a3): the translation p and the three ROWS a_k of a 3 x 3
matrix A, placing a point of body coordinates xbar at x = A xbar + p. A stiff orthogonality energy keeps A
near a rotation. The state q stacks the bodies in insertion order (12 each) and v = dq/dt. A step is
implicit Euler, solved by a projected Newton method whose every iterate is intersection-free (docs/affine.md).
"""

from __future__ import annotations

import warnings

import numpy as np

from rigidiff import _core
from rigidiff._barrier_gradients import BarrierGradients
from rigidiff._barrier_skeletons import SkeletonParticipants
from rigidiff._body_world import BodyWorld
from rigidiff._validate import as_array, as_name, as_scalar, real_array
from rigidiff.transform import Transform

__all__ = ["BarrierWorld", "DEFAULT_STIFFNESS"]

#: default orthogonality stiffness kappa (Pa) of add_affine_body: ABD's recommended range is 1e8 to 1e11
DEFAULT_STIFFNESS = 1e8

#: the largest ||A A^T - I||_F a state may hold (a strain of order one: the orthogonality energy of a real body
#: keeps it below 1e-3)
MAX_STRAIN = 1.0

#: the smallest det A (a body's volume over its rest volume) a step may return: a strain below MAX_STRAIN still lets
#: a body be flattened (det A -> 0), and the next step would turn it inside out
MIN_VOLUME_RATIO = 1e-2

_UNSUPPORTED = "barrier worlds (solver='barrier') do not support {what} yet"


def _mesh_of(shape_or_mesh):
    """(vertices (n, 3), faces (m, 3)) of a rigidiff shape (triangulated), a trimesh.Trimesh or a
    (vertices, faces) pair."""
    from rigidiff.shapes import Plane, Shape

    if isinstance(shape_or_mesh, Plane):
        raise ValueError("shape_or_mesh: a plane is not a body; use world.add_ground for a static plane")
    if isinstance(shape_or_mesh, Shape):
        shape_or_mesh = shape_or_mesh.to_trimesh()
    if isinstance(shape_or_mesh, tuple) and len(shape_or_mesh) == 2:
        vertices, faces = shape_or_mesh
    elif hasattr(shape_or_mesh, "vertices") and hasattr(shape_or_mesh, "faces"):
        vertices, faces = shape_or_mesh.vertices, shape_or_mesh.faces
    else:
        raise TypeError(f"shape_or_mesh must be a rigidiff shape, a trimesh.Trimesh or (vertices, faces), "
                        f"got {type(shape_or_mesh).__name__}")
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces)
    if vertices.ndim != 2 or vertices.shape[1] != 3 or not np.all(np.isfinite(vertices)):
        raise ValueError(f"shape_or_mesh: vertices must be a finite (n, 3) array, got shape {vertices.shape}")
    if faces.ndim != 2 or faces.shape[1] != 3 or faces.dtype.kind not in "iu":
        raise ValueError(f"shape_or_mesh: faces must be an integer (m, 3) array, got {faces.dtype} {faces.shape}")
    return vertices, faces


def _warn_faces_left_out(label: str, given: int, kept: int) -> None:
    """The UserWarning of a surface (a link's, a static mesh's) whose faces without area the core left out."""
    if kept < given:
        warnings.warn(f"{label}: {given - kept} of its {given} faces have no area (a repeated vertex or a sliver) "
                      f"and are left out of its surface", stacklevel=4)


def _affine_velocity(velocity, A: np.ndarray, p: np.ndarray) -> np.ndarray:
    """dq/dt (12) of a body at (A, p) from a (3,) linear velocity of its origin, a (6,) (linear, angular) rigid
    velocity in world axes (dA/dt = [w]x A), or (12,) dq/dt itself."""
    vel = real_array(velocity, "velocity", "(3,), (6,) or (12,)")
    if vel.shape not in ((3,), (6,), (12,)) or not np.all(np.isfinite(vel)):
        raise ValueError(f"velocity must be a finite (3,), (6,) or (12,) array, got shape {vel.shape}")
    if vel.shape == (12,):
        return vel.copy()
    out = np.zeros(12)
    out[:3] = vel[:3]
    if vel.shape == (6,):
        w = vel[3:]
        W = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
        out[3:] = (W @ A).ravel()  # rows of dA/dt
    return out


def nearest_rotation(A: np.ndarray) -> np.ndarray:
    """The rotation closest to A in the Frobenius norm (the orthogonal factor of its polar decomposition)."""
    U, _, Vt = np.linalg.svd(A)
    R = U @ Vt
    if np.linalg.det(R) < 0.0:  # a reflection: flip the axis of the smallest singular value
        U[:, -1] *= -1.0
        R = U @ Vt
    return R


class BarrierWorld(BarrierGradients, SkeletonParticipants, BodyWorld, _core.BarrierWorldCore):
    """A world of affine bodies, articulated skeletons and static ground planes with IPC's intersection-free
    barrier contact.

    Made by ``rd.World(dt, solver="barrier")``. No particles yet (add_particles raises NotImplementedError).
    Derivatives (step_jacobians, step_vjp, rollout(record=True).backward) through the barrier and the lagged
    friction, with respect to the state, tau and the parameters (the skeletons' link inertias and joint damping,
    stiffness and armature, each body's density and stiffness, gravity, friction, dhat: parameters(), settable by
    set_parameters), with or without skeletons (their joint coordinates, torques, damping, springs, effort limits
    and joint-limit barrier included).

    Args:
        dt: time step in seconds (> 0).
        gravity: (3,) gravity acceleration in m/s^2 (z is up).
        dhat: the barrier's activation distance in m (> 0): surfaces closer than dhat repel; bodies come to
            rest about dhat / 2 to dhat apart.
        newton_tolerance: a step's Newton iterations stop when no surface vertex moves by more than
            newton_tolerance * l * dt in an iteration (l: the diagonal of the box around every body), i.e. a
            velocity tolerance relative to the scene size (> 0).
        max_newton_iterations: a step needing more raises RuntimeError naming the residual.
        friction: Coulomb's coefficient mu of every contact (>= 0; 0, the default, is frictionless): IPC's
            lagged smoothed friction, its normal forces and tangents frozen at the start of each step.
        friction_velocity: eps_v in m/s (> 0): slip slower than this is smoothly static (IPC's mollifier).
        gyroscopic: how a skeleton's free and ball joints that carry a single body on a static parent take the
            gyroscopic term, as in the lcp world (rd.World's gyroscopic; docs/affine.md, "Floating bases").
            "implicit" (the default): the momentum-conserving rotational update, whose impulse enters the
            incremental potential as a force, so that without contact the step is the lcp world's implicit step
            and a torque-free body keeps its angular momentum to round-off. "explicit": with the rest of the bias
            forces b(q_n, v_n) (momentum and energy drift at first order in dt). Derivatives are exact under both.

    Example::

        world = rd.World(dt=1e-2, solver="barrier")
        world.add_ground()
        world.add_affine_body(rd.Box((0.2, 0.2, 0.2)), density=500.0, pose=rd.Transform((0, 0, 0.5)), name="cube")
        q, v = world.q, world.v
        q, v = world.step(q, v)
    """

    _solver_name = "barrier"
    _body_word = "affine body"
    _core_dt, _core_set_dt = _core.BarrierWorldCore._bw_dt, _core.BarrierWorldCore._bw_set_dt
    _core_gravity, _core_set_gravity = _core.BarrierWorldCore._bw_gravity, _core.BarrierWorldCore._bw_set_gravity
    _core_options, _core_set_options = _core.BarrierWorldCore._bw_options, _core.BarrierWorldCore._bw_set_options

    def __init__(self, dt: float = 1e-2, gravity=(0.0, 0.0, -9.81), dhat: float = 1e-3,
                 newton_tolerance: float = 1e-2, max_newton_iterations: int = 200, friction: float = 0.0,
                 friction_velocity: float = 1e-3, gyroscopic: str = "implicit"):
        self.dt = dt
        self.gyroscopic = gyroscopic
        self.gravity = gravity
        self._bw_set_options(as_scalar(dhat, "dhat", minimum=0.0, strict=True),
                             as_scalar(newton_tolerance, "newton_tolerance", minimum=0.0, strict=True),
                             self._iterations(max_newton_iterations), as_scalar(friction, "friction", minimum=0.0),
                             as_scalar(friction_velocity, "friction_velocity", minimum=0.0, strict=True))
        self._names: list[str] = []
        self._init_skeletons()
        self._static: set[str] = set()
        self._body_parameters: dict = {}  # name -> {"density": ..., "stiffness": ...} of each affine body
        self._planes: list = []  # (normal, height) of the ground planes, for rd.viz
        self._q0 = np.zeros(0)
        self._v0 = np.zeros(0)
        self.time = 0.0

    @staticmethod
    def _iterations(n) -> int:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"max_newton_iterations must be an integer >= 1, got {n!r}")
        return int(n)

    # ------------------------------------------------------------------ settings
    @property
    def dhat(self) -> float:
        """The barrier's activation distance in m; settable."""
        return self._bw_options()[0]

    @dhat.setter
    def dhat(self, value):
        self._set_option(0, as_scalar(value, "dhat", minimum=0.0, strict=True))

    @property
    def newton_tolerance(self) -> float:
        """The Newton stopping tolerance, relative to the scene size and dt (see BarrierWorld); settable."""
        return self._bw_options()[1]

    @newton_tolerance.setter
    def newton_tolerance(self, value):
        self._set_option(1, as_scalar(value, "newton_tolerance", minimum=0.0, strict=True))

    @property
    def friction(self) -> float:
        """Coulomb's coefficient of every contact (0: frictionless); settable."""
        return self._bw_options()[3]

    @friction.setter
    def friction(self, value):
        self._set_option(3, as_scalar(value, "friction", minimum=0.0))

    @property
    def friction_velocity(self) -> float:
        """eps_v (m/s) of the smoothed friction; settable."""
        return self._bw_options()[4]

    @friction_velocity.setter
    def friction_velocity(self, value):
        self._set_option(4, as_scalar(value, "friction_velocity", minimum=0.0, strict=True))

    @property
    def gyroscopic(self) -> str:
        """How free and ball joints carrying a single body take the gyroscopic term: "implicit" or "explicit" (see
        BarrierWorld); settable."""
        return "implicit" if self._bw_gyroscopic() else "explicit"

    @gyroscopic.setter
    def gyroscopic(self, value):
        from rigidiff.world import check_gyroscopic

        check_gyroscopic(value)
        self._bw_set_gyroscopic(value == "implicit")

    @property
    def max_newton_iterations(self) -> int:
        """The cap on a step's Newton iterations; settable."""
        return self._bw_options()[2]

    @max_newton_iterations.setter
    def max_newton_iterations(self, value):
        self._set_option(2, self._iterations(value))

    # ------------------------------------------------------------------ building
    def add_affine_body(self, shape_or_mesh, density: float = 1000.0, stiffness: float = DEFAULT_STIFFNESS,
                        pose=None, velocity=None, name: str | None = None):
        """Add an affine body and return its Layout (where its 12 coordinates sit in q and v).

        Args:
            shape_or_mesh: a rigidiff shape (triangulated by its ``to_trimesh``), a ``trimesh.Trimesh`` or a
                (vertices (n, 3), faces (m, 3)) pair: a closed, consistently oriented surface wound
                counter-clockwise seen from outside. Body coordinates are the mesh's coordinates.
            density: kg/m^3 (> 0); the mass matrix comes from the mesh's exact volume integrals.
            stiffness: kappa of the orthogonality energy kappa V ||A A^T - I||_F^2 in Pa (> 0).
            pose: the initial rd.Transform of the body (A = its rotation, p = its translation); identity if None.
            velocity: the initial velocity: (3,) of the body origin, (6,) (linear, angular) in world axes, or
                (12,) dq/dt; zero if None.
            name: a new name; "body<i>" if None.

        ValueError for density or stiffness <= 0, an open, inconsistently wound or inverted mesh, a used
        name, or a body that intersects (or touches) another body or a ground plane at its initial pose
        (naming the pair): IPC cannot start from an intersecting state.
        """
        density = as_scalar(density, "density", minimum=0.0, strict=True)
        stiffness = as_scalar(stiffness, "stiffness", minimum=0.0, strict=True)
        return self._add_body(shape_or_mesh, density, stiffness, pose, velocity, name, static=False)

    def add_static_mesh(self, shape_or_mesh, pose=None, name: str | None = None):
        """Add static geometry (a Static participant: a ramp, a bowl, a table) and return its Layout (kind
        "static").

        The mesh is a barrier participant like an affine body's surface, but the steps keep it where it is: its
        12 coordinates sit in q (its pose, as for a body) with zero velocity, and no force moves them. Setting
        world.q there moves it between steps (its motion then takes no part in friction or CCD).

        Args:
            shape_or_mesh: a rigidiff shape, a ``trimesh.Trimesh`` or (vertices (n, 3), faces (m, 3)): any
                triangle surface, closed or not (a terrain, a sheet, a room's walls; the barrier's distances are
                unsigned: bodies touch an open sheet from either side). Faces without area (a repeated vertex or
                a sliver) are left out with a UserWarning. Only a closed, consistently wound surface has an
                inside, so only for such a mesh does the start-state check also refuse a body wholly inside it.
            pose: its rd.Transform; identity if None.
            name: a new name; "body<i>" if None.

        ValueError for a mesh with no face of non-zero area, a used name, or a mesh that touches or crosses a body
        (naming the pair). Static meshes may touch each other and the ground planes. In the
        step derivatives its coordinates are inputs (moving it pushes the bodies) but not unknowns.
        """
        return self._add_body(shape_or_mesh, 1.0, DEFAULT_STIFFNESS, pose, None, name, static=True)

    def _add_body(self, shape_or_mesh, density, stiffness, pose, velocity, name, static: bool):
        vertices, faces = _mesh_of(shape_or_mesh)
        name = f"body{len(self._names)}" if name is None else as_name(name, "affine body")
        if name in self._names or any(sk.name == name for sk in self._skeletons):
            raise ValueError(f"name {name!r} is already used")
        if pose is None:
            pose = Transform()
        if not isinstance(pose, Transform):
            raise TypeError(f"pose must be an rd.Transform, got {type(pose).__name__}")
        A, p = pose.rotation, pose.translation
        q_body = np.concatenate([p, A.ravel()])
        v_body = np.zeros(12) if velocity is None else _affine_velocity(velocity, A, p)
        if static:
            try:
                index, kept = self._bw_add_static_body(name, vertices, faces, density, stiffness)
            except ValueError as err:
                raise ValueError(f"static mesh {name!r}: {err}") from None
            _warn_faces_left_out(f"static mesh {name!r}", len(faces), kept)
            self._static.add(name)
        else:
            index = self._bw_add_body(name, vertices, faces, density, stiffness)
        q0 = np.concatenate([self._q0, q_body])
        try:
            self._bw_check_state(q0)
        except ValueError:
            self._bw_pop_body()
            self._static.discard(name)
            raise
        self._names.append(name)
        if not static:
            self._body_parameters[name] = {"density": density, "stiffness": stiffness}
        self._q0, self._v0 = q0, np.concatenate([self._v0, v_body])
        return self.layout(name)

    def add_ground(self, height: float = 0.0, normal=(0.0, 0.0, 1.0)) -> None:
        """Add a static ground plane {x : normal . x = height} (normal normalised); the side the normal points to
        is free. ValueError if a body already touches or crosses it."""
        height = as_scalar(height, "height")
        n = as_array(normal, (3,), "normal")
        if not np.linalg.norm(n) > 0.0:
            raise ValueError("normal must be non-zero")
        self._bw_add_plane(n, height)
        try:
            self._bw_check_state(self._q0)
        except ValueError:
            self._bw_pop_plane()
            raise
        self._planes.append((n / np.linalg.norm(n), height))

    def add_particles(self, *args, **kwargs):
        """Refused: particle sets in barrier worlds are not supported yet."""
        raise NotImplementedError(_UNSUPPORTED.format(what="particle sets") + "; use an lcp world (the default)")

    # ------------------------------------------------------------------ layout
    @property
    def nq(self) -> int:
        """Size of q: the skeletons' coordinates, then 12 per affine body or static mesh."""
        return self._bw_nq()

    @property
    def nv(self) -> int:
        """Size of v (and tau): the skeletons' velocities (one fewer than their coordinates per free or ball joint,
        whose q holds a quaternion), then 12 per affine body or static mesh."""
        return self._bw_nv()

    def layout(self, name):
        """The Layout of the skeleton (kind "skeleton"), body (kind "affine") or static mesh (kind "static")
        called name: for a body q[layout.q] = (p, a1, a2, a3) and v[layout.v] its rate."""
        from rigidiff.world import Layout

        skeleton = self._skeleton_layout(name)
        if skeleton is not None:
            return skeleton
        if name not in self._names:
            raise self._unknown(name)
        i = self._index(name)
        kind = "static" if name in self._static else "affine"
        at, at_v = self._nq_skeletons + 12 * i, self._nv_skeletons + 12 * i
        return Layout(name, kind, slice(at, at + 12), slice(at_v, at_v + 12))

    # ------------------------------------------------------------------ bodies
    def mass_matrix(self, name) -> np.ndarray:
        """The body's constant (12, 12) mass matrix int rho J^T J dV."""
        return self._bw_mass_matrix(self._index(name))

    def mass_properties(self, name) -> dict:
        """mass, volume, first moment int rho xbar (3,) and second moment int rho xbar xbar^T (3, 3) in body
        coordinates."""
        mass, volume, first, second = self._bw_mass_properties(self._index(name))
        return {"mass": mass, "volume": volume, "first_moment": first, "second_moment": second}

    def affine_map(self, q, name) -> tuple:
        """(A (3, 3), p (3,)) of the body at q."""
        qb = as_array(q, (self.nq,), "q")[self.layout(name).q]
        return qb[3:].reshape(3, 3).copy(), qb[:3].copy()

    def body_pose(self, q, name) -> np.ndarray:
        """(4, 4) world pose of the body: the rotation nearest to A (polar decomposition) and the translation p."""
        A, p = self.affine_map(q, name)
        T = np.eye(4)
        T[:3, :3] = nearest_rotation(A)
        T[:3, 3] = p
        return T

    def surface(self, q, name) -> tuple:
        """(vertices (n, 3) in world coordinates at q, faces (m, 3)) of the body's surface."""
        rest, faces = self._bw_rest_mesh(self._index(name))
        A, p = self.affine_map(q, name)
        return rest @ A.T + p, faces

    def surfaces(self, q) -> tuple:
        """(vertices (N, 3), faces (M, 3)) of every surface at q, stacked in state order (the skeletons' link
        surfaces, then the bodies'): the faces index the stacked vertices (for an independent check with another
        library, or drawing the whole scene)."""
        q = as_array(q, (self.nq,), "q")
        verts, faces, offset = [], [], 0
        meshes = [(V, F) for _, V, F in self._link_surfaces(q)] + [self.surface(q, name) for name in self._names]
        for V, F in meshes:
            verts.append(V)
            faces.append(F + offset)
            offset += len(V)
        if not verts:
            return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
        return np.vstack(verts), np.vstack(faces)

    def _viz_surfaces(self, q) -> list:
        """[(key, triangles (m, 3, 3))] of rigidiff.viz: each body's surface at q (static meshes share a key)."""
        out = [(self._articulated._frames[f][0].name, V[F]) for f, V, F in self._link_surfaces(q)]
        for name in self._names:
            V, F = self.surface(q, name)
            out.append(("static" if name in self._static else name, V[F]))
        return out

    def _viz_planes(self) -> list:
        """[(normal, a point)] of the ground planes, for rigidiff.viz."""
        return [(n, height * n) for n, height in self._planes]

    def check_state(self, q) -> None:
        """ValueError naming the pair if two surfaces (bodies, static meshes, other skeletons' links), or a surface
        and a ground plane, intersect or touch at q."""
        self._bw_check_state(self._affine_state(q, "q"))

    # ------------------------------------------------------------------ stepping
    def step(self, q, v, tau=None):
        """One implicit Euler step: (q', v') from (q, v) under generalised forces tau (nv, held over the step;
        zero if None). Every Newton iterate is intersection-free. ValueError for an intersecting (q, v) start
        (naming the bodies) or bad input; RuntimeError naming the residual if Newton does not converge, or naming
        the body if the step would stretch one far from a rotation or crush it below MIN_VOLUME_RATIO of its
        volume (forces or velocities too large for the time step)."""
        tau = np.zeros(self.nv) if tau is None else tau
        q_next, v_next = self._bw_step(self._affine_state(q, "q"), v, tau)
        strain, worst = self._largest_strain(q_next)
        if not strain <= MAX_STRAIN:
            raise RuntimeError(f"the barrier step stretched {worst!r} far from a rotation (||A A^T - I||_F = "
                               f"{strain:.3g} > {MAX_STRAIN}): tau or v is too large for the time step")
        if self._names:
            det = np.linalg.det(self._affine_maps(q_next))
            k = int(np.argmin(det))
            if not det[k] >= MIN_VOLUME_RATIO:
                raise RuntimeError(f"the barrier step crushed {self._names[k]!r} to {det[k]:.3g} of its volume (det A "
                                   f"< {MIN_VOLUME_RATIO}): tau or v is too large for the time step")
        return q_next, v_next

    def _affine_maps(self, q: np.ndarray) -> np.ndarray:
        """The bodies' affine maps A at q, (nbodies, 3, 3)."""
        return q[self._nq_skeletons:].reshape(-1, 12)[:, 3:].reshape(-1, 3, 3)

    def _largest_strain(self, q: np.ndarray) -> tuple:
        """(largest ||A A^T - I||_F over the bodies at q, that body's name); (0, None) without bodies."""
        if not self._names:
            return 0.0, None
        A = self._affine_maps(q)
        strain = np.linalg.norm(A @ A.transpose(0, 2, 1) - np.eye(3), axis=(1, 2))
        worst = int(np.argmax(np.where(np.isnan(strain), np.inf, strain)))
        return float(strain[worst]), self._names[worst]

    def _affine_state(self, q, name: str) -> np.ndarray:
        """q as a float64 (nq,) array; ValueError naming ``name`` and the body if a body's A is far from a
        rotation (||A A^T - I||_F > MAX_STRAIN): the stiff orthogonality energy keeps real states within a small
        strain of one, and a state far outside (A entries of 1e20) makes every later quantity meaningless; or
        if A is a reflection (det A <= 0), which no step can undo."""
        q = as_array(q, (self.nq,), name)
        strain, worst = self._largest_strain(q)
        if not strain <= MAX_STRAIN:
            raise ValueError(f"{name}: the affine map A of {worst!r} is far from a rotation (||A A^T - I||_F = "
                             f"{strain:.3g} > {MAX_STRAIN}); q holds each body's translation and the rows of A, a "
                             f"rotation up to a small strain")
        if self._names:  # a reflection keeps A A^T = I but turns the body's surface inside out
            det = np.linalg.det(self._affine_maps(q))
            if np.any(det <= 0.0):
                k = int(np.argmin(det))
                raise ValueError(f"{name}: the affine map A of {self._names[k]!r} is a reflection (det A = "
                                 f"{det[k]:.3g}): it turns the body inside out; A must be a rotation up to a "
                                 f"small strain (det A > 0)")
        return q

    @property
    def last_step(self) -> dict:
        """What the last step did: newton_iterations, kappa (barrier stiffness), min_distance (smallest surface
        distance within dhat at the end, inf if none), residual (last Newton move / (l dt)), active_pairs,
        candidates (primitive pairs of the last broad phase), symbolic_factorisations (sparsity patterns
        analysed: the pattern is kept while the same bodies touch), line_search_evaluations, and times: the
        step's wall-clock seconds in the broad phase ("candidates"), the barrier and friction terms
        ("barrier"), the sparse matrix ("assembly"), its LDL^T factorisation and solve ("factorisation"), the
        CCD ("ccd") and in all ("total")."""
        s = self._bw_stats()
        times = dict(zip(("candidates", "barrier", "assembly", "factorisation", "ccd", "total"), map(float, s[8:14])))
        return {"newton_iterations": int(s[0]), "kappa": float(s[1]), "min_distance": float(s[2]),
                "residual": float(s[3]), "active_pairs": int(s[4]), "candidates": int(s[5]),
                "symbolic_factorisations": int(s[6]), "line_search_evaluations": int(s[7]), "times": times}

    def advance(self, tau=None, n_steps: int = 1) -> None:
        """Step the stored state (world.q, world.v) n_steps times under tau."""
        for _ in range(int(n_steps)):
            self._q0, self._v0 = self.step(self._q0, self._v0, tau)
            self.time += self.dt
