"""Helpers shared by the articulated-body tests: Pinocchio conversions, comparisons, finite differences
and small models built by hand.

Importable from any test module because pytest puts tests/ (the folder of the root conftest.py) on sys.path.
"""

from __future__ import annotations

import warnings

import numpy as np

import rigidiff as rd

# example-robot-data robots compared with Pinocchio: (id, path under robots/, floating base)
ROBOTS = [
    ("double_pendulum", "double_pendulum_description/urdf/double_pendulum.urdf", False),
    ("ur5", "ur_description/urdf/ur5_robot.urdf", False),
    ("panda", "panda_description/urdf/panda.urdf", False),
    ("solo12", "solo_description/robots/solo12.urdf", True),
    ("anymal", "anymal_b_simple_description/robots/anymal.urdf", True),
    ("talos", "talos_data/robots/talos_reduced.urdf", True),
]


# ---------------------------------------------------------------------------------------------- comparisons
def max_err(actual, expected) -> float:
    return float(np.max(np.abs(np.asarray(actual, dtype=float) - np.asarray(expected, dtype=float)), initial=0.0))


def assert_close(actual, expected, rtol=1e-9, floor=1e-3, what=""):
    """|actual - expected|_max <= rtol * max(|expected|_max, floor): an error relative to the magnitude
    (the floor keeps quantities that vanish from demanding an error below round-off)."""
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert np.all(np.isfinite(actual)), f"{what}: non-finite values in {actual}"
    scale = max(float(np.max(np.abs(expected), initial=0.0)), floor)
    err = max_err(actual, expected)
    assert err <= rtol * scale, f"{what}: error {err:.3e} > {rtol:g} * {scale:.3e}"


# ---------------------------------------------------------------------------------------------- loading
def load_urdf_quiet(path, floating=False, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mimic joints, placeholder inertias of the robot files
        return rd.load_urdf(path, floating_base=floating, load_geometry=False, **kwargs)


def world_of(*skeletons, dt=1e-3, gravity=(0.0, 0.0, -9.81)) -> rd.World:
    w = rd.World(dt=dt, gravity=gravity)
    for sk in skeletons:
        w.add_skeleton(sk)
    return w


# ---------------------------------------------------------------------------------------------- Pinocchio
def continuous_joints(world) -> list[int]:
    """q indices of the continuous (unlimited revolute) joints, whose Pinocchio q is (cos, sin)."""
    return [world.joint(n).q_index for n in world.joint_names if world.joint(n).type == "continuous"]


def to_pin_q(world, q) -> np.ndarray:
    """Our q -> Pinocchio's q (continuous joints: angle -> (cos, sin))."""
    cont = set(continuous_joints(world))
    out = []
    for i, x in enumerate(q):
        out.extend([np.cos(x), np.sin(x)] if i in cont else [x])
    return np.array(out)


def from_pin_q(world, qp) -> np.ndarray:
    """Pinocchio's q -> ours (continuous joints: (cos, sin) -> angle)."""
    cont = set(continuous_joints(world))
    out, k = [], 0
    for i in range(world.nq):
        if i in cont:
            out.append(np.arctan2(qp[k + 1], qp[k]))
            k += 2
        else:
            out.append(qp[k])
            k += 1
    return np.array(out)


def pin_frame_ids(world, pm, pin) -> list[int]:
    """Pinocchio BODY frame id of each of our bodies (same names)."""
    ids = []
    for name in world.body_names:
        fid = pm.getFrameId(name, pin.FrameType.BODY)
        assert fid < len(pm.frames), f"Pinocchio has no body frame {name!r}"
        ids.append(fid)
    return ids


def fext_to_pin(pm, pd, frame_ids, F, pin) -> list:
    """Our (nbodies, 6) world-axes wrenches at body origins -> Pinocchio's per-joint local forces.

    Needs pd.oMf up to date (framesForwardKinematics). Wrenches on bodies welded to the world are dropped
    (the world absorbs them, in both engines)."""
    fext = [pin.Force.Zero() for _ in range(pm.njoints)]
    for fid, w in zip(frame_ids, F):
        frame = pm.frames[fid]
        if frame.parentJoint == 0:
            continue
        R = pd.oMf[fid].rotation
        local = pin.Force(R.T @ w[:3], R.T @ w[3:])  # at the body origin, in body axes
        fext[frame.parentJoint] += frame.placement.act(local)
    return fext


# ---------------------------------------------------------------------------------------------- manifolds
def rotation_log(R) -> np.ndarray:
    """Rotation vector of a rotation matrix (angle < pi)."""
    c = np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0)
    angle = np.arccos(c)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    if angle < 1e-8:
        return 0.5 * w
    return angle / (2.0 * np.sin(angle)) * w


def fd_along(world, f, q, v, h=1e-6):
    """Central difference of f(q) along the manifold direction v: (f(q (+) h v) - f(q (+) -h v)) / 2h."""
    return (np.asarray(f(world.integrate(q, h * v))) - np.asarray(f(world.integrate(q, -h * v)))) / (2.0 * h)


def fd_tangent(world, f, q, h=1e-6):
    """Central differences of f(q) along every tangent direction, stacked as the last axis (... , nv)."""
    return np.stack([fd_along(world, f, q, e, h) for e in np.eye(world.nv)], axis=-1)


# ---------------------------------------------------------------------------------------------- small models
def rod_inertia(mass, length, radius=0.02, axis=2, com_offset=None) -> rd.Inertia:
    """A solid cylinder of ``length`` along ``axis``, its centre at ``com_offset`` (default: -length/2 on the axis)."""
    Ia = 0.5 * mass * radius**2
    It = mass * (3 * radius**2 + length**2) / 12.0
    diag = np.full(3, It)
    diag[axis] = Ia
    com = np.zeros(3)
    com[axis] = -0.5 * length
    if com_offset is not None:
        com = np.asarray(com_offset, dtype=float)
    return rd.Inertia(mass, com, np.diag(diag))


def hinge_chain(n, name="chain", seed=0, axis=(0.0, 1.0, 0.0)) -> rd.Skeleton:
    """An n-link chain of hinges hanging along -z, with varied masses and lengths (seeded).

    ``axis``: one hinge axis for every joint, or a list of n axes."""
    rng = np.random.default_rng(seed)
    axes = np.broadcast_to(np.asarray(axis, dtype=float), (n, 3))
    sk = rd.Skeleton(name)
    parent = None
    offset = np.zeros(3)
    for i in range(n):
        length = rng.uniform(0.2, 0.5)
        mass = rng.uniform(0.5, 2.0)
        body = sk.add_body(f"link{i}", joint=rd.RevoluteJoint(f"j{i}", axis=axes[i]), parent=parent,
                           joint_origin=rd.Transform(offset), inertia=rod_inertia(mass, length))
        parent = body
        offset = np.array([0.0, 0.0, -length])
    return sk


# ---------------------------------------------------------------------------------------------- random trees
def unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def random_inertia(rng, mass=None):
    mass = rng.uniform(0.5, 2.0) if mass is None else mass
    principal = np.sort(rng.uniform(0.01, 0.05, 3))
    principal[2] = min(principal[2], principal[0] + principal[1] - 1e-3)
    q = unit(rng.normal(size=4))
    R = rd.Transform(rotation=q).rotation
    return rd.Inertia(mass, rng.uniform(-0.15, 0.15, 3), R @ np.diag(principal) @ R.T)


def random_origin(rng):
    return rd.Transform(rng.uniform(-0.3, 0.3, 3), rotation=unit(rng.normal(size=4)))


def make_joint(kind, name, rng):
    if kind == "revolute":
        return rd.RevoluteJoint(name, axis=unit(rng.normal(size=3)))
    if kind == "prismatic":
        return rd.PrismaticJoint(name, axis=unit(rng.normal(size=3)))
    if kind == "ball":
        return rd.BallJoint(name)
    if kind == "free":
        return rd.FreeJoint(name)
    if kind == "planar":
        return rd.PlanarJoint(name, normal=unit(rng.normal(size=3)))
    if kind == "universal":
        a1 = unit(rng.normal(size=3))
        a2 = unit(np.cross(a1, rng.normal(size=3)))  # Pinocchio's universal joint wants orthogonal axes
        return rd.UniversalJoint(name, axis1=a1, axis2=a2)
    if kind == "translational":
        return rd.TranslationalJoint(name)
    if kind == "fixed":
        return rd.FixedJoint(name)
    raise ValueError(kind)


# (body, joint type, parent body): every joint type the derivatives cover, fixed joints inside the tree
# and at a root
TREE = [
    ("base", "free", None),
    ("arm", "revolute", "base"),
    ("slider", "prismatic", "arm"),
    ("weld", "fixed", "slider"),
    ("tip", "revolute", "weld"),
    ("head", "ball", "base"),
    ("table", "planar", "head"),
    ("gantry", "translational", "base"),
    ("knuckle", "universal", "gantry"),
    ("pedestal", "fixed", None),
    ("turret", "revolute", "pedestal"),
]


def build_skeleton(tree, seed):
    rng = np.random.default_rng(seed)
    sk = rd.Skeleton("tree")
    for name, kind, parent in tree:
        sk.add_body(name, joint=make_joint(kind, f"{name}_joint", rng), parent=parent,
                    joint_origin=random_origin(rng), inertia=random_inertia(rng))
    return sk


def with_passive_terms(world, seed=0):
    """Random damping, springs and armature on every joint of a world (recompiled)."""
    rng = np.random.default_rng(seed)
    for name in world.joint_names:
        j = world.joint(name).joint
        j.damping[:] = rng.uniform(0.1, 1.0, j.nv)
        j.stiffness[:] = rng.uniform(0.5, 2.0, j.nv)
        j.armature[:] = rng.uniform(0.01, 0.1, j.nv)
    world.rebuild()
    return world


def robot_world(robots_dir, name):
    """A world holding one robot of ROBOTS."""
    _, rel, floating = next(r for r in ROBOTS if r[0] == name)
    return world_of(load_urdf_quiet(robots_dir / rel, floating, package_dirs=[robots_dir]))


def tree_world(seed=0, dt=1e-3):
    """The TREE of every joint type (fixed joints included) with passive terms."""
    return with_passive_terms(world_of(build_skeleton(TREE, seed), dt=dt), seed)


def sliding_box_world(mu=0.4, dt=1e-3):
    """A 0.2 x 0.3 x 0.1 box on a free joint touching the ground (friction mu), and a state where it slides
    and turns: (world, q, v)."""
    world = rd.World(dt=dt)
    ground = rd.Skeleton("ground")
    ground.add_body("ground", joint=rd.FixedJoint("weld")).add_shape(rd.Plane(), friction=mu)
    world.add_skeleton(ground)
    box = rd.Box((0.2, 0.3, 0.1))
    sk = rd.Skeleton("box")
    sk.add_body("box", joint=rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(box, mass=1.3)).add_shape(
        box, friction=mu)
    world.add_skeleton(sk)
    q = world.neutral_configuration()
    q[2] = 0.05 - 1e-4
    v = np.array([1.0, 0.2, 0.0, 0.0, 0.0, 0.3])
    return world, q, v


def boxed_arm_world(name="arm", dt=1e-3):
    """A box on a free base with a ball-jointed arm and a revolute hand, above the ground: every kind of
    joint coordinate (position, quaternion, angle) and, with the box low enough, contacts in the steps."""
    sk = rd.Skeleton(name)
    base = sk.add_body("base", joint=rd.FreeJoint("root"),
                       inertia=rd.Inertia(2.0, (0.05, 0.0, 0.0), np.diag([0.1, 0.2, 0.25])))
    base.add_shape(rd.Box((0.3, 0.2, 0.1)))
    arm = sk.add_body("arm", joint=rd.BallJoint("shoulder", damping=0.1), parent=base,
                      joint_origin=rd.Transform((0, 0, 0.1)),
                      inertia=rd.Inertia(0.5, (0, 0, 0.1), np.diag([0.01, 0.01, 0.004])))
    sk.add_body("hand", joint=rd.RevoluteJoint("wrist", axis=(0, 1, 0)), parent=arm,
                joint_origin=rd.Transform((0, 0, 0.2)),
                inertia=rd.Inertia(0.2, (0, 0, 0.05), np.diag([0.002, 0.002, 0.001])))
    w = world_of(sk, dt=dt)
    w.add_ground()
    return w


STEP_JACOBIAN_NAMES = ("dq_dq", "dq_dv", "dq_dtau", "dv_dq", "dv_dv", "dv_dtau")


def check_trajectory_kernels_and_ilqr(world, integrator):
    """The trajectory-optimisation kernels step with `world`'s integrator: _core_trajectory_jacobians equals
    step_jacobians along a rollout of world, and iLQR on arm7 with World(integrator=integrator) reaches a target
    whose torques that integrator's rollout reproduces."""
    rng = np.random.default_rng(3)
    TAU = rng.normal(size=(4, world.nv))
    Q, V = world.rollout(world.random_configuration(rng), 0.3 * rng.normal(size=world.nv), TAU)
    jac = world._core_trajectory_jacobians(Q, V, TAU).transpose(0, 1, 3, 2)
    for t in range(4):
        J = world.step_jacobians(Q[t], V[t], TAU[t])
        for i, name in enumerate(STEP_JACOBIAN_NAMES):
            np.testing.assert_array_equal(jac[t, i], getattr(J, name))
    arm = rd.World(dt=0.01, integrator=integrator)
    arm.add_skeleton(rd.models.load("arm7"))
    q0 = np.array([0.0, -0.4, 0.0, -2.0, 0.0, 1.6, 0.8])
    goal = arm.body_pose(q0, "hand")[:3, 3] + np.array([0.1, -0.15, 0.1])
    prob = rd.trajopt.Problem(arm, 40, q0)
    prob.add_body_target("hand", position=goal, weight=1000.0)
    prob.add_state_cost(v_target=np.zeros(arm.nv), v_weight=1.0, final_only=True)
    prob.add_control_cost(1e-4, tau_target=arm.gravity_forces(q0))
    res = prob.solve("ilqr", max_iters=100, verbose=False)
    Q, _ = arm.rollout(q0, np.zeros(arm.nv), res.tau)
    np.testing.assert_allclose(Q, res.q, atol=1e-12)
    assert np.linalg.norm(arm.body_pose(res.q[-1], "hand")[:3, 3] - goal) < 5e-3


def check_step_vjp_is_the_transposed_jacobian(world, q, v, tau, rtol, f_ext=None):
    """step_vjp(q, v, tau, gq, gv) against J^T g of step_jacobians, random cotangents; returns the cotangents."""
    rng = np.random.default_rng(1)
    gq, gv = rng.normal(size=(2, world.nv))
    J = world.step_jacobians(q, v, tau, f_ext=f_ext)
    g = world.step_vjp(q, v, tau, gq, gv, f_ext=f_ext)
    assert_close(g.q, J.dq_dq.T @ gq + J.dv_dq.T @ gv, rtol=rtol, floor=1.0, what="q")
    assert_close(g.v, J.dq_dv.T @ gq + J.dv_dv.T @ gv, rtol=rtol, floor=1.0, what="v")
    assert_close(g.tau, J.dq_dtau.T @ gq + J.dv_dtau.T @ gv, rtol=rtol, floor=1.0, what="tau")
    np.testing.assert_array_equal(g.q_next, J.q_next)
    return g


def check_rollout_backward_equals_chained_jacobians(world, q0, v0, rtol, T=4):
    """A recorded rollout's backward pass against the step Jacobians chained backwards by hand."""
    rng = np.random.default_rng(2)
    n = world.nv
    taus = 0.3 * rng.normal(size=(T, n))
    traj = world.rollout(q0, v0, taus, record=True)
    GQ, GV = rng.normal(size=(2, T + 1, n))
    g = traj.backward(GQ, GV)
    cq, cv = GQ[T].copy(), GV[T].copy()
    expected_tau = np.zeros((T, n))
    for t in range(T - 1, -1, -1):
        J = world.step_jacobians(traj.q[t], traj.v[t], taus[t])
        expected_tau[t] = J.dq_dtau.T @ cq + J.dv_dtau.T @ cv
        cq, cv = GQ[t] + J.dq_dq.T @ cq + J.dv_dq.T @ cv, GV[t] + J.dq_dv.T @ cq + J.dv_dv.T @ cv
    assert_close(g.tau, expected_tau, rtol=rtol, floor=1.0, what="tau")
    assert_close(g.q, cq, rtol=rtol, floor=1.0, what="q0")
    assert_close(g.v, cv, rtol=rtol, floor=1.0, what="v0")


def check_step_jacobians_against_finite_differences(world, q, v, tau):
    """step_jacobians against Ridders' finite differences of step; returns the analytic StepJacobians."""
    from rigidiff.testing import finite_difference_jacobians

    J = world.step_jacobians(q, v, tau)
    qn, vn = world.step(q, v, tau)
    np.testing.assert_array_equal(J.q_next, qn)
    np.testing.assert_array_equal(J.v_next, vn)
    fd = finite_difference_jacobians(world, q, v, tau, method="ridders")
    for name in STEP_JACOBIAN_NAMES:
        analytic, expected = getattr(J, name), getattr(fd, name)
        assert np.abs(expected).max() > 1e-6, name
        assert_close(analytic, expected, rtol=1e-6, floor=1.0, what=name)
    return J


def check_parameter_jacobians_against_finite_differences(world, q, v, tau):
    """step_jacobians(wrt="all") against Ridders' finite differences over the parameters (left unchanged), and
    its state blocks against those without wrt; returns the analytic StepJacobians."""
    from rigidiff.testing import finite_difference_jacobians

    J = world.step_jacobians(q, v, tau, wrt="all")
    before = world.parameters().values.copy()
    fd = finite_difference_jacobians(world, q, v, tau, parameters="all", method="ridders")
    np.testing.assert_array_equal(world.parameters().values, before)
    assert J.parameter_names == fd.parameter_names
    for name in ("dq_dp", "dv_dp"):
        analytic, expected = getattr(J, name), getattr(fd, name)
        assert np.abs(expected).max() > 1e-6, name
        assert_close(analytic, expected, rtol=2e-6, floor=1.0, what=name)
    assert_close(J.A, world.step_jacobians(q, v, tau).A, rtol=1e-12, floor=1.0, what="A")  # as without wrt
    return J
