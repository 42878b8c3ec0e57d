"""MPC replan time against the horizon: rigidiff's MPC (iLQR on its exact step Jacobians) next to
Crocoddyl's FDDP, on the Panda reaching a point and on solo12 holding its stance on four feet.

    python benchmarks/bench_mpc.py [--robots panda solo12] [--horizons 10 25 50] [--replans 20] [--quick]
                                   [--crocoddyl-python PATH]

Both controllers run the same loop: one warm-started solver iteration per replan (rigidiff:
``rd.mpc.MPC(..., method="ilqr", iterations=1)``, Crocoddyl: ``SolverFDDP.solve(maxiter=1)`` from the
shifted previous solution), after a first solve, at a control period of 10 ms, on the same costs
(goal on the hand position for the Panda, a posture for solo12, state and control regularisation).
The physics differ where contact enters: rigidiff's solo12 stands on the ground on one sphere per foot
through its boxed LCP with friction (the contacts are found and solved at every step of every
rollout); Crocoddyl's holds its feet with rigid 3D contact constraints that are given, not found.
The Panda has no contact in either. Crocoddyl runs in the interpreter given by --crocoddyl-python (default
$RIGIDIFF_CROCODDYL_PYTHON), through `_crocoddyl_mpc_timer.py`; install it in its own environment with
`pip install crocoddyl==3.2.1 pin==4.0.0 example-robot-data` (that wheel crashes with pin 4.1).

Prints, per robot and horizon, the median and largest replan time in ms and the ratio rigidiff /
Crocoddyl (below 1: rigidiff is faster), and the tracking result of rigidiff's loop.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
from _common import ROBOTS, robots_dir, stripped_urdf

import rigidiff as rd

DT = 0.01
REACH = np.array([0.1, -0.1, 0.1])  # the Panda's hand target, from its start (m)
WEIGHTS = {"state": 1e-2, "control": 1e-4, "target": 100.0}
SOLO_STANDING = np.array([0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6])
PANDA_Q0 = np.array([0.0, -0.4, 0.0, -2.0, 0.0, 1.6, 0.8])
HAND = "panda_hand"


def panda_world(root: Path) -> rd.World:
    """The Panda without geometry, its fingers welded to the hand (7 dofs), at DT."""
    text = stripped_urdf(root / ROBOTS["panda"][0])
    text = re.sub(r'(<joint\s+name="panda_finger_joint\d"\s+type=")prismatic(")', r"\1fixed\2", text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = rd.load_urdf(text, package_dirs=[root], load_geometry=False)
    world = rd.World(dt=DT)
    world.add_skeleton(sk)
    return world


def solo12_world(root: Path):
    """solo12 standing on the ground (friction 1) at DT, settled, each foot's collision mesh replaced by a
    16 mm sphere (one contact per foot, as Crocoddyl's; meshes touch at several points, which held
    clamping weld the feet: docs/trajopt.md); (world, q, v, tau)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = rd.load_urdf(root / ROBOTS["solo12"][0], floating_base=True, package_dirs=[root])
    for foot in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"):
        body = sk.body(foot)
        body.shapes[:] = [s for s in body.shapes if not s.collide]
        body.add_shape(rd.Sphere(0.016), friction=1.0, visual=False, name=f"{foot}/sole")
    world = rd.World(dt=1e-3)  # settled at 1 ms: explicit PD on the light legs needs it
    world.add_skeleton(sk)
    world.add_ground(friction=1.0)
    q = np.concatenate([[0.0, 0.0, 0.4, 0.0, 0.0, 0.0, 1.0], SOLO_STANDING])
    while not len(world.collide(q)):
        q[2] -= 1e-3
    q[2] -= min(world.collide(q).distances) + 1e-4
    legs = np.r_[np.zeros(6), np.ones(12)]
    v = np.zeros(world.nv)
    for _ in range(300):  # settle under PD torques and the joints' gravity torques
        tau = legs * world.gravity_forces(q)
        tau[6:] += 5.0 * (SOLO_STANDING - q[7:]) - 0.2 * v[6:]
        q, v = world.step(q, v, tau)
    world.dt = DT
    return world, q, v, tau


def rigidiff_mpc(world, q0, v0, setup, horizon: int, replans: int):
    """Median and largest replan time (s) of a closed loop on the model; the final state."""
    mpc = rd.mpc.MPC(world, horizon=horizon, setup=setup, method="ilqr", iterations=1, first_iterations=20)
    q, v = q0.copy(), v0.copy()
    for _ in range(replans + 1):
        q, v = world.step(q, v, mpc(q, v))
    times = np.array(mpc.replan_times[1:])  # the first is the full solve
    return float(np.median(times)), float(times.max()), q, v, mpc.last_result


def bench_panda(root: Path, horizons, replans: int, res: dict) -> dict:
    world = panda_world(root)
    q0, v0 = PANDA_Q0.copy(), np.zeros(world.nv)
    target = world.body_pose(q0, HAND)[:3, 3] + REACH
    g0 = world.gravity_forces(q0)

    def setup(prob):
        prob.add_body_target(HAND, position=target, weight=WEIGHTS["target"], time="all")
        prob.add_state_cost(q_target=q0, v_target=np.zeros(world.nv), q_weight=WEIGHTS["state"],
                            v_weight=WEIGHTS["state"])
        prob.add_control_cost(WEIGHTS["control"], tau_target=g0)

    for h in horizons:
        med, worst, q, v, _ = rigidiff_mpc(world, q0, v0, setup, h, replans)
        err = float(np.linalg.norm(world.body_pose(q, HAND)[:3, 3] - target))
        res[h] = {"median_ms": 1e3 * med, "max_ms": 1e3 * worst, "tracking": f"hand {1e3 * err:.1f} mm from target"}
    return {"robot": "panda", "dt": DT, "horizons": list(horizons), "iterations": 1, "replans": replans,
            "q0": PANDA_Q0.tolist(), "target": target.tolist(), "weights": WEIGHTS}


def bench_solo12(root: Path, horizons, replans: int, res: dict) -> dict:
    world, q0, v0, tau0 = solo12_world(root)

    def setup(prob):
        prob.add_state_cost(q_target=q0, v_target=np.zeros(world.nv), q_weight=1.0, v_weight=WEIGHTS["state"])
        prob.add_control_cost(WEIGHTS["control"], tau_target=tau0)
        prob.set_actuated(list(range(6, 18)))
        prob.set_initial_guess(tau0)  # the first solve; later replans start from the previous plan

    for h in horizons:
        med, worst, q, v, last = rigidiff_mpc(world, q0, v0, setup, h, replans)
        drift = float(np.linalg.norm(world.difference(q0, q)))
        res[h] = {"median_ms": 1e3 * med, "max_ms": 1e3 * worst,
                  "tracking": f"posture error {drift:.1e}, {len(world.collide(q))} foot contacts"}
    return {"robot": "solo12", "dt": DT, "horizons": list(horizons), "iterations": 1, "replans": replans,
            "q0": q0.tolist(), "target": q0.tolist(), "weights": WEIGHTS}


def crocoddyl_times(python: str | None, request: dict) -> dict:
    if not python:
        return {"error": "no crocoddyl interpreter (--crocoddyl-python or $RIGIDIFF_CROCODDYL_PYTHON)"}
    script = Path(__file__).with_name("_crocoddyl_mpc_timer.py")
    try:
        proc = subprocess.run([python, str(script)], input=json.dumps(request), capture_output=True, text=True,
                              timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
        return json.loads(proc.stdout) if proc.stdout.strip() else {"error": proc.stderr[-2000:]}
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["panda", "solo12"], choices=["panda", "solo12"])
    parser.add_argument("--horizons", nargs="+", type=int, default=[10, 25, 50])
    parser.add_argument("--replans", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="horizons 10 and 25, 5 replans")
    parser.add_argument("--crocoddyl-python", default=os.environ.get("RIGIDIFF_CROCODDYL_PYTHON"))
    args = parser.parse_args(argv)
    horizons = [10, 25] if args.quick else args.horizons
    replans = 5 if args.quick else args.replans
    root = robots_dir()
    print(f"MPC replan time, one warm-started solver iteration per replan, dt = {DT} s, {replans} replans")
    print(f"{'robot':8} {'T':>4} {'rigidiff ms (max)':>18} {'crocoddyl ms (max)':>19} {'ratio':>7}  rigidiff loop")
    for robot in args.robots:
        ours: dict = {}
        request = (bench_panda if robot == "panda" else bench_solo12)(root, horizons, replans, ours)
        theirs = crocoddyl_times(args.crocoddyl_python, request)
        for h in horizons:
            o = ours[h]
            t = theirs.get("results", {}).get(str(h))
            peer = f"{t['median_ms']:8.2f} ({t['max_ms']:6.2f})" if t else f"{'-':>19}"
            ratio = f"{o['median_ms'] / t['median_ms']:7.2f}" if t else f"{'-':>7}"
            print(f"{robot:8} {h:4d} {o['median_ms']:9.2f} ({o['max_ms']:6.2f}) {peer} {ratio}  {o['tracking']}")
        if "error" in theirs:
            print(f"  crocoddyl: {theirs['error'].strip().splitlines()[-1]}")
        for note in theirs.get("notes", []):
            print(f"  crocoddyl: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
