"""Balls and boxes in projective worlds, moved by the caller between steps: the gradients of a step with
respect to their poses against central differences of our own step, a soft block pushed across the ground
by a moving box, their ordering among the planes, drawing, and bad input."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rigidiff as rd
from rigidiff.errors import UnknownNameError


def _block(gravity=(0.0, 0.0, -9.81), friction=0.0, tolerance=1e-13):
    world = rd.World(dt=1e-2, solver="projective", tolerance=tolerance, max_iterations=5000, gravity=gravity,
                     friction=friction)
    mesh = rd.HexMesh.box((0.1, 0.05, 0.05), (2, 1, 1))
    world.add_deformable(mesh, rd.ProjectiveMaterial(2e4, 0.3, 1000.0, kind=("corotated", "volume")), name="block")
    return world


def _moved(pose, component, h):
    if component < 3:
        d = np.zeros(3)
        d[component] = h
        return rd.Transform(pose.translation + d, pose.rotation)
    w = np.zeros(3)
    w[component - 3] = h
    return rd.Transform(pose.translation, Rotation.from_rotvec(w).as_matrix() @ pose.rotation)


def _pose_differences(world, name, components, loss, h):
    """{parameter name: central difference of loss()} over the first `components` of the obstacle's pose (its
    velocity kept)."""
    pose, velocity = world.obstacle_pose(name), world.obstacle_velocity(name)
    out = {}
    for c in range(components):
        values = []
        for sign in (1, -1):
            world.set_obstacle_pose(name, _moved(pose, c, sign * h), velocity)
            values.append(loss())
        world.set_obstacle_pose(name, pose, velocity)
        out[f"pose:{name}:{('x', 'y', 'z', 'rx', 'ry', 'rz')[c]}"] = (values[0] - values[1]) / (2 * h)
    return out


def _friction_switched_on(world, q, v, f, h=1e-8):
    """(the step's gradient with respect to mu at mu = 0, its forward difference) for a random loss of the next
    state: mu cannot go below 0."""
    rng = np.random.default_rng(4)
    wq, wv = rng.standard_normal(world.nq), rng.standard_normal(world.nv)

    def loss(mu):
        world.friction = mu
        qn, vn = world.step(q, v, f)
        return wq @ qn + wv @ vn

    world.friction = 0.0
    g = world.step_vjp(q, v, f, wq, wv).parameter("friction")
    return g, (loss(h) - loss(0.0)) / h


def _attribute_difference(world, attr, loss, h):
    """The central difference of loss() over a world's attribute (friction, contact_stiffness), its step h
    relative."""
    value = getattr(world, attr)
    step = h * value
    setattr(world, attr, value + step)
    up = loss()
    setattr(world, attr, value - step)
    down = loss()
    setattr(world, attr, value)
    return (up - down) / (2 * step)


def test_pose_gradients_match_central_differences():
    world = _block()
    box = world.add_box((0.1, 0.1, 0.1), rd.Transform((0.13, 0.02, -0.03),
                                                      Rotation.from_rotvec([0.1, 0.2, 0.05]).as_matrix()))
    ball = world.add_sphere((-0.02, 0.0, -0.03), 0.05)
    rng = np.random.default_rng(0)
    q, v = world.q, 0.05 * rng.standard_normal(world.nv)
    wq, wv = rng.standard_normal(world.nq), rng.standard_normal(world.nv)

    def loss():
        qn, vn = world.step(q, v)
        return wq @ qn + wv @ vn

    g = world.step_vjp(q, v, None, wq, wv)
    assert world.last_step["contacts"] > 0  # both obstacles touch the block
    assert g.parameter_names[-9:] == tuple(f"pose:{box}:{c}" for c in ("x", "y", "z", "rx", "ry", "rz")) + tuple(
        f"pose:{ball}:{c}" for c in ("x", "y", "z"))
    h = 1e-6
    for name, components in ((box, 6), (ball, 3)):
        pose = world.obstacle_pose(name)
        for c in range(components):
            values = []
            for sign in (1, -1):
                world.set_obstacle_pose(name, _moved(pose, c, sign * h))
                values.append(loss())
            world.set_obstacle_pose(name, pose)
            fd = (values[0] - values[1]) / (2 * h)
            key = f"pose:{name}:{('x', 'y', 'z', 'rx', 'ry', 'rz')[c]}"
            assert g.parameter(key) == pytest.approx(fd, rel=1e-6, abs=1e-6 * np.abs(g.parameters).max())


def test_a_moving_box_pushes_a_soft_block_across_the_ground():
    world = _block(friction=0.3, tolerance=1e-8)
    world.add_ground()
    # the pusher reaches below the ground, so that it meets the block's bottom edge too
    pusher = world.add_box((0.04, 0.1, 0.1), rd.Transform((-0.025, 0.025, 0.04)))
    q, v = world.q, world.v
    start = world.positions(q, "block")[:, 0].mean()
    deepest = 0.0
    for t in range(60):  # the box moves at 0.2 m/s along x
        world.set_obstacle_pose(pusher, rd.Transform((-0.025 + 0.2 * world.dt * (t + 1), 0.025, 0.04)))
        q, v = world.step(q, v)
        face = world.obstacle_pose(pusher).translation[0] + 0.02
        deepest = max(deepest, face - world.positions(q, "block")[:, 0].min())
    moved = world.positions(q, "block")[:, 0].mean() - start
    assert 0.08 < moved < 0.13  # pushed along (the box travelled 0.12 m), against friction
    assert deepest < 2e-4  # the penalty keeps the box's face out of the block (0.74 N of friction at 1e4 N/m)
    assert abs(world.positions(q, "block")[:, 1].mean() - 0.025) < 1e-3  # straight along x


def test_balls_and_boxes_keep_their_identity_when_planes_are_added():
    world = _block(gravity=(0.0, 0.0, 0.0))
    ball = world.add_sphere((5.0, 0.0, 0.0), 0.01)
    world.add_ground(height=-1.0)
    box = world.add_box((0.01, 0.01, 0.01), rd.Transform((5.0, 5.0, 0.0)))
    q = world.q
    assert world.energy(q)[0] < 1e-20  # the rest shape: only rounding in the elastic energy
    world.set_obstacle_pose(ball, rd.Transform((0.0, 0.0, 0.0)))  # over the corner vertex at the origin
    e_ball = world.energy(q)[0]
    assert e_ball == pytest.approx(0.5 * world.contact_stiffness * 0.01 ** 2)
    world.set_obstacle_pose(ball, rd.Transform((5.0, 0.0, 0.0)))
    world.set_obstacle_pose(box, rd.Transform((0.0, 0.0, 0.0)))
    assert world.energy(q)[0] == pytest.approx(0.5 * world.contact_stiffness * 0.005 ** 2)
    assert world.obstacle_names == (ball, box)
    polygons = [p for key, p in world._viz_surfaces(q) if key == "obstacles"]
    assert len(polygons) == 2
    assert np.abs(polygons[1]).max() == pytest.approx(0.005)  # the box drawn where it now is


def test_bad_obstacles_are_named():
    world = _block()
    box = world.add_box((0.1, 0.1, 0.1))
    with pytest.raises(ValueError, match="already used"):
        world.add_box((0.1, 0.1, 0.1), name=box)
    with pytest.raises(ValueError, match="size"):
        world.add_box((0.1, -0.1, 0.1))
    with pytest.raises(TypeError, match="pose"):
        world.add_box((0.1, 0.1, 0.1), pose=(0, 0, 0))
    with pytest.raises(UnknownNameError, match="no obstacle"):
        world.set_obstacle_pose("nope", rd.Transform())
    with pytest.raises(ValueError, match="radius"):
        world.add_sphere((0, 0, 0), 0.0)
    with pytest.raises(ValueError, match="translation"):
        world.set_obstacle_pose(box, rd.Transform((np.nan, 0.0, 0.0)))
    assert world.obstacle_names == (box,)
