"""A two-finger gripper under PD joint control squeezes a soft ball and lifts it off the ground in a projective
world: held by friction it rises and stays up; without friction it slips out and stays on the ground."""

import numpy as np
import pytest

import rigidiff as rd

RADIUS = 0.04
LIFT = 0.05  # how far the carriage's set point rises


def _world(friction):
    world = rd.World(dt=5e-3, solver="projective", friction=friction, contact_stiffness=5e3, tolerance=1e-8)
    world.add_ground()
    world.add_deformable(rd.HexMesh.from_surface(rd.Sphere(RADIUS), dx=0.02),
                         rd.ProjectiveMaterial(3e4, 0.3, 500.0, kind=("corotated", "volume")), name="ball",
                         pose=rd.Transform((0.0, 0.0, RADIUS)))
    sk = rd.Skeleton("gripper")
    carriage = sk.add_body("carriage", rd.PrismaticJoint("lift", axis=(0, 0, 1)),
                           joint_origin=rd.Transform((0.0, 0.0, RADIUS)),
                           inertia=rd.Inertia.from_shape(rd.Box((0.05, 0.05, 0.02)), mass=0.3))
    finger = rd.Box((0.05, 0.02, 0.05))
    for side, y in (("left", 0.06), ("right", -0.06)):
        body = sk.add_body(side, rd.PrismaticJoint(side, axis=(0, -np.sign(y), 0)), parent=carriage,
                           joint_origin=rd.Transform((0.0, y, 0.0)), inertia=rd.Inertia.from_shape(finger, mass=0.05))
        body.add_shape(finger)
    world.add_skeleton(sk)
    return world


def _grasp(world, steps=120):
    """PD control: the fingers' set point 2 cm inside the ball's surface, then the carriage's set point rises by
    LIFT over the second third and holds. Returns the ball's mean heights and the final state."""
    s = world.layout("gripper")
    m = world.masses("ball")
    q, v = world.q, world.v
    heights = [m @ world.positions(q, "ball")[:, 2] / m.sum()]
    for t in range(steps):
        lift = LIFT * np.clip((t - steps / 3) / (steps / 3), 0.0, 1.0)
        target = np.array([lift, 0.02, 0.02])
        qs, vs = q[s.q], v[s.v]
        tau = np.array([400.0, 150.0, 150.0]) * (target - qs) - np.array([20.0, 5.0, 5.0]) * vs
        tau[0] += 9.81 * 0.4  # the links' weight
        f = np.zeros(world.nv)
        f[s.v] = tau
        q, v = world.step(q, v, f)
        heights.append(m @ world.positions(q, "ball")[:, 2] / m.sum())
    return np.array(heights), q


def test_the_gripper_lifts_the_ball_with_friction_and_holds_it():
    world = _world(friction=0.8)
    heights, q = _grasp(world)
    start = heights[0]
    assert heights[-1] > start + 0.6 * LIFT  # lifted with the carriage (minus the slip while it takes the load)
    assert np.ptp(heights[-10:]) < 3e-3      # and held still
    assert world.positions(q, "ball")[:, 2].min() > 0.01  # off the ground
    assert world.last_step["contacts"] > 0


def test_without_friction_the_ball_slips_out():
    world = _world(friction=0.0)
    heights, q = _grasp(world)
    s = world.layout("gripper")
    assert q[s.q][0] > 0.8 * LIFT  # the carriage rose
    assert heights[-1] < heights[0] + 0.01  # the ball did not
