"""Small contact scenes for the one-step contact-gradient tests (test_contact_gradients.py).

Every builder returns ``(world, q, v, tau)``: a world and a state whose step solves contact (or joint)
constraints in one clear mode. The scenes follow Nimble's gradient suite (DiffDART), moved to z up
(gravity along -z), and are prepared for finite differences:

- contacts start with a small penetration (PEN), so a perturbation of 1e-6 keeps every contact;
- forces and velocities are far from the ties of the contact modes: sticking friction needs a fraction
  of the friction cone, sliding is fast enough to stay on its bound, pushes clearly load the normals;
- boxes that touch a face are smaller than the face (no vertex-vertex contacts).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from scipy.spatial.transform import Rotation

import rigidiff as rd

DT = 1e-3
PEN = 1e-4  # initial penetration of the contacts (m)


# ------------------------------------------------------------------------------------------ helpers


def axis_angle(axis, angle) -> np.ndarray:
    """Rotation matrix of ``angle`` (rad) about ``axis``."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * K @ K


def rotation_between(u, w) -> np.ndarray:
    """The rotation of least angle taking direction u to direction w (not opposite)."""
    u = np.asarray(u, dtype=float) / np.linalg.norm(u)
    w = np.asarray(w, dtype=float) / np.linalg.norm(w)
    axis = np.cross(u, w)
    if np.linalg.norm(axis) < 1e-12:
        return np.eye(3)
    return axis_angle(axis, np.arccos(np.clip(u @ w, -1.0, 1.0)))


VERTEX_DOWN = rotation_between((1.0, 1.0, 1.0), (0.0, 0.0, -1.0))  # a cube's corner (h, h, h) points down
VERTEX_UP = rotation_between((1.0, 1.0, 1.0), (0.0, 0.0, 1.0))  # ... points up
EDGE_ALONG_X = axis_angle((1.0, 0.0, 0.0), np.pi / 4)  # a cube's edges along x point up and down
EDGE_ALONG_Y = axis_angle((0.0, 1.0, 0.0), np.pi / 4)  # ... along y
AXIS_ALONG_X = axis_angle((0.0, 1.0, 0.0), np.pi / 2)  # a capsule's axis (z) along x
AXIS_ALONG_Y = axis_angle((1.0, 0.0, 0.0), np.pi / 2)  # ... along y


def free_q(position, rotation=None) -> np.ndarray:
    """Free-joint coordinates (x, y, z, qx, qy, qz, qw) of a pose."""
    R = np.eye(3) if rotation is None else rotation
    return np.concatenate([np.asarray(position, dtype=float), rd.Transform(rotation=R).quaternion])


def new_world(*skeletons, dt=DT, **contact_options) -> rd.World:
    world = rd.World(dt=dt)
    for sk in skeletons:
        world.add_skeleton(sk)
    if contact_options:
        world.contact_options(**contact_options)
    return world


def box_body(
    sk, name, size, mass, joint, parent=None, joint_origin=None, friction=0.5, restitution=0.0, shape_origin=None
):
    """A body carrying one box (its inertia from the box)."""
    shape = rd.Box(size)
    body = sk.add_body(
        name, joint=joint, parent=parent, joint_origin=joint_origin, inertia=rd.Inertia.from_shape(shape, mass=mass)
    )
    body.add_shape(shape, origin=shape_origin, friction=friction, restitution=restitution)
    return body


def welded_box(name, size, position, rotation=None, friction=0.5) -> rd.Skeleton:
    """A skeleton of one box welded to the world."""
    sk = rd.Skeleton(name)
    body = sk.add_body(name, joint=rd.FixedJoint(f"{name}_weld"), joint_origin=rd.Transform(position, rotation))
    body.add_shape(rd.Box(size), friction=friction)
    return sk


def ground_skeleton(friction=0.5, restitution=0.0) -> rd.Skeleton:
    """The plane z = 0, welded (as World.add_ground, so that it can be added in any order)."""
    sk = rd.Skeleton("ground")
    body = sk.add_body("ground", joint=rd.FixedJoint("ground_weld"))
    body.add_shape(rd.Plane(), friction=friction, restitution=restitution, name="ground/plane")
    return sk


def rod_inertia(mass, length, axis=0, radius=0.02) -> rd.Inertia:
    """A thin rod from the body origin to ``length`` along body ``axis``."""
    diag = np.full(3, mass * (3.0 * radius**2 + length**2) / 12.0)
    diag[axis] = 0.5 * mass * radius**2
    com = np.zeros(3)
    com[axis] = 0.5 * length
    return rd.Inertia(mass, com, np.diag(diag))


def point_force_torques(world, q, body, point, force) -> np.ndarray:
    """Generalized forces J(point)^T force of a world force applied at a world point of ``body``."""
    J = world.body_jacobian(q, body)  # (linear at the body origin, angular), world axes
    origin = world.body_pose(q, body)[:3, 3]
    torque = np.cross(np.asarray(point) - origin, force)
    return J[:3].T @ np.asarray(force, dtype=float) + J[3:].T @ torque


FRICTION = {"none": 0.0, "static": 1.0, "slipping": 0.2}


# ------------------------------------------------------------------------------------------ 1. blocks


def block_on_ground(friction="static", joint="translational", mass=1.0, damping=0.0, stiffness=0.0):
    """A 0.2 m cube (mass ``mass``) on the ground plane, PEN deep, its 4 bottom corners in contact.

    friction: "none" (frictionless), "static" (mu = 1, pushed sideways at ~10 % of the cone: sticking)
    or "slipping" (mu = 0.2, sliding at 0.5 m/s along x and pushed along y: the x rows on their bound,
    the y rows sticking). joint: "translational" (x, y, z), "planar" (the x-z plane: x, -z and the pitch)
    or "free" (with a small yaw rate). damping / stiffness: passive terms of the block's joint (rest at 0).
    """
    mu = FRICTION[friction]
    sk = rd.Skeleton("block")
    passive = {"damping": damping, "stiffness": stiffness} if joint != "free" else {}
    j = {
        "translational": lambda: rd.TranslationalJoint("slide", **passive),
        "planar": lambda: rd.PlanarJoint("plane", normal=(0.0, 1.0, 0.0), **passive),
        "free": lambda: rd.FreeJoint("free"),
    }[joint]()
    box_body(sk, "block", (0.2, 0.2, 0.2), mass, j, friction=mu)
    world = new_world(ground_skeleton(friction=mu), sk)
    z = 0.1 - PEN
    slide = 0.5 if friction == "slipping" else 0.0
    if joint == "translational":
        q = np.array([0.0, 0.0, z])
        v = np.array([slide, 0.0, 0.0])
        tau = np.array([1.0, 0.6, -2.0])
    elif joint == "planar":  # q = (x, -z, pitch about y)
        q = np.array([0.0, -z, 0.0])
        v = np.array([slide, 0.0, 0.0])
        tau = np.array([1.0, 2.0, 0.0])
    else:
        q = free_q((0.0, 0.0, z))
        v = np.array([slide, 0.0, 0.0, 0.0, 0.0, 0.01])
        tau = np.array([1.0, 0.6, -2.0, 0.0, 0.0, 0.0])
    return world, q, v, tau


# ------------------------------------------------------------------------------------------ 2. sphere stack


def sphere_stack():
    """Two spheres (r = 0.1) on prismatic z joints, the top one resting on the bottom one and the bottom
    one on the ground, both overlaps PEN; both moving down a little. Both normals clamp: the two
    movable bodies are coupled through the clamping set. The friction rows move nothing (prismatic z)."""
    world = new_world(ground_skeleton())
    for name, mass in (("bottom", 1.0), ("top", 0.5)):
        sk = rd.Skeleton(name)
        shape = rd.Sphere(0.1)
        body = sk.add_body(
            name,
            joint=rd.PrismaticJoint(f"{name}_z", axis=(0.0, 0.0, 1.0)),
            inertia=rd.Inertia.from_shape(shape, mass=mass),
        )
        body.add_shape(shape)
        world.add_skeleton(sk)
    q = np.array([0.1 - PEN, 0.3 - 2 * PEN])
    v = np.array([-0.01, -0.005])
    tau = np.array([0.5, 0.0])  # the top sphere is not actuated
    return world, q, v, tau


# ------------------------------------------------------------------------------------------ 3. two blocks


def two_blocks(mass_left=1.0, mass_right=2.0):
    """Two frictionless blocks on prismatic x joints pushed together (no ground: gravity is orthogonal
    to both joints). The left cube (0.2 m) presses its face on the larger right box (0.2 x 0.4 x 0.4),
    which gives 4 redundant contacts (least-squares standardised)."""
    left, right = rd.Skeleton("left"), rd.Skeleton("right")
    box_body(left, "left", (0.2, 0.2, 0.2), mass_left, rd.PrismaticJoint("left_x", axis=(1.0, 0.0, 0.0)), friction=0.0)
    box_body(
        right, "right", (0.2, 0.4, 0.4), mass_right, rd.PrismaticJoint("right_x", axis=(1.0, 0.0, 0.0)), friction=0.0
    )
    world = new_world(left, right)
    q = np.array([-0.1 + PEN / 2, 0.1 - PEN / 2])
    v = np.array([0.02, -0.01])
    tau = np.array([1.0, -0.5])
    return world, q, v, tau


# ------------------------------------------------------------------------------------------ 4. bounce


def bouncing_block(restitution_combine="max"):
    """A translational cube (restitution 0.5) hitting the ground (restitution 1.0) at 1 m/s, PEN deep:
    the 4 corners bounce with e = 1.0 ("max", the default rule) or e = 0.5 ("min")."""
    sk = rd.Skeleton("block")
    box_body(sk, "block", (0.2, 0.2, 0.2), 1.0, rd.TranslationalJoint("slide"), restitution=0.5)
    world = new_world(ground_skeleton(restitution=1.0), sk, restitution_combine=restitution_combine)
    q = np.array([0.0, 0.0, 0.1 - PEN])
    v = np.array([0.0, 0.0, -1.0])
    tau = np.array([0.3, 0.0, 0.0])
    return world, q, v, tau


# ------------------------------------------------------------------------------------------ 5. sled


def sliding_reverse_pendulum():
    """A frictionless sled (translational box 0.4 x 0.4 x 0.2 on the ground) carrying an inverted
    pendulum (a revolute pole about y, 30 degrees from vertical), pushed along x and down."""
    sk = rd.Skeleton("sled")
    sled = box_body(sk, "sled", (0.4, 0.4, 0.2), 1.0, rd.TranslationalJoint("sled_xyz"), friction=0.0)
    pole = sk.add_body(
        "pole",
        joint=rd.RevoluteJoint("pole_hinge", axis=(0.0, 1.0, 0.0)),
        parent=sled,
        joint_origin=rd.Transform((0.0, 0.0, 0.1)),
        inertia=rod_inertia(2.0, 0.6, axis=2),
    )
    pole.add_shape(rd.Box((0.04, 0.04, 0.6)), origin=rd.Transform((0.0, 0.0, 0.3)), friction=0.0)
    world = new_world(ground_skeleton(friction=0.0), sk)
    q = np.array([0.0, 0.0, 0.1 - PEN, np.radians(30.0)])
    v = np.array([0.1, 0.0, 0.0, 0.2])
    tau = np.array([1.0, 0.0, -10.0, 0.0])
    return world, q, v, tau


# ------------------------------------------------------------------------------------------ 6. multigroup


def multigroup(n_pairs=2):
    """n independent pairs side by side (1 m apart): a translational bottom box (0.4 m) sliding on the
    ground at 0.2 m/s (ground friction 0.05) and a free top cube (0.2 m) riding on it, sticking (friction
    0.5 and 1.0 alternately), pushed along x. Each pair is an island of its own: the Jacobians are
    block-diagonal over pairs."""
    world = new_world(ground_skeleton(friction=0.05))
    q, v, tau = [], [], []
    for k in range(n_pairs):
        mu = 0.5 if k % 2 == 0 else 1.0
        bottom, top = rd.Skeleton(f"bottom{k}"), rd.Skeleton(f"top{k}")
        box_body(
            bottom,
            f"bottom{k}",
            (0.4, 0.4, 0.4),
            2.0,
            rd.TranslationalJoint(f"bottom{k}_xyz"),
            friction=mu,
            joint_origin=rd.Transform((1.0 * k, 0.0, 0.0)),
        )
        box_body(top, f"top{k}", (0.2, 0.2, 0.2), 1.0, rd.FreeJoint(f"top{k}_free"), friction=mu)
        world.add_skeleton(bottom)
        world.add_skeleton(top)
        q += [np.array([0.0, 0.0, 0.2 - PEN]), free_q((1.0 * k + 0.03 * k, 0.01, 0.5 - 2 * PEN))]
        v += [np.array([0.2, 0.0, 0.0]), np.array([0.2, 0.0, 0.0, 0.0, 0.0, 0.02])]
        tau += [np.array([0.5, 0.0, 0.0]), np.array([1.0 + 0.5 * k, 0.3, -1.0, 0.0, 0.0, 0.0])]
    return world, np.concatenate(q), np.concatenate(v), np.concatenate(tau)


def skeleton_dofs(world) -> dict:
    """{skeleton name: slice of its dofs in v}."""
    out, start = {}, 0
    for sk in world.skeletons:
        out[sk.name] = slice(start, start + sk.nv)
        start += sk.nv
    return out


# ------------------------------------------------------------------------------------------ 7. arm / wall

ARM_LINK = 0.3
ARM_BOX = 0.1
# a rotation of the end cube that makes one corner stick out (Nimble rotates its end box by (0, 45, -45) deg)
ARM_BOX_RPY = (0.0, np.radians(45.0), np.radians(-45.0))


def arm_against_wall(n_links=3, angle_deg=30.0, damping=0.0, stiffness=0.0, friction=1.0, push=2.0):
    """A revolute chain (axes along y: it moves in the x-z plane under gravity) of ``n_links`` links of
    0.3 m and 1 kg, the first joint at ``angle_deg`` and the others curling back by as much in all, whose
    end carries a rotated cube. One corner of the cube touches a welded wall (a vertex on a face through
    a kinematic chain), PEN deep. The torques hold the arm against gravity and press the corner on the
    wall with ``push`` N; the joints move at +-0.05 rad/s, the corner towards the wall. damping /
    stiffness: passive terms of every joint (rest at 0)."""
    sk = rd.Skeleton("arm")
    parent = None
    for i in range(n_links):
        origin = rd.Transform((0.0, 0.0, 1.0)) if i == 0 else rd.Transform((ARM_LINK, 0.0, 0.0))
        parent = sk.add_body(
            f"link{i}",
            parent=parent,
            joint_origin=origin,
            joint=rd.RevoluteJoint(f"j{i}", axis=(0.0, 1.0, 0.0), damping=damping, stiffness=stiffness),
            inertia=rod_inertia(1.0, ARM_LINK),
        )
    box_origin = rd.Transform((ARM_LINK + 0.5 * ARM_BOX, 0.0, 0.0), rpy=ARM_BOX_RPY)
    parent.add_shape(rd.Box((ARM_BOX,) * 3), origin=box_origin, friction=friction)
    q = np.full(n_links, np.radians(angle_deg))
    q[1:] *= -1.0 / max(1, n_links - 1)  # the end link horizontal: the corner leads along +x
    # the corner of the end cube farthest along the tip direction
    probe = new_world(sk)
    pose = probe.body_pose(q, f"link{n_links - 1}")
    direction = pose[:3, 0] * np.array([1.0, 0.0, 1.0])
    direction /= np.linalg.norm(direction)
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * 0.5 * ARM_BOX
    box_world = pose[:3, :3] @ (box_origin.rotation @ corners.T + box_origin.translation[:, None]) + pose[:3, 3:4]
    reach = direction @ box_world
    tip = box_world[:, np.argmax(reach)]
    # the wall: its face through the tip minus PEN, normal to ``direction``
    thickness = 0.1
    center = tip + (0.5 * thickness - PEN) * direction
    wall = welded_box(
        "wall", (thickness, 2.0, 2.0), center, rotation_between((1.0, 0.0, 0.0), direction), friction=friction
    )
    world = new_world(wall, sk)  # the wall has no dofs: q, v and tau are the arm's
    v = 0.05 * np.array([(-1.0) ** i for i in range(n_links)])
    if point_force_torques(world, q, f"link{n_links - 1}", tip, direction) @ v < 0:  # (J^T d) . v = d . J v
        v = -v  # the corner moves towards the wall
    tau = world.gravity_forces(q) + point_force_torques(world, q, f"link{n_links - 1}", tip, push * direction)
    return world, q, v, tau


# ------------------------------------------------------------------------------------------ 8. cartpole


def cartpole_on_ground(angle_deg=15.0, cart_speed=0.0):
    """A cart (box 0.4 x 0.2 x 0.1 on a planar joint in the x-z plane: x, -z, pitch) on the ground with
    friction 0.5 and a pole (revolute about y, 0.5 m, 0.3 kg) at ``angle_deg``, the cart pushed along x.
    cart_speed = 0: sticking; a speed of 0.3 m/s: sliding."""
    sk = rd.Skeleton("cartpole")
    cart = box_body(sk, "cart", (0.4, 0.2, 0.1), 1.0, rd.PlanarJoint("cart_plane", normal=(0.0, 1.0, 0.0)))
    sk.add_body(
        "pole",
        joint=rd.RevoluteJoint("pole_hinge", axis=(0.0, 1.0, 0.0)),
        parent=cart,
        joint_origin=rd.Transform((0.0, 0.0, 0.05)),
        inertia=rod_inertia(0.3, 0.5, axis=2),
    )
    world = new_world(ground_skeleton(friction=0.5), sk)
    q = np.array([0.0, -(0.05 - PEN), 0.0, np.radians(angle_deg)])
    v = np.array([cart_speed, 0.0, 0.0, 0.1])
    tau = np.array([1.0, 0.0, 0.0, 0.0])
    return world, q, v, tau


# ------------------------------------------------------------------------------------------ 10. geometry pairs


class PairSpec(NamedTuple):
    """Two bodies of the geometry suite: B centred at the origin, A above it (geometry_pair lowers A from
    ``height`` until it is PEN into B)."""

    shape_a: rd.Shape
    rot_a: np.ndarray | None  # rotation of A (None: identity)
    shape_b: rd.Shape
    rot_b: np.ndarray | None
    height: float  # height of A's centre where A touches B
    offset: tuple  # horizontal (x, y) position of A
    ctype: str  # contact type with A as the contact's body A
    n_contacts: int
    sliding: bool  # A slides over B at SLIDE (else both start at rest: sticking)


_H = 0.1  # half-size of the 0.2 m cube
_CUBE, _BIG = rd.Box((0.2,) * 3), rd.Box((0.4,) * 3)
_BALL = rd.Sphere(0.1)
_ROD, _STUB = rd.Capsule(0.05, 0.3), rd.Capsule(0.05, 0.2)
_TILT30 = axis_angle((0.0, 1.0, 0.0), np.radians(30.0))
def cylinder_on_ground(pose, friction):
    """A free 1 kg cylinder (radius 0.05 m, length 0.3 m) 0.5 mm into the ground, spinning about its own
    axis and drifting: lying on its side (a line of two rim contacts) or tilted onto one rim point."""
    cyl = rd.Cylinder(radius=0.05, length=0.3)
    sk = rd.Skeleton("wheel")
    sk.add_body("wheel", joint=rd.FreeJoint("root"), inertia=rd.Inertia.from_shape(cyl, mass=1.0)).add_shape(
        cyl, friction={"none": 0.0, "static": 1.0, "slipping": 0.1}[friction])
    world = rd.World(dt=1e-3)
    world.add_ground(friction=1.0)
    world.add_skeleton(sk)
    rpy = {"lying": (np.pi / 2, 0.0, 0.3), "tilted": (1.2, 0.3, 0.4)}[pose]
    q = np.r_[0.0, 0.0, 0.0, Rotation.from_euler("xyz", rpy).as_quat()]
    q[2] -= world.collide(q).distances.min() + 5e-4
    v = np.array([0.02, -0.01, 0.0, 0.0, 0.0, 0.4])  # the spin about the local z axis rolls it
    tau = np.array([0.0, 0.0, -1.0, 0.0, 0.0, 0.0])
    return world, q, v, tau


GEOMETRY_PAIRS = {
    "box_vertex_face": PairSpec(
        _CUBE, VERTEX_DOWN, _BIG, None, 0.2 + _H * 3**0.5, (0.03, -0.02), "point_face", 1, False
    ),
    "box_edge_edge": PairSpec(
        _CUBE, EDGE_ALONG_X, _CUBE, EDGE_ALONG_Y, 2 * _H * 2**0.5, (0.01, 0.02), "segment_segment", 1, True
    ),
    "box_face_face": PairSpec(_CUBE, None, _BIG, None, 0.3, (0.02, 0.01), "point_face", 4, False),
    "sphere_box_face": PairSpec(_BALL, None, _BIG, None, 0.3, (0.05, -0.03), "point_face", 1, True),
    "sphere_box_edge": PairSpec(
        _BALL, None, _CUBE, EDGE_ALONG_X, 0.1 + _H * 2**0.5, (0.04, 0.0), "point_segment", 1, False
    ),
    "sphere_box_vertex": PairSpec(
        _BALL, None, _CUBE, VERTEX_UP, 0.1 + _H * 3**0.5, (0.0, 0.0), "point_point", 1, False
    ),
    "sphere_sphere": PairSpec(_BALL, None, rd.Sphere(0.15), None, 0.25, (-0.03, -0.02), "point_point", 1, True),
    "sphere_capsule_end": PairSpec(_BALL, None, _STUB, None, 0.25, (0.02, 0.01), "point_point", 1, False),
    "sphere_capsule_side": PairSpec(_BALL, None, _ROD, AXIS_ALONG_Y, 0.15, (0.0, 0.05), "point_segment", 1, True),
    "capsule_capsule_cross": PairSpec(
        _ROD, AXIS_ALONG_X, _ROD, AXIS_ALONG_Y, 0.1, (0.03, -0.04), "segment_segment", 1, True
    ),
    "capsule_end_box_face": PairSpec(
        _STUB, _TILT30, _BIG, None, 0.25 + 0.1 * 0.75**0.5, (0.0, 0.0), "point_face", 1, False
    ),
    "capsule_side_box_face": PairSpec(_STUB, AXIS_ALONG_X, _BIG, None, 0.25, (0.0, 0.02), "point_face", 2, True),
}
PAIR_VARIANTS = ("pair", "swapped", "self_siblings", "self_chain")
PRESS = 5.0  # N pressing A on B (and B on A)
SLIDE = np.array([0.05, 0.02, 0.0])  # world velocity of A over B in the sliding cases


def _shape_inertia(shape, mass):
    return rd.Inertia.from_shape(shape, mass=mass)


def geometry_pair(kind, variant="pair"):
    """Two bodies from GEOMETRY_PAIRS, A pressed down on B (B centred at the origin) with PRESS N each way
    (gravity on: both fall, the press loads the contact), friction 0.5, A sliding over B at SLIDE in
    the sliding cases. Variants:

    - "pair": A and B are the free bodies of two skeletons, A's added first;
    - "swapped": the same, B's skeleton added first (the contact's A and B may swap);
    - "self_siblings": one skeleton with self-collision, a free hub (1 kg, no shape) whose two free
      children are A and B (siblings: they collide; the hub takes the reactions of both pushes);
    - "self_chain": one skeleton with self-collision, B free on the world, a free shapeless middle body
      on B and A free on that one (grandparent and grandchild: they collide).
    """
    height = GEOMETRY_PAIRS[kind].height
    height -= 0.01  # start deeper than wanted, then lift A until its deepest contact is PEN deep
    for _ in range(4):
        world, q, v, tau = _geometry_pair_at(kind, variant, height)
        contacts = world.collide(q)
        deepest = int(np.argmin(contacts.distances))
        height -= (contacts.distances[deepest] + PEN) / abs(contacts.normals[deepest, 2])
    return _geometry_pair_at(kind, variant, height)


def _geometry_pair_at(kind, variant, height):
    shape_a, rot_a, shape_b, rot_b, _, offset, _, _, sliding = GEOMETRY_PAIRS[kind]
    rot_a = np.eye(3) if rot_a is None else rot_a
    rot_b = np.eye(3) if rot_b is None else rot_b
    pose_a = rd.Transform((offset[0], offset[1], height), rot_a)
    pose_b = rd.Transform((0.0, 0.0, 0.0), rot_b)
    mass_a, mass_b = 1.0, 2.0
    push_a = rot_a.T @ np.array([0.0, 0.0, -PRESS])  # free-joint forces are in the child's axes
    push_b = rot_b.T @ np.array([0.0, 0.0, PRESS])
    slide_a = rot_a.T @ SLIDE if sliding else np.zeros(3)
    zero3 = np.zeros(3)

    def add_a(sk, parent=None, relative=None):
        origin = pose_a if relative is None else relative
        body = sk.add_body("A", joint=rd.FreeJoint("A_free"), parent=parent, inertia=_shape_inertia(shape_a, mass_a))
        body.add_shape(shape_a, friction=0.5)
        return free_q(origin.translation, origin.rotation)

    def add_b(sk, parent=None):
        body = sk.add_body("B", joint=rd.FreeJoint("B_free"), parent=parent, inertia=_shape_inertia(shape_b, mass_b))
        body.add_shape(shape_b, friction=0.5)
        return free_q(pose_b.translation, pose_b.rotation)

    hub_inertia = rd.Inertia(1.0, rotational_inertia=np.eye(3) * 0.01)
    if variant in ("pair", "swapped"):
        ska, skb = rd.Skeleton("a"), rd.Skeleton("b")
        qa, qb = add_a(ska), add_b(skb)
        va, vb = np.concatenate([slide_a, zero3]), np.zeros(6)
        ta, tb = np.concatenate([push_a, zero3]), np.concatenate([push_b, zero3])
        if variant == "pair":
            world = new_world(ska, skb)
            q, v, tau = np.concatenate([qa, qb]), np.concatenate([va, vb]), np.concatenate([ta, tb])
        else:
            world = new_world(skb, ska)
            q, v, tau = np.concatenate([qb, qa]), np.concatenate([vb, va]), np.concatenate([tb, ta])
    elif variant == "self_siblings":
        sk = rd.Skeleton("pair", self_collision=True)
        hub = sk.add_body("hub", joint=rd.FreeJoint("hub_free"), inertia=hub_inertia)
        qa = add_a(sk, parent=hub)  # the hub sits at the world origin: relative poses are world poses
        qb = add_b(sk, parent=hub)
        world = new_world(sk)
        q = np.concatenate([free_q(zero3), qa, qb])
        v = np.concatenate([np.zeros(6), slide_a, zero3, np.zeros(6)])
        tau = np.concatenate([np.zeros(6), push_a, zero3, push_b, zero3])
    elif variant == "self_chain":
        sk = rd.Skeleton("pair", self_collision=True)
        qb = add_b(sk)
        mid = sk.add_body("mid", joint=rd.FreeJoint("mid_free"), parent="B", inertia=hub_inertia)
        qa = add_a(sk, parent=mid, relative=pose_b.inverse() @ pose_a)  # mid sits on B's frame
        world = new_world(sk)
        q = np.concatenate([qb, free_q(zero3), qa])
        v = np.concatenate([np.zeros(6), np.zeros(6), slide_a, zero3])
        tau = np.concatenate([push_b, zero3, np.zeros(6), push_a, zero3])
    else:
        raise ValueError(f"unknown variant {variant!r}")
    return world, q, v, tau


# ------------------------------------------------------------------------------------------ 12. joint constraints


def pendulum_world(n_links=1, lower=None, upper=None, friction=0.0):
    """A horizontal chain of revolute links about y (0.5 m, 1 kg each) with joint limits and Coulomb
    joint friction acting as constraints (contact_options(joint_limits=True, joint_friction=True))."""
    sk = rd.Skeleton("pendulum")
    parent = None
    for i in range(n_links):
        lo = lower[i] if isinstance(lower, (list, tuple)) else lower
        up = upper[i] if isinstance(upper, (list, tuple)) else upper
        fr = friction[i] if isinstance(friction, (list, tuple)) else friction
        parent = sk.add_body(
            f"link{i}",
            parent=parent,
            joint_origin=rd.Transform((0.5, 0.0, 0.0)) if i else None,
            joint=rd.RevoluteJoint(f"hinge{i}", axis=(0.0, 1.0, 0.0), lower=lo, upper=up, friction=fr),
            inertia=rod_inertia(1.0, 0.5),
        )
    return new_world(sk, joint_limits=True, joint_friction=True)


def pendulum_at_limit():
    """A pendulum falling onto its upper limit (0.5 rad, about y: falling increases the angle), 1e-4 rad
    before it and moving towards it: the limit row clamps."""
    world = pendulum_world(lower=-1.0, upper=0.5)
    return world, np.array([0.5 - PEN]), np.array([0.3]), np.array([0.5])


def pendulum_joint_friction(sticking=True):
    """A horizontal pendulum whose hinge has Coulomb friction: 6 N m holds the gravity torque (4.9 N m),
    sticking; 2 N m does not, slipping (the friction row on its bound)."""
    world = pendulum_world(friction=6.0 if sticking else 2.0)
    return world, np.array([0.0]), np.array([0.0 if sticking else 0.2]), np.array([0.3])


def double_pendulum_limit_and_friction():
    """Two links: the first falling onto its upper limit, the second's hinge slipping against its Coulomb
    friction: a limit row and a joint-friction row in one island."""
    world = pendulum_world(2, lower=[-1.0, None], upper=[0.5, None], friction=[0.0, 0.5])
    return world, np.array([0.5 - PEN, 0.2]), np.array([0.3, -0.4]), np.array([0.5, 0.0])


# ------------------------------------------------------------------------------------------ 14. solo12

SOLO_STANDING = np.array([0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6])


def quadrupeds_on_ground(robots_dir, names, slide=0.0, settle_steps=150):
    """Quadrupeds from example-robot-data (collision geometry, joint springs towards their neutral posture)
    dropped side by side onto the ground, their bases sliding at `slide` m/s along x, settled."""
    paths = {"solo12": "solo_description/robots/solo12.urdf",
             "anymal": "anymal_b_simple_description/robots/anymal.urdf"}
    skeletons = []
    for i, name in enumerate(names):
        with warnings.catch_warnings():  # anymal_b's base carries a near-zero placeholder inertial
            warnings.simplefilter("ignore", UserWarning)
            sk = rd.load_urdf(robots_dir / paths[name], floating_base=True, package_dirs=[robots_dir],
                              name=f"{name}{i}")
        for body in sk.bodies:
            if body.joint.nv == 1:
                body.joint.stiffness, body.joint.damping = np.array([200.0]), np.array([5.0])
        skeletons.append(sk)
    world = new_world(ground_skeleton(friction=0.8), *skeletons)
    q, v = world.neutral_configuration(), np.zeros(world.nv)
    roots = [world.joint(n) for n in world.joint_names if world.joint(n).type == "free"]
    for k, root in enumerate(roots):
        q[root.q_index] += 1.5 * k
        v[root.v_index] = slide
    lowest = min(world.collide(q).distances)
    for root in roots:
        q[root.q_index + 2] -= lowest + PEN
    for _ in range(settle_steps):
        q, v = world.step(q, v, np.zeros(world.nv))
    return world, q, v, np.random.default_rng(0).normal(scale=0.5, size=world.nv)


def plank_over_edge(spin=2.0):
    """A 0.6 x 0.1 x 0.05 m plank of 1 kg pitched 0.1 rad over the edge x = 0.5 of a welded 1 m table
    box (friction 0.8), its CoM past the edge: the plank's bottom face clips the table's edge, so the
    contacts are the two points where that edge leaves the face (face_edge), PEN deep. It tips about the
    edge (0.5 rad/s) and spins about z at `spin` rad/s, which slides the points along the edge."""
    table = welded_box("table", (1.0, 1.0, 1.0), (0.0, 0.0, -0.5), friction=0.8)
    sk = rd.Skeleton("plank")
    size = np.array([0.6, 0.1, 0.05])
    box_body(sk, "plank", size, 1.0, rd.FreeJoint("plank_free"), friction=0.8)
    R = rd.Transform(rpy=(0.0, 0.1, 0.0)).rotation  # the +x end down
    over_edge = np.array([-0.1, 0.0, -size[2] / 2])  # the bottom face's point above the edge, plank frame
    q = free_q(np.array([0.5, 0.0, -PEN]) - R @ over_edge, R)
    v = np.array([0.0, 0.0, 0.0, 0.3, -0.5, spin])
    return new_world(table, sk), q, v, np.zeros(6)


def box_on_offset_box(spin=(0.3, -0.5, 2.0)):
    """A 0.2 m cube of 1 kg on a welded cube of the same size, shifted by (5, 5) cm, PEN deep (friction
    0.8), spinning at `spin` rad/s: the patch is a square with a corner of either box and two edge
    crossings, and the spin loads the top box's corner and one crossing."""
    base = welded_box("base", (0.2, 0.2, 0.2), (0.0, 0.0, -0.1), friction=0.8)
    sk = rd.Skeleton("top")
    box_body(sk, "top", (0.2, 0.2, 0.2), 1.0, rd.FreeJoint("top_free"), friction=0.8)
    return new_world(base, sk), free_q((0.05, 0.05, 0.1 - PEN)), np.r_[0.0, 0.0, 0.0, spin], np.zeros(6)


def robot_on_ground(robots_dir, rel_path, settle_steps=300, friction=0.8):
    """A robot of example-robot-data (``rel_path`` under ``robots_dir``; floating base, collision
    geometry) dropped in its neutral posture onto the ground, lowest point PEN deep, and settled for
    ``settle_steps`` with joint springs towards that posture (stiffness 20 and damping 0.5 N m per
    radian and rad/s per kg of robot). Returns the settled state and small random torques."""
    with warnings.catch_warnings():  # placeholder inertias, unactuated joints
        warnings.simplefilter("ignore", UserWarning)
        sk = rd.load_urdf(robots_dir / rel_path, floating_base=True, package_dirs=[robots_dir], name="robot")
    total_mass = sum(body.inertia.mass for body in sk.bodies)
    for body in sk.bodies:
        if body.joint.nv == 1:
            body.joint.stiffness = np.array([20.0 * total_mass])
            body.joint.damping = np.array([0.5 * total_mass])
    world = new_world(ground_skeleton(friction=friction), sk)
    q, v = world.neutral_configuration(), np.zeros(world.nv)
    q[2] -= min(world.collide(q).distances) + PEN
    for _ in range(settle_steps):
        q, v = world.step(q, v, np.zeros(world.nv))
    return world, q, v, np.random.default_rng(0).normal(scale=0.2, size=world.nv)


def solo12_standing(robots_dir, settle_steps=300):
    """Solo12 (example-robot-data, collision meshes) on the ground plane (friction 1) in its standing
    posture, lowered until its deepest foot point is PEN deep, then settled for ``settle_steps`` under
    PD torques towards the posture (plus the joints' gravity torques); returns the settled state and the
    PD torques of that state."""
    path = robots_dir / "solo_description" / "robots" / "solo12.urdf"
    sk = rd.load_urdf(path, floating_base=True, package_dirs=[robots_dir])
    world = new_world(ground_skeleton(friction=1.0), sk)
    q = np.concatenate([free_q((0.0, 0.0, 0.4)), SOLO_STANDING])
    while not len(world.collide(q)):  # lower the base until a foot touches
        q[2] -= 1e-3
    q[2] -= min(world.collide(q).distances) + PEN
    joints = np.r_[np.zeros(6), np.ones(12)]

    def pd(q, v):
        tau = np.zeros(world.nv)
        tau[6:] = 5.0 * (SOLO_STANDING - q[7:]) - 0.2 * v[6:]
        return tau + joints * world.gravity_forces(q)

    v = np.zeros(world.nv)
    for _ in range(settle_steps):
        q, v = world.step(q, v, pd(q, v))
    return world, q, v, pd(q, v)
