"""The Panda (example-robot-data, its collision meshes, its fingers welded shut) carries a square peg, 1 mm
narrower than the hole on each side, down into the blind hole of a block (one non-convex mesh) under
computed-torque control along an inverse-kinematics path that ends 1 cm below the hole's floor: the peg
reaches the floor and presses on it, inside the hole, never deeper than the step's rest depth; only the
peg touches the block; the step Jacobians of the pressed state match finite differences."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import rigidiff as rd
import rigidiff.testing as rdt
from voxel_meshes import holed_block

PEG_LENGTH = 0.12
HOLE_AT = np.array([0.5, 0.0, 0.0])  # the block's origin: its hole [-0.05, 0.05]^2, floor z = 0.05, top 0.2
Q_HOME = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
R_DOWN = np.diag([1.0, -1.0, -1.0])  # the hand pointing down
DT = 1e-3


def panda_with_peg(robots_dir):
    root = ET.parse(robots_dir / "panda_description/urdf/panda.urdf").getroot()
    for joint in root.iter("joint"):
        if joint.get("name", "").startswith("panda_finger_joint"):  # the gripper closed, welded
            joint.set("type", "fixed")
            for tag in ("axis", "limit", "mimic", "dynamics"):
                for element in joint.findall(tag):
                    joint.remove(element)
    panda = rd.load_urdf(ET.tostring(root, encoding="unicode"), package_dirs=[robots_dir], load_geometry=True)
    peg = rd.Box((0.098, 0.098, PEG_LENGTH))
    panda.add_body("peg", joint=rd.FixedJoint("peg_weld"), parent="panda_hand_tcp",
                   joint_origin=rd.Transform(translation=(0.0, 0.0, PEG_LENGTH / 2 + 0.005)),
                   inertia=rd.Inertia.from_shape(peg, mass=0.2)).add_shape(peg, friction=0.3)
    world = rd.World(dt=DT)
    world.add_ground(friction=0.5)
    world.add_skeleton(panda)
    block = rd.Skeleton("block")
    block.add_body("block", joint=rd.FixedJoint("block_weld"), joint_origin=rd.Transform(translation=HOLE_AT)) \
        .add_shape(rd.Mesh(holed_block(cells=2)), friction=0.3)
    world.add_skeleton(block)
    return world


def rotation_log(R):
    angle = np.arccos(np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0))
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return 0.5 * w if angle < 1e-8 else angle / (2.0 * np.sin(angle)) * w


def inverse_kinematics(world, q, centre):
    """q with the peg's centre at `centre`, pointing down: damped least squares from q."""
    q = q.copy()
    for _ in range(300):
        T = world.body_pose(q, "peg")
        err = np.concatenate([centre - T[:3, 3], rotation_log(R_DOWN @ T[:3, :3].T)])
        if np.linalg.norm(err) < 1e-11:
            return q
        J = world.body_jacobian(q, "peg")
        J_pinv = J.T @ np.linalg.inv(J @ J.T + 1e-10 * np.eye(6))
        dq = J_pinv @ err
        if np.linalg.norm(err) > 1e-4:
            dq += 0.1 * (np.eye(7) - J_pinv @ J) @ (Q_HOME - q)
        q += dq * min(1.0, 0.2 / np.abs(dq).max())
    raise AssertionError(f"inverse kinematics did not converge ({np.linalg.norm(err):.1e})")


@pytest.fixture(scope="module")
def pressed(robots_dir):
    """The closed loop: 2 cm above the block's top down to 1 cm below the floor in 1 s (minimum jerk), then
    0.3 s pressing. Returns the world, the last state and torque, and the run's deepest contact."""
    world = panda_with_peg(robots_dir)
    top = HOLE_AT + [0.0, 0.0, 0.2 + 0.02 + PEG_LENGTH / 2]
    bottom = HOLE_AT + [0.0, 0.0, 0.05 - 0.01 + PEG_LENGTH / 2]
    steps = 1400
    s = np.clip((np.arange(steps + 1) * DT - 0.1) / 1.0, 0.0, 1.0)
    path = top + (10 * s**3 - 15 * s**4 + 6 * s**5)[:, None] * (bottom - top)
    Q = np.empty((steps + 1, 7))
    q = inverse_kinematics(world, Q_HOME, top)
    for k, centre in enumerate(path):
        q = Q[k] = inverse_kinematics(world, q, centre)
    V = np.gradient(Q, DT, axis=0)
    A = np.gradient(V, DT, axis=0)
    q, v, deepest, touched = Q[0].copy(), np.zeros(7), 0.0, set()
    for k in range(steps):
        tau = world.inverse_dynamics(q, v, A[k] + 900.0 * (Q[k] - q) + 60.0 * (V[k] - v))
        q, v = world.step(q, v, tau)
        c = world.last_contacts()
        touched |= set(zip(c.body_a, c.body_b))
        if len(c):
            deepest = max(deepest, -c.distances.min())
    return world, q, v, tau, deepest, touched


def test_the_panda_puts_the_peg_into_the_hole_and_presses_it_on_the_floor(pressed):
    world, q, v, tau, deepest, touched = pressed
    centre = world.body_pose(q, "peg")[:3, 3]
    assert centre[2] - PEG_LENGTH / 2 == pytest.approx(0.05, abs=2e-4)  # its bottom on the floor
    assert np.all(np.abs(centre[:2] - HOLE_AT[:2]) < 1e-3)  # within the 1 mm clearance
    assert deepest < 2e-4  # no tunnelling into the floor or the walls
    assert touched == {("peg", "block")}
    c = world.last_contacts()
    floor = c.normals[:, 2] > 0.99
    assert floor.sum() >= 3
    assert np.abs(v).max() < 1e-6


def test_step_jacobians_of_the_pressed_peg_match_finite_differences(pressed):
    world, q, v, tau, _, _ = pressed
    report = rdt.check_jacobians(world, q, v, tau, wrt=("q", "v", "tau"), eps=1e-7, rtol=1e-5, atol=1e-8)
    assert report.passed, str(report)
