"""A robot arm in a barrier world sweeps the top off a stack of affine blocks, intersection-free at every step.

rigidiff's shipped 7-dof arm (``rd.models.path("arm7")``: panda-like masses, limits and damping, collision
cylinders and an STL hand), its base welded to the ground, reaches out with its hand 0.2 to 0.3 m above the
ground. Three 10 cm blocks (0.3 kg each, friction 0.5) stand stacked 0.49 m from its base. The shoulder turns
the arm about the vertical, and the hand sweeps through the upper two blocks, which are knocked off the stack
and fall to the ground; the bottom block stays.

The arm is a skeleton of the barrier world (``world.add_skeleton``): its joint coordinates come first in q,
its links' collision shapes are barrier participants placed by forward kinematics, and each step minimises
one incremental potential over the joints and the blocks, with CCD along the joint-space path, so that no
Newton iterate is ever intersecting. Joints 2 to 7 hold the reaching pose with joint springs about it (joint
stiffness and damping enter the step implicitly); the shoulder follows a ramp of its angle by a PD torque;
gravity is compensated with the arm's own gravity torques.

The report: the smallest surface distance over the run (positive: never touching), the blocks' moves, how far
the springs let the held joints drift, Newton iterations and the cost of a step. Run
``python examples/arm_sweeps_a_stack.py [--fast] [--out DIR]``; it writes ``arm_sweeps_a_stack.png`` (the
blocks' heights) and ``arm_sweeps_a_stack_frames.png`` (the scene, drawn by ``rd.viz``).
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
DHAT = 1e-3
BLOCK = 0.1
# the reaching pose (found by bounded least squares on the hand's position): the hand 0.49 m out, 0.2 to 0.3 m up
POSE = np.array([-0.346, 1.763, -0.808, -1.044, -2.188, 3.752, 0.785])
SPRINGS = (0.0, 400.0, 200.0, 200.0, 20.0, 20.0, 5.0)  # N m / rad; the shoulder is driven, not held
STACK_AZIMUTH = 0.45  # rad from the hand's starting direction


def build():
    arm = rd.load_urdf(rd.models.path("arm7"), load_geometry=True)
    for i, joint in enumerate(j for j in arm.joints if j.nv):
        joint.stiffness = np.array([SPRINGS[i]])
        joint.damping = joint.damping + 0.1 * SPRINGS[i] + 2.0
        joint.rest_position = POSE[i:i + 1].copy()
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.5)
    world.add_ground()
    world.add_skeleton(arm)
    x, y = 0.49 * np.cos(STACK_AZIMUTH), 0.49 * np.sin(STACK_AZIMUTH)
    for k in range(3):
        height = BLOCK / 2 + DHAT / 2 + k * (BLOCK + DHAT / 2)
        world.add_affine_body(rd.Box((BLOCK,) * 3), density=300.0, pose=rd.Transform((x, y, height), rpy=(0, 0, STACK_AZIMUTH)),
                              name=f"block{k}")
    q = world.q
    q[world.layout("arm7").q] = POSE
    world.q = q
    return world


def simulate(world, steps: int):
    arm = world.layout("arm7")
    gravity = world.skeleton_world().gravity_forces
    q, v = world.q, world.v
    Q, heights = [q], [[world.body_pose(q, n)[2, 3] for n in world.body_names]]
    min_distance, iterations = np.inf, []
    start = time.perf_counter()
    for t in range(steps):
        tau = np.zeros(world.nv)
        tau[arm.v] = gravity(q[arm.q])
        shoulder = min(POSE[0] + 1.2, POSE[0] + 0.015 * t)  # the ramp the shoulder follows
        tau[0] += 30.0 * (shoulder - q[0]) - 10.0 * v[0]
        q, v = world.step(q, v, tau)
        stats = world.last_step
        min_distance = min(min_distance, stats["min_distance"])
        iterations.append(stats["newton_iterations"])
        Q.append(q)
        heights.append([world.body_pose(q, n)[2, 3] for n in world.body_names])
    per_step = (time.perf_counter() - start) / steps
    for q in Q:
        world.check_state(q)  # raises if any two surfaces cross or touch
    return np.array(Q), np.array(heights), min_distance, iterations, per_step


def plot(out: Path, world, Q, heights) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4))
    times = np.arange(len(heights)) * world.dt
    for k, name in enumerate(world.body_names):
        ax.plot(times, heights[:, k], label=name)
    ax.set(xlabel="time (s)", ylabel="height of the block's centre (m)", title="an arm sweeps a stack (barrier world)")
    ax.legend()
    fig.tight_layout()
    path = out / "arm_sweeps_a_stack.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "arm_sweeps_a_stack_frames.png", n_frames=4)
    return [path, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    duration = 1.2 if fast else 2.5
    world = build()
    q0 = world.q
    Q, heights, min_distance, iterations, per_step = simulate(world, int(round(duration / world.dt)))
    q = Q[-1]
    moves = [np.linalg.norm(world.body_pose(q, n)[:2, 3] - world.body_pose(q0, n)[:2, 3]) for n in world.body_names]
    arm = world.layout("arm7")
    drift = np.abs(q[arm.q][1:] - POSE[1:]).max()
    print(f"barrier world: the 7-dof arm and {len(world.body_names)} blocks, dt = {world.dt:g} s, {duration:g} s, "
          f"dhat = {DHAT:g} m")
    print(f"the shoulder turned by {q[0] - POSE[0]:.2f} rad")
    print(f"smallest surface distance over the run: {min_distance:.3e} m")
    print("blocks moved (horizontally): " + ", ".join(f"{n} {d:.3f} m" for n, d in zip(world.body_names, moves)))
    print(f"top block height at the end: {heights[-1, -1]:.3f} m (it started at {heights[0, -1]:.3f} m)")
    print(f"largest drift of the held joints from the pose: {drift:.3f} rad")
    print(f"Newton iterations per step: mean {np.mean(iterations):.2f}, max {max(iterations)}; "
          f"{1e3 * per_step:.2f} ms per step")
    pngs = plot(Path(out), world, Q, heights)
    for p in pngs:
        print(f"wrote {p}")
    return {"min_distance": min_distance, "moves": moves, "drift": drift, "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
