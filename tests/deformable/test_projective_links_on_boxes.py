"""Capsule, box and mesh links against a projective world's box obstacles: a link's corners probe the box and the
box's corners probe the link. A box link rests on a box turned corner-up (a box link standing on a box is in
test_projective_link_obstacles.py), and the gradients of steps against central differences of our own step for each pair, sliding
with friction on a moving, turning box."""

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation
from test_projective_link_obstacles import G, K, _check_gradients, _leg, _world

import rigidiff as rd
from rigidiff._testing import hull_distances


def _box_sdf(half, rotation, centre, points):
    """Signed distance of world points to an oriented box."""
    p = (np.atleast_2d(points) - centre) @ rotation
    excess = np.abs(p) - half
    outside = np.linalg.norm(np.maximum(excess, 0.0), axis=1)
    return outside + np.minimum(excess.max(axis=1), 0.0)


def _link_sdf(shape, points):
    """Signed distance of points (the link shape's frame) to a box, capsule (axis z) or mesh's hull."""
    points = np.atleast_2d(points)
    if isinstance(shape, rd.Box):
        return _box_sdf(np.asarray(shape.half_extents), np.eye(3), np.zeros(3), points)
    if isinstance(shape, rd.Capsule):
        axis = np.clip(points[:, 2], -shape.length / 2, shape.length / 2)
        return np.linalg.norm(points - np.c_[0 * axis, 0 * axis, axis], axis=1) - shape.radius
    hull = trimesh.Trimesh(shape.vertices, shape.faces).convex_hull
    return hull_distances(hull.vertices, hull.faces, points)[0]


def _link_corners(shape):
    """The link's point probes in its frame, with their radii."""
    if isinstance(shape, rd.Box):
        h = np.asarray(shape.half_extents)
        return np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * h, 0.0
    if isinstance(shape, rd.Capsule):
        return np.array([(0.0, 0.0, -shape.length / 2), (0.0, 0.0, shape.length / 2)]), shape.radius
    return trimesh.Trimesh(shape.vertices, shape.faces).convex_hull.vertices, 0.0


def _deepest(shape, size, rotation, hip, angle, origin=(0.0, 0.0, -0.07)):
    """The deepest probe of _leg's shape (capsules lie along x) at hip and knee angle against a box obstacle of edge
    lengths size, turned by rotation, centred at the origin: min over the link's corners in the box and the box's
    corners in the link."""
    lie = Rotation.from_euler("y", np.pi / 2).as_matrix() if isinstance(shape, rd.Capsule) else np.eye(3)
    R = Rotation.from_euler("y", angle).as_matrix() @ lie
    t = np.asarray(hip) + Rotation.from_euler("y", angle).as_matrix() @ np.asarray(origin)
    half = np.asarray(size) / 2
    corners, radius = _link_corners(shape)
    d_link = _box_sdf(half, rotation, np.zeros(3), corners @ R.T + t) - radius
    box_corners = (np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half) @ rotation.T
    d_box = _link_sdf(shape, (box_corners - t) @ R)
    return min(d_link.min(), d_box.min()), int(np.argmin([d_link.min(), d_box.min()]))


def _hip_touching(shape, size, rotation, xy, angle, depth=1e-3):
    lo, hi = 0.0, 0.5
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _deepest(shape, size, rotation, (*xy, mid), angle)[0] < -depth else (lo, mid)
    return np.array([*xy, 0.5 * (lo + hi)])


CORNER_UP = Rotation.from_rotvec(np.arccos(1 / np.sqrt(3)) * np.array([1.0, -1.0, 0.0]) / np.sqrt(2)).as_matrix()
TILTED = Rotation.from_rotvec((0.01, -0.02, 0.05)).as_matrix()
POLYTOPE = rd.Mesh(trimesh.creation.icosahedron().apply_scale((0.03, 0.02, 0.025)))
# each pair: the link's shape, the box's size and rotation, the hip's xy, the knee's angle, and which probe is the
# deepest (0: a link corner in the box, 1: a box corner in the link)
PAIRS = {
    "box-on-box": (rd.Box((0.06, 0.04, 0.02)), (0.2, 0.2, 0.1), TILTED, (0.01, 0.02), 0.1, 0),
    "capsule-on-box": (rd.Capsule(0.02, 0.08), (0.2, 0.2, 0.1), TILTED, (0.01, 0.02), 0.1, 0),
    "mesh-on-box": (POLYTOPE, (0.2, 0.2, 0.1), TILTED, (0.01, 0.02), 0.2, 0),
    "box-on-corner": (rd.Box((0.06, 0.04, 0.02)), (0.1, 0.1, 0.1), CORNER_UP, (0.012, -0.006), 0.05, 1),
    "capsule-on-corner": (rd.Capsule(0.02, 0.08), (0.1, 0.1, 0.1), CORNER_UP, (0.004, 0.003), 0.0, 1),
}


def _pair_world(pair, friction=0.5):
    shape, size, rotation, xy, angle, _ = PAIRS[pair]
    world = _world(ground=False, friction=friction)
    name = world.add_box(size, rd.Transform((0.0, 0.0, 0.0), rotation))
    world.set_obstacle_pose(name, world.obstacle_pose(name), velocity=(0.05, -0.02, 0.01, 0.3, -0.2, 0.5))
    world.add_skeleton(_leg(shape, _hip_touching(shape, size, rotation, xy, angle)))
    s = world.layout("leg")
    q, v, f = world.q, np.zeros(world.nv), np.zeros(world.nv)
    q[s.q] = (0.0, 0.0, 0.0, angle)
    v[s.v] = (0.15, -0.1, 0.02, 0.5)  # sliding: friction is past its static band
    f[s.v] = (0.3, 0.1, 2.0, 0.02)
    return world, name, q, v, f


@pytest.mark.parametrize("pair", list(PAIRS))
def test_gradients_of_links_on_boxes_match_central_differences(pair):
    shape, size, rotation, xy, angle, deepest = PAIRS[pair]
    hip = _hip_touching(shape, size, rotation, xy, angle)
    assert _deepest(shape, size, rotation, hip, angle)[1] == deepest  # the probe kind this pair is for
    world, name, q, v, f = _pair_world(pair)
    world.step(q, v, f)
    assert world.last_step["contacts"] > 0
    g = _check_gradients(world, name, q, v, f)
    assert g.parameter("friction") != 0.0 and g.parameter("contact_stiffness") != 0.0
    assert np.abs([g.parameter(f"pose:{name}:{c}") for c in "xyz"]).max() > 0.0


def test_a_box_link_rests_on_the_corner_of_a_box():
    """A box obstacle turned corner-up under a falling flat box link on a vertical rail: the corner, probed in the
    link's field, holds it at the penalty's depth (m g / k into its bottom face); without it, it falls past."""
    def drop(with_box):
        world = _world(ground=False)
        if with_box:
            world.add_box((0.1, 0.1, 0.1), rd.Transform((0.0, 0.0, 0.0), CORNER_UP))
        sk = rd.Skeleton("slab")
        box = rd.Box((0.08, 0.06, 0.02))
        body = sk.add_body("box", rd.PrismaticJoint("lift", axis=(0, 0, 1)), joint_origin=rd.Transform((0, 0, 0.1)),
                           inertia=rd.Inertia.from_shape(box, mass=0.5))
        body.add_shape(box)
        world.add_skeleton(sk)
        q, v = world.q, world.v
        for _ in range(300):
            q, v = world.step(q, v)
        return q[world.layout("slab").q][0], v[world.layout("slab").v][0]

    top = np.sqrt(3) * 0.05  # the corner's height
    lift, speed = drop(True)
    bottom = 0.1 + lift - 0.01
    assert top - bottom == pytest.approx(0.5 * G / K, rel=1e-6) and abs(speed) < 1e-9
    assert drop(False)[0] < -0.3
