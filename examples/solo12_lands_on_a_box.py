"""A quadruped on a floating base lands on a loose box in a barrier world and stands on it, never intersecting.

example-robot-data's solo12 (a free root joint and 12 leg joints, its shipped collision meshes: 50736 faces) is
dropped from 3 cm, pushed sideways at 0.2 m/s and turning at 0.5 rad/s, onto a 10 kg box (an affine body) that
rests on the ground, with friction 0.8. Its legs hold a standing pose by a joint-space PD controller given as the
joints' springs and dampers about the pose, which the step treats implicitly (explicit PD torques on its light
lower legs would need a far smaller dt).

The robot is a skeleton of the barrier world (``world.add_skeleton(solo, q=...)`` places its base): its free
joint's q holds a quaternion (nq = 19, nv = 18), each step minimises one incremental potential over the joints
and the box with the free joint moved on R^3 x SO(3) as the lcp world moves it, and the CCD follows the base's
straight move and turn, so that no Newton iterate is ever intersecting (docs/affine.md, "Floating bases").

The report: how the landing went (the base's height and tilt, the legs' largest error from the pose, the box's
move), the smallest surface distance over the run, Newton iterations and the cost of a step. Run
``python examples/solo12_lands_on_a_box.py [--fast] [--out DIR]``; it writes ``solo12_lands_on_a_box.png`` (the
base's height over the box) and ``solo12_lands_on_a_box_frames.png`` (the scene, drawn by ``rd.viz``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
DHAT = 1e-3
URDF = "solo_description/robots/solo12.urdf"
# hips abducted 0, thighs +-0.8 rad, knees -+1.6 rad: the feet under the hips
STAND = np.array([0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6])
KP, KD = 20.0, 0.5  # the legs' springs (N m / rad) and dampers (N m s / rad)
BOX = (0.5, 0.4, 0.1)


def load_solo(robots_dir: Path) -> rd.Skeleton:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the URDF's unused elements
        solo = rd.load_urdf(robots_dir / URDF, package_dirs=[robots_dir.parent], load_geometry=True,
                            floating_base=True, strict=False)
    legs = [b.joint for b in solo.bodies if b.joint.type == "revolute"]
    for joint, angle in zip(legs, STAND):
        joint.stiffness, joint.damping, joint.rest_position = np.array([KP]), np.array([KD]), np.array([angle])
    return solo


def feet_depth(solo: rd.Skeleton) -> float:
    """How far the standing robot's lowest point lies below its base's origin."""
    probe = rd.World(dt=1e-2, solver="barrier")
    probe.add_skeleton(solo, q=np.concatenate([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], STAND]))
    return -probe.surfaces(probe.q)[0][:, 2].min()


def build(robots_dir: Path):
    solo = load_solo(robots_dir)
    depth = feet_depth(solo)
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.8)
    world.add_ground()
    world.add_affine_body(rd.Box(BOX), density=500.0, pose=rd.Transform((0.0, 0.0, BOX[2] / 2 + DHAT / 2)), name="box")
    world.add_skeleton(solo, q=np.concatenate([[0.0, 0.0, BOX[2] + depth + 0.03, 0.0, 0.0, 0.0, 1.0], STAND]))
    q, v = world.q, world.v
    v[0], v[5] = 0.2, 0.5  # the base's push (its own axes) and yaw rate
    return world, q, v, depth


def simulate(world, q, v, steps: int):
    Q, min_distance, iterations = [q], np.inf, []
    start = time.perf_counter()
    for _ in range(steps):
        q, v = world.step(q, v)
        min_distance = min(min_distance, world.last_step["min_distance"])
        iterations.append(world.last_step["newton_iterations"])
        Q.append(q)
    per_step = (time.perf_counter() - start) / steps
    return np.array(Q), v, min_distance, iterations, per_step


def plot(out: Path, world, Q) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4))
    times = np.arange(len(Q)) * world.dt
    box_top = np.array([world.body_pose(q, "box")[2, 3] + BOX[2] / 2 for q in Q])
    ax.plot(times, (Q[:, 2] - box_top) * 1e3)
    ax.set(xlabel="time (s)", ylabel="base above the box's top (mm)", title="solo12 lands on a box (barrier world)")
    fig.tight_layout()
    path = out / "solo12_lands_on_a_box.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "solo12_lands_on_a_box_frames.png", n_frames=4)
    return [path, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    robots_dir = rd.models.example_robot_data_dir()
    if robots_dir is None:
        print("example-robot-data is not installed (pip install example-robot-data): no robot to load; skipping.")
        return {}
    duration = 0.6 if fast else 1.5
    world, q0, v0, depth = build(robots_dir)
    Q, v, min_distance, iterations, per_step = simulate(world, q0, v0, int(round(duration / world.dt)))
    q = Q[-1]
    for state in Q[:: max(1, len(Q) // 10)]:
        world.check_state(state)  # raises if any two surfaces cross or touch
    box = world.body_pose(q, "box")
    x, y = q[3], q[4]
    tilt = np.arccos(np.clip(1.0 - 2.0 * (x * x + y * y), -1.0, 1.0))  # the base's z axis from the vertical
    legs = np.abs(q[7:19] - STAND).max()
    print(f"barrier world: solo12 (nq = {world.skeleton_world().nq}, nv = {world.skeleton_world().nv}) and a "
          f"{BOX[0]} x {BOX[1]} x {BOX[2]} m box, dt = {world.dt:g} s, {duration:g} s, dhat = {DHAT:g} m")
    print(f"base above the box's top at the end: {q[2] - box[2, 3] - BOX[2] / 2:.4f} m (straight-legged: {depth:.4f} m)")
    print(f"base tilt at the end: {tilt:.2e} rad; turned {2.0 * np.arctan2(q[5], q[6]):.3f} rad about the vertical, "
          f"moved {np.linalg.norm(q[:2] - q0[:2]) * 1e3:.1f} mm sideways")
    print(f"largest leg-joint error from the pose: {legs:.3f} rad; fastest velocity at the end: {np.abs(v).max():.2e}")
    print(f"box: moved {np.linalg.norm(box[:2, 3]) * 1e3:.2f} mm, its centre {box[2, 3]:.5f} m high")
    print(f"smallest surface distance over the run: {min_distance:.3e} m")
    print(f"Newton iterations per step: mean {np.mean(iterations):.2f}, max {max(iterations)}; "
          f"{1e3 * per_step:.1f} ms per step")
    pngs = plot(Path(out), world, Q)
    for p in pngs:
        print(f"wrote {p}")
    return {"Q": Q, "min_distance": min_distance, "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
