"""The World: skeletons compiled into one C++ model, with functional dynamics and time stepping.

Every dynamics function is pure: it takes numpy float64 arrays (q of size nq, v of size nv) and
returns new arrays. The stateful ``world.q`` / ``world.v`` / ``world.advance`` are a convenience on
top. Layout and frames: docs/conventions.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidiff import _core
from rigidiff._validate import as_array, as_scalar, as_threads, real_array
from rigidiff.contacts import ContactMethods
from rigidiff.errors import UnknownNameError
from rigidiff.inertia import Inertia
from rigidiff.joints import JOINT_CODES, FixedJoint, Joint
from rigidiff.particles import ParticleSet
from rigidiff.skeleton import Body, Skeleton
from rigidiff.transform import Transform
from rigidiff.world_copies import WorldCopies
from rigidiff.world_gradients import GradientMethods

__all__ = ["World", "JointInfo", "Layout"]

_FRAMES = ("world", "local")


@dataclass(frozen=True)
class JointInfo:
    """Where a joint's coordinates sit in the world's q and v, with its type and limits."""

    name: str
    type: str
    q_index: int
    nq: int
    v_index: int
    nv: int
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    damping: np.ndarray
    stiffness: np.ndarray
    armature: np.ndarray
    friction: np.ndarray
    body: str
    joint: Joint


LAYOUT_KINDS = ("skeleton", "particles")  # the codes of the C++ world's BlockKind (world/world_model.hpp)


@dataclass(frozen=True)
class Layout:
    """Where a skeleton's or a particle set's coordinates sit in the world's q and v (``world.layout``).

    ``q[layout.q]`` and ``v[layout.v]`` (and ``tau[layout.v]``) are its parts; for a particle set,
    ``q[layout.q].reshape(-1, 3)`` holds the positions, one row per particle.
    """

    name: str
    kind: str  # "skeleton" or "particles"
    q: slice
    v: slice

    @property
    def nq(self) -> int:
        """Number of its coordinates in q."""
        return self.q.stop - self.q.start

    @property
    def nv(self) -> int:
        """Number of its coordinates in v (and tau)."""
        return self.v.stop - self.v.start


def _placement(T: Transform) -> np.ndarray:
    return np.concatenate([T.rotation.ravel(), T.translation])


def _inertia10(I: Inertia) -> np.ndarray:
    J = I.rotational_inertia
    return np.array([I.mass, *I.com, J[0, 0], J[0, 1], J[0, 2], J[1, 1], J[1, 2], J[2, 2]])


def _random_quaternion(rng) -> np.ndarray:
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    return q if q[3] >= 0 else -q


_WIDEST_SAMPLED_SPAN = 1e6

#: World(integrator=...) values, in the order of the C++ codes (world_options.hpp)
INTEGRATORS = ("semi_implicit", "rk4", "implicit")
#: World(solver=...) values: "lcp" (this class), "barrier" (rigidiff.barrier_world.BarrierWorld) or
#: "projective" (rigidiff.deformable.ProjectiveWorld)
SOLVERS = ("lcp", "barrier", "projective")
#: World(gyroscopic=...) values, in the order of the C++ codes (world_options.hpp)
GYROSCOPIC = ("explicit", "implicit")


def check_gyroscopic(value) -> None:
    """TypeError / ValueError naming gyroscopic unless value is one of GYROSCOPIC (the lcp and barrier worlds')."""
    if not isinstance(value, str):
        raise TypeError(f"gyroscopic must be a str, one of {list(GYROSCOPIC)}, got {type(value).__name__}")
    if value not in GYROSCOPIC:
        raise ValueError(f"gyroscopic must be one of {list(GYROSCOPIC)}, got {value!r}")


def _sampling_interval(lower: float, upper: float, span: float) -> tuple:
    """Where random_configuration samples one coordinate with limits [lower, upper] (either may be
    infinite): the limits themselves, or a window of width ``span`` inside them, as close to zero as
    they allow, when they are absent or wider than _WIDEST_SAMPLED_SPAN."""
    if upper - lower <= _WIDEST_SAMPLED_SPAN:
        return lower, upper
    centre = min(max(0.0, lower + 0.5 * span), upper - 0.5 * span)
    return centre - 0.5 * span, centre + 0.5 * span


class World(GradientMethods, ContactMethods, WorldCopies, _core.BatchWorldCore):
    """A simulated world: skeletons, gravity and a time step.

    Args:
        dt: time step in seconds (> 0).
        gravity: (3,) gravity acceleration in m/s^2 (z is up).
        integrator: how a step integrates (docs/conventions.md, Time stepping). "semi_implicit" (the
            default): semi-implicit Euler with implicit joint damping and springs, contacts, joint limits and
            joint friction. "rk4": the classical four-stage Runge-Kutta step of forward_dynamics (passive
            terms explicit, torques and f_ext held over the step; fourth order for one-dof joints, second
            order for the rotations of ball and free joints), for smooth, contact-free dynamics where
            accuracy matters more than speed (four forward dynamics per step; explicit, so stiff joint
            springs or dampers on light joints need a small dt); stepping a world that needs
            constraints (shapes that may touch, joint limits or joint friction switched on) raises ValueError
            naming the reason. Its step Jacobians (dense products), step_vjp and rollout backward (a
            reverse sweep of the four stages) are exact, with respect to the state, the torques and the
            parameters (wrt=). "implicit": backward Euler in the velocity: the new velocity solves inverse
            dynamics with the Coriolis, centripetal and gyroscopic forces, damping and springs at the new
            velocity (Newton's method, to round-off), the inertia, gravity and f_ext at the start configuration;
            first order and dissipative in the velocity, for fast spinning or fast moving parts whose explicit
            Coriolis and gyroscopic forces make the default step blow up at a given dt (the default step already
            treats damping and springs implicitly). Several times the cost of the default step. Contact-free
            worlds only, as "rk4". Its step Jacobians (implicit function theorem), step_vjp and rollout backward
            are exact with respect to the state, the torques and the parameters (wrt=). Where the
            velocity-implicit equation has no solution (a fast light chain at a large dt) the step raises
            RuntimeError with the state.
        gyroscopic: how the semi-implicit step treats the gyroscopic term of free and ball joints that carry a
            single body on a static parent (docs/conventions.md, Time stepping). "implicit" (the default): a
            momentum-conserving rotational update (a mid-step rate found by Newton's method), which keeps a
            torque-free body's angular momentum about its centre of mass to round-off and its energy without
            drift. "explicit": with the rest of the bias forces, at the start of the step (MuJoCo's Euler; its
            momentum and energy drift at first order in dt). Every derivative (state, torques, parameters,
            reverse mode) is exact under both. Other joints, and the RK4 and implicit steps, are unaffected.

        solver: "lcp" (the default: this class, velocity-level LCP contact for skeletons and particles) or
            "barrier": returns a rigidiff.barrier_world.BarrierWorld instead, affine bodies with IPC's
            intersection-free barrier contact (docs/affine.md); its other arguments are BarrierWorld's. Or
            "projective": returns a rigidiff.deformable.ProjectiveWorld, deformable solids under Projective
            Dynamics (docs/deformable.md); its other arguments are ProjectiveWorld's.

    A world pickles (multiprocessing's arguments included) and copies (copy.copy and copy.deepcopy both give
    an independent world): the copy is compiled again from copies of the skeletons and particle sets, with the
    same dt, gravity, integrator, gyroscopic treatment, contact options, stored state, time and contact warm
    start, so it steps bit for bit as the original.

    Example::

        world = rd.World(dt=1e-3)
        world.add_skeleton(rd.load_urdf(rd.models.path("cartpole")))
        q, v = world.neutral_configuration(), np.zeros(world.nv)
        q, v = world.step(q, v, np.zeros(world.nv))
    """

    def __new__(cls, *args, solver: str = "lcp", **kwargs):
        # solver="barrier" is a world of another kind (affine bodies, IPC contact): rigidiff.barrier_world
        if solver not in SOLVERS:
            raise ValueError(f"solver must be one of {list(SOLVERS)}, got {solver!r}")
        if solver == "barrier":
            from rigidiff.barrier_world import BarrierWorld

            return BarrierWorld(*args, **kwargs)
        if solver == "projective":
            from rigidiff.deformable import ProjectiveWorld

            return ProjectiveWorld(*args, **kwargs)
        return super().__new__(cls, *args, **kwargs)

    def __init__(self, dt: float = 1e-3, gravity=(0.0, 0.0, -9.81), integrator: str = "semi_implicit",
                 gyroscopic: str = "implicit", *, solver: str = "lcp"):
        self.dt = dt
        self.gravity = gravity
        self.integrator = integrator
        self.gyroscopic = gyroscopic
        self._skeletons: list[Skeleton] = []
        self._particle_sets: list[ParticleSet] = []
        self._frames: list[tuple[Skeleton, Body]] = []
        self._joint_table: list[tuple[Skeleton, Body, int, int]] = []
        self._q = None
        self._v = None
        self.time = 0.0
        self._invalidate_parameters()

    # ------------------------------------------------------------------ building
    @property
    def dt(self) -> float:
        """Time step in seconds."""
        return self._core_dt()

    @dt.setter
    def dt(self, value):
        with self._core_changing():
            self._core_set_dt(as_scalar(value, "dt", minimum=0.0, strict=True))
            self._changed()

    @property
    def integrator(self) -> str:
        """How a step integrates: "semi_implicit", "rk4" or "implicit" (see World); settable."""
        return INTEGRATORS[self._core_integrator()]

    @integrator.setter
    def integrator(self, value):
        if value not in INTEGRATORS:
            raise ValueError(f"integrator must be one of {list(INTEGRATORS)}, got {value!r}")
        with self._core_changing():
            self._core_set_integrator(INTEGRATORS.index(value))
            self._changed()

    @property
    def gyroscopic(self) -> str:
        """How the semi-implicit step treats the gyroscopic term of free and ball joints carrying a single body:
        "explicit" or "implicit" (see World); settable."""
        return GYROSCOPIC[self._core_gyroscopic()]

    @gyroscopic.setter
    def gyroscopic(self, value):
        check_gyroscopic(value)
        with self._core_changing():
            self._core_set_gyroscopic(GYROSCOPIC.index(value))
            self._changed()

    @property
    def gravity(self) -> np.ndarray:
        """(3,) gravity acceleration (a new array)."""
        return self._core_gravity()

    @gravity.setter
    def gravity(self, value):
        with self._core_changing():
            self._core_set_gravity(as_array(value, (3,), "gravity"))
            self._changed()

    def _changed(self) -> None:
        """Count a change of what a step computes (model, dt, gravity, parameters, contact options), so that
        results made earlier (a torch step's backward pass) can tell they are stale; the next constrained
        step solves without a warm start."""
        self._revision = getattr(self, "_revision", 0) + 1
        self._core_forget_warm_start()

    @property
    def skeletons(self) -> list[Skeleton]:
        """The skeletons of the world, in the order they were added."""
        return list(self._skeletons)

    def add_skeleton(self, skeleton: Skeleton) -> Skeleton:
        """Add a skeleton; its coordinates follow those of the skeletons added before it."""
        if not isinstance(skeleton, Skeleton):
            raise ValueError(f"add_skeleton expects a rigidiff.Skeleton, got {type(skeleton).__name__}")
        if not skeleton.bodies:
            raise ValueError(f"skeleton {skeleton.name!r} has no bodies")
        with self._core_changing():
            if any(s is skeleton for s in self._compiled_skeletons()):
                raise ValueError(f"skeleton {skeleton.name!r} is already in this world")
            self._check_new_name(skeleton.name, "skeleton")
            self._skeletons.append(skeleton)
            skeleton._worlds.add(self)
            self.rebuild()
        return skeleton

    def _skeleton_edited(self, skeleton: Skeleton) -> None:
        """A body or shape was added to one of the world's skeletons: the model is compiled again at its next
        use (as after rebuild(); the stored state is reset, and q, v take the new sizes)."""
        if any(s is skeleton for s in self._skeletons):
            self.rebuild()

    def _check_new_name(self, name: str, what: str) -> None:
        taken = [("skeleton", s.name) for s in self._skeletons] + [("particle set", p.name) for p in self._particle_sets]
        for kind, other in taken:
            if other == name:
                raise ValueError(f"the world already has a {kind} named {name!r}; give each {what} its own name")

    def _compiled_skeletons(self) -> list[Skeleton]:
        """What the core model holds, in q / v order: the skeletons, then the particle sets' bodies."""
        return self._skeletons + [p.skeleton for p in self._particle_sets]

    @property
    def particle_sets(self) -> list[ParticleSet]:
        """The particle sets of the world, in the order they were added."""
        return list(self._particle_sets)

    def add_particles(self, positions, masses=1.0, radius: float = 0.0, friction=0.5, restitution=0.0,
                      name: str = "particles") -> ParticleSet:
        """Add n particles: point masses with 3 dofs each that collide as spheres (docs/particles.md).

        Their coordinates follow those of every skeleton, sets in the order they were added: for each
        particle q holds its world position, v its world velocity and tau the external force on it
        (world axes). ``world.layout(name)`` gives the set's slices; ``neutral_configuration()`` and the
        world's initial state hold ``positions``. A particle touches the ground, every skeleton's shapes
        and the other particles (of its own set and of others) as a sphere of ``radius`` (0: a point);
        it has no rotation, so it slides but never rolls.

        Args:
            positions: (n, 3) initial world positions (n >= 1).
            masses: mass of each particle (> 0): a number or an (n,) array.
            radius: collision radius (>= 0, at most 1e12 m) shared by the set.
            friction, restitution: contact coefficients (numbers or (n,) arrays; restitution in [0, 1]),
                combined with the other shape's as ``contact_options`` says.
            name: the set's name, unique among the world's skeletons and particle sets.
        Returns:
            The ParticleSet. Its particles' bodies and shapes are ``"p0"``, ``"p1"``, ... (qualified
            ``"<name>/p0"`` when ambiguous): their masses, frictions and restitutions are world
            parameters (``"p0/mass"``, ``"p0/friction"``, ``"p0/restitution"``).
        """
        particles = ParticleSet(name, positions, masses, radius, friction, restitution)
        with self._core_changing():
            self._check_new_name(particles.name, "particle set")
            self._particle_sets.append(particles)
            self.rebuild()
        return particles

    def layout(self, name) -> Layout:
        """The q and v slices of the skeleton or particle set called ``name`` (or given as the object)."""
        self._ensure_compiled()
        for sk, kind, label in self._layout_entries():
            if sk is name or label == name or (isinstance(name, ParticleSet) and name.skeleton is sk):
                kind, q0, nq, v0, nv = self._core_state_block(label)  # the C++ world's state layout
                return Layout(label, LAYOUT_KINDS[kind], slice(q0, q0 + nq), slice(v0, v0 + nv))
        names = [label for _, _, label in self._layout_entries()]
        raise UnknownNameError(f"no skeleton or particle set named {name!r}; the world has {names}")

    def _layout_entries(self):
        return [(sk, "skeleton", sk.name) for sk in self._skeletons] + \
            [(p.skeleton, "particles", p.name) for p in self._particle_sets]

    def neutral_configuration(self) -> np.ndarray:
        """(nq,) the skeletons' zero configuration (identity quaternions (0, 0, 0, 1) for ball and free
        joints) and the particles' initial positions."""
        q = super().neutral_configuration()
        for p in self._particle_sets:
            q[self.layout(p.name).q] = p._initial.ravel()
        return q

    @property
    def solver(self) -> str:
        """The world's solver: "lcp" (World(solver="barrier") makes a barrier world instead)."""
        return "lcp"

    def add_affine_body(self, *args, **kwargs):
        """Refused: affine bodies need a barrier world, ``rd.World(dt, solver="barrier")``."""
        raise ValueError('affine bodies need a barrier world: make it with rd.World(dt, solver="barrier")')

    def add_ground(self, height: float = 0.0, friction: float = 0.5, restitution: float = 0.0) -> Skeleton:
        """Add a static ground plane z = height (a skeleton "ground" with one welded body)."""
        from rigidiff.shapes import Plane

        height = as_scalar(height, "height")
        ground = Skeleton("ground")
        body = ground.add_body("ground", joint=FixedJoint("ground_weld"))
        body.add_shape(Plane(normal=(0.0, 0.0, 1.0), offset=height), friction=friction, restitution=restitution,
                       name="ground/plane")
        return self.add_skeleton(ground)

    def rebuild(self) -> None:
        """Recompile the model at its next use. Adding a body or a shape to a skeleton of the world does this by
        itself; call it after other edits of a skeleton already in the world (a body's inertia or joint origin,
        a joint's axis or limits, a shapes list changed in place)."""
        with self._core_changing():
            self._core_reset()
            self._invalidate_parameters()
            self._q = self._v = None

    def _compile(self):
        if not self._skeletons and not self._particle_sets:
            raise RuntimeError("the world has no skeleton yet: add one with world.add_skeleton(...) "
                               "(or particles with world.add_particles(...))")
        with self._core_changing():  # no other thread may use or change the world until it is compiled
            self._compile_skeletons()

    def _compile_skeletons(self):
        self._core_reset()
        self._invalidate_parameters()
        frames: list[tuple[Skeleton, Body]] = []
        frame_support: list[tuple[int, Transform]] = []
        core_joints: dict = {}  # core joint index -> Joint
        joints: list[tuple[Skeleton, Body, int, int]] = []  # skeleton, body, q_index, v_index
        nq = nv = 0
        # each body maps to (supporting core joint, pose of the body in that joint's frame)
        support: dict[int, tuple[int, Transform]] = {}
        # each body maps to its link's parent link, as a core joint: a welded body is part of its parent's link
        link_parent: dict[int, int] = {}
        frame_link_parents: list[int] = []
        labels = {id(sk): (kind, label) for sk, kind, label in self._layout_entries()}
        for sk in self._compiled_skeletons():
            kind, label = labels[id(sk)]
            self._core_add_state_block(label, LAYOUT_KINDS.index(kind), sk.nq, sk.nv)
            for body in sk.ordered_bodies():
                if body.parent is None:
                    parent_joint, parent_pose = 0, Transform()
                else:
                    parent_joint, parent_pose = support[id(body.parent)]
                placement = parent_pose @ body.joint_origin
                j = body.joint
                joints.append((sk, body, nq, nv))
                if j.nv == 0:  # weld: the body moves with its support (the core adds its inertia there)
                    support[id(body)] = (parent_joint, placement)
                    link_parent[id(body)] = 0 if body.parent is None else link_parent[id(body.parent)]
                else:
                    idx = self._add_core_joints(j, parent_joint, placement, body.inertia, f"{sk.name}/{j.name}",
                                                core_joints)
                    support[id(body)] = (idx, Transform())
                    link_parent[id(body)] = parent_joint
                    nq += j.nq
                    nv += j.nv
                fj, fpose = support[id(body)]
                self._core_add_frame(f"{sk.name}/{body.name}", fj, _placement(fpose))
                # a joint's inertia is the sum of its bodies' (the moving ones are the parameter bodies, in this
                # order; those welded to the world count in its total mass and energy)
                own = j.nv > 0
                self._core_add_body_part(fj, _inertia10(body.inertia if own else body.inertia.transformed(fpose)), own)
                frames.append((sk, body))
                frame_support.append((fj, fpose))
                frame_link_parents.append(link_parent[id(body)])
        self._core_finalize(len(frames))
        self._frame_support = frame_support
        # which links are parent and child for self-collision (the barrier and projective worlds' pair rule)
        self._frame_link_parents = frame_link_parents
        self._core_joint_objects = core_joints
        self._core_njoints = len(core_joints) + 1
        self._frames = frames
        self._joint_table = joints
        self._body_index = self._name_table([(sk, b.name) for sk, b in frames])
        self._joint_index = self._name_table([(sk, b.joint.name) for sk, b, _, _ in joints])
        self._build_collision()

    def _add_core_joints(self, j: Joint, parent: int, placement: Transform, inertia: Inertia, name: str,
                         core_joints: dict) -> int:
        """Adds joint j (carrying ``inertia``) to the core model; returns the core joint of the body.

        A universal joint becomes two revolute core joints (about axis1, then axis2) with a massless body
        between them: the same kinematics, and every algorithm and derivative of the core applies."""
        if j.type == "universal":
            first = self._core_add_joint(parent, JOINT_CODES["revolute"], _placement(placement),
                                         np.concatenate([j.axis1, np.zeros(3)]), np.zeros(10), name)
            second = self._core_add_joint(first, JOINT_CODES["revolute"], _placement(Transform()),
                                          np.concatenate([j.axis2, np.zeros(3)]), _inertia10(inertia), name)
            parts = [(first, slice(0, 1)), (second, slice(1, 2))]
        else:
            idx = self._core_add_joint(parent, JOINT_CODES[j.type], _placement(placement), j._axis_data(),
                                       _inertia10(inertia), name)
            parts = [(idx, slice(0, j.nv))]
        for idx, dofs in parts:
            core_joints[idx] = (j, dofs)
            self._set_core_joint_parameters(idx, j, dofs)
        return parts[-1][0]

    def _set_core_joint_parameters(self, idx: int, j: Joint, dofs: slice) -> None:
        """Limits and passive terms of joint j's dofs ``dofs`` (its q slice is the same: only universal
        joints are split, and their q and v coincide) into core joint idx."""
        qs = dofs if j.nq == j.nv else slice(0, j.nq)
        self._core_set_joint_parameters(idx, j.lower[qs], j.upper[qs], j.rest_position[qs], j.damping[dofs],
                                        j.stiffness[dofs], j.armature[dofs], j.friction[dofs], j.effort_limit[dofs],
                                        j.velocity_limit[dofs])

    @staticmethod
    def _plain_names(entries) -> list[bool]:
        """Per (skeleton, name) entry: may it go by its plain name? Only if no other entry has that name and
        no entry's 'skeleton/name' spells it (a body 'a/b' beside skeleton 'a''s body 'b' goes by its
        qualified name). Two entries whose qualified names coincide (skeleton 'a/b''s body 'c' and skeleton
        'a''s body 'b/c') cannot be told apart: ValueError naming both."""
        counts, qualified = {}, {}
        for sk, name in entries:
            counts[name] = counts.get(name, 0) + 1
            full = f"{sk.name}/{name}"
            if full in qualified and qualified[full][0] is not sk:
                other, other_name = qualified[full]
                raise ValueError(f"{other_name!r} of skeleton {other.name!r} and {name!r} of skeleton {sk.name!r} "
                                 f"are both called {full!r}; rename one (a '/' in a name joins a skeleton's name "
                                 "to the name in qualified names)")
            qualified[full] = (sk, name)
        return [counts[name] == 1 and name not in qualified for _, name in entries]

    @classmethod
    def _name_table(cls, entries) -> dict:
        """Names -> index: 'skeleton/name' always, plain 'name' where it is unambiguous (_plain_names)."""
        table = {}
        for i, ((sk, name), plain) in enumerate(zip(entries, cls._plain_names(entries))):
            table[f"{sk.name}/{name}"] = i
            if plain:
                table[name] = i
        return table

    # ------------------------------------------------------------------ queries

    def _ensure_compiled(self):
        if not self._core_is_ready():
            self._compile()

    def _display_names(self, entries) -> list[str]:
        return [n if plain else f"{sk.name}/{n}" for (sk, n), plain in zip(entries, self._plain_names(entries))]

    @property
    def body_names(self) -> list[str]:
        """Every body, skeletons in order, bodies depth-first; qualified as 'skeleton/body' when ambiguous."""
        self._ensure_compiled()
        return self._display_names([(sk, b.name) for sk, b in self._frames])

    @property
    def joint_names(self) -> list[str]:
        """The moving joints (nv > 0) in q / v order; qualified as 'skeleton/joint' when ambiguous."""
        self._ensure_compiled()
        names = self._display_names([(sk, b.joint.name) for sk, b, _, _ in self._joint_table])
        return [n for n, (_, b, _, _) in zip(names, self._joint_table) if b.joint.nv > 0]

    def body_index(self, body) -> int:
        """Index of a body (name, 'skeleton/name', Body or integer index) in body_names; UnknownNameError (an
        IndexError) if unknown."""
        self._ensure_compiled()
        if isinstance(body, Body):
            for i, (_, b) in enumerate(self._frames):
                if b is body:
                    return i
            raise UnknownNameError(f"body {body.name!r} is not in this world")
        if isinstance(body, (int, np.integer)) and not isinstance(body, bool):
            if not 0 <= body < len(self._frames):
                raise IndexError(f"body index {body} out of range [0, {len(self._frames)})")
            return int(body)
        try:
            return self._body_index[body]
        except (KeyError, TypeError):
            raise UnknownNameError(f"no body named {body!r}; bodies: {self.body_names}") from None

    def body(self, name) -> Body:
        """The Body object called ``name``."""
        index = self.body_index(name)  # compiles the world first if needed
        return self._frames[index][1]

    def joint(self, name: str) -> JointInfo:
        """Layout and limits of the joint called ``name`` (fixed joints have nq = nv = 0)."""
        self._ensure_compiled()
        try:
            i = self._joint_index[name]
        except (KeyError, TypeError):
            raise UnknownNameError(f"no joint named {name!r}; joints: {self.joint_names}") from None
        sk, body, qi, vi = self._joint_table[i]
        j = body.joint
        jtype = "continuous" if getattr(j, "continuous", False) else j.type
        return JointInfo(j.name, jtype, qi, j.nq, vi, j.nv, j.lower.copy(), j.upper.copy(), j.velocity_limit.copy(),
                         j.effort_limit.copy(), j.damping.copy(), j.stiffness.copy(), j.armature.copy(),
                         j.friction.copy(), body.name, j)

    @property
    def total_mass(self) -> float:
        """Mass of every body in the world, welded ones included."""
        return self._core_center_of_mass(self.neutral_configuration(), False)[1]

    def random_configuration(self, rng=None) -> np.ndarray:
        """A random q within the joint limits: unlimited angles in [-pi, pi], unlimited translations in
        [-1, 1], uniformly random orientations for ball and free joints.

        Limits so wide that uniform sampling would give meaningless values (a span above 1e6, such as
        the +-1e16 that URDF files write for "no limit") are sampled over the default span, placed as
        close to zero as the limits allow.

        Args:
            rng: a numpy Generator, a seed, or None.
        """
        rng = np.random.default_rng(rng)
        q = self.neutral_configuration()
        for _, body, qi, _ in self._joint_table:
            j = body.joint
            if j.nq == 0:
                continue
            lo, hi = j.lower, j.upper
            angular = [j.type in ("revolute", "universal") or (j.type == "planar" and k == 2) for k in range(j.nq)]
            vals = np.array([rng.uniform(*_sampling_interval(lo[k], hi[k], 2.0 * np.pi if angular[k] else 2.0))
                             for k in range(j.nq)])
            if j.type == "ball":
                vals = _random_quaternion(rng)
            elif j.type == "free":
                vals[3:] = _random_quaternion(rng)
            q[qi:qi + j.nq] = vals
        return q

    # ------------------------------------------------------------------ external wrenches
    def _fext_from_dict(self, f_ext: dict) -> np.ndarray:
        """(nbodies, 6) world-axes wrenches at body origins from a {body: (6,)} dict."""
        F = np.zeros((self.nbodies, 6))
        for name, w in f_ext.items():
            F[self.body_index(name)] += as_array(w, (6,), f"f_ext[{name!r}]")
        return F

    # ------------------------------------------------------------------ dynamics

    def gravity_forces(self, q) -> np.ndarray:
        """(nv,) g(q), the generalized gravity force."""
        return self.bias_forces(q, np.zeros(self.nv))

    # ------------------------------------------------------------------ kinematics

    def body_pose(self, q, body) -> np.ndarray:
        """(4, 4) world pose of one body."""
        return self.body_poses(q)[self.body_index(body)]

    @staticmethod
    def _frame(frame: str) -> bool:
        if frame not in _FRAMES:
            raise ValueError(f"frame must be 'world' or 'local', got {frame!r}")
        return frame == "local"

    def body_velocities(self, q, v, frame: str = "world") -> np.ndarray:
        """(nbodies, 6) (linear, angular) velocity of each body origin: world axes or body axes ("local")."""
        return self._core_body_velocities(q, v, self._frame(frame))

    def body_accelerations(self, q, v, a, frame: str = "world") -> np.ndarray:
        """(nbodies, 6) spatial accelerations (dv/dt of the body-fixed spatial velocity, gravity excluded).

        The classical acceleration of a body origin is the linear part plus omega x v (see docs/conventions.md).
        """
        return self._core_body_accelerations(q, v, a, self._frame(frame))

    def body_jacobian(self, q, body, frame: str = "world") -> np.ndarray:
        """(6, nv) Jacobian of a body, rows (linear, angular).

        frame="world": velocity of the body origin and angular velocity, in world axes (Pinocchio's
        LOCAL_WORLD_ALIGNED). frame="local": the same in the body's own axes (Pinocchio's LOCAL).
        """
        local = self._frame(frame)
        return self._core_body_jacobian(q, self.body_index(body), local)

    def body_jacobian_time_variation(self, q, v, body, frame: str = "world") -> np.ndarray:
        """(6, nv) time derivative dJ/dt of body_jacobian along v."""
        local = self._frame(frame)
        return self._core_body_jacobian_time_variation(q, v, self.body_index(body), local)

    def center_of_mass(self, q) -> np.ndarray:
        """(3,) world centre of mass of all bodies (welded ones included)."""
        return self._core_center_of_mass(q, False)[0]

    def center_of_mass_jacobian(self, q) -> np.ndarray:
        """(3, nv) Jacobian of the centre of mass: d com / dt = J v."""
        return self._core_center_of_mass(q, True)[2]

    # ------------------------------------------------------------------ stepping

    def step_batch(self, Q, V, TAU, threads: int | None = None):
        """N independent steps: rows of Q (N, nq), V (N, nv), TAU (N, nv). Runs on ``threads`` C++ threads
        (default: every core, or RIGIDIFF_THREADS) with the GIL released; results equal, bit for bit, a Python loop over step(),
        whatever was called before. step_batch solves every contact problem cold; step() warm-starts
        only a step that starts at the end state of the step before it, so rows that continue each
        other (a rollout's) may differ from such a loop where several contact modes are valid. Changing
        this world from another thread while the batch runs raises RuntimeError (docs/reliability.md)."""
        return self._core_step_batch(Q, V, TAU, as_threads(threads))

    def rollout_batch(self, q0s, v0s, taus, threads: int | None = None):
        """N rollouts of T steps, from the rows of q0s (N, nq) and v0s (N, nv), with torques taus (N, T, nv),
        or (T, nv) for the same torques in every rollout. Runs on ``threads`` C++ threads (default: every
        core, or RIGIDIFF_THREADS) with the GIL released; rollout i equals, bit for bit, ``rollout(q0s[i], v0s[i], taus[i])``
        whatever the thread count (each rollout warm-starts its contact solves along its own chain, as
        rollout does). Changing this world from another thread meanwhile raises RuntimeError
        (docs/reliability.md).

        Returns:
            Q (N, T+1, nq) and V (N, T+1, nv); Q[:, 0] and V[:, 0] are q0s and v0s.
        """
        return self._core_rollout_batch(q0s, v0s, taus, as_threads(threads))

    def step_acceleration(self, v, v_next) -> np.ndarray:
        """The acceleration a of a step from velocity v to v_next: the a with
        ``inverse_dynamics(q, v, a)`` equal to the generalized forces that acted in the step (torques,
        damping and springs, constraint impulses / dt), for recorded (v, v_next) pairs.

        It is (v_next - v) / dt for every joint but free joints, which move on R^3 x SO(3): their v_next
        holds the linear velocity re-expressed in the joint's new frame, taken back to the frame the step
        started from, and the frame-turn term w x u is removed (docs/conventions.md, Time stepping). With
        gyroscopic="implicit", the rotational update of free and ball joints carrying a single body is undone
        as well (it depends on their inertia and passive terms, which it reads from the world).

        Args:
            v, v_next: (nv,) or (N, nv) velocities, v_next one step after v.
        Returns:
            a, shaped like v.
        """
        self._ensure_compiled()
        v = real_array(v, "v", "(nv,) or (N, nv)")
        if v.ndim not in (1, 2) or v.shape[-1] != self.nv:
            raise ValueError(f"v must have shape (nv,) or (N, nv) with nv = {self.nv}, got {v.shape}")
        v_next = as_array(v_next, v.shape, "v_next")
        if not np.all(np.isfinite(v)):
            raise ValueError("v has non-finite entries")
        one = v.ndim == 1
        v, v_next = np.atleast_2d(v), np.atleast_2d(v_next)
        dt = self.dt
        a = self._core_step_acceleration(v, v_next)
        if not np.all(np.isfinite(a)):  # overflow is reported naming the row
            row = int(np.flatnonzero(~np.isfinite(a).all(axis=1))[0])
            where = "" if one else f" (row {row})"
            raise ValueError(f"v and v_next{where} are too large: the acceleration of the step overflows double "
                             f"precision (max |v| {np.abs(v[row]).max():.3g}, max |v_next| "
                             f"{np.abs(v_next[row]).max():.3g}, dt {dt:g})")
        return a[0] if one else a

    # ------------------------------------------------------------------ stateful convenience
    @property
    def q(self) -> np.ndarray:
        """Current configuration (starts at the neutral configuration)."""
        if self._q is None:
            self._q = self.neutral_configuration()
        return self._q.copy()

    @q.setter
    def q(self, value):
        q = as_array(value, (self.nq,), "q").copy()
        self.integrate(q, np.zeros(self.nv))  # validates quaternions
        self._q = q

    @property
    def v(self) -> np.ndarray:
        """Current velocity (starts at zero)."""
        if self._v is None:
            self._v = np.zeros(self.nv)
        return self._v.copy()

    @v.setter
    def v(self, value):
        self._v = as_array(value, (self.nv,), "v").copy()

    def advance(self, tau=None, n_steps: int = 1):
        """Step the world's own state n_steps times under constant tau (zeros if None); returns (q, v).
        ``last_contacts()`` then shows the contacts of the last of these steps."""
        if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 1:
            raise ValueError(f"n_steps must be a positive integer, got {n_steps!r}")
        tau = np.zeros(self.nv) if tau is None else as_array(tau, (self.nv,), "tau")
        q, v = self.q, self.v
        if n_steps > 1:
            Q, V = self.rollout(q, v, np.broadcast_to(tau, (int(n_steps) - 1, self.nv)))
            q, v = Q[-1], V[-1]
        self._q, self._v = self.step(q, v, tau)  # the last one by step(), so that last_contacts() shows it
        self.time += n_steps * self.dt
        return self.q, self.v

    def summary(self) -> str:
        """Skeletons, dofs and masses in a readable form."""
        lines = [f"World(dt={self.dt}, gravity={self.gravity.tolist()}, nq={self.nq}, nv={self.nv})"]
        lines += [sk.summary() for sk in self._skeletons]
        for p in self._particle_sets:
            q = self.layout(p.name).q
            lines.append(f"{p!r}: q[{q.start}:{q.stop}]")
        return "\n".join(lines)

    def __repr__(self) -> str:
        names = [s.name for s in self._skeletons]
        extra = f", particle_sets={[p.name for p in self._particle_sets]}" if self._particle_sets else ""
        return f"World(dt={self.dt}, skeletons={names}{extra})"

