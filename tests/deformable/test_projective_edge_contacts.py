"""Edges crossing in projective worlds: two capsules crossing side by side, their ends outside each other, touch
through the distance of their axes (pd_link_edges.cpp). A capsule dropped across another rests on it at the
penalty's depth m g / k (on the end-sphere probes alone it fell through), a capsule lying along another rests on
its end-spheres, and the gradients of a step with a capsule sliding across a turning capsule with friction match
central differences of our own step, with the dense Jacobians and a rollout's backward pass."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from test_projective_link_link import _arm
from test_projective_link_obstacles import G, K, _check_gradients, _check_jacobians_and_rollout, _leg, _world

import rigidiff as rd

R_LOW, R_UP = 0.03, 0.02
ALONG_X = Rotation.from_euler("y", np.pi / 2).as_matrix()
ALONG_Y = Rotation.from_euler("x", np.pi / 2).as_matrix()


def _bar(name, along, height=0.1, radius=R_LOW, length=0.4):
    """A capsule welded to the world, its axis along `along` at `height`."""
    sk = rd.Skeleton(name)
    body = sk.add_body("bar", None, joint_origin=rd.Transform((0.0, 0.0, height)))
    body.add_shape(rd.Capsule(radius, length), rd.Transform((0.0, 0.0, 0.0), along))
    return sk


def _dropped(along, mass=0.4, steps=300):
    """A capsule on a vertical rail along `along`, let go 1 mm above the welded bar along x: its axis height."""
    world = _world()
    world.add_skeleton(_bar("bar", ALONG_X))
    capsule = rd.Capsule(R_UP, 0.3)
    sk = rd.Skeleton("top")
    body = sk.add_body("body", rd.PrismaticJoint("drop", axis=(0, 0, 1)),
                       joint_origin=rd.Transform((0.0, 0.0, 0.1 + R_LOW + R_UP + 1e-3)),
                       inertia=rd.Inertia.from_shape(capsule, mass=mass))
    body.add_shape(capsule, rd.Transform((0.0, 0.0, 0.0), along))
    world.add_skeleton(sk)
    q, v = world.q, world.v
    for _ in range(steps):
        q, v = world.step(q, v)
    return 0.1 + R_LOW + R_UP + 1e-3 + q[world.layout("top").q][0], v, world


def test_a_capsule_dropped_across_another_rests_on_it_at_the_penalty_depth():
    """Crosswise, no end of either is inside the other: the axes' distance carries the weight alone (one term)."""
    m = 0.4
    height, v, world = _dropped(ALONG_Y, m)
    assert (R_LOW + R_UP) - (height - 0.1) == pytest.approx(m * G / K, rel=1e-6)
    assert world.last_step["contacts"] == 1 and np.abs(v).max() < 1e-8


def test_a_capsule_lying_along_another_rests_on_its_end_spheres():
    """Parallel axes are left to the end-spheres: the upper capsule's two ends in the lower one carry m g / 2 each
    (the lower one's ends are beyond the upper's), and the crossing term is not added on top."""
    m = 0.4
    height, v, world = _dropped(ALONG_X, m)
    assert (R_LOW + R_UP) - (height - 0.1) == pytest.approx(m * G / (2 * K), rel=1e-6)
    assert world.last_step["contacts"] == 2 and np.abs(v).max() < 1e-8


def test_a_capsule_tilted_along_another_levels_out_on_its_end_spheres():
    """A capsule on a vertical rail and a pitch hinge (about y, across both axes), let go tilted 0.03 rad along the
    bar: its lower end lands first, the weight turns it level (the crossing term stays out: the axes are parallel
    in plan), and it rests on its two end-spheres at m g / (2 k)."""
    m = 0.4
    world = _world()
    world.add_skeleton(_bar("bar", ALONG_X))
    capsule = rd.Capsule(R_UP, 0.3)
    sk = rd.Skeleton("top")
    light = rd.Inertia.from_shape(rd.Sphere(0.01), mass=0.05)
    base = sk.add_body("base", rd.PrismaticJoint("drop", axis=(0, 0, 1)),
                       joint_origin=rd.Transform((0.0, 0.0, 0.1 + R_LOW + R_UP + 5e-3)), inertia=light)
    body = sk.add_body("body", rd.RevoluteJoint("pitch", axis=(0, 1, 0), damping=0.02), parent=base,
                       inertia=rd.Inertia.from_shape(capsule, mass=m - 0.05))
    body.add_shape(capsule, rd.Transform((0.0, 0.0, 0.0), ALONG_X))
    world.add_skeleton(sk, q=[0.0, 0.03])
    s = world.layout("top")
    q, v = world.q, world.v
    for _ in range(600):
        q, v = world.step(q, v)
    drop, pitch = q[s.q]
    assert abs(pitch) < 1e-6
    assert -(5e-3 + drop) == pytest.approx(m * G / (2 * K), rel=1e-6)
    assert world.last_step["contacts"] == 2 and np.abs(v).max() < 1e-6


def _moving(world, knee, arm=True):
    """The start of a step: the leg's knee at `knee`, the leg sliding and pushed, and (if arm) the arm turning."""
    q, v, f = world.q, np.zeros(world.nv), np.zeros(world.nv)
    leg = world.layout("leg")
    q[leg.q] = (0.0, 0.0, 0.0, knee)
    if arm:
        v[leg.v], f[leg.v] = (0.1, -0.05, -0.2, 0.4), (0.2, 0.1, -1.0, 0.02)
        v[world.layout("arm").v], f[world.layout("arm").v] = -0.3, 0.05
    else:  # sliding: friction is past its static band
        v[leg.v], f[leg.v] = (0.15, -0.1, 0.02, 0.5), (0.3, 0.1, 2.0, 0.02)
    return q, v, f


def _arm_capsule():
    """A capsule along y turning about x at y = -0.15 (its field turns with the joint), its axis at z = 0."""
    sk = rd.Skeleton("arm")
    capsule = rd.Capsule(R_LOW, 0.3)
    body = sk.add_body("bar", rd.RevoluteJoint("pivot", axis=(1, 0, 0), stiffness=2.0, damping=0.1),
                       joint_origin=rd.Transform((0.0, -0.15, 0.0)),
                       inertia=rd.Inertia.from_shape(capsule, mass=0.5, origin=rd.Transform((0.0, 0.15, 0.0))))
    body.add_shape(capsule, rd.Transform((0.0, 0.15, 0.0), ALONG_Y))
    return sk


def _crossing(knee=0.25, depth=1e-3, friction=0.3):
    """_leg's capsule (along x, tilted by the knee) across the arm's capsule, `depth` into it, both moving."""
    capsule = rd.Capsule(R_UP, 0.08)
    direction = np.array([np.sin(knee), 0.0, np.cos(knee)])  # the axes' common normal (leg along (cos, 0, -sin))
    cx = 0.02 - 0.07 * np.sin(knee)
    cz = (R_LOW + R_UP - depth - cx * direction[0]) / direction[2]
    world = _world(ground=False, friction=friction)
    world.add_skeleton(_arm_capsule())
    world.add_skeleton(_leg(capsule, (0.02, 0.01, cz + 0.07 * np.cos(knee))))
    q, v, f = _moving(world, knee)
    return world, q, v, f


def test_gradients_of_a_capsule_sliding_across_a_turning_capsule_match_central_differences():
    world, q, v, f = _crossing()
    world.step(q, v, f)
    assert world.last_step["contacts"] == 1
    g = _check_gradients(world, None, q, v, f, skeletons=("leg", "arm"))
    assert g.parameter("contact_stiffness") != 0.0 and g.parameter("friction") != 0.0


def test_dense_jacobians_and_rollout_backward_carry_a_capsule_crossing():
    world, q, v, f = _crossing()
    _check_jacobians_and_rollout(world, q, v, f, ("arm", "leg"))


def _rail(name, shape, height, mass, pose=None):
    """`shape` (at `pose` in its body) on a vertical prismatic joint whose zero is `height`."""
    sk = rd.Skeleton(name)
    body = sk.add_body("body", rd.PrismaticJoint("drop", axis=(0, 0, 1)), joint_origin=rd.Transform((0.0, 0.0, height)),
                       inertia=rd.Inertia.from_shape(shape, mass=mass))
    body.add_shape(shape, pose or rd.Transform())
    return sk


BEAM = 0.06  # the beams' width and height


@pytest.mark.parametrize("under", ["link", "box obstacle"])
def test_a_beam_lying_across_a_beam_rests_on_its_four_edge_crossings(under):
    """A beam along x dropped across a beam along y (welded to the world, or a box obstacle): no corner of either is
    inside the other; the upper beam's two bottom edges cross the lower one's two top edges, and each crossing
    carries m g / 4 (the upper one stands m g / (4 k) deep). On the corners alone it fell through."""
    m = 0.5
    world = _world()
    if under == "link":
        sk = rd.Skeleton("lower")
        sk.add_body("beam", None, joint_origin=rd.Transform((0.0, 0.0, 0.1 - BEAM / 2))).add_shape(
            rd.Box((BEAM, 0.4, BEAM)))
        world.add_skeleton(sk)
    else:
        world.add_box((BEAM, 0.4, BEAM), rd.Transform((0.0, 0.0, 0.1 - BEAM / 2)))
    world.add_skeleton(_rail("upper", rd.Box((0.4, BEAM, BEAM)), 0.1 + BEAM / 2 + 1e-3, m))
    q, v = world.q, world.v
    for _ in range(300):
        q, v = world.step(q, v)
    depth = -(1e-3 + q[world.layout("upper").q][0])
    assert depth == pytest.approx(m * G / (4 * K), rel=1e-6)
    assert world.last_step["contacts"] == 4 and np.abs(v).max() < 1e-8


@pytest.mark.parametrize("under", ["link", "box obstacle"])
def test_a_box_resting_flat_on_a_box_keeps_its_four_corners(under):
    """A small box on a wider one: its bottom edges do not cross the wider one's (the crossings of their lines are
    beyond the small box's edges), so its 4 corners alone carry m g / 4 each."""
    m = 0.3
    world = _world()
    if under == "link":
        sk = rd.Skeleton("lower")
        sk.add_body("slab", None, joint_origin=rd.Transform((0.0, 0.0, 0.1 - BEAM / 2))).add_shape(
            rd.Box((0.3, 0.3, BEAM)))
        world.add_skeleton(sk)
    else:
        world.add_box((0.3, 0.3, BEAM), rd.Transform((0.0, 0.0, 0.1 - BEAM / 2)))
    world.add_skeleton(_rail("upper", rd.Box((0.08, 0.06, 0.04)), 0.1 + 0.02 + 1e-3, m))
    q, v = world.q, world.v
    for _ in range(300):
        q, v = world.step(q, v)
    assert -(1e-3 + q[world.layout("upper").q][0]) == pytest.approx(m * G / (4 * K), rel=1e-6)
    assert world.last_step["contacts"] == 4


def test_a_capsule_lying_across_a_box_obstacles_edge_rests_on_it():
    """A box obstacle turned 45 degrees about x (a ridge along x on top) and a capsule along y dropped across the
    ridge: neither end-sphere is in the box, the ridge holds the capsule at m g / k."""
    m = 0.4
    world = _world()
    world.add_box((0.3, 0.1, 0.1), rd.Transform((0.0, 0.0, 0.1 - 0.05 * np.sqrt(2)),
                                                Rotation.from_euler("x", np.pi / 4).as_matrix()))
    world.add_skeleton(_rail("top", rd.Capsule(R_UP, 0.3), 0.1 + R_UP + 1e-3, m, rd.Transform((0, 0, 0), ALONG_Y)))
    q, v = world.q, world.v
    for _ in range(300):
        q, v = world.step(q, v)
    assert -(1e-3 + q[world.layout("top").q][0]) == pytest.approx(m * G / K, rel=1e-6)
    assert world.last_step["contacts"] == 1 and np.abs(v).max() < 1e-8


def _ridge(world, along, height=0.0, velocity=(0.05, -0.02, 0.01, 0.3, -0.2, 0.5)):
    """A box obstacle turned 45 degrees about `along` ("x" or "y"): a ridge along that axis at `height` on top,
    moving and turning at `velocity`. Its name."""
    size = (0.3, 0.1, 0.1) if along == "x" else (0.1, 0.3, 0.1)
    name = world.add_box(size, rd.Transform((0.0, 0.0, height - 0.05 * np.sqrt(2)),
                                            Rotation.from_euler(along, np.pi / 4).as_matrix()))
    world.set_obstacle_pose(name, world.obstacle_pose(name), velocity=velocity)
    return name


def _leg_across_ridge(shape, knee, depth=1e-3, friction=0.4):
    """_leg's shape sliding across a moving ridge: a capsule (along x, tilted by the knee) across a ridge along y,
    its axis r - depth from the ridge; a box (its lowest edge along y once tilted) across a ridge along x, that
    edge `depth` below the ridge."""
    world = _world(ground=False, friction=friction)
    if isinstance(shape, rd.Capsule):
        name = _ridge(world, "y")
        cx = 0.005 - 0.07 * np.sin(knee)
        hip_z = (shape.radius - depth - cx * np.sin(knee)) / np.cos(knee) + 0.07 * np.cos(knee)
        hip = (0.005, 0.01, hip_z)
    else:
        name = _ridge(world, "x")
        half = np.asarray(shape.half_extents)
        low = Rotation.from_euler("y", knee).as_matrix() @ (half[0], 0.0, -half[2] - 0.07)  # the lowest edge
        hip = (0.01, 0.005, -depth - low[2])
    world.add_skeleton(_leg(shape, hip))
    return (world, name, *_moving(world, knee, arm=False))


ACROSS_RIDGES = {"capsule": (rd.Capsule(R_UP, 0.08), 0.25), "box": (rd.Box((0.06, 0.1, 0.02)), 0.3)}


@pytest.mark.parametrize("leg", list(ACROSS_RIDGES))
def test_gradients_of_an_edge_crossing_a_moving_box_obstacle_match_central_differences(leg):
    """A capsule's axis, and a box's edge, across a moving and turning box obstacle's ridge with friction: the
    joints' state and forces, contact stiffness, friction and the box's pose."""
    world, name, q, v, f = _leg_across_ridge(*ACROSS_RIDGES[leg])
    world.step(q, v, f)
    assert world.last_step["contacts"] == 1  # the crossing alone: no corner inside either
    g = _check_gradients(world, name, q, v, f)
    assert g.parameter("friction") != 0.0 and g.parameter("contact_stiffness") != 0.0
    assert np.abs([g.parameter(f"pose:{name}:{c}") for c in "xyz"]).max() > 0.0


def test_gradients_of_a_cylinders_side_edge_across_a_moving_box_obstacle_match_central_differences():
    """A cylinder (a 32-sided prism, its hull's sharp edges) lying along y on _leg's shin, turned by the knee so
    that one side edge is lowest, across a moving ridge along x: the crossing alone, and the gradients as above."""
    from rigidiff.deformable.link_hulls import cylinder_hull

    knee, depth = np.pi / 2 + 0.05, 1.5e-4  # the rim vertex at angle 0 lowest (the next edge 2.8e-4 higher)
    cylinder = rd.Cylinder(0.03, 0.1)
    lying = Rotation.from_euler("x", np.pi / 2).as_matrix()
    world = _world(ground=False, friction=0.4)
    name = _ridge(world, "x")
    vertices = cylinder_hull(cylinder)[0] @ (Rotation.from_euler("y", knee).as_matrix() @ lying).T
    low = vertices[:, 2].min() - 0.07 * np.cos(knee)
    sk = rd.Skeleton("leg")
    light = rd.Inertia.from_shape(rd.Sphere(0.01), mass=0.05)
    base = sk.add_body("base", rd.TranslationalJoint("move", damping=0.1),
                       joint_origin=rd.Transform((0.01, 0.005, -depth - low)), inertia=light)
    shin = sk.add_body("shin", rd.RevoluteJoint("knee", axis=(0, 1, 0), damping=0.01, stiffness=0.5,
                                                rest_position=[knee]), parent=base,
                       inertia=rd.Inertia.from_shape(cylinder, mass=0.3, origin=rd.Transform((0.0, 0.0, -0.07))))
    shin.add_shape(cylinder, rd.Transform((0.0, 0.0, -0.07), lying))
    world.add_skeleton(sk)
    q, v, f = _moving(world, knee, arm=False)
    world.step(q, v, f)
    assert world.last_step["contacts"] == 1
    g = _check_gradients(world, name, q, v, f)
    assert g.parameter("friction") != 0.0 and g.parameter("contact_stiffness") != 0.0


def _beam_arm():
    """A beam along x turning about y at x = -0.15 (its field turns with the joint), its top face at z = 0."""
    sk = rd.Skeleton("arm")
    beam = rd.Box((0.3, BEAM, BEAM))
    body = sk.add_body("beam", rd.RevoluteJoint("pivot", axis=(0, 1, 0), stiffness=2.0, damping=0.1),
                       joint_origin=rd.Transform((-0.15, 0.0, 0.0)),
                       inertia=rd.Inertia.from_shape(beam, mass=0.5, origin=rd.Transform((0.15, 0.0, -BEAM / 2))))
    body.add_shape(beam, rd.Transform((0.15, 0.0, -BEAM / 2)))
    return sk


def test_gradients_of_a_box_edge_crossing_a_turning_beams_edges_match_central_differences():
    """Link on link: a tilted box's lowest edge (along y) across a beam (along x) of another skeleton turning about
    y, crossing its two top edges with friction: the joints' state and forces, contact stiffness and friction."""
    knee, depth = 0.3, 1e-3
    box = rd.Box((0.06, 0.1, 0.02))
    low = Rotation.from_euler("y", knee).as_matrix() @ (0.03, 0.0, -0.01 - 0.07)
    world = _world(ground=False, friction=0.4)
    world.add_skeleton(_beam_arm())
    world.add_skeleton(_leg(box, (0.01, 0.004, -depth - low[2])))
    q, v, f = _moving(world, knee)
    world.step(q, v, f)
    assert world.last_step["contacts"] == 2
    g = _check_gradients(world, None, q, v, f, skeletons=("leg", "arm"))
    assert g.parameter("contact_stiffness") != 0.0 and g.parameter("friction") != 0.0


def test_gradients_of_a_capsule_across_a_turning_slabs_edge_match_central_differences():
    """Link on link: a capsule sloping down over the far edge of another skeleton's slab (turning about y), its
    ends clear of the slab: the crossing of its axis and the slab's edge alone, with friction."""
    knee, depth = 0.25, 1e-3
    capsule = rd.Capsule(R_UP, 0.08)
    cx = 0.1 + 0.004  # the capsule's centre just beyond the slab's edge (x = 0.1, z = 0, along y)
    cz = (R_UP - depth - (cx - 0.1) * np.sin(knee)) / np.cos(knee)
    world = _world(ground=False, friction=0.4)
    world.add_skeleton(_arm())
    world.add_skeleton(_leg(capsule, (cx + 0.07 * np.sin(knee), 0.01, cz + 0.07 * np.cos(knee))))
    q, v, f = _moving(world, knee)
    world.step(q, v, f)
    assert world.last_step["contacts"] == 1
    g = _check_gradients(world, None, q, v, f, skeletons=("leg", "arm"))
    assert g.parameter("contact_stiffness") != 0.0 and g.parameter("friction") != 0.0


def test_dense_jacobians_and_rollout_backward_carry_an_edge_on_a_box_obstacle():
    """The capsule across the moving ridge, pressed on it (in contact for three steps)."""
    world, _, q, v, f = _leg_across_ridge(*ACROSS_RIDGES["capsule"])
    s = world.layout("leg")
    v[s.v], f[s.v] = (0.15, -0.1, -0.05, 0.5), (0.3, 0.1, -4.0, 0.02)
    _check_jacobians_and_rollout(world, q, v, f, ("leg",))


def _energy_across_a_beam(xs, depth=1e-3):
    """The links' contact energy of a box (0.1 x 0.06 x 0.04, flat, `depth` into the top of a box obstacle beam
    along y, 0.06 wide) at each x of its centre: a step from rest of a box so heavy that it moves by 2e-8 m."""
    world = _world(ground=False, gravity=(0.0, 0.0, 0.0))
    world.add_box((BEAM, 0.4, BEAM), rd.Transform((0.0, 0.0, -BEAM / 2)))
    sk = rd.Skeleton("box")
    box = rd.Box((0.1, BEAM, 0.04))
    sk.add_body("box", rd.TranslationalJoint("move"), joint_origin=rd.Transform((0.0, 0.0, 0.02 - depth)),
                inertia=rd.Inertia.from_shape(box, mass=1e5)).add_shape(box)
    world.add_skeleton(sk)
    s = world.layout("box")
    out = []
    for x in xs:
        q = world.q
        q[s.q] = (x, 0.0, 0.0)
        world.step(q, np.zeros(world.nv))
        out.append(world.last_step["link_contact_energy"])
    return np.array(out)


def test_the_energy_across_the_switch_from_edge_crossings_to_corners_jumps_by_at_most_the_crossings():
    """A box lying across a beam, swept along it: with both ends over the beam's sides, its bottom edges cross the
    beam's two top edges (4 crossings, k/2 d^2 each). As its back end comes within d of the beam's side, the back
    crossings end (their crossing point is nearer the box's end face than d deep: that face is the nearer way
    out): the energy drops by those two crossings' k/2 d^2 at once. Past the side, the back corners' probes take
    over from depth 0 (the side they came in by is their nearest face) and grow back to d. Elsewhere the energy
    does not move (every depth is d)."""
    d = 1e-3
    k_half = 0.5 * K * d**2
    xs = np.linspace(0.0, 0.04, 400)  # the back end (x - 0.05) passes the beam's side (-0.03) at x = 0.02
    E = _energy_across_a_beam(xs, d)
    assert E[xs < 0.02 - d] == pytest.approx(4 * k_half, rel=1e-4)  # four crossings at depth d
    assert E[xs > 0.02 + d] == pytest.approx(4 * k_half, rel=1e-4)  # two corners and two crossings
    jumps = np.abs(np.diff(E))
    assert jumps.max() == pytest.approx(2 * k_half, rel=1e-3)  # the two back crossings end
    assert xs[np.argmax(jumps) + 1] == pytest.approx(0.02 - d, abs=1e-4)
    assert np.sort(jumps)[-2] < 0.45 * k_half  # one jump: the corners grow by 1e-4 per sample (0.4 k/2 d^2)


def test_two_boxes_edge_on_edge_rest_on_their_one_crossing():
    """A box turned 45 degrees about x (its lowest edge along x) dropped on a welded box turned 45 degrees about y
    (its ridge along y): no corner of either is inside the other, the two edges' crossing holds it at m g / k. (The
    lines' distance of edges 0.2 and 0.3 long is good to about 1e-14 m here: the step's gradient to 1e-10 N.)"""
    m = 0.3
    world = _world(tolerance=1e-10)
    sk = rd.Skeleton("lower")
    sk.add_body("ridge", None, joint_origin=rd.Transform((0.0, 0.0, 0.1 - 0.05 * np.sqrt(2)),
                                                        Rotation.from_euler("y", np.pi / 4).as_matrix())).add_shape(
        rd.Box((0.1, 0.3, 0.1)))
    world.add_skeleton(sk)
    box = rd.Box((0.2, 0.06, 0.06))
    world.add_skeleton(_rail("upper", box, 0.1 + 0.03 * np.sqrt(2) + 1e-3, m,
                             rd.Transform((0.0, 0.0, 0.0), Rotation.from_euler("x", np.pi / 4).as_matrix())))
    q, v = world.q, world.v
    for _ in range(300):
        q, v = world.step(q, v)
    assert -(1e-3 + q[world.layout("upper").q][0]) == pytest.approx(m * G / K, rel=1e-6)
    assert world.last_step["contacts"] == 1 and np.abs(v).max() < 1e-8
