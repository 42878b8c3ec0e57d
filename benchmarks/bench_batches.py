"""Batches across cores: step_batch, step_jacobians_batch and rollout_batch on 1 thread against N threads,
in the same run, on scenes with contact.

    python benchmarks/bench_batches.py [--scenes talos stacks] [--threads 2] [--repeat 9] [--quick]

Scenes:

- talos: example-robot-data's talos standing on both feet (bench_contact_gradients.py's scene: mesh
  feet on the ground, settled, joint PD torques); the batch holds the standing state with small random
  velocities added, a distinct state per row;
- stacks: 25 cubes (0.2 m, 1 kg, friction 0.6) in five stacks of five on the ground, at rest after 0.3 s
  (five islands of 20 contacts), rows perturbed as for talos.

(bench_contact.py's bins, one island of hundreds of rows, are left out: with their rows perturbed, a
cold solve of such an island takes seconds.)

Per scene and call, the batch is timed with threads=1 and threads=N in alternating rounds (so that both
see the same load on a shared machine); the table shows the median wall time per item, the speed-up
(wall time on 1 thread / on N threads) and the CPU ratio: the CPU time of the whole process (all its
threads) with N threads over that with 1. A CPU ratio of 1 means the threads do no more work together
than one thread alone (no contention, no false sharing, no serial part they wait on), so that the
speed-up is then bounded only by the cores the machine's other work leaves free; the load average is
printed before and after.
rollout_batch runs rollouts of --steps steps from the batch's states with the states' torques held.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

import numpy as np

import rigidiff as rd

TARGET = 1.9  # speed-up on 2 cores
DT = 1e-3


def perturbed(world, q, v, n: int, scale: float, seed: int = 0):
    """n distinct states: (q, v) with N(0, scale^2) added to v (m/s, rad/s)."""
    rng = np.random.default_rng(seed)
    return np.tile(q, (n, 1)), v + scale * rng.standard_normal((n, world.nv))


def talos_scene():
    import bench_contact_gradients as bcg

    scene = bcg.rd_talos()
    q, v, tau = scene.states[0]
    return scene.world, q, v, tau, scene.notes


def settled_free_bodies(bodies, friction, settle: int = 300):
    import bench_contact as bc

    world, q, _ = bc.rd_free_world(bodies, friction)
    v, zero = np.zeros(world.nv), np.zeros(world.nv)
    for _ in range(settle):
        q, v = world.step(q, v, zero)
    c = world.last_contacts()
    return world, q, v, zero, [f"{len(bodies)} bodies, {len(c)} contacts, {len(c.row_classes)} rows at rest"]


def stacks_scene():
    import bench_contact as bc

    bodies = [bc.Free(f"box{s}_{i}", "box", 0.1, 1.0, (0.5 * s, 0.0, 0.1 + 0.2 * i)) for s in range(5)
              for i in range(5)]
    return settled_free_bodies(bodies, 0.6)


SCENES = {"talos": talos_scene, "stacks": stacks_scene}
# per scene: rows of step_batch, of step_jacobians_batch, rollouts of rollout_batch
SIZES = {"talos": (256, 64, 16), "stacks": (64, 32, 8)}


def bench_scene(name: str, threads: int, repeat: int, steps: int, quick: bool) -> list:
    world, q, v, tau, notes = SCENES[name]()
    n_step, n_jac, n_roll = (max(2 * threads, k // 4) for k in SIZES[name]) if quick else SIZES[name]
    Q, V = perturbed(world, q, v, max(n_step, n_jac, n_roll), 1e-3)
    TAU = np.tile(tau, (len(Q), 1))
    taus = np.tile(tau, (steps, 1))
    calls = {
        "step_batch": (n_step, lambda th: world.step_batch(Q[:n_step], V[:n_step], TAU[:n_step], threads=th)),
        "step_jacobians_batch": (n_jac, lambda th: world.step_jacobians_batch(Q[:n_jac], V[:n_jac], TAU[:n_jac],
                                                                               threads=th)),
        "rollout_batch": (n_roll * steps, lambda th: world.rollout_batch(Q[:n_roll], V[:n_roll], taus, threads=th)),
    }
    for note in notes:
        print(f"  {name}: {note}")
    rows = []
    for call, (items, fn) in calls.items():
        wall, cpu = timed_rounds(fn, (1, threads), repeat)
        per_item = {th: 1e6 * wall[th] / items for th in wall}
        speedup = per_item[1] / per_item[threads]
        rows.append((name, call, speedup))
        print(f"{name:<7} {call:<21} {items:>6} {per_item[1]:>10.1f} {per_item[threads]:>10.1f} {speedup:>8.2f} "
              f"{cpu[threads] / cpu[1]:>9.3f}", flush=True)
    return rows


def process_cpu() -> float:
    """Seconds of CPU used by this process, all threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed_rounds(fn, thread_counts, repeat: int, warmup: int = 1):
    """Median wall and CPU seconds of fn(threads) for each thread count, over `repeat` rounds that run
    every count in turn (one warm-up round discarded)."""
    wall = {th: [] for th in thread_counts}
    cpu = {th: [] for th in thread_counts}
    for r in range(warmup + repeat):
        for th in thread_counts:
            c0, t0 = process_cpu(), time.perf_counter()
            fn(th)
            t1, c1 = time.perf_counter(), process_cpu()
            if r >= warmup:
                wall[th].append(t1 - t0)
                cpu[th].append(c1 - c0)
    return ({th: float(np.median(x)) for th, x in wall.items()}, {th: float(np.median(x)) for th, x in cpu.items()})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenes", nargs="+", default=list(SCENES), choices=list(SCENES))
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="N, timed against 1 (default: cores)")
    ap.add_argument("--repeat", type=int, default=9, help="timed rounds per call (medians)")
    ap.add_argument("--steps", type=int, default=50, help="steps per rollout of rollout_batch")
    ap.add_argument("--quick", action="store_true", help="smaller batches and fewer rounds")
    args = ap.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    print(f"rigidiff {rd.__version__}, {os.cpu_count()} cores, threads 1 against {args.threads}; "
          f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'scene':<7} {'call':<21} {'items':>6} {'us/item 1':>10} {f'us/item {args.threads}':>10} {'speed-up':>8} "
          f"{'CPU ratio':>9}")
    rows = []
    for name in args.scenes:
        rows += bench_scene(name, args.threads, repeat, args.steps, args.quick)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.threads == 2:
        below = [f"{r[0]} {r[1]} {r[2]:.2f}" for r in rows if r[2] < TARGET]
        print(f"target: speed-up >= {TARGET} on 2 threads; " + (f"below: {', '.join(below)}" if below else "all met"))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
