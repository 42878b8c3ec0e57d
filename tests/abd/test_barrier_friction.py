"""IPC's lagged smoothed friction in barrier worlds: the potential's gradient against finite differences, a
box sliding down an incline at g (sin theta - mu cos theta), and sticking below atan(mu)."""

import numpy as np
import pytest

import rigidiff as rd

G = 9.81


def test_friction_potential_gradient_matches_finite_differences():
    world = rd.World(dt=1e-2, solver="barrier", dhat=2e-2, friction=0.5, friction_velocity=1e-3)
    world.add_ground()
    box = rd.Box((0.2, 0.2, 0.2))
    world.add_affine_body(box, pose=rd.Transform((0.0, 0.0, 0.105)), name="low")
    tilt = rd.Transform(rpy=(0.05, 0.4, 0.3))
    corners = box.to_trimesh().vertices @ tilt.rotation.T
    world.add_affine_body(box, pose=rd.Transform((0.03, -0.02, 0.215 - corners[:, 2].min()), rotation=tilt.rotation),
                          name="high")
    q_n = world.q
    rng = np.random.default_rng(7)
    kappa = 100.0
    # slips of 1e-3 m (sliding: past eps_v dt = 1e-5 m) and of 3e-6 m (inside the smoothed static zone)
    for scale in (1e-3, 3e-6):
        q = q_n + scale * rng.normal(size=q_n.size)
        D, g = world._bw_friction_potential(q, q_n, kappa)
        assert D > 0.0 and np.abs(g).max() > 0.0
        h = 1e-3 * scale
        g_fd = np.array([(world._bw_friction_potential(q + h * e, q_n, kappa)[0]
                          - world._bw_friction_potential(q - h * e, q_n, kappa)[0]) / (2 * h) for e in np.eye(q.size)])
        np.testing.assert_allclose(g, g_fd, rtol=1e-5, atol=1e-6 * np.abs(g).max())
        assert not np.array_equal(g, g_fd)
    # no slip, no force: the potential's gradient vanishes at the start state
    assert np.abs(world._bw_friction_potential(q_n, q_n, kappa)[1]).max() == 0.0


def _box_on_incline(theta, mu, dt=1e-2):
    """A 0.2 m box resting on the plane through the origin tilted by theta about y; returns the world and the
    downhill unit vector."""
    world = rd.World(dt=dt, solver="barrier", dhat=1e-3, friction=mu, friction_velocity=1e-3)
    n = np.array([np.sin(theta), 0.0, np.cos(theta)])
    world.add_ground(normal=n)
    R = rd.Transform(rpy=(0.0, theta, 0.0)).rotation  # the box's bottom face on the plane
    world.add_affine_body(rd.Box((0.2, 0.2, 0.2)), density=500.0, pose=rd.Transform(n * 0.1008, rotation=R),
                          name="box")
    return world, np.array([np.cos(theta), 0.0, -np.sin(theta)])


def test_box_slides_down_an_incline_at_the_coulomb_acceleration():
    theta, mu = np.radians(30.0), 0.3
    world, down = _box_on_incline(theta, mu)
    q, v = world.q, world.v
    times, speeds = [], []
    for k in range(100):
        q, v = world.step(q, v)
        times.append((k + 1) * world.dt)
        speeds.append(v[:3] @ down)
    times, speeds = np.array(times), np.array(speeds)
    late = times > 0.3  # after the contact settled
    accel = np.polyfit(times[late], speeds[late], 1)[0]
    expected = G * (np.sin(theta) - mu * np.cos(theta))
    assert accel == pytest.approx(expected, rel=0.02)
    # it slides on the plane: never through it, never off it
    V, _ = world.surface(q, "box")
    heights = V @ np.array([np.sin(theta), 0.0, np.cos(theta)])
    assert 0.0 < heights.min() < world.dhat


def test_box_sticks_on_an_incline_below_the_friction_angle():
    theta, mu = np.radians(10.0), 0.3  # tan(10 deg) = 0.18 < mu
    world, down = _box_on_incline(theta, mu)
    q, v = world.q, world.v
    start = world.body_pose(q, "box")[:3, 3]
    for _ in range(100):
        q, v = world.step(q, v)
    # smoothed static friction: it may creep slower than friction_velocity, no faster
    assert abs(v[:3] @ down) < world.friction_velocity
    assert abs((world.body_pose(q, "box")[:3, 3] - start) @ down) < world.friction_velocity * 1.0
    # frictionless, the same box slides away
    world.friction = 0.0
    q, v = world.q, world.v
    for _ in range(30):
        q, v = world.step(q, v)
    assert v[:3] @ down > 0.5 * G * np.sin(theta) * 0.3
