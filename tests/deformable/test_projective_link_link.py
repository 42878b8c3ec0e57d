"""Links against links in projective worlds: a free box resting on another skeleton's box at the penalty's depth
and on a box welded to the world, two spheres pressed together, a chain folding onto itself held apart by its
self-collision (and passing through itself without it), the parent-child and welded-child exclusions, Coulomb
friction between links, and the gradients of steps against central differences of our own step (the joints' state
and forces, the vertices along a direction, friction, also switched on at 0, and contact stiffness) for a sphere, a
box's corners, a capsule and a cylinder on a turning slab, a folded chain touching itself and a free box sliding on
the slab, with the dense Jacobians and a rollout's backward pass."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from test_projective_floating_base import BOX, _box_skeleton
from test_projective_floating_gradients import _check
from test_projective_link_obstacles import (G, K, _check_gradients, _check_jacobians_and_rollout, _leg, _push,
                                            _shape_pose, _world)
from test_projective_obstacles import _friction_switched_on

import rigidiff as rd
from rigidiff.deformable.link_hulls import cylinder_hull

LOWER = (0.3, 0.3, 0.04)  # the stack's lower box (wider than the upper one: only the upper box's corners probe)
UPPER = (0.08, 0.06, 0.04)
RADIUS, CONNECTOR, DAMPING = 0.02, 0.035, 0.2  # the folding chain's capsules and joints


def _slider(name, shape, height, axis=(0, 0, 1), mass=1.0, damping=0.0):
    """A shape on a prismatic joint whose zero is at `height` (on the z axis)."""
    sk = rd.Skeleton(name)
    body = sk.add_body("body", rd.PrismaticJoint("slide", axis=axis, damping=damping),
                       joint_origin=rd.Transform((0.0, 0.0, height)), inertia=rd.Inertia.from_shape(shape, mass=mass))
    body.add_shape(shape)
    return sk


def _free_box(name, size, height, mass):
    sk = rd.Skeleton(name)
    box = rd.Box(size)
    body = sk.add_body("body", rd.FreeJoint("root"), joint_origin=rd.Transform((0.0, 0.0, height)),
                       inertia=rd.Inertia.from_shape(box, mass=mass))
    body.add_shape(box)
    return sk


def test_a_free_box_rests_on_another_skeletons_box_at_the_penalty_depth():
    """A box on a free joint dropped on a wider box on a prismatic joint standing on the ground: the upper box's
    four bottom corners carry its weight (m g / 4 k deep each), the lower box's corners carry both weights on the
    ground; without link-link contact (one skeleton, self_collision off) the upper box falls through."""
    m_low, m_up = 1.0, 0.3
    world = _world()
    world.add_skeleton(_slider("table", rd.Box(LOWER), LOWER[2] / 2, mass=m_low))
    world.add_skeleton(_free_box("lid", UPPER, LOWER[2] + UPPER[2] / 2 + 1e-3, m_up))
    low, up = world.layout("table"), world.layout("lid")
    q, v = world.q, world.v
    for _ in range(400):
        q, v = world.step(q, v)
    lower_top = LOWER[2] + q[low.q][0]
    upper_bottom = LOWER[2] + 1e-3 + q[up.q][2]
    assert lower_top - upper_bottom == pytest.approx(m_up * G / (4 * K), rel=1e-6)
    assert -(q[low.q][0]) == pytest.approx((m_low + m_up) * G / (4 * K), rel=1e-6)
    assert np.abs(v[up.v]).max() < 1e-8 and np.abs(q[up.q][:2]).max() < 1e-9  # at rest, not drifting
    assert world.last_step["contacts"] == 8  # four corners on the lower box, four on the ground

    # the same two boxes as one skeleton without self-collision pass through each other
    sk = rd.Skeleton("both")
    box = rd.Box(LOWER)
    table = sk.add_body("table", rd.PrismaticJoint("slide", axis=(0, 0, 1)),
                        joint_origin=rd.Transform((0.0, 0.0, LOWER[2] / 2)),
                        inertia=rd.Inertia.from_shape(box, mass=m_low))
    table.add_shape(box)
    lid = sk.add_body("lid", rd.PrismaticJoint("drop", axis=(0, 0, 1)),
                      joint_origin=rd.Transform((0.0, 0.0, LOWER[2] + UPPER[2] / 2 + 1e-3)),
                      inertia=rd.Inertia.from_shape(rd.Box(UPPER), mass=m_up))
    lid.add_shape(rd.Box(UPPER))
    world = _world()
    world.add_skeleton(sk)
    q, v = world.q, world.v
    for _ in range(30):
        q, v = world.step(q, v)
    assert q[world.layout("both").q][1] < -LOWER[2]  # through the table, down to the ground


def _side_by_side(force, width, steps=300, friction=0.0):
    """A box of `width` (along y) on a rail along x, pushed with `force` against a welded box (UPPER) beside it, of
    the same thickness (their tops and bottoms in one plane), both 0.5 m above the ground: the overlap at the
    end (the pusher starts 1 mm short of the wall), and the world."""
    world = _world(friction=friction)
    wall = rd.Skeleton("wall")
    wall.add_body("wall", None, joint_origin=rd.Transform((0.1, 0.0, 0.5))).add_shape(rd.Box(UPPER))
    world.add_skeleton(wall)
    pusher = rd.Skeleton("pusher")
    box = rd.Box((UPPER[0], width, UPPER[2]))
    pusher.add_body("body", rd.PrismaticJoint("rail", axis=(1, 0, 0), damping=1.0),
                    joint_origin=rd.Transform((0.1 - UPPER[0] - 1e-3, 0.0, 0.5)),
                    inertia=rd.Inertia.from_shape(box, mass=0.3)).add_shape(box)
    world.add_skeleton(pusher)
    s = world.layout("pusher")
    q, v = world.q, world.v
    tau = np.zeros(world.nv)
    tau[s.v] = force
    for _ in range(steps):
        q, v = world.step(q, v, tau)
    return q[s.q][0] - 1e-3, world


@pytest.mark.parametrize("width", [UPPER[1], 0.04])
def test_two_boxes_of_one_thickness_side_by_side_push_apart(width):
    """Every corner of each box lies in the other's top or bottom plane (depth 0), so corners alone never see the
    overlap and the pusher went through the wall. A narrower pusher's two edges that cut into the wall's side
    probe at their midpoints; boxes of one width, whose edges lie in each other's faces too, probe at the centres
    of the faces that overlap, one each way: two probes either way, F / 2k deep at rest."""
    force = 2.0
    overlap, world = _side_by_side(force, width)
    assert overlap == pytest.approx(force / (2 * K), rel=1e-6)
    assert world.last_step["contacts"] == 2


@pytest.mark.parametrize("width", [UPPER[1], 0.04])
def test_gradients_of_two_boxes_side_by_side_match_central_differences(width):
    """step_vjp through the face-centre and edge-midpoint probes, mid-push (pressed 0.2 mm in, moving), against
    central differences of our own step: the rail's q, v and force, friction and contact stiffness."""
    _, world = _side_by_side(2.0, width, steps=0, friction=0.4)
    s = world.layout("pusher")
    q, v = world.q.copy(), world.v.copy()
    q[s.q] = 1e-3 + 2e-4
    v[s.v] = 0.05
    f = np.zeros(world.nv)
    f[s.v] = 2.0
    world.step(q, v, f)
    assert world.last_step["contacts"] == 2
    _check_gradients(world, None, q, v, f, skeletons=("pusher",))


def test_a_free_box_rests_on_a_box_welded_to_the_world():
    """A table top welded to the world (a skeleton without joints) holds a free box dropped on it at m g / 4 k, and
    its legs touch neither the ground they stand in nor the soft cube inside one of them."""
    m = 0.3
    world = _world()
    table = rd.Skeleton("table")
    top = table.add_body("top", None, joint_origin=rd.Transform((0.0, 0.0, 0.03 - LOWER[2] / 2)))
    top.add_shape(rd.Box(LOWER))
    top.add_shape(rd.Box((0.1, 0.1, 0.3)), rd.Transform((1.0, 1.0, 0.0)))  # around the soft cube
    top.add_shape(rd.Box((0.05, 0.05, 0.1)), rd.Transform((0.5, 0.0, -0.03)))  # into the ground
    world.add_skeleton(table)
    world.add_skeleton(_free_box("lid", UPPER, 0.03 + UPPER[2] / 2 + 1e-3, m))
    s = world.layout("lid")
    q, v = world.q, world.v
    for _ in range(300):
        q, v = world.step(q, v)
    assert -(q[s.q][2] + 1e-3) == pytest.approx(m * G / (4 * K), rel=1e-6)
    assert world.last_step["contacts"] == 4 and np.abs(v[s.v]).max() < 1e-8


def _slide_on_table(force, friction=0.5, steps=30):
    """A box on a translational joint resting on another skeleton's wider box (on a vertical rail, standing on the
    ground), then pushed along x with `force` (30 steps: it stays on the table): its x velocities."""
    world = _world(friction=friction)
    world.add_skeleton(_slider("table", rd.Box(LOWER), LOWER[2] / 2))
    sk = rd.Skeleton("lid")
    box = rd.Box(UPPER)
    body = sk.add_body("body", rd.TranslationalJoint("move"),
                       joint_origin=rd.Transform((0.0, 0.0, LOWER[2] + UPPER[2] / 2)),
                       inertia=rd.Inertia.from_shape(box, mass=0.3))
    body.add_shape(box)
    world.add_skeleton(sk)
    return _push(world, "lid", force, steps), world


def test_friction_between_links_holds_a_pushed_box_below_mu_m_g_and_lets_it_slide_above():
    mu, m = 0.5, 0.3
    held, world = _slide_on_table(0.6 * mu * m * G)
    assert np.abs(held[-20:]).max() < world.friction_velocity  # static: slips slower than eps_v
    sliding, world = _slide_on_table(1.4 * mu * m * G)
    acceleration = np.diff(sliding[-20:]) / world.dt
    assert acceleration == pytest.approx(np.full(19, 0.4 * mu * G), rel=1e-6)
    free, _ = _slide_on_table(0.6 * mu * m * G, friction=0.0)
    assert free[-1] == pytest.approx(0.6 * mu * G * 0.3, rel=1e-6)  # frictionless: F / m for 30 steps


def test_two_spheres_pressed_together_overlap_by_force_over_stiffness():
    """Two spheres on horizontal rails pushed at each other by opposite joint forces F: they stop where k d = F."""
    F, r1, r2 = 3.0, 0.03, 0.05
    world = _world(gravity=(0.0, 0.0, 0.0))
    world.add_skeleton(_slider("left", rd.Sphere(r1), 0.5, axis=(1, 0, 0), damping=2.0))
    world.add_skeleton(_slider("right", rd.Sphere(r2), 0.5, axis=(1, 0, 0), damping=2.0), q=[r1 + r2 + 0.01])
    left, right = world.layout("left"), world.layout("right")
    q, v, f = world.q, world.v, np.zeros(world.nv)
    f[left.v], f[right.v] = F, -F
    for _ in range(400):
        q, v = world.step(q, v, f)
    gap = q[right.q][0] - q[left.q][0]
    assert r1 + r2 - gap == pytest.approx(F / K, rel=1e-6)
    assert world.last_step["contacts"] == 1  # two spheres: one probe
    assert q[left.q][0] == pytest.approx(r1 + r2 + 0.01 - q[right.q][0], rel=1e-6)  # equal masses: equal moves


def _chain(self_collision, third="revolute", rest=np.pi / 2 + 0.1, connector=CONNECTOR):
    """Three links in the horizontal plane on revolute joints about z (gravity along them does not turn them): a
    capsule along x, a short box connector, and a capsule that folds back over the first when the springs of the
    second and third joints pull them to `rest` (with the joints at 90 degrees their axes are `connector` apart,
    less than the sum of the radii); the third joint may be a weld at 90 degrees instead."""
    sk = rd.Skeleton("chain", self_collision=self_collision)
    along_x = Rotation.from_euler("y", np.pi / 2).as_matrix()
    first_capsule, last_capsule = rd.Capsule(RADIUS, 0.2), rd.Capsule(RADIUS, 0.18)
    short = rd.Box((connector, 0.04, 0.04))
    first = sk.add_body("first", rd.RevoluteJoint("j1", axis=(0, 0, 1), stiffness=5.0, damping=0.2),
                        joint_origin=rd.Transform((0.0, 0.0, 0.5)),
                        inertia=rd.Inertia.from_shape(first_capsule, mass=0.2, origin=rd.Transform((0.1, 0.0, 0.0))))
    first.add_shape(first_capsule, rd.Transform((0.1, 0.0, 0.0), along_x))
    second = sk.add_body("second", rd.RevoluteJoint("j2", axis=(0, 0, 1), stiffness=0.5, damping=DAMPING,
                                                    rest_position=[rest]),
                         parent=first, joint_origin=rd.Transform((0.2, 0.0, 0.0)),
                         inertia=rd.Inertia.from_shape(short, mass=0.05, origin=rd.Transform((connector / 2, 0, 0))))
    second.add_shape(short, rd.Transform((connector / 2, 0.0, 0.0)))
    if third == "weld":
        joint, origin = None, rd.Transform((connector, 0.0, 0.0), Rotation.from_euler("z", np.pi / 2).as_matrix())
    else:
        joint = rd.RevoluteJoint("j3", axis=(0, 0, 1), stiffness=0.5, damping=DAMPING, rest_position=[rest])
        origin = rd.Transform((connector, 0.0, 0.0))
    last = sk.add_body("last", joint, parent=second, joint_origin=origin,
                       inertia=rd.Inertia.from_shape(last_capsule, mass=0.2, origin=rd.Transform((0.1, 0.0, 0.0))))
    last.add_shape(last_capsule, rd.Transform((0.1, 0.0, 0.0), along_x))
    return sk


def _fold_depth(world, q):
    """How deep the last capsule is in the first (> 0: overlapping): the sum of the radii minus the least distance
    between their axes (sampled along the last one's)."""
    qs = q[world.layout("chain").q]
    first, last = (world.skeleton_world().body_pose(qs, name) for name in ("first", "last"))
    points = np.c_[np.linspace(0.01, 0.19, 181), np.zeros((181, 2))] @ last[:3, :3].T + last[:3, 3]
    local = (points - first[:3, 3]) @ first[:3, :3]
    nearest = np.c_[np.clip(local[:, 0], 0.0, 0.2), np.zeros((181, 2))]
    return 2 * RADIUS - np.linalg.norm(local - nearest, axis=1).min()


def _fold(self_collision, steps=300):
    world = _world(gravity=(0.0, 0.0, -G))
    world.add_skeleton(_chain(self_collision))
    q, v = world.q, world.v
    deepest = -np.inf
    for _ in range(steps):
        q, v = world.step(q, v)
        deepest = max(deepest, _fold_depth(world, q))
    return deepest, q, v, world


def test_a_chain_folding_onto_itself_stays_apart_with_self_collision_and_overlaps_without():
    """With self-collision the last capsule's end-sphere stops on the first's near the connector (its springs
    press the ends together on short levers: 1.4 mm at rest, the penalty's depth); without, it folds into it."""
    apart, q, v, world = _fold(True)
    assert apart < 2e-3
    assert world.last_step["contacts"] > 0 and np.abs(v).max() < 1e-4  # resting against the first link
    overlap, *_ = _fold(False)
    assert overlap > 0.03


def _first_step(third, q):
    """The contacts and velocities after one step of the chain with self-collision, and the velocities without."""
    out = []
    for self_collision in (True, False):
        world = _world(gravity=(0.0, 0.0, 0.0))
        world.add_skeleton(_chain(self_collision, third=third), q=q)
        _, v = world.step(world.q, world.v)
        out += [world.last_step["contacts"], v]
    return out[0], out[1], out[3]


def test_a_link_does_not_touch_its_parent_nor_its_welded_child_the_parent():
    """Self-collision on: a folded chain whose last link overlaps the first is pushed apart; straight, its connector
    overlaps both its neighbours' end-spheres, its parent and its child, and nothing pushes.
    With the last link welded to the connector it counts as the connector, a child of the first link: folded, it
    overlaps the first link and nothing pushes either."""
    contacts, v_on, v_off = _first_step("revolute", [0.0, np.pi / 2, np.pi / 2])
    assert contacts > 0 and np.abs(v_on - v_off).max() > 1e-3
    contacts, v_on, v_off = _first_step("revolute", [0.0, 0.0, 0.0])
    assert contacts == 0 and np.abs(v_on - v_off).max() == 0.0
    contacts, v_on, v_off = _first_step("weld", [0.0, np.pi / 2])
    assert contacts == 0 and np.abs(v_on - v_off).max() == 0.0
    welded = _chain(True, third="weld")
    # the same welded chain without the exclusion's reason: a second skeleton's box where the last link is
    world = _world(gravity=(0.0, 0.0, 0.0))
    world.add_skeleton(welded, q=[0.0, np.pi / 2])
    world.add_skeleton(_slider("other", rd.Box((0.2, 0.04, 0.04)), 0.5, axis=(0, 0, 1)))  # where both links are
    world.step(world.q, world.v)
    assert world.last_step["contacts"] > 0


def _arm(name="arm"):
    """A slab turning about y at x = -0.1 (its top face at z = 0 when level), so that its field turns with s."""
    sk = rd.Skeleton(name)
    slab = rd.Box((0.2, 0.2, 0.05))
    body = sk.add_body("slab", rd.RevoluteJoint("pivot", axis=(0, 1, 0), stiffness=2.0, damping=0.1),
                       joint_origin=rd.Transform((-0.1, 0.0, 0.0)),
                       inertia=rd.Inertia.from_shape(slab, mass=0.5, origin=rd.Transform((0.1, 0.0, -0.025))))
    body.add_shape(slab, rd.Transform((0.1, 0.0, -0.025)))
    return sk


def _leg_on_arm(shape, knee, depth=1e-3):
    """_leg's shape at knee angle `knee` above the level slab of _arm, its lowest probe `depth` into it."""
    R = Rotation.from_euler("y", knee).as_matrix() @ _shape_pose(shape).rotation
    if isinstance(shape, rd.Sphere):
        points, radius = np.zeros((1, 3)), shape.radius
    elif isinstance(shape, rd.Capsule):
        points, radius = np.array([(0.0, 0.0, -shape.length / 2), (0.0, 0.0, shape.length / 2)]), shape.radius
    elif isinstance(shape, rd.Cylinder):
        points, radius = cylinder_hull(shape)[0], 0.0
    else:
        half = np.asarray(shape.half_extents)
        points, radius = np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half, 0.0
    low = (points @ R.T + Rotation.from_euler("y", knee).as_matrix() @ (0.0, 0.0, -0.07))[:, 2].min() - radius
    world = _world(ground=False, friction=0.3)
    world.add_skeleton(_arm())
    world.add_skeleton(_leg(shape, (0.02, 0.01, -low - depth)))
    q, v, f = world.q, np.zeros(world.nv), np.zeros(world.nv)
    leg, arm = world.layout("leg"), world.layout("arm")
    q[leg.q] = (0.0, 0.0, 0.0, knee)
    q[arm.q] = -0.005  # raised a little under the shape
    v[leg.v] = (0.1, -0.05, -0.2, 0.4)
    v[arm.v] = -0.3
    f[leg.v] = (0.2, 0.1, -1.0, 0.02)
    f[arm.v] = 0.05
    return world, q, v, f


# the leg's shape on the slab and its knee's angle (a box tilted so that its corners along one edge are lowest,
# a capsule's end-sphere, a cylinder's rim corner)
LEGS = {"sphere-box": (rd.Sphere(0.03), 0.05), "box-corner-in-box": (rd.Box((0.06, 0.04, 0.02)), 0.35),
        "capsule-box": (rd.Capsule(0.02, 0.08), 0.25), "cylinder-box": (rd.Cylinder(0.03, 0.04), 0.3)}


@pytest.mark.parametrize("pair", list(LEGS))
def test_gradients_of_links_on_links_match_central_differences(pair):
    world, q, v, f = _leg_on_arm(*LEGS[pair])
    world.step(q, v, f)
    assert world.last_step["contacts"] == 1 if pair == "sphere-box" else world.last_step["contacts"] > 0
    g = _check_gradients(world, None, q, v, f, skeletons=("leg", "arm"))
    assert g.parameter("contact_stiffness") != 0.0 and g.parameter("friction") != 0.0


def test_gradients_of_a_chain_touching_itself_match_central_differences():
    """Links of one chain share joints: the Hessian's terms of both sides overlap."""
    world = _world(friction=0.3)
    world.add_skeleton(_chain(True), q=[0.02, np.pi / 2 + 0.013, np.pi / 2 - 0.021])
    q, v, f = world.q, world.v, np.zeros(world.nv)
    s = world.layout("chain")
    v[s.v] = (0.1, -0.3, 0.2)
    f[s.v] = (0.01, -0.02, 0.03)
    world.step(q, v, f)
    assert world.last_step["contacts"] > 0
    g = _check_gradients(world, None, q, v, f, skeletons=("chain",))
    assert g.parameter("contact_stiffness") != 0.0 and g.parameter("friction") != 0.0


def test_gradients_of_a_free_box_sliding_on_a_link_match_central_differences():
    """A free box (centre of mass off its joint's origin, tilted and turned: one corner lowest) pressed into the
    turning slab, sliding and spinning on it with friction: q perturbed in the tangent (q (+) e)."""
    world = _world(ground=False, friction=0.4)
    world.add_skeleton(_arm())
    rotvec = (0.1, -0.15, 0.3)
    R = Rotation.from_rotvec(rotvec).as_matrix()
    corners = np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * np.asarray(BOX) / 2
    height = -(corners @ R.T)[:, 2].min() - 1.5e-3
    world.add_skeleton(_box_skeleton(offset=(0.01, 0.0, 0.005)),
                       q=np.concatenate([[0.03, 0.01, height], Rotation.from_rotvec(rotvec).as_quat()]))
    q, v, f = world.q, world.v, np.zeros(world.nv)
    box, arm = world.layout("box"), world.layout("arm")
    v[box.v] = (0.2, -0.1, -0.05, 0.4, -0.3, 1.5)
    f[box.v] = (0.3, 0.1, -0.5, 0.01, -0.02, 0.03)
    v[arm.v], f[arm.v] = -0.2, 0.05
    world.step(q, v, f)
    assert world.last_step["contacts"] > 0
    indices = list(range(min(arm.v.start, box.v.start), world.nv))
    g, worst = _check(world, q, v, f, indices)
    assert worst < 1e-6


def test_gradient_of_switching_friction_between_links_on_exists_at_zero():
    """At mu = 0 the links' friction contacts on each other are still found for the adjoint: the gradient with
    respect to mu matches a forward difference (mu cannot go below 0)."""
    for pair in ("sphere-box", "box-corner-in-box"):
        world, q, v, f = _leg_on_arm(*LEGS[pair])
        g, fd = _friction_switched_on(world, q, v, f)
        assert g != 0.0 and g == pytest.approx(fd, rel=1e-5), pair


def test_dense_jacobians_and_rollout_backward_carry_links_on_links():
    """A capsule's end-sphere sliding on the turning slab (in contact for three steps): the joints' columns of
    step_jacobians against central differences, and a three-step rollout's gradient with respect to the first
    step's joint forces."""
    world, q, v, f = _leg_on_arm(*LEGS["capsule-box"])
    _check_jacobians_and_rollout(world, q, v, f, ("arm", "leg"))
