"""The public functions that take arrays, each with valid reference arguments: what the fuzz runs call.

A ``Target`` has a name, its array arguments (``hostile.Arg``) and ``call(**args)``, which calls the
function with those arguments (the others fixed) and returns what it returns. ``GROUPS`` sorts the targets
by the part of the API they exercise; each test file of tests/fuzz checks one group.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
from hostile import Arg
from rdsupport import boxed_arm_world

import rigidiff as rd


@dataclass(frozen=True)
class Target:
    name: str
    args: tuple  # of Arg
    call: Callable
    float64_only: bool = False  # takes float64 only: another dtype may be refused (cleanly) instead of converted
    infinite_ok: bool = False  # its results may hold +-inf by design (a joint's default limits); never NaN

    def reference_args(self) -> dict:
        return {a.name: a.value.item() if a.scalar else a.value for a in self.args}


def _world():
    """Every joint type with a quaternion or an angle, and a box that touches the ground in the steps."""
    return boxed_arm_world("fuzz")


WORLD = _world()
NQ, NV, NB = WORLD.nq, WORLD.nv, WORLD.nbodies
Q = WORLD.random_configuration(3)
Q[2] = 0.04  # the box reaches into the ground: steps solve contacts
V = np.linspace(-0.5, 0.4, NV)
TAU = np.linspace(0.3, -0.2, NV)
F_EXT = np.outer(np.arange(1, NB + 1), [0.1, -0.2, 0.3, 0.01, 0.02, -0.03])


def q(name="q"):
    return Arg(name, Q)


def v(name="v", value=V):
    return Arg(name, value)


def rows(name, value):
    return Arg(name, value, shapes=((-1, value.shape[1]),))


def _world_targets():
    w = WORLD
    QS = np.stack([Q, w.integrate(Q, 0.01 * V), w.integrate(Q, -0.02 * V)])
    VS = np.stack([V, 0.5 * V, -V])
    TAUS = np.outer(np.linspace(1.0, 0.5, 3), TAU)
    f_ext = Arg("f_ext", F_EXT, required=False)
    jac = lambda j: (j.q_next, j.v_next, j.A, j.B)  # noqa: E731
    return [
        Target("step", (q(), v(), v("tau", TAU), f_ext), w.step),
        Target("rollout", (q("q0"), v("v0"), rows("taus", TAUS)), w.rollout),
        Target("step_batch", (Arg("Q", QS), Arg("V", VS), Arg("TAU", TAUS)),
               lambda **k: w.step_batch(**k, threads=1)),
        Target("step_jacobians", (q(), v(), v("tau", TAU), f_ext), lambda **k: jac(w.step_jacobians(**k))),
        Target("step_vjp", (q(), v(), v("tau", TAU), Arg("dL_dq_next", 0.3 * V), Arg("dL_dv_next", TAU)),
               lambda **k: vars(w.step_vjp(**k))),
        Target("forward_dynamics", (q(), v(), v("tau", TAU), f_ext), w.forward_dynamics),
        Target("inverse_dynamics", (q(), v(), v("a", TAU), f_ext), w.inverse_dynamics),
        Target("forward_dynamics_derivatives", (q(), v(), v("tau", TAU)), w.forward_dynamics_derivatives),
        Target("inverse_dynamics_derivatives", (q(), v(), v("a", TAU)), w.inverse_dynamics_derivatives),
        Target("inverse_dynamics_regressor", (q(), v(), v("a", TAU)), w.inverse_dynamics_regressor),
        Target("mass_matrix", (q(),), w.mass_matrix),
        Target("mass_matrix_inverse", (q(),), w.mass_matrix_inverse),
        Target("bias_forces", (q(), v()), w.bias_forces),
        Target("gravity_forces", (q(),), w.gravity_forces),
        Target("integrate", (q(), v("dv")), w.integrate),
        Target("integrate_jacobians", (q(), v("dv")), w.integrate_jacobians),
        Target("difference", (q("q0"), Arg("q1", QS[1])), w.difference),
        Target("difference_jacobians", (q("q0"), Arg("q1", QS[1])), w.difference_jacobians),
        Target("normalize", (q(),), w.normalize),
        Target("body_poses", (q(),), w.body_poses),
        Target("body_pose", (q(),), lambda **k: w.body_pose(**k, body="hand")),
        Target("body_jacobian", (q(),), lambda **k: w.body_jacobian(**k, body="hand")),
        Target("body_jacobian_time_variation", (q(), v()),
               lambda **k: w.body_jacobian_time_variation(**k, body="hand")),
        Target("body_jacobian_derivative_product", (q(), Arg("x", np.linspace(0.6, -0.3, NV))),
               lambda **k: w.body_jacobian_derivative_product(**k, body="hand")),
        Target("body_velocities", (q(), v()), w.body_velocities),
        Target("body_accelerations", (q(), v(), v("a", TAU)), w.body_accelerations),
        Target("body_velocity_derivatives", (q(), v()), lambda **k: w.body_velocity_derivatives(**k, body="arm")),
        Target("body_acceleration_derivatives", (q(), v(), v("a", TAU)),
               lambda **k: w.body_acceleration_derivatives(**k, body="hand", frame="local")),
        Target("center_of_mass_velocity_derivatives", (q(), v()), w.center_of_mass_velocity_derivatives),
        Target("center_of_mass", (q(),), w.center_of_mass),
        Target("center_of_mass_jacobian", (q(),), w.center_of_mass_jacobian),
        Target("kinetic_energy", (q(), v()), w.kinetic_energy),
        Target("potential_energy", (q(),), w.potential_energy),
        Target("step_acceleration", (Arg("v", V, shapes=((NV,), (-1, NV))),
                                     Arg("v_next", TAU, shapes=((NV,), (-1, NV)))), w.step_acceleration),
        Target("collide", (Arg("q", Q, required=False),), lambda **k: w.collide(**k).distances),
        Target("World.q, World.v and advance", (q(), v(), Arg("tau", TAU, required=False)), _advance),
        Target("Trajectory.backward", (Arg("dL_dQ", np.outer([0.2, -0.1, 0.3, 0.5], V), required=False),
                                       Arg("dL_dV", np.outer([1.0, 0.5, -0.2, 0.1], TAU), required=False)),
               lambda **k: vars(_TRAJECTORY.backward(**k))),
        Target("step_vjp(coordinates=True)", (q(), v(), v("tau", TAU), Arg("dL_dq_next", np.linspace(0.1, 0.6, NQ)),
                                              Arg("dL_dv_next", V), f_ext),
               lambda **k: vars(w.step_vjp(**k, coordinates=True))),
    ]


_STATEFUL = _world()
# a recorded 3-step rollout through contact: its backward pass takes (4, nv) cotangents
_TRAJECTORY = WORLD.rollout(Q, V, np.outer(np.linspace(1.0, 0.5, 3), TAU), record=True)


def _advance(q, v, tau):
    """The stateful convenience: set the state, advance one step (the state set first, so every call starts
    from its own arguments)."""
    _STATEFUL.q = q
    _STATEFUL.v = v
    _STATEFUL.advance(tau)
    return _STATEFUL.q, _STATEFUL.v


_PARAMS = WORLD.parameters().values.copy()
PARAM_WORDS = tuple(sorted({n.split("/")[-1] for n in WORLD.parameters().names}))  # "mass", "com_x", ...


def _set_parameters(values):
    """The values the world holds after set_parameters (restored afterwards, so every call starts equal)."""
    try:
        WORLD.set_parameters(values)
        return WORLD.parameters().values.copy(), WORLD.step(Q, V, TAU)
    finally:
        WORLD.set_parameters(_PARAMS)


def _new_world(gravity):
    return rd.World(gravity=gravity).gravity


def _particles(positions, masses):
    w = rd.World(dt=1e-3)
    w.add_ground()
    ps = w.add_particles(positions, masses=masses, radius=0.05)
    return ps.initial_positions, ps.masses, w.step(w.q, w.v, np.zeros(w.nv))


def _parameter_targets():
    positions = np.array([[0.0, 0.0, 0.04], [0.3, 0.1, 0.5], [-0.2, 0.4, 1.0]])
    return [
        # set_parameters names the parameter a value is wrong for ("body 'base': mass must be >= 0")
        Target("set_parameters", (Arg("values", _PARAMS, aliases=PARAM_WORDS + ("rotational_inertia",)),),
               _set_parameters),
        Target("World(gravity=)", (Arg("gravity", [0.0, 0.1, -9.81]),), _new_world),
        Target("add_particles", (Arg("positions", positions, shapes=((-1, 3), (3,))),
                                 Arg("masses", [0.5, 1.0, 2.0], shapes=((3,), ()))), _particles),
    ]


def _lcp(**k):
    r = rd.lcp.solve_boxed_lcp(**k, jacobian=True)
    return r.x, r.w, r.dx_db, tuple(int(c) for c in r.classes), r.success


def _lcp_targets():
    A = np.array([[2.0, 0.5, 0.2], [0.5, 1.5, 0.1], [0.2, 0.1, 1.0]])
    b = np.array([-1.0, 0.3, -0.4])
    lo, hi = np.array([0.0, -0.5, -0.5]), np.array([np.inf, 0.5, 0.5])
    lcp_args = (Arg("A", A), Arg("b", b), Arg("lo", lo), Arg("hi", hi))
    return [
        Target("solve_boxed_lcp", lcp_args + (Arg("findex", [-1, 0, 0], integer=True, required=False),), _lcp),
        Target("boxed_lcp_vjp", lcp_args + (Arg("g", [0.5, -1.0, 0.25]),), rd.lcp.boxed_lcp_vjp),
    ]


def _shape_props(s):
    return s.volume, s.inertia(1.0).rotational_inertia, s.aabb(rd.Transform((0.1, 0.2, 0.3)))


def _mesh(vertices, scale):
    import trimesh

    faces = np.array([[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a flat or inside-out hostile mesh warns before it is refused
        return _shape_props(rd.Mesh(trimesh.Trimesh(vertices=vertices, faces=faces, process=False), scale=scale))


def _transform(**k):
    return rd.Transform(**k).matrix


def _inertia(mass, com, rotational_inertia):
    i = rd.Inertia(mass, com, rotational_inertia)
    return i.mass, i.com, i.rotational_inertia, i.spatial_matrix()


def _constructor_targets():
    tetra = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    return [
        Target("Box", (Arg("size", [0.3, 0.2, 0.1]),), lambda size: _shape_props(rd.Box(size))),
        Target("Sphere", (Arg("radius", 0.25),), lambda radius: _shape_props(rd.Sphere(radius))),
        Target("Capsule", (Arg("radius", 0.1), Arg("length", 0.5)), lambda **k: _shape_props(rd.Capsule(**k))),
        Target("Cylinder", (Arg("radius", 0.1), Arg("length", 0.5)), lambda **k: _shape_props(rd.Cylinder(**k))),
        Target("Plane", (Arg("normal", [0.0, 0.6, 0.8]), Arg("offset", 0.25)),
               lambda **k: (lambda p: (p.normal, p.offset))(rd.Plane(**k))),
        # the vertices reach rigidiff through trimesh, which converts their dtype itself: only their values and
        # shape are rigidiff's to check
        Target("Mesh", (Arg("vertices", tetra, shapes=((-1, 3),), kinds=("shape", "value"),
                            aliases=("vertex", "face", "mesh")),
                        Arg("scale", [1.0, 2.0, 0.5], shapes=((3,), ()))), _mesh),
        Target("Transform(translation, rotation)", (Arg("translation", [0.1, -0.2, 0.3]),
                                                    Arg("rotation", [0.1, 0.2, 0.3, 0.9], shapes=((4,), (3, 3)),
                                                        required=False)),
               _transform),
        Target("Transform(rotation=matrix)", (Arg("rotation", rd.Transform(rpy=(0.1, 0.2, 0.3)).rotation,
                                                  shapes=((4,), (3, 3)), required=False),),
               _transform),
        Target("Transform(rpy=)", (Arg("rpy", [0.1, -0.4, 2.0], required=False),), _transform),
        Target("Inertia", (Arg("mass", 2.0), Arg("com", [0.1, 0.0, -0.1]),
                           Arg("rotational_inertia", np.diag([0.1, 0.2, 0.25]) + 0.01, required=False)), _inertia),
    ]


def _tensor(x):
    """A numpy variant as the torch tensor a user would pass: the same dtype (native byte order), a strided
    view when the array is not contiguous; anything else (lists, None, strings, objects) unchanged."""
    import torch

    if not isinstance(x, np.ndarray) or x.dtype.kind not in "biufc" or x.ndim == 0:
        return x
    native = np.array(x, dtype=x.dtype.newbyteorder("="))
    if x.flags.c_contiguous:
        return torch.from_numpy(native)
    wide = torch.zeros(native.shape[:-1] + (2 * native.shape[-1],), dtype=torch.from_numpy(native[:0]).dtype)
    view = wide[..., ::2]
    view.copy_(torch.from_numpy(native))
    return view


def _torch_step(**k):
    import rigidiff.torch as rdt

    q_next, v_next = rdt.step(WORLD, *(_tensor(k[n]) for n in ("q", "v", "tau")))
    return q_next.numpy(), v_next.numpy()


def _torch_rollout(**k):
    import rigidiff.torch as rdt

    Qs, Vs = rdt.rollout(WORLD, *(_tensor(k[n]) for n in ("q0", "v0", "taus")))
    return Qs.numpy(), Vs.numpy()


def _torch_targets():
    taus = np.outer(np.linspace(1.0, 0.5, 3), TAU)
    return [
        Target("rigidiff.torch.step", (Arg("q", Q, shapes=((NQ,), (-1, NQ))), v(), v("tau", TAU)), _torch_step,
               float64_only=True),
        Target("rigidiff.torch.rollout", (Arg("q0", Q, shapes=((NQ,), (-1, NQ))), v("v0"),
                                          Arg("taus", taus, shapes=((-1, NV),))), _torch_rollout, float64_only=True),
    ]


def _joint(kind, **k):
    j = kind("j", **k)
    return vars(j)


def _joint_targets():
    def option(name, value, shapes=((), (1,))):  # keyword arguments with a default: None is valid
        return Arg(name, value, shapes=shapes, required=False)

    def joint(name, kind, args):
        return Target(name, args, lambda **k: _joint(kind, **k), infinite_ok=True)  # unlimited: inf limits

    return [
        joint("RevoluteJoint", rd.RevoluteJoint, (Arg("axis", [0.0, 0.6, 0.8]), option("lower", -1.0),
                                                  option("upper", 2.0), option("damping", 0.1))),
        joint("PrismaticJoint", rd.PrismaticJoint, (Arg("axis", [1.0, 0.0, 0.0]), option("stiffness", 3.0),
                                                    option("armature", 0.01))),
        joint("UniversalJoint", rd.UniversalJoint, (Arg("axis1", [1.0, 0.0, 0.0]), Arg("axis2", [0.0, 0.0, 1.0]),
                                                    option("friction", [0.1, 0.2], ((2,), ())))),
        joint("PlanarJoint", rd.PlanarJoint, (Arg("normal", [0.0, 0.0, 1.0]),
                                              option("velocity_limit", [1.0, 2.0, 3.0], ((3,), ())))),
        joint("BallJoint", rd.BallJoint, (option("damping", [0.1, 0.2, 0.3], ((3,), ())),
                                          option("rest_position", [0.0, 0.6, 0.0, 0.8], ((4,),)))),
    ]


def _problem(**k):
    return rd.trajopt.Problem(WORLD, 4, k.pop("q0", Q), k.pop("v0", V))


def _bounds(method, outputs):
    def call(**k):
        p = _problem()
        getattr(p, method)(**k)
        return [getattr(p, name) for name in outputs]

    return call


def _initial_guess(tau):
    p = _problem()
    p.set_initial_guess(tau)
    return p.initial_controls() if callable(p.initial_controls) else p.initial_controls


def _trajopt_targets():
    lower, upper = -np.linspace(1.0, 2.0, NV), np.linspace(1.0, 2.0, NV)

    def broadcast(name, value, n, rows=None):  # a scalar, (n,), or (rows, n): whatever broadcasts to it
        shapes = ((), (1,), (n,)) + (((1, n), (rows, n), (rows, 1), (1, 1)) if rows else ())
        return Arg(name, value, shapes=shapes, required=rows is not None)

    def bound(name, value, n):
        return broadcast(name, value, n)

    weights = ((), (NV,), (NV, NV))  # a scalar, a diagonal or a matrix

    return [
        Target("trajopt.Problem", (q("q0"), Arg("v0", V, required=False)), lambda **k: (lambda p: (p.q0, p.v0))(
            _problem(**k))),
        Target("Problem.set_control_bounds", (broadcast("lower", lower, NV, 4), broadcast("upper", upper, NV, 4)),
               _bounds("set_control_bounds", ("u_lower", "u_upper")), infinite_ok=True),
        Target("Problem.set_state_bounds", (bound("q_lower", Q - 1.0, NQ), bound("q_upper", Q + 1.0, NQ),
                                            bound("v_lower", lower, NV), bound("v_upper", upper, NV)),
               _bounds("set_state_bounds", ("q_lower", "q_upper", "v_lower", "v_upper")), infinite_ok=True),
        Target("Problem.set_initial_guess", (broadcast("tau", np.outer(np.linspace(1.0, 0.5, 4), TAU), NV, 4),),
               _initial_guess),
        Target("Problem.add_state_cost", (Arg("q_target", Q, shapes=((NQ,), (5, NQ)), required=False),
                                          Arg("v_target", V, shapes=((NV,), (5, NV)), required=False),
                                          Arg("q_weight", np.linspace(1.0, 2.0, NV), shapes=weights),
                                          Arg("v_weight", 0.5, shapes=weights)), _state_cost),
        Target("Problem.add_control_cost", (Arg("weight", np.diag(np.linspace(1.0, 2.0, NV)), shapes=weights),
                                            Arg("tau_target", TAU, shapes=((NV,), (4, NV)), required=False)),
               _control_cost),
        Target("trajopt.box_qp", (Arg("H", [[2.0, 0.5], [0.5, 1.0]]), Arg("g", [1.0, -3.0]),
                                  Arg("lo", [-1.0, -1.0], shapes=((), (1,), (2,))),
                                  Arg("hi", [1.0, 0.5], shapes=((), (1,), (2,)))), rd.trajopt.box_qp),
    ]


def _state_cost(**k):
    c = _problem().add_state_cost(**k)._costs[-1]
    return c.q_target, c.v_target, c.Wq, c.Wv


def _control_cost(**k):
    c = _problem().add_control_cost(**k)._costs[-1]
    return c.W, c.target


def _barrier_targets():
    """A barrier world of two affine cubes: one resting within dhat of the ground (its barrier acts), one
    above it; every call starts from the arguments it is given."""
    w = rd.World(dt=1e-2, solver="barrier")
    w.add_ground()
    w.add_affine_body(rd.Box([0.2, 0.2, 0.2]), pose=rd.Transform((0.0, 0.0, 0.1 + 0.5 * w.dhat)), name="low")
    w.add_affine_body(rd.Box([0.2, 0.2, 0.2]), pose=rd.Transform((0.03, 0.0, 0.35), rpy=(0.1, 0.0, 0.2)),
                      name="high")
    q0, v0 = w.q, 0.1 * np.sin(np.arange(w.nv))
    tau = np.cos(np.arange(w.nv))
    taus = np.stack([tau, 0.5 * tau])
    jac = lambda j: (j.q_next, j.v_next, j.A, j.B)  # noqa: E731

    def fresh(velocity, density, stiffness):
        world = rd.World(dt=1e-2, solver="barrier")
        world.add_affine_body(rd.Sphere(0.1), density=density, stiffness=stiffness, velocity=velocity)
        return world.q, world.v, world.mass_matrix(world.body_names[0])

    return [
        Target("BarrierWorld.step", (Arg("q", q0), Arg("v", v0), Arg("tau", tau, required=False)), w.step),
        Target("BarrierWorld.step_jacobians", (Arg("q", q0), Arg("v", v0), Arg("tau", tau, required=False)),
               lambda **k: jac(w.step_jacobians(**k))),
        Target("BarrierWorld.step_vjp", (Arg("q", q0), Arg("v", v0), Arg("tau", tau, required=False),
                                         Arg("dL_dq_next", tau),
                                         Arg("dL_dv_next", v0)), lambda **k: vars(w.step_vjp(**k))),
        Target("BarrierWorld.rollout", (Arg("q0", q0), Arg("v0", v0), Arg("taus", taus, shapes=((-1, w.nv),))),
               w.rollout),
        Target("BarrierWorld.surfaces", (Arg("q", q0),), w.surfaces),
        Target("BarrierWorld.body_pose", (Arg("q", q0),), lambda q: w.body_pose(q, "high")),
        Target("BarrierWorld.add_affine_body", (Arg("velocity", [0.1, -0.2, 0.3], shapes=((3,), (6,), (12,)), required=False),
                                                Arg("density", 500.0), Arg("stiffness", 1e7)), fresh),
    ]


def _projective_parameters_target(mesh):
    """set_parameters of a projective world with a block and an arm of a revolute and a prismatic joint, whose
    link rests on the block and meets its joint limit: the materials', contacts' and skeleton's parameters."""
    w = rd.World(dt=1e-2, solver="projective")
    w.add_ground()
    w.add_deformable(mesh, rd.ProjectiveMaterial(1e5, 0.3, 1000.0), name="block")
    sk = rd.Skeleton("arm")
    upper = sk.add_body("upper", rd.RevoluteJoint("hinge", axis=(0, 1, 0), upper=0.0, damping=0.1),
                        joint_origin=rd.Transform((0.0, 0.05, 0.2)),
                        inertia=rd.Inertia(0.3, (0.05, 0.0, 0.0), np.diag([1e-4, 2e-4, 3e-4])))
    tip = sk.add_body("tip", rd.PrismaticJoint("slide", axis=(0, 0, 1), lower=-0.1, stiffness=1.0), parent=upper,
                      joint_origin=rd.Transform((0.05, 0.0, 0.0)), inertia=rd.Inertia.from_shape(rd.Sphere(0.02), 0.1))
    tip.add_shape(rd.Sphere(0.02))
    w.add_skeleton(sk)
    w.joint_limits = True
    params = w.parameters().values.copy()
    words = tuple(sorted({n.split("/")[-1].split(":")[0] for n in w.parameters().names}))
    q0, v0 = w.q, w.v

    def set_parameters(values):
        """The values the world holds after set_parameters and a step (restored afterwards)."""
        try:
            w.set_parameters(values)
            return w.parameters().values.copy(), w.step(q0, v0)
        finally:
            w.set_parameters(params)

    return Target("ProjectiveWorld.set_parameters", (Arg("values", params, aliases=words + ("rotational_inertia",)),),
                  set_parameters)


def _projective_targets():
    """A projective world of one 2 x 2 x 2 hex block a little above the ground, and a ball beside it."""
    w = rd.World(dt=1e-2, solver="projective")
    w.add_ground()
    mesh = rd.HexMesh.box((0.1, 0.1, 0.1), (2, 2, 2), origin=(0.0, 0.0, 0.002))
    w.add_deformable(mesh, rd.ProjectiveMaterial(1e5, 0.3, 1000.0), name="block")
    w.add_sphere((0.2, 0.05, 0.05), 0.06, name="ball")
    q0, v0 = w.q, 0.05 * np.sin(np.arange(w.nv)) - 0.2
    f = 0.01 * np.cos(np.arange(w.nv))
    forces = np.stack([f, 0.5 * f])
    Q, V = w.rollout(q0, v0, forces)

    def material(youngs_modulus, poisson_ratio, density):
        m = rd.ProjectiveMaterial(youngs_modulus, poisson_ratio, density)
        return m.youngs_modulus, m.poisson_ratio, m.density

    def tet_mesh(vertices):
        m = rd.TetMesh(vertices, np.array([[0, 1, 2, 3]]))
        return m.vertices, m.volume()

    def sphere(centre, radius):
        world = rd.World(dt=1e-2, solver="projective")
        world.add_deformable(mesh, rd.ProjectiveMaterial(1e5, 0.3, 1000.0), name="block")
        world.add_sphere(centre, radius, name="ball")
        return world.step(world.q, world.v)

    tetra = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.1, 0.0], [0.0, 0.0, 0.1]])
    return [
        _projective_parameters_target(mesh),
        Target("ProjectiveWorld.step", (Arg("q", q0), Arg("v", v0), Arg("f", f, required=False)), w.step),
        Target("ProjectiveWorld.step_vjp", (Arg("q", q0), Arg("v", v0), Arg("f", f, required=False),
                                            Arg("dL_dq_next", f),
                                            Arg("dL_dv_next", v0)), lambda **k: vars(w.step_vjp(**k))),
        Target("ProjectiveWorld.rollout", (Arg("q0", q0), Arg("v0", v0),
                                           Arg("forces", forces, shapes=((-1, w.nv),))), w.rollout),
        Target("ProjectiveWorld.rollout_backward",
               (Arg("dL_dQ", np.outer([0.0, 0.5, 1.0], f)), Arg("dL_dV", np.outer([0.2, 0.0, 1.0], v0))),
               lambda **k: vars(w.rollout_backward(Q, V, forces, **k))),
        Target("ProjectiveWorld.energy", (Arg("q", q0),), w.energy),
        Target("ProjectiveMaterial", (Arg("youngs_modulus", 1e5), Arg("poisson_ratio", 0.3), Arg("density", 1000.0)),
               material),
        Target("TetMesh", (Arg("vertices", tetra, shapes=((4, 3),)),), tet_mesh),
        Target("ProjectiveWorld.add_sphere", (Arg("centre", [0.2, 0.05, 0.05]), Arg("radius", 0.06)), sphere),
    ]


GROUPS = {
    "world": _world_targets,
    "parameters": _parameter_targets,
    "lcp": _lcp_targets,
    "constructors": _constructor_targets,
    "joints": _joint_targets,
    "trajopt": _trajopt_targets,
    "torch": _torch_targets,
    "barrier": _barrier_targets,
    "projective": _projective_targets,
}
# the groups of the shared fast run (tests/fuzz/conftest.py); torch's import alone costs more than a group
FAST_GROUPS = ("world", "parameters", "lcp", "constructors", "joints", "trajopt", "barrier", "projective")


def targets(group: str) -> list[Target]:
    return GROUPS[group]()
