"""A ram (a prismatic joint driven by a PD law) pushes a square peg, 1 mm narrower than the hole on each
side, into the blind hole of a block (one non-convex mesh): aligned, it reaches the floor and presses on
it without tunnelling; 1.5 mm off, its edge lands on the rim and stays there. The step Jacobians of the
pressed peg match finite differences."""

import numpy as np
import pytest

import rigidiff as rd
import rigidiff.testing as rdt
from voxel_meshes import holed_block

BLOCK = holed_block(cells=4)  # the hole [-0.05, 0.05]^2 from the floor z = 0.05 up to the top z = 0.2
TARGET = 0.3  # the PD law's target stroke, 5 cm past the floor: the ram presses the peg on it


def press_world(offset):
    world = rd.World(dt=1e-3)
    block = rd.Skeleton("block")
    block.add_body("block", joint=rd.FixedJoint("weld")).add_shape(rd.Mesh(BLOCK), friction=0.3)
    world.add_skeleton(block)
    press = rd.Skeleton("press")
    press.add_body("frame", joint=rd.FixedJoint("frame_mount"), joint_origin=rd.Transform(translation=(offset, 0.0, 0.45)))
    peg = rd.Box((0.098, 0.098, 0.3))  # its bottom 0.3 below the frame at stroke 0
    press.add_body("peg", joint=rd.PrismaticJoint("ram", axis=(0, 0, -1)), parent="frame",
                   inertia=rd.Inertia.from_shape(peg, mass=0.5)).add_shape(peg, friction=0.3)
    world.add_skeleton(press)
    return world


def pd(q, v):
    return np.array([20.0 * (TARGET - q[0]) - 2.0 * v[0]])


def run(world, steps=800):
    """The ram's steps from stroke 0 at rest: the last state and, over the run, the deepest contact along the
    vertical (the peg's bottom on the floor or on the block's top)."""
    q, v, deepest = np.zeros(1), np.zeros(1), 0.0
    for _ in range(steps):
        q, v = world.step(q, v, pd(q, v))
        c = world.last_contacts()
        up = c.normals[:, 2] > 0.99
        if up.any():
            deepest = max(deepest, -c.distances[up].min())
    return q, v, deepest


@pytest.mark.parametrize("offset,stroke", [(0.0008, 0.25), (0.0015, 0.1)])
def test_the_ram_pushes_the_peg_to_the_floor_or_onto_the_rim(offset, stroke):
    """Aligned (0.8 mm off, 0.2 mm from a wall) the peg's bottom reaches the floor (stroke 0.25); 1.5 mm off
    it overlaps the rim by 0.5 mm and rests on the block's top (stroke 0.1; its corners there are also 0.5 mm
    behind the wall, which the fixed ram cannot leave), pressed by the ram."""
    world = press_world(offset)
    q, v, deepest = run(world)
    assert q[0] == pytest.approx(stroke, abs=1e-4)
    assert abs(v[0]) < 1e-9
    assert deepest < 2e-4  # never deeper than the step's rest depth and one step of approach
    c = world.last_contacts()
    up = c.normals[:, 2] > 0.99
    assert up.sum() >= 3
    lift = (c.normal_impulses * c.normals[:, 2]).sum() / world.dt
    assert lift == pytest.approx(20.0 * (TARGET - q[0]) + 0.5 * 9.81, rel=1e-6)  # the ram's push and the weight


def test_step_jacobians_of_the_pressed_peg_match_finite_differences():
    world = press_world(0.0008)
    q, v, _ = run(world, 500)
    report = rdt.check_jacobians(world, q, v, pd(q, v), wrt=("q", "v", "tau"), eps=1e-7, rtol=1e-6, atol=1e-9)
    assert report.passed, str(report)
