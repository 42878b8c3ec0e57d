"""Non-convex meshes against boxes and against each other, triangle by triangle: vertex-face,
face-vertex and edge-edge features, reduced per patch to at most 8 contacts. A box rests on a finely
triangulated plate with its corners, a peg (a box, or a T-shaped mesh) settles at the bottom of a
square hole touching the walls, a mug stands on a shelf; distances agree with python-fcl and the step
Jacobians with finite differences."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rigidiff as rd
from test_mesh_primitive_contacts import assert_step_jacobians_match_fd, fcl_model, pose
from voxel_meshes import holed_block, mug, notched_plate, t_peg

PLATE = notched_plate()
BLOCK = holed_block()
PEG = t_peg()
MUG = mug()


def world_of(welded, free, mass=1.0, friction=0.5, dt=1e-3):
    """A world with shape `welded` on a welded body and shape `free` on a free body."""
    world = rd.World(dt=dt)
    sk = rd.Skeleton("welded")
    sk.add_body("welded", joint=rd.FixedJoint("weld")).add_shape(welded, friction=friction)
    world.add_skeleton(sk)
    sk = rd.Skeleton("free")
    inertia = rd.Inertia.from_shape(rd.Box((0.1, 0.1, 0.1)) if isinstance(free, rd.Mesh) else free, mass=mass)
    sk.add_body("free", joint=rd.FreeJoint("free")).add_shape(free, friction=friction)
    sk.bodies[0].inertia = inertia
    world.add_skeleton(sk)
    return world


@pytest.mark.parametrize("xy", [(0.013, 0.021), (-0.2, 0.31), (0.4, -0.4)])
def test_a_box_flat_on_a_finely_triangulated_plate_touches_at_its_four_corners(xy):
    world = world_of(rd.Mesh(PLATE), rd.Box((0.1, 0.1, 0.1)))
    c = world.collide(np.array([*xy, 0.049, 0, 0, 0, 1.0]))
    assert len(c) == 4 and set(c.types) == {"point_face"}  # not one per plate vertex under the box
    corners = np.array([[sx, sy] for sx in (-0.05, 0.05) for sy in (-0.05, 0.05)]) + xy
    np.testing.assert_allclose(np.sort(c.points[:, :2], axis=0), np.sort(corners, axis=0), atol=1e-12)
    np.testing.assert_allclose(c.distances, -0.001, atol=1e-12)
    np.testing.assert_allclose(c.normals, [[0, 0, 1]] * 4, atol=1e-12)  # the moving box is A: up, towards it


@pytest.mark.parametrize("rotvec", [(0.02, 0.0, 0.3), (0.03, -0.02, 1.0), (0.0, 0.0, 0.7)])
def test_a_turned_or_tilted_box_keeps_at_most_eight_contacts_and_the_same_ones_step_to_step(rotvec):
    world = world_of(rd.Mesh(PLATE), rd.Box((0.1, 0.1, 0.1)))
    R = Rotation.from_rotvec(rotvec)
    lowest = -np.min(R.apply(np.array([[sx, sy, -0.05] for sx in (-1, 1) for sy in (-1, 1)]) * [0.05, 0.05, 1])[:, 2])
    first = world.collide(pose((0.1, 0.05, lowest - 0.001), rotvec))
    again = world.collide(pose((0.1, 0.05, lowest - 0.0011), rotvec))
    assert 1 <= len(first) <= 8
    assert np.min(first.distances) == pytest.approx(-0.001, abs=1e-12)
    assert first.types == again.types
    np.testing.assert_allclose(first.points, again.points, atol=1e-4)  # the same features, 0.1 mm deeper


def test_a_box_dropped_on_the_plate_comes_to_rest():
    world = world_of(rd.Mesh(PLATE), rd.Box((0.1, 0.1, 0.1)))
    Q, _ = world.rollout(pose((0.1, -0.2, 0.07), (0.05, 0.02, 0.4)), np.zeros(6), np.zeros((1000, 6)))
    settled = Q[500]
    Q, _ = world.rollout(settled, np.zeros(6), np.zeros((1000, 6)))
    assert abs(Q[-1, 2] - 0.05) < 2e-3  # on the plate, not through it
    assert np.linalg.norm(Q[-1, :3] - settled[:3]) < 5e-4  # drift over 1 s


@pytest.mark.parametrize("peg", ["box", "mesh"])
def test_a_peg_pressed_into_a_corner_of_a_hole_touches_the_floor_and_two_walls(peg):
    """The peg's stem is 0.098 wide in a 0.1 hole; shifted by 1.5 mm along x and y it overlaps two walls
    by 0.5 mm, and it sits 1 mm into the floor: three patches, normals +z, -x and -y (from the block to
    the moving peg)."""
    shape = rd.Box((0.098, 0.098, 0.3)) if peg == "box" else rd.Mesh(PEG)
    world = world_of(rd.Mesh(BLOCK), shape)
    bottom = 0.15 if peg == "box" else 0.0  # the box's centre or the mesh's origin above the floor
    c = world.collide(np.array([0.0015, 0.0015, 0.05 + bottom - 0.001, 0, 0, 0, 1.0]))
    normals = {tuple(np.round(n, 9) + 0.0) for n in c.normals}
    assert normals == {(0.0, 0.0, 1.0), (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0)}
    floor = c.distances[np.isclose(np.abs(c.normals[:, 2]), 1.0)]
    walls = c.distances[np.isclose(np.abs(c.normals[:, 2]), 0.0)]
    np.testing.assert_allclose(floor, -0.001, atol=1e-12)
    np.testing.assert_allclose(walls, -0.0005, atol=1e-12)
    for n in ((0, 0, 1), (1, 0, 0), (0, 1, 0)):  # at most 8 per patch
        assert np.sum(np.abs(c.normals @ n) > 0.99) <= 8


def test_a_peg_corner_pressed_where_the_floor_meets_a_wall_touches_both():
    """The box peg's bottom corners at x = +0.0505 lie behind the floor and the wall x = 0.05, past the valley
    edge where they meet, so neither face's projection holds them: each touches both planes (normals +z and
    -x), at the depths of each, as the union of the two half-spaces says."""
    world = world_of(rd.Mesh(BLOCK), rd.Box((0.098, 0.098, 0.3)))
    c = world.collide(np.array([0.0015, 0.0015, 0.05 + 0.15 - 0.001, 0, 0, 0, 1.0]))
    low = c.points[:, 2] < 0.06
    corner = low & (c.points[:, 0] > 0.05) & (c.points[:, 1] < 0.0)  # the corner (0.0505, -0.0475)
    normals = {tuple(np.round(n, 9) + 0.0) for n in c.normals[corner]}
    assert normals == {(0.0, 0.0, 1.0), (-1.0, 0.0, 0.0)}
    np.testing.assert_allclose(c.distances[corner & (c.normals[:, 2] > 0.5)], -0.001, atol=1e-12)
    np.testing.assert_allclose(c.distances[corner & (c.normals[:, 0] < -0.5)], -0.0005, atol=1e-12)


@pytest.mark.parametrize("peg", ["box", "mesh"])
def test_a_peg_dropped_into_the_hole_settles_on_its_floor(peg):
    shape = rd.Box((0.098, 0.098, 0.3)) if peg == "box" else rd.Mesh(PEG)
    world = world_of(rd.Mesh(BLOCK), shape)
    bottom = 0.15 if peg == "box" else 0.0
    Q, _ = world.rollout(np.array([0.0005, -0.0003, 0.15 + bottom, 0, 0, 0, 1.0]), np.array([0, 0, -1.0, 0, 0, 0]),
                         np.zeros((800, 6)))
    assert abs(Q[-1, 2] - (0.05 + bottom)) < 1e-3  # on the floor of the hole, not through it
    assert np.all(np.abs(Q[-1, :2]) < 0.002)  # inside the hole
    np.testing.assert_allclose(Q[-1, 3:], [0, 0, 0, 1], atol=0.05)


def test_a_mug_stands_on_a_box_shelf():
    world = world_of(rd.Box((0.4, 0.3, 0.02)), rd.Mesh(MUG), mass=0.3)
    q0 = np.array([0.05, 0.02, 0.0105, 0, 0, 0, 1.0])  # its floor 0.5 mm above the shelf's top
    c = world.collide(q0 - [0, 0, 0.001, 0, 0, 0, 0])
    assert 4 <= len(c) <= 8 and set(c.types) <= {"point_face", "face_point"}
    np.testing.assert_allclose(c.distances, -0.0005, atol=1e-12)
    Q, _ = world.rollout(q0, np.zeros(6), np.zeros((2000, 6)))
    assert np.linalg.norm(Q[-1, :3] - Q[500, :3]) < 5e-4  # drift over 1.5 s, once settled
    assert abs(Q[-1, 2] - 0.01) < 1e-3


def test_mesh_mesh_distances_match_fcl_on_random_poses():
    """Separated poses within the contact margin: the nearest contact's distance is the meshes' distance
    (for two polyhedra apart, the closest points are a vertex and a face or two edges)."""
    fcl = pytest.importorskip("fcl")
    world = world_of(rd.Mesh(BLOCK), rd.Mesh(MUG))
    world.contact_options(margin=0.3, speculative=False)
    block = fcl.CollisionObject(fcl_model(BLOCK), fcl.Transform())
    mug_model = fcl_model(MUG)
    rng = np.random.default_rng(3)
    compared = 0
    while compared < 40:
        p = rng.uniform(BLOCK.bounds[0] - 0.1, BLOCK.bounds[1] + 0.1)
        rotvec = rng.normal(size=3)
        R = Rotation.from_rotvec(rotvec).as_matrix()
        result = fcl.DistanceResult()
        expected = fcl.distance(block, fcl.CollisionObject(mug_model, fcl.Transform(R, p)), fcl.DistanceRequest(),
                                result)
        if not 1e-3 < expected < 0.25:
            continue
        c = world.collide(pose(p, rotvec))
        assert len(c) >= 1
        assert np.min(c.distances) == pytest.approx(expected, abs=1e-9)
        compared += 1


@pytest.mark.parametrize("case", ["mug_tilted", "peg_in_corner"])
def test_step_jacobians_of_mesh_mesh_contacts_match_finite_differences(case):
    if case == "mug_tilted":  # a mug tipped onto one edge of its floor on the block's top: face-vertex
        world = world_of(rd.Mesh(BLOCK), rd.Mesh(MUG), mass=0.3)
        rotvec = (0.0, 0.05, 0.1)
        R = Rotation.from_rotvec(rotvec)
        lowest = np.min(R.apply(MUG.vertices)[:, 2])
        q = pose((0.09, 0.08, 0.2 - lowest - 2e-5), rotvec)
    else:  # the T-peg leaning in a corner of the hole: floor, walls and the rim's edges
        world = world_of(rd.Mesh(BLOCK), rd.Mesh(PEG))
        q = pose((0.0012, 0.0013, 0.05 - 2e-5), (0.002, -0.003, 0.01))
    contacts = assert_step_jacobians_match_fd(world, q, np.zeros(6), np.zeros(6))
    assert len(contacts) >= 2


def test_a_finely_triangulated_peg_on_the_floor_of_the_hole_is_not_pushed_from_the_far_side():
    """The stem's bottom face lies 5 cm above the block's bottom face, within the prisms' depth: its
    vertices inside the floor by 0.2 mm keep the floor and the walls, not the block's far side."""
    world = world_of(rd.Mesh(holed_block(cells=4)), rd.Mesh(t_peg(cells=4)))
    c = world.collide(pose((0.0012, 0.0013, 0.05 - 2e-4)))
    assert len(c) >= 4
    assert np.min(c.distances) > -1e-3
    assert np.all(c.normals[:, 2] > -1e-9)  # nothing pushes the peg down
