"""rd.distance with meshes that are not convex: their triangles, never their hull. Apart, the distance
between the surfaces agrees with python-fcl on random poses (a block with a hole against a mug, a box, a
ball and a convex mesh); in penetration it is the deepest local contact; deeper than a mesh's prism
thickness there is no depth and the query says so."""

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

import rigidiff as rd
from test_mesh_primitive_contacts import fcl_model
from voxel_meshes import holed_block, mug, notched_plate

BLOCK = holed_block()
MUG = mug()
BALL = trimesh.creation.icosphere(1, 0.04)


def inside_block(x):
    """Which points (n, 3) are inside the block's solid (its box less the hole)."""
    in_box = np.all(np.abs(x[:, :2]) < 0.15, axis=1) & (x[:, 2] > 0.0) & (x[:, 2] < 0.2)
    in_hole = np.all(np.abs(x[:, :2]) < 0.05, axis=1) & (x[:, 2] > 0.05)
    return in_box & ~in_hole


def partners():
    fcl = pytest.importorskip("fcl")
    return {
        "mug": (rd.Mesh(MUG), fcl_model(MUG), MUG.vertices),
        "box": (rd.Box((0.05, 0.08, 0.1)), fcl.Box(0.05, 0.08, 0.1),
                np.array([[x, y, z] for x in (-0.025, 0.025) for y in (-0.04, 0.04) for z in (-0.05, 0.05)])),
        "sphere": (rd.Sphere(0.03), fcl.Sphere(0.03), np.zeros((1, 3))),
        "convex_mesh": (rd.Mesh(BALL), fcl_model(BALL), BALL.vertices),
    }


@pytest.mark.parametrize("name", ["mug", "box", "sphere", "convex_mesh"])
def test_distances_to_a_holed_block_match_fcl_on_random_poses(name):
    """fcl sees the block as a surface: a shape wholly inside its solid has a positive fcl distance, so
    only poses with the partner outside the block (no point of it inside) and apart are compared."""
    fcl = pytest.importorskip("fcl")
    shape, fcl_shape, points = partners()[name]
    block = fcl.CollisionObject(fcl_model(BLOCK), fcl.Transform())
    rng = np.random.default_rng(7)
    compared = 0
    while compared < 30:
        p = rng.uniform(BLOCK.bounds[0] - 0.1, BLOCK.bounds[1] + 0.1)
        R = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
        if inside_block(points @ R.T + p).any():
            continue
        expected = fcl.distance(block, fcl.CollisionObject(fcl_shape, fcl.Transform(R, p)), fcl.DistanceRequest(),
                                fcl.DistanceResult())
        if expected < 1e-4:
            continue
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = R, p
        r = rd.distance(rd.Mesh(BLOCK), np.eye(4), shape, T)
        assert r.distance == pytest.approx(expected, abs=1e-9)
        np.testing.assert_allclose(r.point_a - r.point_b, r.distance * r.normal, atol=1e-12)
        s = rd.distance(shape, T, rd.Mesh(BLOCK), np.eye(4))  # the other way round
        assert s.distance == pytest.approx(r.distance, abs=1e-12)
        np.testing.assert_allclose(s.normal, -r.normal, atol=1e-12)
        compared += 1


def test_a_box_in_the_hole_is_at_its_deepest_local_contact():
    """A 0.098 box shifted 1.5 mm towards a wall of the 0.1 hole overlaps it by 0.5 mm; sunk 2 mm into
    the floor, the deepest contact is the floor's."""
    T = np.eye(4)
    T[:3, 3] = (0.0015, 0.0, 0.05 + 0.05 - 0.002)
    r = rd.distance(rd.Box((0.098, 0.098, 0.1)), T, rd.Mesh(BLOCK), np.eye(4))
    assert r.distance == pytest.approx(-0.002, abs=1e-12)
    np.testing.assert_allclose(r.normal, [0, 0, 1], atol=1e-12)
    T[2, 3] = 0.1 + 0.001  # above the floor: the wall
    r = rd.distance(rd.Box((0.098, 0.098, 0.1)), T, rd.Mesh(BLOCK), np.eye(4))
    assert r.distance == pytest.approx(-0.0005, abs=1e-12)
    np.testing.assert_allclose(r.normal, [-1, 0, 0], atol=1e-12)


def test_deeper_than_the_prism_thickness_there_is_no_depth():
    plate = notched_plate()  # 5 cm thick: prisms 1.25 cm deep
    T = np.eye(4)
    T[:3, 3] = (0.2, 0.2, -0.025)
    with pytest.raises(RuntimeError, match="deeper inside the mesh than the mesh's prism thickness"):
        rd.distance(rd.Mesh(plate), np.eye(4), rd.Sphere(0.001), T)
