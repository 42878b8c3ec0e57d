"""A house of cards on the barrier solver: two A-frames of leaning 4 mm cards with a flat card across their
apexes stand for 3 s with friction, creeping no faster than smoothed static friction allows, and collapse
without it. IPC Toolkit checks every step for intersections, independently of the solver."""

import numpy as np
import pytest

import rigidiff as rd
from ipc_checks import assert_intersection_free

ipctk = pytest.importorskip("ipctk")

DHAT = 1e-3
LENGTH, WIDTH, THICK = 0.12, 0.08, 0.004  # a card: 12 x 8 cm, 4 mm thick
LEAN = np.radians(20.0)  # each leaning card's angle from the vertical
FRAMES = (-0.07, 0.07)  # the A-frames' apex lines, x
GAP = 0.5 * DHAT  # every contact starts this far apart


def _card_house(friction, friction_velocity=1e-4):
    """Two A-frames (apex lines along y at x = FRAMES) and a flat card across them, each card GAP from what it
    will rest on. In an A-frame the two cards' upper inner edges meet at the apex; each card's foot carries its
    weight N and the apex's push H = N tan(LEAN) / 2 or less (the flat card loads the apex), so it stands when
    friction > tan(LEAN) / 2 = 0.18 and slides apart without friction."""
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=friction, friction_velocity=friction_velocity)
    world.add_ground()
    c, s = np.cos(LEAN), np.sin(LEAN)
    centre_z = GAP + LENGTH / 2 * c + THICK / 2 * s  # the lowest corner GAP above the ground
    for f, apex_x in enumerate(FRAMES):
        for side in (-1, 1):  # the card on side -1 rises towards +x
            turn = rd.Transform(rpy=(0.0, -side * LEAN, 0.0)).rotation
            centre_x = apex_x + side * (GAP / 2 + LENGTH / 2 * s + THICK / 2 * c)
            world.add_affine_body(rd.Box((THICK, WIDTH, LENGTH)), density=500.0,
                                  pose=rd.Transform((centre_x, 0.0, centre_z), turn), name=f"frame{f}{'lr'[side > 0]}")
    apex_z = centre_z + LENGTH / 2 * c + THICK / 2 * s
    world.add_affine_body(rd.Box((0.22, WIDTH, THICK)), density=500.0,
                          pose=rd.Transform((0.0, 0.0, apex_z + GAP + THICK / 2)), name="top")
    return world


def _run(world, steps, record_from):
    """Steps from rest, checking every state with IPC Toolkit; returns the last state and the poses at step
    record_from."""
    q, v = world.q, world.v
    poses = None
    for k in range(steps):
        q, v = world.step(q, v)
        assert_intersection_free(ipctk, world, q, DHAT, ground_half_width=1.0)
        if k == record_from:
            poses = {name: world.body_pose(q, name) for name in world.body_names}
    return q, poses


def test_card_house_stands_with_friction():
    """mu = 0.5, eps_v = 1e-4 m/s, 300 steps of dt = 1e-2. Settled after 0.2 s; over the 2.8 s after, smoothed
    static friction lets each foot creep at most at eps_v (H / N) / (2 mu) <= eps_v tan(LEAN) / (2 mu)
    (3.6e-5 m/s), which bounds every card's move by 1e-4 m (measured: 3.4e-5 m) and its turn by that over
    the card's length. The flat card stays on the apexes, within dhat of them."""
    world = _card_house(friction=0.5)
    q, settled = _run(world, 300, record_from=19)
    bound = 2.8 * world.friction_velocity * np.tan(LEAN) / (2 * world.friction)
    for name in world.body_names:
        now, then = world.body_pose(q, name), settled[name]
        assert np.linalg.norm(now[:3, 3] - then[:3, 3]) < bound
        turn = np.arccos(np.clip((np.trace(now[:3, :3].T @ then[:3, :3]) - 1) / 2, -1.0, 1.0))
        assert turn < 2 * bound / LENGTH
    # the flat card rests on the apex edges: its lowest point within dhat above their highest
    top = world.surface(q, "top")[0][:, 2].min()
    apex = max(world.surface(q, f"frame{f}{side}")[0][:, 2].max() for f in (0, 1) for side in "lr")
    assert 0.0 < top - apex < DHAT


def test_card_house_collapses_without_friction():
    """Frictionless, nothing holds the feet: the A-frames splay and the flat card falls from 11.8 cm to lie
    within a few card thicknesses of the ground within 1 s (measured 3 mm), intersection-free throughout."""
    world = _card_house(friction=0.0)
    start = world.body_pose(world.q, "top")[2, 3]
    q, _ = _run(world, 100, record_from=0)
    assert start > 0.11
    assert world.body_pose(q, "top")[2, 3] < 0.02
    for f in (0, 1):  # each A-frame's cards lie nearly flat
        for side in "lr":
            R = world.body_pose(q, f"frame{f}{side}")[:3, :3]
            assert abs(R[2, 2]) < np.cos(np.radians(60.0))
