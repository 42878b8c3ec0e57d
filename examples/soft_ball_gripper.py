"""A two-finger gripper squeezes a soft ball and lifts it off the ground, and the squeeze it needs is found by
gradient descent through the rollout.

A projective world (``rd.World(dt, solver="projective")``) holds a voxelised soft ball (trilinear hexahedra,
corotated and volume energies) and a skeleton: a carriage on a vertical prismatic joint ("lift") carrying two
box fingers on horizontal prismatic joints. The fingers' boxes push the ball's surface vertices with the
world's penalty and hold it by friction, two-way: every step minimises one implicit-Euler potential over the
ball's vertices and the joint coordinates together. The joints follow PD control written in the script (the
joint forces are the skeleton's slice of ``f``); gravity acts on the links and the ball.

The script runs the grasp with friction 0.8 (the ball is lifted) and with friction 0 (it slips out), then
optimises the fingers' closing force so that the lifted ball ends at a target height: the gradient of the
final height with respect to the force in every step comes from ``rollout_backward`` and is checked against a
central difference.

Run ``python examples/soft_ball_gripper.py [--fast] [--out DIR]``; it writes ``soft_ball_gripper.png`` (the
ball's height) and ``soft_ball_gripper_frames.png`` (the scene, drawn by ``rd.viz``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
RADIUS = 0.04
FINGER = rd.Box((0.05, 0.02, 0.05))
OPEN = 0.06  # the fingers' centres from the ball's axis at q = 0 (their inner faces 1 cm off the ball)


def gripper() -> rd.Skeleton:
    """A lift joint (z) and two fingers that close as their coordinates grow."""
    sk = rd.Skeleton("gripper")
    carriage = sk.add_body("carriage", rd.PrismaticJoint("lift", axis=(0, 0, 1), damping=2.0),
                           joint_origin=rd.Transform((0.0, 0.0, RADIUS)),
                           inertia=rd.Inertia.from_shape(rd.Box((0.05, 0.05, 0.02)), mass=0.3))
    for side, y in (("left", OPEN), ("right", -OPEN)):
        finger = sk.add_body(side, rd.PrismaticJoint(f"{side}_finger", axis=(0, -np.sign(y), 0), damping=1.0),
                             parent=carriage, joint_origin=rd.Transform((0.0, y, 0.0)),
                             inertia=rd.Inertia.from_shape(FINGER, mass=0.05))
        finger.add_shape(FINGER)
    return sk


def build(friction: float = 0.8):
    world = rd.World(dt=5e-3, solver="projective", friction=friction, contact_stiffness=5e3, tolerance=1e-9)
    world.add_ground()
    mesh = rd.HexMesh.from_surface(rd.Sphere(RADIUS), dx=0.02)
    world.add_deformable(mesh, rd.ProjectiveMaterial(3e4, 0.3, 500.0, kind=("corotated", "volume")), name="ball",
                         pose=rd.Transform((0.0, 0.0, RADIUS)))
    world.add_skeleton(gripper())
    return world


LIFT_STEPS = (15, 45)  # the lift pulls from the 15th to the 45th step, then holds


def controls(world, steps: int, squeeze: float) -> np.ndarray:
    """Joint forces of an open-loop grasp: the fingers close with the force `squeeze` (N) from the first step;
    the lift carries the links' weight, pulls 3 N more over LIFT_STEPS, then carries the ball's weight too.
    Forces (steps, nv)."""
    s = world.layout("gripper").v
    F = np.zeros((steps, world.nv))
    F[:, s.start + 1:s.stop] = squeeze
    F[:, s.start] = 9.81 * 0.4
    F[LIFT_STEPS[0]:LIFT_STEPS[1], s.start] += 3.0
    F[LIFT_STEPS[1]:, s.start] += 9.81 * world.masses("ball").sum()
    return F


def height(world, q) -> float:
    m = world.masses("ball")
    return float(m @ world.positions(q, "ball")[:, 2] / m.sum())


def final_height_gradient(world, Q, V, F) -> np.ndarray:
    """d height(q_T) / d F (steps, nv) by rollout_backward."""
    m = world.masses("ball")
    dQ, dV = np.zeros_like(Q), np.zeros_like(V)
    dQ[-1, world.layout("ball").q] = np.repeat(m / m.sum(), 3) * np.tile([0.0, 0.0, 1.0], len(m))
    return world.rollout_backward(Q, V, F, dQ, dV).tau


def plot(out: Path, world, Q, heights: dict) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, h in heights.items():
        ax.plot(np.arange(len(h)) * world.dt, h, label=label)
    ax.set(xlabel="time (s)", ylabel="mean height of the ball (m)", title="a gripper lifts a soft ball")
    ax.legend()
    fig.tight_layout()
    path = out / "soft_ball_gripper.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "soft_ball_gripper_frames.png", n_frames=4)
    return [path, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    steps = 45 if fast else 120
    heights, worlds, lifts = {}, {}, {}
    # the squeeze is optimised over the lift itself (LIFT_STEPS[1] steps), in either mode
    lift = LIFT_STEPS[1]
    for mu in (0.8, 0.0):
        world = worlds[mu] = build(mu)
        start = time.perf_counter()
        Q, V = lifts[mu] = world.rollout(world.q, world.v, controls(world, steps, 3.0))
        per_step = (time.perf_counter() - start) / steps
        heights[f"friction {mu:g}"] = np.array([height(world, q) for q in Q])
        print(f"friction {mu:g}: the ball's height goes from {heights[f'friction {mu:g}'][0]:.4f} m to "
              f"{heights[f'friction {mu:g}'][-1]:.4f} m ({1e3 * per_step:.1f} ms per step)")
    world, Q_lift = worlds[0.8], lifts[0.8][0]  # the gripping world and its lift, drawn at the end
    s = world.layout("gripper").v
    # the squeeze that brings the held ball to a target height (the fingers sink deeper the harder they press,
    # so the ball rises less): Newton's method on the final height through the rollout's gradient
    light, firm = (height(world, world.rollout(world.q, world.v, controls(world, lift, x))[0][-1]) for x in (1.0, 1.5))
    target = 0.5 * (light + firm)
    squeeze = 1.0
    for it in range(3 if fast else 6):
        F = controls(world, lift, squeeze)
        Q, V = world.rollout(world.q, world.v, F)
        slope = final_height_gradient(world, Q, V, F)[:, s.start + 1:s.stop].sum()  # both fingers, every step
        err = height(world, Q[-1]) - target
        print(f"iteration {it}: squeeze {squeeze:.4f} N, final height {height(world, Q[-1]):.5f} m "
              f"(target {target:.5f}), d height / d squeeze {slope:.4e} m/N")
        squeeze = float(np.clip(squeeze - err / slope, 0.5 * squeeze, 2.0 * squeeze))
    h = 1e-4
    up, down = (height(world, world.rollout(world.q, world.v, controls(world, lift, squeeze + d))[0][-1])
                for d in (h, -h))
    F = controls(world, lift, squeeze)
    Q, V = world.rollout(world.q, world.v, F)
    adjoint = final_height_gradient(world, Q, V, F)[:, s.start + 1:s.stop].sum()
    fd = (up - down) / (2 * h)
    print(f"squeeze {squeeze:.4f} N: final height {height(world, Q[-1]):.5f} m, target {target:.5f} m")
    print(f"d(final height)/d(squeeze): adjoint {adjoint:.6e}, central difference {fd:.6e} m/N "
          f"(relative difference {abs(adjoint - fd) / abs(fd):.2e})")
    pngs = plot(Path(out), world, Q_lift, heights)
    for p in pngs:
        print(f"wrote {p}")
    return {"heights": heights, "squeeze": squeeze, "gradient": adjoint, "fd": fd, "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
