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
