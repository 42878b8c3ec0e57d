"""Non-convex affine bodies piling up: rings (tori) and L-shaped prisms dropped in layers into a box of static
walls on the ground plane, never intersecting (IPC Toolkit checks every step, independently of the solver),
never leaving the box and coming to rest on one another: 12 bodies by default, 100 in the slow run."""

import numpy as np
import pytest

from ipc_checks import assert_intersection_free
from nonconvex_drop import DHAT, drop_scene, inside_half_width

ipctk = pytest.importorskip("ipctk")


def _drop(side, layers, steps):
    """Runs the drop, checking every step; returns the world, the last state and the Newton iterations."""
    world = drop_scene(side, layers)
    half = inside_half_width(side)
    bodies = [name for name in world.body_names if name.startswith("body")]
    q, v = world.q, world.v
    iterations = []
    for _ in range(steps):
        q, v = world.step(q, v)
        iterations.append(world.last_step["newton_iterations"])
        assert_intersection_free(ipctk, world, q, DHAT, ground_half_width=2 * half)
        for name in bodies:
            V, _ = world.surface(q, name)
            assert np.abs(V[:, :2]).max() < half and V[:, 2].min() > 0.0
            A, _ = world.affine_map(q, name)
            assert np.linalg.norm(A @ A.T - np.eye(3)) < 1e-3
    return world, q, v, bodies, iterations


def _speeds(world, q, v, bodies):
    """Each body's largest vertex speed (a surface is affine in q, so its vertices' velocities are the
    difference of the surfaces at q + v and q)."""
    return np.array([np.linalg.norm(world.surface(q + v, name)[0] - world.surface(q, name)[0], axis=1).max()
                     for name in bodies])


def test_twelve_rings_and_l_shapes_fall_into_a_box_and_come_to_rest():
    """2 x 2 bodies in each of 3 layers, 0.6 s at dt = 1e-2 with friction 0.3: the upper layers land on the
    lower ones and everything is still by the end (measured: centres at most 6.5 cm up, from 28 cm; vertices
    slower than 1 mm/s; up to 47 Newton iterations in a step while they land)."""
    world, q, v, bodies, iterations = _drop(side=2, layers=3, steps=60)
    heights = np.array([world.body_pose(q, name)[2, 3] for name in bodies])
    assert heights.max() < 0.1
    assert _speeds(world, q, v, bodies).max() < 0.01


@pytest.mark.slow
def test_hundred_rings_and_l_shapes_fall_into_a_box():
    """5 x 5 bodies in each of 4 layers (50 rings, 50 L-shapes), 0.5 s at dt = 1e-2: every layer has landed by
    the end (the top one started at 0.39 m), intersection-free at every step."""
    world, q, v, bodies, iterations = _drop(side=5, layers=4, steps=50)
    heights = np.array([world.body_pose(q, name)[2, 3] for name in bodies])
    assert heights.max() < 0.3
