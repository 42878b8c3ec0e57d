"""Static meshes in barrier worlds (world.add_static_mesh): a box on a static ramp slides at Coulomb's
acceleration or sticks below the friction angle, intersection-free at every step (IPC Toolkit), while the ramp
stays exactly where it is; what static meshes refuse."""

import numpy as np
import pytest

import rigidiff as rd

ipctk = pytest.importorskip("ipctk")

G = 9.81
DHAT = 1e-3


def _box_on_ramp(theta, mu):
    """A 0.2 m box resting (0.8 dhat above) on the top face of a static 2 x 1 x 0.2 m slab tilted by theta about
    y; returns the world and the downhill unit vector."""
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=mu)
    tilt = rd.Transform(rpy=(0.0, theta, 0.0)).rotation
    normal = tilt @ np.array([0.0, 0.0, 1.0])
    layout = world.add_static_mesh(rd.Box((2.0, 1.0, 0.2)), pose=rd.Transform((0.0, 0.0, 0.0), rotation=tilt),
                                   name="ramp")
    assert layout.kind == "static"
    world.add_affine_body(rd.Box((0.2, 0.2, 0.2)), density=500.0,
                          pose=rd.Transform(normal * (0.2 + 0.8 * DHAT), rotation=tilt), name="box")
    return world, tilt @ np.array([1.0, 0.0, 0.0])  # the slab's x axis, tilted down by theta


def _check_intersection_free(world, q):
    V, F = world.surfaces(q)
    mesh = ipctk.CollisionMesh(V, ipctk.edges(F), F)
    assert not ipctk.has_intersections(mesh, V)
    collisions = ipctk.NormalCollisions()
    collisions.build(mesh, V, DHAT)
    assert len(collisions) > 0  # in contact throughout
    assert collisions.compute_minimum_distance(mesh, V) > 0.0


def _run(world, steps):
    q, v = world.q, world.v
    ramp, box = world.layout("ramp").q, world.layout("box").v
    q_ramp = q[ramp].copy()
    speeds = []
    for _ in range(steps):
        q, v = world.step(q, v)
        _check_intersection_free(world, q)
        np.testing.assert_array_equal(q[ramp], q_ramp)  # the static mesh never moves
        assert np.all(v[ramp] == 0.0)
        speeds.append(v[box][:3].copy())
    return q, v, np.array(speeds)


def test_box_slides_down_a_static_ramp_at_the_coulomb_acceleration():
    theta, mu = np.radians(30.0), 0.3
    world, down = _box_on_ramp(theta, mu)
    q, v, speeds = _run(world, 80)
    s = speeds @ down
    times = world.dt * np.arange(1, len(s) + 1)
    late = times > 0.3
    accel = np.polyfit(times[late], s[late], 1)[0]
    assert accel == pytest.approx(G * (np.sin(theta) - mu * np.cos(theta)), rel=0.02)


def test_box_sticks_on_a_static_ramp_below_the_friction_angle():
    theta, mu = np.radians(15.0), 0.5  # tan(15 deg) = 0.27 < mu
    world, down = _box_on_ramp(theta, mu)
    start = world.body_pose(world.q, "box")[:3, 3]
    q, v, speeds = _run(world, 60)
    # smoothed static friction creeps slower than friction_velocity, no faster
    assert abs(speeds[-1] @ down) < world.friction_velocity
    assert abs((world.body_pose(q, "box")[:3, 3] - start) @ down) < world.friction_velocity


def test_static_mesh_bad_input():
    world = rd.World(solver="barrier", dhat=DHAT)
    world.add_ground()
    # static meshes may rest on (or reach through) the ground planes and touch each other
    world.add_static_mesh(rd.Box((1.0, 1.0, 0.2)), pose=rd.Transform((0.0, 0.0, 0.0)), name="slab")
    world.add_static_mesh(rd.Box((0.2, 0.2, 0.2)), pose=rd.Transform((0.0, 0.0, 0.2)), name="block")
    world.add_affine_body(rd.Box((0.1, 0.1, 0.1)), pose=rd.Transform((0.3, 0.0, 0.2)), name="cube")
    # but not a body: the pair is named
    with pytest.raises(ValueError, match="cube"):
        world.add_static_mesh(rd.Box((0.2, 0.2, 0.2)), pose=rd.Transform((0.35, 0.0, 0.2)), name="post")
    assert world.body_names == ["slab", "block", "cube"]
    # any surface may be static (tests/abd/test_barrier_open_meshes.py), but it needs a face with an area
    line = np.array([[0.0, 0.0, 0.5], [1.0, 0.0, 0.5], [2.0, 0.0, 0.5]])
    with pytest.raises(ValueError, match="static mesh 'line'.*no face with an area"):
        world.add_static_mesh((line, np.array([[0, 1, 2]])), name="line")
    # a step keeps both static meshes and lets the cube fall onto the slab
    q, v = world.q, world.v
    for _ in range(40):
        q, v = world.step(q, v)
    np.testing.assert_array_equal(q[:24], world.q[:24])
    assert 0.1 + 0.05 < q[26] < 0.1 + 0.05 + DHAT
