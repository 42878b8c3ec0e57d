"""MPC replan time against the horizon: rigidiff's MPC (iLQR on its exact step Jacobians) next to
Crocoddyl's FDDP, on the Panda reaching a point and on solo12 holding its stance on four feet.

    python benchmarks/bench_mpc.py [--robots panda solo12 talos] [--horizons 10 25 50] [--replans 20] [--quick]
                                   [--threads 1 2] [--crocoddyl-python PATH]

Both controllers run the same loop: one warm-started solver iteration per replan (rigidiff:
``rd.mpc.MPC(..., method="ilqr", iterations=1, rebuild=False)``, Crocoddyl: ``SolverFDDP.solve(maxiter=1)``
from the shifted previous solution), after a first solve, at a control period of 10 ms, on the same costs
(goal on the hand position for the Panda, a posture for solo12, state and control regularisation).
rigidiff's replan is timed as the whole controller call ``mpc(q, v)``; Crocoddyl's as its solve call.
Each runs once per thread count of --threads (default 1 and 2): rigidiff's ``MPC(..., threads=n)``, which
differentiates the knots on n threads, and Crocoddyl's ``ShootingProblem.nthreads = n`` with
OMP_NUM_THREADS=n (its wheel is built with OpenMP: the problem's calc and calcDiff run over the knots).
talos (nv 38) holds its stance on both feet (four 10 mm spheres per sole) with rigidiff only, against
the 10 ms target of a replan at horizon 25.
The physics differ where contact enters: rigidiff's solo12 stands on the ground on one sphere per foot
through its boxed LCP with friction (the contacts are found and solved at every step of every
rollout); Crocoddyl's holds its feet with rigid 3D contact constraints that are given, not found.
The Panda has no contact in either. Crocoddyl runs in the interpreter given by --crocoddyl-python (default
$RIGIDIFF_CROCODDYL_PYTHON), through `_crocoddyl_mpc_timer.py`; install it in its own environment with
`pip install crocoddyl==3.2.1 pin==4.0.0 example-robot-data` (that wheel crashes with pin 4.1).

Prints, per robot and horizon, the median and largest replan time in ms and the ratio rigidiff /
Crocoddyl (below 1: rigidiff is faster), the tracking result of rigidiff's loop, and where rigidiff's
replan spends its time (medians: the rollouts with their step Jacobians, the rest of the C++ solve, the
Python around it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
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
TALOS_URDF, TALOS_SRDF = "talos_data/robots/talos_reduced.urdf", "talos_data/srdf/talos.srdf"
TALOS_KP, TALOS_KD, TALOS_SPHERE = 1e4, 1e3, 0.01
SOLE_X, SOLE_Y, SOLE_Z = (-0.1, 0.09), (-0.055, 0.055), -0.1074  # talos' sole corners in the ankle frame (m)
ROBOT_BENCHES = {}  # filled below: {robot: bench function}


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
    16 mm sphere and no other body colliding (one contact per foot, as Crocoddyl's; meshes touch at
    several points, which held clamping weld the feet: docs/trajopt.md); (world, q, v, tau)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = rd.load_urdf(root / ROBOTS["solo12"][0], floating_base=True, package_dirs=[root])
    # only the feet collide, as in Crocoddyl's model: the lower legs' meshes come within 7 mm of the ground,
    # where at 10 ms steps the legs' free swing reaches them (16 speculative contacts that never touch)
    for body in sk.bodies:
        body.shapes[:] = [s for s in body.shapes if not s.collide]
    for foot in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"):
        sk.body(foot).add_shape(rd.Sphere(0.016), friction=1.0, visual=False, name=f"{foot}/sole")
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


def rigidiff_mpc(world, q0, v0, setup, horizon: int, replans: int, threads: int = 1):
    """Median and largest replan time (s) of a closed loop on the model; the final state. A replan is the
    whole controller call mpc(q, v): the problem built once (rebuild=False), then the warm start, the
    solve and the Python around them; the knots' step Jacobians on `threads` threads."""
    mpc = rd.mpc.MPC(world, horizon=horizon, setup=setup, method="ilqr", iterations=1, first_iterations=20,
                     rebuild=False, threads=threads)
    q, v = q0.copy(), v0.copy()
    q, v = world.step(q, v, mpc(q, v))  # the first call solves in full
    times, split = [], []
    for _ in range(replans):
        t0 = time.perf_counter()
        tau = mpc(q, v)
        times.append(time.perf_counter() - t0)
        timings = mpc.last_result.timings
        split.append((timings["dynamics"], timings["total"]))
        q, v = world.step(q, v, tau)
    times = np.array(times)
    dynamics, solve = np.median(split, axis=0)
    where = {"dynamics_ms": 1e3 * dynamics, "solver_ms": 1e3 * (solve - dynamics),
             "python_ms": 1e3 * (np.median(times) - solve)}
    return float(np.median(times)), float(times.max()), q, v, where


def bench_panda(root: Path, horizons, replans: int, res: dict, threads=(1,)) -> dict:
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
        for n in threads:
            med, worst, q, v, where = rigidiff_mpc(world, q0, v0, setup, h, replans, n)
            err = float(np.linalg.norm(world.body_pose(q, HAND)[:3, 3] - target))
            res[h, n] = {"median_ms": 1e3 * med, "max_ms": 1e3 * worst,
                         "tracking": f"hand {1e3 * err:.1f} mm from target", **where}
    return {"robot": "panda", "dt": DT, "horizons": list(horizons), "iterations": 1, "replans": replans,
            "q0": PANDA_Q0.tolist(), "target": target.tolist(), "weights": WEIGHTS}


def bench_solo12(root: Path, horizons, replans: int, res: dict, threads=(1,)) -> dict:
    world, q0, v0, tau0 = solo12_world(root)

    def setup(prob):
        prob.add_state_cost(q_target=q0, v_target=np.zeros(world.nv), q_weight=1.0, v_weight=WEIGHTS["state"])
        prob.add_control_cost(WEIGHTS["control"], tau_target=tau0)
        prob.set_actuated(list(range(6, 18)))
        prob.set_initial_guess(tau0)  # the first solve; later replans start from the previous plan

    for h in horizons:
        for n in threads:
            med, worst, q, v, where = rigidiff_mpc(world, q0, v0, setup, h, replans, n)
            drift = float(np.linalg.norm(world.difference(q0, q)))
            res[h, n] = {"median_ms": 1e3 * med, "max_ms": 1e3 * worst,
                         "tracking": f"posture error {drift:.1e}, {len(world.collide(q))} foot contacts", **where}
    return {"robot": "solo12", "dt": DT, "horizons": list(horizons), "iterations": 1, "replans": replans,
            "q0": q0.tolist(), "target": q0.tolist(), "weights": WEIGHTS}


def talos_world(root: Path):
    """talos (nv 38) standing on both feet at DT: four 10 mm spheres at the corners of each sole (friction
    0.8) are its only collision shapes; settled at 1 ms on implicit joint springs at half_sitting, which are
    then removed; (world, q, v, tau) with tau the springs' last torques, which hold the stance."""
    text = stripped_urdf(root / TALOS_URDF, dynamics=True, collision=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # placeholder inertias of sensor frames
        sk = rd.load_urdf(text, floating_base=True, package_dirs=[root], load_geometry=False, strict=False)
    srdf = (root / TALOS_SRDF).read_text()
    block = re.search(r'<group_state name="half_sitting".*?</group_state>', srdf, re.S).group(0)
    pose = {name: float(value) for name, value in re.findall(r'<joint name="([^"]+)" value="([^" ]+)"', block)}
    for foot in ("leg_left_6_link", "leg_right_6_link"):
        for x in SOLE_X:
            for y in SOLE_Y:
                origin = rd.Transform((x, y, SOLE_Z + TALOS_SPHERE))
                sk.body(foot).add_shape(rd.Sphere(TALOS_SPHERE), origin=origin, friction=0.8, visual=False)
    for body in sk.bodies:
        if body.joint.nv == 1:
            body.joint.rest_position = np.array([pose.get(body.joint.name, 0.0)])
            body.joint.stiffness, body.joint.damping = np.array([TALOS_KP]), np.array([TALOS_KD])
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.8)
    world.add_skeleton(sk)
    q_ref = world.neutral_configuration()
    for name in world.joint_names:
        if name in pose:
            q_ref[world.joint(name).q_index] = pose[name]
    q_ref[2] -= world.collide(q_ref).distances.min() + 1e-4
    q, v, zero = q_ref.copy(), np.zeros(world.nv), np.zeros(world.nv)
    for _ in range(800):
        q, v = world.step(q, v, zero)
    tau = np.zeros(world.nv)
    tau[6:] = TALOS_KP * world.difference(q, q_ref)[6:] - TALOS_KD * v[6:]
    world.set_parameters({n: 0.0 for n in world.parameters().names if n.endswith(("/stiffness", "/damping"))})
    world.dt = DT
    return world, q, v, tau


def bench_talos(root: Path, horizons, replans: int, res: dict, threads=(1,)) -> dict:
    world, q0, v0, tau0 = talos_world(root)

    def setup(prob):
        prob.add_state_cost(q_target=q0, v_target=np.zeros(world.nv), q_weight=1.0, v_weight=WEIGHTS["state"])
        prob.add_control_cost(WEIGHTS["control"], tau_target=tau0)
        prob.set_actuated(list(range(6, world.nv)))
        prob.set_initial_guess(tau0)

    for h in horizons:
        for n in threads:
            med, worst, q, v, where = rigidiff_mpc(world, q0, v0, setup, h, replans, n)
            drift = float(np.linalg.norm(world.difference(q0, q)))
            contacts = world.collide(q)
            feet = sorted({b for b in contacts.body_a if b != "ground"} | {b for b in contacts.body_b if b != "ground"})
            res[h, n] = {"median_ms": 1e3 * med, "max_ms": 1e3 * worst,
                         "tracking": f"posture error {drift:.1e}, {len(contacts)} sole contacts on {', '.join(feet)}",
                         **where}
    return {}


def crocoddyl_times(python: str | None, request: dict, threads: int = 1) -> dict:
    if not python:
        return {"error": "no crocoddyl interpreter (--crocoddyl-python or $RIGIDIFF_CROCODDYL_PYTHON)"}
    script = Path(__file__).with_name("_crocoddyl_mpc_timer.py")
    try:
        proc = subprocess.run([python, str(script)], input=json.dumps({**request, "threads": threads}),
                              capture_output=True, text=True, timeout=600,
                              env={**os.environ, "OMP_NUM_THREADS": str(threads)})
        return json.loads(proc.stdout) if proc.stdout.strip() else {"error": proc.stderr[-2000:]}
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


ROBOT_BENCHES.update(panda=bench_panda, solo12=bench_solo12, talos=bench_talos)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["panda", "solo12", "talos"], choices=list(ROBOT_BENCHES))
    parser.add_argument("--horizons", nargs="+", type=int, default=[10, 25, 50])
    parser.add_argument("--replans", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="horizons 10 and 25, 5 replans")
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2],
                        help="thread counts, each timed for rigidiff and Crocoddyl (default 1 2)")
    parser.add_argument("--crocoddyl-python", default=os.environ.get("RIGIDIFF_CROCODDYL_PYTHON"))
    args = parser.parse_args(argv)
    horizons = [10, 25] if args.quick else args.horizons
    replans = 5 if args.quick else args.replans
    root = robots_dir()
    print(f"MPC replan time, one warm-started solver iteration per replan, dt = {DT} s, {replans} replans; "
          f"load average {os.getloadavg()[0]:.2f} at the start")
    print(f"{'robot':8} {'T':>4} {'thr':>3} {'rigidiff ms (max)':>18} {'crocoddyl ms (max)':>19} {'ratio':>7}  "
          "rigidiff loop")
    for robot in args.robots:
        ours: dict = {}
        request = ROBOT_BENCHES[robot](root, horizons, replans, ours, args.threads)
        # Crocoddyl's timer has the Panda and solo12; talos is timed against its 10 ms target only
        theirs = {n: crocoddyl_times(args.crocoddyl_python, request, n) if request else {} for n in args.threads}
        for h in horizons:
            for n in args.threads:
                o = ours[h, n]
                t = theirs[n].get("results", {}).get(str(h))
                peer = f"{t['median_ms']:8.2f} ({t['max_ms']:6.2f})" if t else f"{'-':>19}"
                ratio = f"{o['median_ms'] / t['median_ms']:7.2f}" if t else f"{'-':>7}"
                print(f"{robot:8} {h:4d} {n:3d} {o['median_ms']:9.2f} ({o['max_ms']:6.2f}) {peer} {ratio}  "
                      f"{o['tracking']}")
        for h in horizons:
            for n in args.threads:
                o = ours[h, n]
                print(f"{'':8} {h:4d} {n:3d}   where rigidiff's time goes (ms): rollouts and step Jacobians "
                      f"{o['dynamics_ms']:.3f}, costs + Riccati + line search {o['solver_ms']:.3f}, "
                      f"Python {o['python_ms']:.3f}")
        for n in args.threads:
            if "error" in theirs[n]:
                print(f"  crocoddyl ({n} threads): {theirs[n]['error'].strip().splitlines()[-1]}")
        notes = [note for n in args.threads for note in theirs[n].get("notes", [])]
        for note in dict.fromkeys(notes):  # once each, in order
            print(f"  crocoddyl: {note}")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
