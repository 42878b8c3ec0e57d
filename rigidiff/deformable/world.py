"""Projective Dynamics worlds: deformable solids (``rd.World(dt, solver="projective")``).

Each deformable body is a tetrahedral or hexahedral mesh whose vertices (3 coordinates each) make up q, in
insertion order; v = dq/dt. A step is implicit Euler: the incremental potential is minimised with the
constant, prefactorised Projective Dynamics matrix as preconditioner (Newton-CG by default, or DiffPD's
L-BFGS); its adjoint (step_vjp) reuses the factors. docs/deformable.md describes the energies, tolerances and gradients.
"""

from __future__ import annotations

import warnings

import numpy as np

from rigidiff import _core
from rigidiff._body_world import BodyWorld
from rigidiff._validate import as_array, as_name, as_scalar, as_threads
from rigidiff.deformable.material import ProjectiveMaterial
from rigidiff.deformable.mesh import HexMesh, TetMesh, _sizes
from rigidiff.deformable.obstacles import ProjectiveObstacles
from rigidiff.deformable.skeleton_parameters import ProjectiveSkeletonParameters
from rigidiff.deformable.skeletons import ProjectiveSkeletons
from rigidiff.errors import UnknownNameError
from rigidiff.transform import Transform

__all__ = ["ProjectiveWorld"]


class ProjectiveWorld(ProjectiveSkeletons, ProjectiveSkeletonParameters, ProjectiveObstacles, BodyWorld,
                      _core.ProjectiveWorldCore):
    """A world of deformable solids under Projective Dynamics, with ground planes, balls and boxes, and articulated
    skeletons whose links touch the soft bodies two-way (add_skeleton).

    Made by ``rd.World(dt, solver="projective")``. No particles or affine bodies (those calls raise
    NotImplementedError).

    Args:
        dt: time step in seconds (> 0).
        gravity: (3,) gravity acceleration in m/s^2 (z is up).
        tolerance: a step stops when the gradient of the incremental potential g (the net force on the free
            vertices, scaled by dt^2) is at most tolerance times the scale of the forces at the start,
            |M (q - y)| / dt^2 + |grad E(q)| (inertial and internal forces, which cancel at an equilibrium while
            their scale does not); the adjoint of step_vjp when |H z - b| <= tolerance |b|. 1e-8 by default; 1e-12 for derivatives checked against
            finite differences.
        max_iterations: iterations (Newton or L-BFGS) of a step, conjugate-gradient iterations of an adjoint; a
            solve needing more raises RuntimeError naming the residual.
        contact_stiffness: k in N/m of the ground penalty k/2 min(0, n . x - height)^2 on each surface vertex (and
            of the balls', boxes' and links' penalties; the complementarity contact's planes, balls and boxes do
            not use it).
        history: the L-BFGS history length.
        method: "newton" (the default): Newton's method, conjugate gradients on the true Hessian (its element
            blocks built once per iteration) preconditioned by the prefactorised PD matrix, with an Armijo line
            search; "pd": DiffPD's L-BFGS with the PD matrix as its initial inverse Hessian, finished by Newton
            if it stalls (fewer Hessians, many more iterations: 2 to 4 times slower on DiffPD's cantilever and
            rolling sphere); "newton-cholesky": Newton with the assembled Hessian factorised at every
            iteration (sparse LDL^T) and a direct adjoint, a baseline.
        friction: Coulomb's coefficient mu between surface vertices and ground planes, balls, boxes and the
            skeletons' links (>= 0; 0, the default, is frictionless): IPC's lagged smoothed friction, its normal
            forces (the penalty's, k times the depth) and tangent planes frozen at the start of each step, so a
            vertex that only reaches an obstacle during a step rubs on it from the next step on. The slip is
            measured against the obstacle's surface, which a ball's or box's velocity (set_obstacle_pose) and
            a link's motion carry along.
        friction_velocity: eps_v in m/s (> 0): slip slower than this is smoothly static.
        contact_model: how the ground planes, balls and boxes hold the surface vertices: "penalty" (the
            default): the implicit penalty contact_stiffness/2 min(0, d)^2 of each vertex inside one;
            "complementarity": DiffPD's active set, a vertex touching a plane is held on it, one touching a ball
            or box on its tangent plane at the point nearest where the vertex slides to from its start (carried by
            the obstacle's velocity over the step), so that it ends on or outside the obstacle (no penetration beyond 1 nm),
            free along the plane, and leaves when the plane would have to pull it; with friction, its normal
            force is the push that holds it at the step's start (docs/deformable.md, "Complementarity
            contact"). Under it, a vertex touching a skeleton's link is held on the link's tangent plane, which
            moves with the joints, and pushes back on them (docs/deformable.md, "Complementarity contact on
            links"); the links keep the penalty with the obstacles and each other.
        on_failure: "raise" (the default): a step that does not converge within max_iterations raises
            RuntimeError naming the residual; "warn": it returns its last iterate (finite, never NaN) with a
            RuntimeWarning naming the residual, and last_step["converged"] is False.
        threads: threads of the per-element work (the local projections, the energy, the Hessian's element
            blocks and its products); None, the default, uses every core (or the RIGIDIFF_THREADS environment
            variable when set). Results are the same bit for bit whatever the count.

    Example::

        world = rd.World(dt=1e-2, solver="projective")
        world.add_ground()
        mesh = rd.HexMesh.box((0.1, 0.1, 0.1), (2, 2, 2), origin=(0, 0, 0.05))
        world.add_deformable(mesh, rd.ProjectiveMaterial(1e5, 0.3, 1000.0), name="block")
        q, v = world.step(world.q, world.v)
    """

    _solver_name = "projective"
    _body_word = "deformable body"
    _core_dt, _core_set_dt = _core.ProjectiveWorldCore._pw_dt, _core.ProjectiveWorldCore._pw_set_dt
    _core_gravity = _core.ProjectiveWorldCore._pw_gravity
    _core_set_gravity = _core.ProjectiveWorldCore._pw_set_gravity
    _core_options = _core.ProjectiveWorldCore._pw_options
    _core_set_options = _core.ProjectiveWorldCore._pw_set_options

    def __init__(self, dt: float = 1e-2, gravity=(0.0, 0.0, -9.81), tolerance: float = 1e-8,
                 max_iterations: int = 1000, contact_stiffness: float = 1e4, history: int = 10, method: str = "newton",
                 friction: float = 0.0, friction_velocity: float = 1e-3, threads: int | None = None,
                 on_failure: str = "raise", contact_model: str = "penalty"):
        self.dt = dt
        self._pw_set_threads(as_threads(threads))
        self.on_failure = on_failure
        self.gravity = gravity
        self._pw_set_options(as_scalar(tolerance, "tolerance", minimum=0.0, strict=True),
                             _count(max_iterations, "max_iterations"), _count(history, "history"),
                             as_scalar(contact_stiffness, "contact_stiffness", minimum=0.0, strict=True),
                             _method(method))
        self._pw_set_friction(as_scalar(friction, "friction", minimum=0.0),
                              as_scalar(friction_velocity, "friction_velocity", minimum=0.0, strict=True))
        self._names: list[str] = []
        self._meshes: list = []
        self._materials: list[ProjectiveMaterial] = []
        self._q0 = np.zeros(0)
        self._v0 = np.zeros(0)
        self._init_obstacles()
        self._init_skeletons()
        self.contact_model = contact_model
        self._muscles: list[str] = []
        self.time = 0.0

    # ------------------------------------------------------------------ settings
    @property
    def tolerance(self) -> float:
        """The relative tolerance of steps and adjoints (see ProjectiveWorld); settable."""
        return self._pw_options()[0]

    @tolerance.setter
    def tolerance(self, value):
        self._set_option(0, as_scalar(value, "tolerance", minimum=0.0, strict=True))

    @property
    def max_iterations(self) -> int:
        """The cap on L-BFGS iterations of a step or an adjoint; settable."""
        return self._pw_options()[1]

    @max_iterations.setter
    def max_iterations(self, value):
        self._set_option(1, _count(value, "max_iterations"))

    @property
    def on_failure(self) -> str:
        """What a step that does not converge does: "raise" or "warn" (see ProjectiveWorld); settable."""
        return "raise" if self._pw_raise_on_failure() else "warn"

    @on_failure.setter
    def on_failure(self, value):
        if value not in ("raise", "warn"):
            raise ValueError(f'on_failure must be "raise" or "warn", got {value!r}')
        self._pw_set_raise_on_failure(value == "raise")

    def _warn_if_unconverged(self) -> None:
        s = self._pw_stats()
        if not s[6]:
            warnings.warn(f"the projective step's complementarity contact did not settle: its active set still "
                          f"changed after {int(s[5])} active-set iterations; the last solution is returned",
                          RuntimeWarning, stacklevel=3)
        elif not s[4]:
            warnings.warn(f"the projective step did not converge: |grad g| is {s[1]:.3e} of the start's force scale "
                          f"after {int(s[0])} iterations (tolerance {self.tolerance:.3e}); its last iterate is "
                          f"returned", RuntimeWarning, stacklevel=3)

    @property
    def threads(self) -> int:
        """Threads of the per-element work of steps and adjoints; settable (None: every core, or RIGIDIFF_THREADS)."""
        return self._pw_threads()

    @threads.setter
    def threads(self, value):
        self._pw_set_threads(as_threads(value))

    def solver_options(self, method: str | None = None, tolerance: float | None = None,
                       max_iterations: int | None = None, history: int | None = None) -> dict:
        """Set the given solver options (see ProjectiveWorld) and return them all: method, tolerance,
        max_iterations and history."""
        current = list(self._pw_options())
        if tolerance is not None:
            current[0] = as_scalar(tolerance, "tolerance", minimum=0.0, strict=True)
        if max_iterations is not None:
            current[1] = _count(max_iterations, "max_iterations")
        if history is not None:
            current[2] = _count(history, "history")
        if method is not None:
            current[4] = _method(method)
        self._pw_set_options(*current)
        return {"method": _METHODS[current[4]], "tolerance": current[0], "max_iterations": current[1],
                "history": current[2]}

    @property
    def contact_stiffness(self) -> float:
        """The contact penalty's stiffness in N/m per surface vertex (ground planes, balls and boxes under the
        "penalty" contact model, and the links' penalties); settable."""
        return self._pw_options()[3]

    @contact_stiffness.setter
    def contact_stiffness(self, value):
        self._set_option(3, as_scalar(value, "contact_stiffness", minimum=0.0, strict=True))

    @property
    def friction(self) -> float:
        """Coulomb's coefficient between surface vertices and the planes, balls, boxes and links (0: frictionless);
        settable."""
        return self._pw_friction()[0]

    @friction.setter
    def friction(self, value):
        self._pw_set_friction(as_scalar(value, "friction", minimum=0.0), self._pw_friction()[1])

    @property
    def contact_model(self) -> str:
        """How the ground planes, balls and boxes hold the surface vertices: "penalty" or "complementarity" (see
        ProjectiveWorld);
        settable (ValueError naming the choices for another name)."""
        return _CONTACT_MODELS[self._pw_contact_model()]

    @contact_model.setter
    def contact_model(self, value):
        if value not in _CONTACT_MODELS:
            raise ValueError(f"contact_model must be one of {', '.join(map(repr, _CONTACT_MODELS))}, got {value!r}")
        self._pw_set_contact_model(_CONTACT_MODELS.index(value))

    @property
    def friction_velocity(self) -> float:
        """eps_v (m/s) of the smoothed friction; settable."""
        return self._pw_friction()[1]

    @friction_velocity.setter
    def friction_velocity(self, value):
        self._pw_set_friction(self._pw_friction()[0],
                              as_scalar(value, "friction_velocity", minimum=0.0, strict=True))

    # ------------------------------------------------------------------ building
    def add_deformable(self, mesh, material: ProjectiveMaterial, name: str | None = None, fixed=None, pose=None,
                       velocity=None):
        """Add a deformable body and return its Layout (kind "deformable": q[layout.q].reshape(-1, 3) holds its
        vertex positions).

        Args:
            mesh: an rd.TetMesh or rd.HexMesh; its vertices are the body's rest shape (and, moved by pose, its
                initial positions).
            material: an rd.ProjectiveMaterial.
            name: a new name; "deformable<i>" if None.
            fixed: indices of mesh vertices held where they start each step (attachment); none if None.
            pose: an rd.Transform placing the mesh (the rest shape is unchanged); identity if None. ValueError
                if it is so far from the origin that round-off would deform the mesh.
            velocity: (3,) initial velocity of every vertex; zero if None.
        """
        if not isinstance(mesh, (TetMesh, HexMesh)):
            raise TypeError(f"mesh must be an rd.TetMesh or rd.HexMesh, got {type(mesh).__name__}")
        if not isinstance(material, ProjectiveMaterial):
            raise TypeError(f"material must be an rd.ProjectiveMaterial, got {type(material).__name__}")
        name = f"deformable{len(self._names)}" if name is None else as_name(name, "deformable body name")
        if name in self._names:
            raise ValueError(f"name {name!r} is already used")
        if pose is None:
            pose = Transform()
        if not isinstance(pose, Transform):
            raise TypeError(f"pose must be an rd.Transform, got {type(pose).__name__}")
        vel = np.zeros(3) if velocity is None else as_array(velocity, (3,), "velocity")
        fixed_idx = self._fixed_indices(fixed, len(mesh.vertices))
        start = _placed_vertices(mesh, pose, name)
        body = self._pw_add_body(name, mesh.vertices, mesh.elements, material.youngs_modulus, material.poisson_ratio,
                                 material.density, material.energy_mask)
        if len(fixed_idx):
            self._pw_set_fixed(body, fixed_idx)
        self._names.append(name)
        self._meshes.append(mesh)
        self._materials.append(material)
        nx = len(self._q0) - self._nq_skeletons  # the vertices come before the skeletons' coordinates
        nxv = len(self._v0) - self._nv_skeletons
        self._q0 = np.concatenate([self._q0[:nx], start.ravel(), self._q0[nx:]])
        self._v0 = np.concatenate([self._v0[:nxv], np.tile(vel, len(mesh.vertices)), self._v0[nxv:]])
        return self.layout(name)

    @staticmethod
    def _fixed_indices(fixed, n: int) -> np.ndarray:
        if fixed is None:
            return np.zeros(0, dtype=np.int64)
        idx = np.asarray(fixed)
        if idx.size and (idx.dtype.kind not in "iu" or idx.ndim != 1):
            raise ValueError(f"fixed must be a 1-D array of vertex indices, got {idx.dtype} {idx.shape}")
        idx = idx.astype(np.int64).ravel()
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ValueError(f"fixed: vertex index {int(idx[(idx < 0) | (idx >= n)][0])} is not among the mesh's "
                             f"{n} vertices")
        return idx

    def set_fixed(self, name: str, fixed) -> None:
        """Replace the fixed (attached) vertices of a body by the mesh vertex indices ``fixed`` (None: none)."""
        i = self._index(name)
        self._pw_set_fixed(i, self._fixed_indices(fixed, len(self._meshes[i].vertices)))

    def set_material(self, name: str, material: ProjectiveMaterial) -> None:
        """Change the Young's modulus, Poisson's ratio and density of a body (its energies stay those it was added
        with: ValueError if they differ)."""
        i = self._index(name)
        if not isinstance(material, ProjectiveMaterial):
            raise TypeError(f"material must be an rd.ProjectiveMaterial, got {type(material).__name__}")
        old = self._materials[i]
        if material.energies != old.energies:
            raise ValueError(f"set_material keeps a body's energies: kind stays {old.energies}")
        self._pw_set_material(i, material.youngs_modulus, material.poisson_ratio)
        self._pw_set_density(i, material.density)
        self._materials[i] = material

    def material(self, name: str) -> ProjectiveMaterial:
        """The body's material."""
        return self._materials[self._index(name)]

    def add_muscle(self, body: str, elements, fiber, stiffness: float, name: str | None = None) -> str:
        """Make elements of a deformable body a muscle, and return its name.

        Each quadrature sample of its elements adds the energy ``stiffness * V / 2 * (|F m| - a)^2`` (DiffPD's
        actuation): ``m`` is the unit fibre direction in rest coordinates, ``a`` the muscle's activation, the
        fibre's target stretch (1: rest length, the default; below 1 the muscle contracts, above it extends).
        Activations are inputs of each step (``step(..., activation=)``, one per muscle in the order they were
        added), with gradients (``step_vjp(...).activation``); the stiffness is a parameter
        (``"muscle_stiffness:<name>"``).

        Args:
            body: the deformable body's name.
            elements: indices of the body's mesh elements (each in at most one muscle).
            fiber: (3,) fibre direction for all of them, or (len(elements), 3) one per element; normalised.
            stiffness: in Pa (> 0), e.g. a fraction of the Young's modulus.
            name: a new muscle name; "<body>/muscle<i>" if None.
        """
        b = self._index(body)
        elements = np.asarray(elements)
        if elements.dtype.kind not in "iu" or elements.ndim != 1:
            raise ValueError(f"elements must be a 1-D array of element indices, got {elements.dtype} {elements.shape}")
        fiber = np.asarray(fiber, dtype=np.float64)
        fiber = fiber.reshape(1, 3) if fiber.shape == (3,) else fiber
        if fiber.ndim != 2 or fiber.shape[1] != 3 or len(fiber) not in (1, len(elements)):
            raise ValueError(f"fiber must have shape (3,) or ({len(elements)}, 3), got {np.shape(fiber)}")
        name = f"{body}/muscle{len(self._muscles)}" if name is None else as_name(name, "muscle name")
        if name in self._muscles:
            raise ValueError(f"muscle name {name!r} is already used")
        self._pw_add_muscle(name, b, elements, fiber, as_scalar(stiffness, "stiffness", minimum=0.0, strict=True))
        self._muscles.append(name)
        return name

    @property
    def muscle_names(self) -> tuple:
        """The muscles' names, in the order of the activation vector."""
        return tuple(self._muscles)

    def muscle_stiffness(self, name: str) -> float:
        """A muscle's stiffness in Pa."""
        return self._pw_muscle_stiffness(self._muscle_index(name))

    def set_muscle_stiffness(self, name: str, stiffness: float) -> None:
        """Set a muscle's stiffness in Pa (> 0)."""
        self._pw_set_muscle_stiffness(self._muscle_index(name),
                                      as_scalar(stiffness, "stiffness", minimum=0.0, strict=True))

    def _muscle_index(self, name: str) -> int:
        if name not in self._muscles:
            raise UnknownNameError(f"no muscle {name!r}; the muscles are {self._muscles}")
        return self._muscles.index(name)

    def _set_activation(self, activation) -> None:
        m = len(self._muscles)
        a = np.ones(m) if activation is None else as_array(activation, (m,), "activation")
        self._pw_set_activation(a)

    def add_particles(self, *args, **kwargs):
        """Refused: particle sets need an lcp world (the default)."""
        raise NotImplementedError("projective worlds do not support particle sets; use an lcp world (the default)")

    def add_affine_body(self, *args, **kwargs):
        """Refused: affine bodies need a barrier world, rd.World(dt, solver="barrier")."""
        raise NotImplementedError('affine bodies need a barrier world: rd.World(dt, solver="barrier")')

    # ------------------------------------------------------------------ layout
    @property
    def nq(self) -> int:
        """Size of q: 3 per vertex, then the skeletons' joint coordinates (a free or ball joint's quaternion makes
        nq > nv)."""
        return self._pw_nq()

    @property
    def nv(self) -> int:
        """Size of v (and of the forces f): 3 per vertex, then the skeletons' joint velocities."""
        return self._pw_nv()

    def layout(self, name):
        """The Layout of the body (kind "deformable") or skeleton (kind "skeleton") called name."""
        from rigidiff.world import Layout

        skeleton = self._skeleton_layout(name)
        if skeleton is not None:
            return skeleton
        if name not in self._names:
            raise self._unknown_skeleton_or_body(name)
        first, count = self._pw_body_range(self._index(name))
        s = slice(3 * first, 3 * (first + count))
        return Layout(name, "deformable", s, s)

    def mesh(self, name):
        """The body's TetMesh or HexMesh (its rest shape)."""
        return self._meshes[self._index(name)]

    def positions(self, q, name) -> np.ndarray:
        """(k, 3) positions of the body's vertices in q."""
        return as_array(q, (self.nq,), "q")[self.layout(name).q].reshape(-1, 3).copy()

    def surface(self, q, name) -> tuple:
        """(vertices (k, 3) at q, triangles (m, 3)) of the body's boundary, wound counter-clockwise seen from
        outside (e.g. trimesh.Trimesh(*world.surface(q, name)) to draw or export it)."""
        return self.positions(q, name), self.mesh(name).boundary_faces()

    def volume(self, q, name) -> float:
        """The body's volume at q."""
        return self.mesh(name).volume(self.positions(q, name))

    def masses(self, name) -> np.ndarray:
        """(k,) lumped vertex masses of the body: the exact integrals of density times each shape function."""
        first, count = self._pw_body_range(self._index(name))
        return self._pw_masses()[first:first + count]

    def surface_vertices(self, name) -> np.ndarray:
        """Indices of the body's surface vertices (those on a face of a single element): the ones that touch
        ground planes."""
        first, count = self._pw_body_range(self._index(name))
        return np.flatnonzero(self._pw_masks()[0][first:first + count])

    def fixed_vertices(self, name) -> np.ndarray:
        """Indices of the body's fixed (attached) vertices."""
        first, count = self._pw_body_range(self._index(name))
        return np.flatnonzero(self._pw_masks()[1][first:first + count])

    # ------------------------------------------------------------------ drawing (rigidiff.viz)
    def _viz_surfaces(self, q) -> list:
        """[(key, triangles (m, 3, 3) in world coordinates)] of what rigidiff.viz draws at q beside rigid bodies:
        each deformable body's boundary (key: its name) and each ball and box (key: "obstacles")."""
        out = []
        for name in self._names:
            x, faces = self.surface(q, name)
            out.append((name, x[faces]))
        return out + self._viz_obstacle_surfaces() + self._viz_link_surfaces(q)

    # ------------------------------------------------------------------ stepping
    def _forces(self, f) -> np.ndarray:
        return np.zeros(self.nv) if f is None else as_array(f, (self.nv,), "f")

    def step(self, q, v, f=None, activation=None):
        """One implicit Euler step: (q', v') from (q, v) under external vertex forces f (nv, in N, held over the
        step; zero if None; its entries at a skeleton's layout(name).v are the skeleton's joint forces tau, in N
        or N m, clipped to the effort limits) and the muscles' activations (one per muscle, see add_muscle; 1 if
        None). Fixed vertices stay at q. RuntimeError naming the residual if the solve does not converge within
        max_iterations."""
        self._set_activation(activation)
        out = self._pw_step(q, v, self._forces(f))
        self._warn_if_unconverged()
        return out

    def _parameter_names(self) -> tuple:
        return self._own_parameter_names() + self._obstacle_parameter_names() + self._skeleton_parameter_names()

    def _own_parameter_names(self) -> tuple:
        """The materials', contacts' and muscles' parameter names (those parameters() lists before the skeletons')."""
        return (tuple(f"youngs_modulus:{n}" for n in self._names) + tuple(f"poisson_ratio:{n}" for n in self._names)
                + tuple(f"density:{n}" for n in self._names) + ("contact_stiffness", "friction")
                + tuple(f"muscle_stiffness:{m}" for m in self._muscles))

    def parameters(self):
        """The world's physical parameters as one named vector (rigidiff.Parameters, with bounds): each body's
        "youngs_modulus:<body>", "poisson_ratio:<body>", "density:<body>", then "contact_stiffness", "friction",
        "muscle_stiffness:<muscle>", then the skeletons' own, named as the lcp world names them (each link's
        "<body>/mass", "<body>/com_x", ..., "<body>/inertia_xx", ... about its centre of mass, each joint's
        "<joint>/damping", "<joint>/stiffness", "<joint>/armature") and "joint_limit_stiffness". step_vjp and
        rollout_backward differentiate all of them, and the balls' and boxes' poses besides (set by
        set_obstacle_pose, not listed here)."""
        from rigidiff.parameters import Parameters

        values, lower, upper = [], [], []
        for m in self._materials:
            values.append(m.youngs_modulus), lower.append(0.0), upper.append(np.inf)
        for m in self._materials:
            values.append(m.poisson_ratio), lower.append(0.0), upper.append(0.5)
        for m in self._materials:
            values.append(m.density), lower.append(0.0), upper.append(np.inf)
        values += [self.contact_stiffness, self.friction]
        lower += [0.0, 0.0]
        upper += [np.inf, np.inf]
        for m in self._muscles:
            values.append(self.muscle_stiffness(m)), lower.append(0.0), upper.append(np.inf)
        sv, sl, su = self._skeleton_parameter_values()
        arrs = [np.concatenate([np.array(a, dtype=float), b]) for a, b in ((values, sv), (lower, sl), (upper, su))]
        for a in arrs:
            a.flags.writeable = False
        return Parameters(self._own_parameter_names() + self._skeleton_parameter_names(), *arrs)

    def set_parameters(self, values) -> None:
        """Set physical parameters: a full vector ordered as ``parameters().names``, or a {name: value} dict of
        some of them. Materials change as by set_material, the skeletons' parameters as by the lcp world's
        set_parameters (written into the skeletons' bodies and joints, then recompiled); the state is kept.
        UnknownNameError for an unknown name, ValueError naming the parameter for a value out of its range (a
        negative mass, an inertia that is not positive semi-definite, a Poisson's ratio of 0.5 or more, ...)."""
        from rigidiff.parameters import parameter_updates

        updates = parameter_updates(values, self.parameters().names)
        materials = {}
        skeleton = {}
        for name, value in updates.items():
            kind, _, owner = name.partition(":")
            if kind in ("youngs_modulus", "poisson_ratio", "density") and owner in self._names:
                materials.setdefault(owner, {})[kind] = value
            elif kind == "muscle_stiffness" and owner in self._muscles:
                self.set_muscle_stiffness(owner, value)
            elif name in ("contact_stiffness", "friction"):
                setattr(self, name, value)
            else:
                skeleton[name] = value
        for owner, changes in materials.items():
            old = self.material(owner)
            fields = {"youngs_modulus": old.youngs_modulus, "poisson_ratio": old.poisson_ratio,
                      "density": old.density, **changes}
            self.set_material(owner, ProjectiveMaterial(**fields, kind=old.energies))
        if skeleton:
            self._set_skeleton_parameters(skeleton)

    def step_vjp(self, q, v, f, dL_dq_next, dL_dv_next, activation=None):
        """Gradients of a loss L(q', v') of one step with respect to q, v, f, the activations and the parameters
        (parameter_names: "youngs_modulus:<body>" for each body, then "poisson_ratio:<body>", "density:<body>",
        then "contact_stiffness" and "friction" (the penalty's k and Coulomb's mu), "muscle_stiffness:<muscle>",
        then each ball's and box's pose, "pose:<name>:x", ..., see add_box, then the skeletons' own parameters
        and "joint_limit_stiffness", see parameters()) from the
        cotangents of q' and v' (nv each: with free or ball joints q's cotangents and perturbations are in the
        tangent, q (+) e, as the lcp and barrier worlds take them): the adjoint of the step, solved with the
        step's factors (docs/deformable.md). Returns Gradients (q, v, tau = f (the joint forces' cotangents at the
        skeletons' slices), parameters, parameter_names, q_next,
        v_next, activation)."""
        from rigidiff.jacobians import Gradients

        self._set_activation(activation)
        qn, vn, gq, gv, gf, gE, gnu = self._pw_step_vjp(q, v, self._forces(f), dL_dq_next, dL_dv_next)
        self._warn_if_unconverged()
        ga, gk = self._pw_muscle_gradients()
        parameters = np.concatenate([gE, gnu, self._pw_contact_and_density_gradients(), gk, self._obstacle_parameters(),
                                     self._skeleton_parameters()])
        return Gradients(gq, gv, gf, parameters, self._parameter_names(), qn, vn, ga)

    def step_jacobians(self, q, v, f=None, activation=None):
        """The step and its dense Jacobians (each (nv, nv)), one adjoint per row: for small meshes only.
        Returns a StepJacobians (q_next, v_next, dq_dq, dq_dv, dq_dtau, dv_dq, dv_dv, dv_dtau), tau being f."""
        from rigidiff.jacobians import StepJacobians

        f = self._forces(f)
        self._set_activation(activation)
        n = self.nv
        rows = np.zeros((2 * n, 3, n))
        zero = np.zeros(n)
        qn = vn = None
        for i in range(2 * n):
            e = np.zeros(n)
            e[i % n] = 1.0
            qn, vn, gq, gv, gf, _, _ = self._pw_step_vjp(q, v, f, e if i < n else zero, zero if i < n else e)
            rows[i] = gq, gv, gf
        return StepJacobians(qn, vn, rows[:n, 0], rows[:n, 1], rows[:n, 2], rows[n:, 0], rows[n:, 1], rows[n:, 2])

    def energy(self, q, activation=None):
        """(E, dE/dx): the elastic, muscle and contact-penalty energy (the planes', balls' and boxes' only under
        the "penalty" contact model) of the deformable bodies at q (under the
        activations, 1 if None) and its gradient with respect to the vertices (3 per vertex; a skeleton's
        coordinates in q are not read)."""
        self._set_activation(activation)
        E, grad = self._pw_energy(as_array(q, (self.nq,), "q")[:self._nq_vertices])
        if not (np.isfinite(E) and np.isfinite(grad).all()):
            raise ValueError(f"q: the energy or its gradient overflows at this state (E = {E}): its positions are "
                             f"too far apart to be a deformed rest shape")
        return E, grad

    @property
    def last_step(self) -> dict:
        """What the last step did: iterations (Newton or L-BFGS), converged, residual (final |grad g| relative to force_scale),
        contacts (pairs of a surface vertex and a plane, ball, box or link shape it is inside or, with the
        complementarity contact, held on, and the links' probes inside a plane, ball, box or link and their edges'
        crossings: docs/deformable.md, "Robots"), force_scale (see ProjectiveWorld's tolerance),
        active_set_iterations (the complementarity's changes of its active set, 0 for the penalty),
        link_contact_energy (the links' contact penalty k/2 d^2 and lagged friction energy at the step's solution,
        on the obstacles and on each other)."""
        s = self._pw_stats()
        return {"iterations": int(s[0]), "residual": float(s[1]), "contacts": int(s[2]),
                "force_scale": float(s[3]), "converged": bool(s[4]), "active_set_iterations": int(s[5]),
                "link_contact_energy": float(s[7])}

    def _activations(self, activations, T: int) -> np.ndarray:
        m = len(self._muscles)
        return np.ones((T, m)) if activations is None else as_array(activations, (T, m), "activations")

    def rollout(self, q0, v0, forces, activations=None):
        """T steps from (q0, v0) under the vertex forces forces (T, nv) and the muscles' activations
        (T, muscles; 1 if None): Q (T+1, nq) and V (T+1, nv)."""
        forces = as_array(forces, (-1, self.nv), "forces")
        activations = self._activations(activations, len(forces))
        Q, V = np.empty((len(forces) + 1, self.nq)), np.empty((len(forces) + 1, self.nv))
        Q[0], V[0] = as_array(q0, (self.nq,), "q0"), as_array(v0, (self.nv,), "v0")
        for t, f in enumerate(forces):
            try:
                Q[t + 1], V[t + 1] = self.step(Q[t], V[t], f, activations[t])
            except ValueError as exc:  # the start state is the caller's q0, v0; later ones come from the steps
                raise ValueError(f"rollout step {t}{' (from q0, v0, forces[0])' if t == 0 else f' (forces[{t}])'}: "
                                 f"{exc}") from None
        return Q, V

    def rollout_backward(self, Q, V, forces, dL_dQ, dL_dV, activations=None):
        """Gradients of a loss L(Q, V) of a rollout (Q, V from rollout(q0, v0, forces, activations)) from its
        cotangents dL_dQ (T+1, nv: in the tangent, as step_vjp's, which is q's own layout unless a skeleton has a
        free or ball joint) and dL_dV (T+1, nv) (zero rows for states the loss does not read): step_vjp
        chained backwards, each step solved again from its stored start, beginning at the recorded next state
        (which the solve accepts at once where it meets the tolerance). Returns Gradients with q and v of the
        initial state, tau (T, nv) of the forces, activation (T, muscles), and the parameters summed over the
        steps (parameter_names as step_vjp's)."""
        from rigidiff.jacobians import Gradients

        T = len(forces)
        forces = as_array(forces, (T, self.nv), "forces")
        activations = self._activations(activations, T)
        Q, V = as_array(Q, (T + 1, self.nq), "Q"), as_array(V, (T + 1, self.nv), "V")
        dL_dQ, dL_dV = as_array(dL_dQ, (T + 1, self.nv), "dL_dQ"), as_array(dL_dV, (T + 1, self.nv), "dL_dV")
        gq, gv = dL_dQ[T].copy(), dL_dV[T].copy()
        gforces = np.zeros((T, self.nv))
        gactivations = np.zeros((T, len(self._muscles)))
        names = self._parameter_names()
        parameters = np.zeros(len(names))
        for t in range(T - 1, -1, -1):
            self._pw_set_start_guess(Q[t + 1])  # the recorded solution: solving the step again takes no iteration
            g = self.step_vjp(Q[t], V[t], forces[t], gq, gv, activations[t])
            gforces[t] = g.tau
            gactivations[t] = g.activation
            parameters += g.parameters
            gq, gv = g.q + dL_dQ[t], g.v + dL_dV[t]
        return Gradients(gq, gv, gforces, parameters, names, activation=gactivations)

    def advance(self, f=None, n_steps: int = 1) -> None:
        """Step the stored state (world.q, world.v) n_steps times under f."""
        for _ in range(_count(n_steps, "n_steps")):
            self._q0, self._v0 = self.step(self._q0, self._v0, f)
            self.time += self.dt




_METHODS = ("pd", "newton", "newton-cholesky")
_CONTACT_MODELS = ("penalty", "complementarity")


def _method(method) -> int:
    """The core's code of a method name (ValueError naming the choices)."""
    if method not in _METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, _METHODS))}, got {method!r}")
    return _METHODS.index(method)


def _count(n, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {n!r}")
    return int(n)


def _placed_vertices(mesh, pose: Transform, name: str) -> np.ndarray:
    """The mesh's vertices moved by pose; ValueError if the move loses the mesh to round-off (a pose 1e17 m
    away, where doubles are 16 m apart, flattens a 10 cm cube): placed back, every vertex must land within a
    thousandth of the smallest element's size of where it was."""
    start = mesh.vertices @ pose.rotation.T + pose.translation
    error = np.abs((start - pose.translation) @ pose.rotation - mesh.vertices).max()
    size = _sizes(mesh.vertices, mesh.elements).min()
    if not error <= 1e-3 * size:
        raise ValueError(f"deformable {name!r}: at this pose (translation {np.abs(pose.translation).max():.3g} m "
                         f"from the origin) round-off moves its vertices by up to {error:.3g} m, against its "
                         f"smallest element's {size:.3g} m: place the body nearer the origin")
    return start
