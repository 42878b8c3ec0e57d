"""Two tori hang from each other: one welded, one free and interlocked with it, its inner arc resting on the
other's rim. With the same tessellation and the rings at right angles, a vertex of the rim's top meets a
vertex of the inner arc, a saddle of the surface: no face's projection holds the rim's vertex once it is
inside, and no edge crosses an edge inside an edge. The contact there is the plane of the surface at the
nearest vertex (collision/mesh_polytope.cpp, inner corners); the ring must hang, at rest, intersection-free
but for the step's rest depth, and the step Jacobians must match finite differences."""

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

import rigidiff as rd
from test_mesh_primitive_contacts import assert_step_jacobians_match_fd

R, r = 0.08, 0.012  # major and minor radii


def torus(major_sections, minor_sections):
    return trimesh.creation.torus(major_radius=R, minor_radius=r, major_sections=major_sections,
                                  minor_sections=minor_sections)


def hanging_world(mesh):
    world = rd.World(dt=1e-3)
    hook = rd.Skeleton("hook")
    hook.add_body("hook", joint=rd.FixedJoint("weld")).add_shape(rd.Mesh(mesh), friction=0.5)
    world.add_skeleton(hook)
    ring = rd.Skeleton("ring")
    body = ring.add_body("ring", joint=rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(rd.Mesh(mesh), mass=0.1))
    body.add_shape(rd.Mesh(mesh), friction=0.5)
    world.add_skeleton(ring)
    return world


def start(yaw_degrees, gap, offset=0.0):
    """The free ring upright through the welded one's rim at x = R: its inner arc's top `gap` above the rim's
    top (z = r), turned by `yaw_degrees` about the vertical and moved `offset` along x."""
    rot = Rotation.from_euler("zx", [yaw_degrees, 90], degrees=True)
    return np.concatenate([[R + offset, 0.0, 2 * r - R + gap], rot.as_quat()])


@pytest.mark.parametrize("sections,yaw", [((32, 12), 0.0), ((32, 12), 7.0), ((24, 8), 0.0), ((48, 16), 3.0)])
def test_a_ring_hangs_from_a_ring_at_rest(sections, yaw):
    world = hanging_world(torus(*sections))
    Q, V = world.rollout(start(yaw, 0.002), np.zeros(6), np.zeros((2000, 6)))
    rest = Q[-1, 2]
    # on the rim: the inner arc's top (at most r below its centre's height R - r up) at the rim's top, within
    # the tessellation's sag (a chord of the 12-gon lies r (1 - cos 15 deg) = 0.4 mm inside the circle)
    assert abs(rest - (2 * r - R)) < 1.5e-3
    assert np.linalg.norm(Q[-1, :3] - Q[1000, :3]) < 5e-4  # drift over the last second
    assert np.abs(V[-1]).max() < 1e-3
    c = world.collide(Q[-1])
    assert len(c) >= 1 and np.all(c.distances > -2e-4)
    assert np.all(c.normals[:, 2] > 0.9)  # the rim holds the ring up


def test_the_aligned_vertices_inside_touch_through_the_surface_normal():
    """Aligned and 0.1 mm inside: one point-face contact, its normal the vertical, its distance about
    -0.1 mm (the plane at the saddle vertex is level there)."""
    world = hanging_world(torus(32, 12))
    c = world.collide(start(0.0, -1e-4))
    assert len(c) == 1 and c.types[0] in ("point_face", "face_point")
    np.testing.assert_allclose(np.abs(c.normals[0]), [0, 0, 1], atol=1e-9)
    assert -1.1e-4 < c.distances[0] < -0.8e-4
    world.contact_options(margin=1e-3)  # apart, within the margin: vertex-edge and edge-edge contacts
    apart = world.collide(start(0.0, 5e-4))
    assert len(apart) >= 1 and np.all(apart.distances > 0)


def test_step_jacobians_of_a_hanging_ring_match_finite_differences():
    world = hanging_world(torus(32, 12))
    q, v = start(7.0, 0.002), np.zeros(6)
    for _ in range(600):
        q, v = world.step(q, v, np.zeros(6))
    contacts = assert_step_jacobians_match_fd(world, q, v, np.array([0.01, -0.02, 0.0, 0.001, 0.0, -0.002]))
    assert len(contacts) >= 1
