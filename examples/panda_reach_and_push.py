"""The Panda reaches a target while pushing a box there: trajectory optimisation of its torques through
the contact, by iLQR on the exact step Jacobians.

The scene is the one of ``panda_pushes_a_box.py`` (imported from it): example-robot-data's Panda with
its collision meshes, fingers closed and welded, a 0.1 m, 0.5 kg box on the ground (friction 0.5)
and the rubber pad of a fingertip 1 cm behind the box, the arm at rest. Here no controller is
written: the torques of the 7 joints over T steps of 10 ms are the unknowns of an
``rd.trajopt.Problem`` whose cost asks for

- the box at its target, PUSH metres further along x, at the last step (weight 1e4 per m^2);
- the hand at its target at the last step: the TCP moved by PUSH + 1 cm, so that the pad rests
  against the box's back face there (1e3 per m^2);
- the hand's orientation, the one of the push in ``panda_pushes_a_box.py``, at every step (1 per
  rad^2), and the box level at every step (10 per rad^2): without it the optimum tips the box by
  6 degrees onto its front edge during the push, where it slides more easily;
- a small price on the final velocities (1 per (m/s)^2 or (rad/s)^2);
- torques near gravity compensation (the arm's gravity torques at the start), 1e-3 per (N m)^2 per
  step, within the URDF's effort limits.

The first guess is gravity compensation: the arm holds still and never touches the box, so the box's
cost has no gradient at first; the hand's cost pulls the pad forward, the pad meets the box, and from
then on the step Jacobians, exact with the contact mode of each step held fixed (docs/contact.md),
carry the box's cost back to the torques. iLQR's closed-loop forward passes keep the trial
trajectories near the last one, contact and all. Single shooting (L-BFGS-B on one rollout's
gradient) stops early on the same problem: the cost is stiff in the torques (its curvature along the
first gradient is about 1e5, so L-BFGS-B's first step, of unit length, overshoots a thousandfold),
and it ends within a few iterations, the box barely moved, reporting convergence. The full run shows
it beside iLQR.

The optimised torques are then replayed open loop with ``world.rollout``, from a world that remembers
no contact, and the report gives the box's start, final and target positions, the hand's distance to
its target, the box's tilt, the steps with pad-box contact, and the cost curve.

Run ``python examples/panda_reach_and_push.py [--fast] [--out DIR]``; it writes
``panda_reach_and_push.png`` (cost curves, box and hand paths, torques) and
``panda_reach_and_push_frames.png`` to DIR. Fast mode pushes 8 cm in 0.8 s with 15 iLQR iterations;
the full run 12 cm in 1 s with 60 iterations, then the shooting comparison. Needs
``example-robot-data`` (pip install example-robot-data); without it the script says so and exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from panda_pushes_a_box import (
    BOX_START,
    GAP,
    PUSHER,
    R_HAND,
    TCP,
    arm_dofs,
    box_index,
    box_tilt,
    build_world,
    forget_contacts,
    rotation_log,
    scenario,
)

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
DT = 0.01
ARM_JOINTS = tuple(f"panda_joint{i}" for i in range(1, 8))
BOX_WEIGHT = 1e4
HAND_WEIGHT = 1e3
ORIENTATION_WEIGHT = 1.0
REST_WEIGHT = 1.0
TORQUE_WEIGHT = 1e-3
BOX_LEVEL_WEIGHT = 10.0


def push_problem(world: rd.World, q0: np.ndarray, steps: int, push: float):
    """The problem, with the box's and the hand's targets."""
    arm = arm_dofs(world)
    gravity = np.zeros(world.nv)
    gravity[arm] = world.gravity_forces(q0)[arm]
    box_target = BOX_START + [push, 0.0, 0.0]
    hand_target = world.body_pose(q0, TCP)[:3, 3] + [push + GAP, 0.0, 0.0]
    limits = np.zeros(world.nv)
    for name in ARM_JOINTS:
        limits[world.joint(name).v_index] = world.joint(name).effort_limit[0]

    prob = rd.trajopt.Problem(world, steps, q0)
    prob.add_body_target("box", position=box_target, weight=BOX_WEIGHT)
    prob.add_body_target(TCP, position=hand_target, weight=HAND_WEIGHT)
    prob.add_body_target("box", orientation=np.eye(3), orientation_weight=BOX_LEVEL_WEIGHT, time="all")
    prob.add_body_target(TCP, orientation=R_HAND, orientation_weight=ORIENTATION_WEIGHT, time="all")
    prob.add_state_cost(v_target=np.zeros(world.nv), v_weight=REST_WEIGHT, final_only=True)
    prob.add_control_cost(TORQUE_WEIGHT, tau_target=gravity)
    prob.set_actuated(list(ARM_JOINTS))
    prob.set_control_bounds(-limits, limits)
    prob.set_initial_guess(gravity)
    return prob, box_target, hand_target, limits


def pad_box_contacts(world: rd.World, Q: np.ndarray) -> np.ndarray:
    """(T+1,) True where a finger pad touches the box (within the contact margin)."""
    touching = []
    for q in Q:
        c = world.collide(q)
        touching.append(any({a, b} & set(PUSHER) and "box" in (a, b) for a, b in zip(c.body_a, c.body_b)))
    return np.array(touching)


# ------------------------------------------------------------------------------------------ report


def plot(out: Path, world: rd.World, results: dict, Q: np.ndarray, targets: tuple) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots written")
        return []
    out.mkdir(parents=True, exist_ok=True)
    ix = box_index(world)
    box_target, hand_target = targets
    res = results["iLQR"]
    t = np.arange(len(Q)) * world.dt
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2), constrained_layout=True)
    for name, r in results.items():
        ax[0].semilogy(r.cost_history, label=name)
    ax[0].set(title="cost per iteration", xlabel="iteration", ylabel="cost")
    ax[0].legend()
    tcp = np.array([world.body_pose(q, TCP)[:3, 3] for q in Q])
    ax[1].plot(t, Q[:, ix], label="box x")
    ax[1].plot(t, tcp[:, 0], label="TCP x")
    ax[1].axhline(box_target[0], color="C0", ls="--", lw=0.8, label="box target")
    ax[1].axhline(hand_target[0], color="C1", ls="--", lw=0.8, label="hand target")
    ax[1].set(title="replayed with world.rollout", xlabel="time (s)", ylabel="x (m)")
    ax[1].legend()
    for name in ARM_JOINTS:
        ax[2].plot(t[1:], res.tau[:, world.joint(name).v_index], label=name[-6:])
    ax[2].set(title="optimised torques", xlabel="time (s)", ylabel="N m")
    ax[2].legend(ncol=2, fontsize=8)
    path = out / "panda_reach_and_push.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "panda_reach_and_push_frames.png", n_frames=4,
                                camera=rd.viz.Camera(elevation=15, azimuth=-90))
    return [path, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    robots_dir = rd.models.example_robot_data_dir()
    if robots_dir is None:
        print("example-robot-data is not installed (pip install example-robot-data): no robot to load; skipping.")
        return {}
    duration, push, iterations = (0.8, 0.08, 15) if fast else (1.0, 0.12, 60)
    world = build_world(robots_dir)
    q0 = scenario(world, fast=True)[0]  # at rest, the pad GAP behind the box
    world.dt = DT
    steps = int(round(duration / DT))
    ix = box_index(world)

    prob, box_target, hand_target, limits = push_problem(world, q0, steps, push)
    t0 = time.perf_counter()
    res = prob.solve("ilqr", max_iters=iterations, tol=1e-9, verbose=False)
    elapsed = time.perf_counter() - t0
    results = {"iLQR": res}
    h = res.cost_history
    print(f"Panda (7 torques) and a box: T = {steps} steps of {DT * 1e3:g} ms ({duration:g} s), box target "
          f"{push * 100:g} cm ahead")
    print(f"iLQR: cost {h[0]:.4f} -> {h[-1]:.4f} in {res.iterations} iterations, {elapsed:.2f} s "
          f"({res.message}); cost reduced {h[0] / h[-1]:.1f} times")
    print("cost curve: " + ", ".join(f"{c:.4g}" for c in h[:: max(1, len(h) // 8)]) + f", ..., {h[-1]:.4g}")

    # replay the optimised torques, open loop, from a world that remembers no contact
    forget_contacts(world, q0)
    Q, V = world.rollout(q0, np.zeros(world.nv), res.tau)
    box0, box1 = Q[0, ix:ix + 3], Q[-1, ix:ix + 3]
    hand = world.body_pose(Q[-1], TCP)
    fmt = {"float_kind": lambda x: f"{x:.4f}"}
    print(f"box start {np.array2string(box0, formatter=fmt)}, final {np.array2string(box1, formatter=fmt)}, "
          f"target {np.array2string(box_target, formatter=fmt)} (m)")
    tilt = np.degrees([box_tilt(q[ix:ix + 7]) for q in Q])
    print(f"box error: {np.linalg.norm(box1 - box_target) * 1e3:.2f} mm; box moved {box1[0] - box0[0]:.4f} m along x; "
          f"box tilt: max {tilt.max():.2f} deg, final {tilt[-1]:.2f} deg")
    print(f"hand target error: {np.linalg.norm(hand[:3, 3] - hand_target) * 1e3:.2f} mm; orientation error "
          f"{np.degrees(np.linalg.norm(rotation_log(R_HAND.T @ hand[:3, :3]))):.2f} deg")
    print(f"final speeds: box {np.abs(V[-1, world.joint('box_free').v_index:]).max():.4f}, arm "
          f"{np.abs(V[-1, arm_dofs(world)]).max():.4f} (m/s, rad/s)")
    touching = pad_box_contacts(world, Q)
    print(f"pad-box contact in {touching.sum()} of {steps + 1} states (t = {np.argmax(touching) * DT:.2f} to "
          f"{(len(touching) - 1 - np.argmax(touching[::-1])) * DT:.2f} s)")
    arm = arm_dofs(world)
    print(f"peak |tau| / effort limit: {(np.abs(res.tau[:, arm]) / limits[arm]).max():.3f}")
    print(f"replay vs the optimiser's trajectory: max difference {np.abs(Q - res.q).max():.1e}")

    if not fast:
        t0 = time.perf_counter()
        shooting = push_problem(world, q0, steps, push)[0].solve("shooting", max_iters=200, tol=1e-9, verbose=False)
        box_s = shooting.q[-1, ix:ix + 3]
        print(f"single shooting (L-BFGS-B) from the same guess: cost {shooting.cost_history[0]:.4f} -> "
              f"{shooting.cost:.4f} in {shooting.iterations} iterations, {time.perf_counter() - t0:.2f} s "
              f"({shooting.message}; converged: {shooting.converged}); box error "
              f"{np.linalg.norm(box_s - box_target) * 1e3:.1f} mm")
        results["single shooting"] = shooting

    pngs = plot(Path(out), world, results, Q, (box_target, hand_target))
    for p in pngs:
        print(f"wrote {p}")
    return {"results": results, "Q": Q, "world": world}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the pictures (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
