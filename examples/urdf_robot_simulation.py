"""A 7-dof arm from URDF, driven to a target configuration by a PD controller with gravity compensation.

The arm is ``arm7``, one of the models that ship with rigidiff (``rd.models.path("arm7")``). Its URDF
gives joint damping (0.5 and 0.2 N m s/rad) and effort limits (87 and 12 N m); the step applies the
damping implicitly and clips torques to the limits.

The controller tracks a minimum-jerk path q_ref(t) from the start configuration to the target:

    tau = g(q) + Kp (q_ref - q) + Kd (qdot_ref - v)

with g(q) = ``world.gravity_forces(q)``, then holds the target. The feedback runs in a Python step loop
(``world.step``); the torques it produced are then replayed open loop with ``world.rollout``, one C++
call, which must reproduce the trajectory exactly since the step is a pure function.

The script reports the tracking error during the move, the final joint and end-effector errors, and
writes ``arm7_joints.png`` and ``arm7_end_effector.png`` to the ``--out`` folder.

Run ``python examples/urdf_robot_simulation.py [--fast] [--out DIR]``.
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

Q_START = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])  # a "ready" pose
Q_TARGET = np.array([0.6, -0.3, -0.4, -1.8, 0.5, 1.9, -0.4])
KP = np.array([400.0, 600.0, 400.0, 400.0, 60.0, 60.0, 20.0])
KD = np.array([15.0, 30.0, 15.0, 15.0, 2.0, 2.0, 0.5])
MOVE_TIME = 1.0  # seconds for the minimum-jerk move; the controller holds the target afterwards
END_EFFECTOR = "hand"


def min_jerk(t: float, q0: np.ndarray, q1: np.ndarray, duration: float):
    """Position and velocity of the minimum-jerk path from q0 (t = 0) to q1 (t >= duration)."""
    s = min(max(t / duration, 0.0), 1.0)
    h = 10 * s**3 - 15 * s**4 + 6 * s**5
    hd = (30 * s**2 - 60 * s**3 + 30 * s**4) / duration if s < 1.0 else 0.0
    return q0 + h * (q1 - q0), hd * (q1 - q0)


def simulate(world: rd.World, duration: float):
    """Closed-loop step loop. Returns times, Q (T+1, nq), V (T+1, nv), taus (T, nv) and references (T+1, nq)."""
    steps = int(round(duration / world.dt))
    q, v = Q_START.copy(), np.zeros(world.nv)
    Q, V, taus, refs = [q], [v], [], [Q_START.copy()]
    for k in range(steps):
        q_ref, v_ref = min_jerk(k * world.dt, Q_START, Q_TARGET, MOVE_TIME)
        tau = world.gravity_forces(q) + KP * (q_ref - q) + KD * (v_ref - v)
        q, v = world.step(q, v, tau)
        Q.append(q)
        V.append(v)
        taus.append(tau)
        refs.append(min_jerk((k + 1) * world.dt, Q_START, Q_TARGET, MOVE_TIME)[0])
    t = np.arange(steps + 1) * world.dt
    return t, np.array(Q), np.array(V), np.array(taus), np.array(refs)


def plot(out: Path, world: rd.World, t, Q, refs, ee, ee_target) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots written")
        return []
    out.mkdir(parents=True, exist_ok=True)
    paths = []

    fig, axes = plt.subplots(4, 2, figsize=(11, 10), sharex=True, constrained_layout=True)
    for i, name in enumerate(world.joint_names):
        ax = axes.flat[i]
        info = world.joint(name)
        ax.plot(t, Q[:, i], label="q")
        ax.plot(t, refs[:, i], ls="--", color="k", lw=0.8, label="reference")
        ax.axhspan(info.lower[0], info.upper[0], color="g", alpha=0.06, label="limits")
        ax.set_ylim(min(Q[:, i].min(), refs[:, i].min()) - 0.2, max(Q[:, i].max(), refs[:, i].max()) + 0.2)
        ax.set(title=name, ylabel="rad")
    axes.flat[0].legend(loc="best", fontsize=8)
    err = np.abs(Q - refs).max(axis=1)
    ax = axes.flat[7]
    ax.semilogy(t, np.maximum(err, 1e-16))
    ax.set(title="max |q - q_ref| over the joints", ylabel="rad")
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    path = out / "arm7_joints.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    paths.append(path)

    fig = plt.figure(figsize=(11, 5), constrained_layout=True)
    ax = fig.add_subplot(1, 2, 1, projection="3d")
    ax.plot(*ee.T, label="hand origin")
    ax.scatter(*ee[0], color="g", label="start")
    ax.scatter(*ee_target, color="r", marker="x", s=60, label="target")
    ax.set(xlabel="x (m)", ylabel="y (m)", zlabel="z (m)", title="end-effector path (world frame)")
    ax.legend(fontsize=8)
    ax = fig.add_subplot(1, 2, 2)
    ax.semilogy(t, np.maximum(np.linalg.norm(ee - ee_target, axis=1), 1e-16))
    ax.set(xlabel="time (s)", ylabel="m", title="distance of the hand to its target position")
    path = out / "arm7_end_effector.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    paths.append(path)
    return paths


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    skeleton = rd.load_urdf(rd.models.path("arm7"))
    world = rd.World(dt=1e-3)
    world.add_skeleton(skeleton)
    print(world.summary())
    efforts = np.concatenate([world.joint(n).effort_limit for n in world.joint_names])

    duration = 1.5 if fast else 3.0
    t0 = time.perf_counter()
    t, Q, V, taus, refs = simulate(world, duration)
    loop_time = time.perf_counter() - t0

    # the same torques, open loop, in one C++ call
    t0 = time.perf_counter()
    Q_replay, V_replay = world.rollout(Q_START, np.zeros(world.nv), taus)
    rollout_time = time.perf_counter() - t0
    replay_diff = max(np.abs(Q_replay - Q).max(), np.abs(V_replay - V).max())

    hand = world.body_index(END_EFFECTOR)
    ee = np.array([world.body_poses(q)[hand, :3, 3] for q in Q])
    ee_target = world.body_pose(Q_TARGET, END_EFFECTOR)[:3, 3]

    moving = t <= MOVE_TIME
    tracking = float(np.abs(Q[moving] - refs[moving]).max())
    final_error = float(np.abs(Q[-1] - Q_TARGET).max())
    ee_error = float(np.linalg.norm(ee[-1] - ee_target))
    saturated = int(np.sum(np.abs(taus) > efforts))

    pngs = plot(Path(out), world, t, Q, refs, ee, ee_target)
    print()
    print(f"simulated {duration:g} s ({len(taus)} steps of {world.dt:g} s): step loop {loop_time * 1e3:.1f} ms, "
          f"rollout replay {rollout_time * 1e3:.1f} ms")
    print(f"max tracking error during the move: {tracking:.3e} rad")
    print(f"final tracking error: {final_error:.3e} rad (max over joints)")
    print(f"final end-effector error: {ee_error:.3e} m")
    print(f"peak |tau| / effort limit: {np.max(np.abs(taus) / efforts):.3f} "
          f"({saturated} torque samples clipped by the step)")
    print(f"rollout replay vs step loop: max difference {replay_diff:.1e}")
    for p in pngs:
        print(f"wrote {p}")
    return {"tracking": tracking, "final_error": final_error, "ee_error": ee_error, "replay_diff": replay_diff,
            "saturated": saturated, "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
