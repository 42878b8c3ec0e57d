"""Solo12 keeps its stance under MPC at 100 Hz while a push hits it, and how long every replan takes.

Solo12 (example-robot-data, a floating base and 12 leg joints) stands on the ground on its four feet,
each foot's collision mesh replaced by a 16 mm sphere (one contact per foot: docs/trajopt.md says why).
``rd.mpc.MPC`` replans at every 10 ms control step over the next 25 steps (0.25 s) with one warm-started
iLQR iteration, its problem built once (``rebuild=False``): a posture cost towards the standing state,
torques near the ones that hold it, legs only, within Solo's 2.7 N m. The plant is a second world,
built alike, stepped with the controller's torques; at t = 0.3 s a sideways push hits the base for
0.1 s. The report gives how far the base moved, the posture error at the end, the feet on the ground
and the replan times (median and largest: every replan solves the feet's contacts in every step of
its rollouts and differentiates through them).

Run ``python examples/solo12_mpc_push.py [--fast] [--out DIR]``; it writes ``solo12_push.png`` (base
displacement, tilt and the replan times) to DIR. Fast mode runs 0.8 s of control, the full run 2 s.
Needs ``example-robot-data`` (pip install example-robot-data); without it the script says so and
exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
URDF = "solo_description/robots/solo12.urdf"
DT = 0.01  # the control period: 100 Hz
HORIZON = 25
STANCE = np.array([0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6])  # HAA, HFE, KFE per leg
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
MOTOR_LIMIT = 2.7  # N m
PUSH = (0.3, 0.1, 10.0)  # start (s), duration (s), force along y on the base (N)
Q_WEIGHT = np.r_[[100.0] * 6, [1.0] * 12]  # base pose, joints (tangent space)
V_WEIGHT = np.r_[[1.0] * 6, [0.01] * 12]
TORQUE_WEIGHT = 1e-3


def build_world(robots_dir: Path, dt: float) -> rd.World:
    solo = rd.load_urdf(robots_dir / URDF, floating_base=True, package_dirs=[robots_dir])
    for name in FEET:
        body = solo.body(name)
        body.shapes[:] = [s for s in body.shapes if not s.collide]
        body.add_shape(rd.Sphere(0.016), friction=1.0, visual=False, name=f"{name}/sole")
    world = rd.World(dt=dt)
    world.add_skeleton(solo)
    world.add_ground(friction=1.0)
    return world


def stand(robots_dir: Path):
    """The standing state, settled at 1 ms under PD on the legs: (q, v, tau) with tau its holding torques."""
    world = build_world(robots_dir, 1e-3)
    q = np.concatenate([[0.0, 0.0, 0.4, 0.0, 0.0, 0.0, 1.0], STANCE])
    while not len(world.collide(q)):  # lower it until the feet are within contact range, then 0.1 mm deep
        q[2] -= 1e-3
    q[2] -= world.collide(q).distances.min() + 1e-4
    legs = np.r_[np.zeros(6), np.ones(12)]
    v, tau = np.zeros(world.nv), np.zeros(world.nv)
    for _ in range(300):
        tau = legs * world.gravity_forces(q)
        tau[6:] += 5.0 * (STANCE - q[7:]) - 0.2 * v[6:]
        q, v = world.step(q, v, tau)
    return q, v, tau


def controller(model: rd.World, q_stand: np.ndarray, tau_stand: np.ndarray) -> rd.mpc.MPC:
    def setup(prob: rd.trajopt.Problem) -> None:
        prob.add_state_cost(q_target=q_stand, v_target=np.zeros(model.nv), q_weight=Q_WEIGHT, v_weight=V_WEIGHT)
        prob.add_control_cost(TORQUE_WEIGHT, tau_target=tau_stand)
        prob.set_actuated(list(range(6, model.nv)))
        prob.set_control_bounds(-MOTOR_LIMIT, MOTOR_LIMIT)
        prob.set_initial_guess(tau_stand)

    return rd.mpc.MPC(model, HORIZON, setup, method="ilqr", iterations=1, first_iterations=20, rebuild=False)


def push_at(plant: rd.World, t: float) -> np.ndarray:
    """The external wrenches at time t: the push along y on the base while it lasts."""
    wrenches = np.zeros((plant.nbodies, 6))
    wrenches[plant.body_index("base_link"), 1] = PUSH[2] if PUSH[0] <= t < PUSH[0] + PUSH[1] else 0.0
    return wrenches


def run(robots_dir: Path, duration: float) -> dict:
    q, v, tau_stand = stand(robots_dir)
    model, plant = build_world(robots_dir, DT), build_world(robots_dir, DT)
    mpc = controller(model, q.copy(), tau_stand)
    Q, feet_down = [q], []
    for k in range(int(round(duration / DT))):
        q, v = plant.step(q, v, mpc(q, v), f_ext=push_at(plant, k * DT))
        Q.append(q)
        c = plant.last_contacts()
        feet_down.append(len({b for b, p in zip(c.body_a, c.normal_impulses > 0.0) if p} & set(FEET)))
    return {"Q": np.array(Q), "replan": np.array(mpc.replan_times), "feet_down": np.array(feet_down),
            "model": model}


def tilt_deg(q: np.ndarray) -> float:
    """Angle between the base's z axis and the vertical."""
    x, y = q[3], q[4]
    return float(np.degrees(np.arccos(np.clip(1.0 - 2.0 * (x * x + y * y), -1.0, 1.0))))


def plot(out: Path, res: dict) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots written")
        return None
    out.mkdir(parents=True, exist_ok=True)
    Q, replan = res["Q"], res["replan"]
    t = np.arange(len(Q)) * DT
    fig, ax = plt.subplots(1, 3, figsize=(15, 4), constrained_layout=True)
    ax[0].plot(t, 1e3 * (Q[:, 1] - Q[0, 1]), label="y (push direction)")
    ax[0].plot(t, 1e3 * (Q[:, 2] - Q[0, 2]), label="height")
    ax[0].axvspan(PUSH[0], PUSH[0] + PUSH[1], color="red", alpha=0.2, label="push")
    ax[0].set(title="base displacement", xlabel="time (s)", ylabel="mm")
    ax[0].legend()
    ax[1].plot(t, [tilt_deg(q) for q in Q])
    ax[1].axvspan(PUSH[0], PUSH[0] + PUSH[1], color="red", alpha=0.2)
    ax[1].set(title="base tilt", xlabel="time (s)", ylabel="deg")
    ax[2].plot(t[1:len(replan)], 1e3 * replan[1:], ".", ms=4)
    ax[2].set(title=f"replan time (horizon {HORIZON}, 1 iLQR iteration)",
              xlabel="time (s)", ylabel="ms", ylim=(0, None))
    path = out / "solo12_push.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    duration, robots_dir = (0.8 if fast else 2.0), rd.models.example_robot_data_dir()
    if robots_dir is None:
        print("example-robot-data is not installed (pip install example-robot-data): no robot to load; skipping.")
        return {}
    res = run(robots_dir, duration)
    Q, replan = res["Q"], res["replan"]
    after = np.arange(len(Q)) * DT >= PUSH[0]
    print(f"Solo12 under MPC at {1 / DT:g} Hz, horizon {HORIZON} steps, {duration:g} s; a push of {PUSH[2]:g} N "
          f"along y for {PUSH[1] * 1e3:g} ms at t = {PUSH[0]:g} s")
    print(f"base: largest move along y {1e3 * np.abs(Q[after, 1] - Q[0, 1]).max():.2f} mm, largest tilt "
          f"{max(tilt_deg(q) for q in Q[after]):.3f} deg")
    error = np.linalg.norm(res["model"].difference(Q[0], Q[-1]))
    print(f"posture error at the end: {error:.2e} (tangent norm from the start)")
    print(f"feet on the ground: at least {res['feet_down'].min()} in every step")
    later = replan[1:]
    print(f"replans: {len(later)} after the first solve: median {1e3 * np.median(later):.2f} ms, "
          f"max {1e3 * later.max():.2f} ms (first solve {1e3 * replan[0]:.1f} ms)")
    path = plot(Path(out), res)
    if path:
        print(f"wrote {path}")
    return res


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the picture (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
