"""A quadruped left without torques on the ground: from its neutral pose it stands on 4 feet; from a random
pose it collapses onto its base and legs (6-11 contacts, with joint limits up to 28 constraint rows on 18
dofs, so the clamping system is rank-deficient). Prints, per scene, which solver answered the steps at
rest (after the settling steps) and the median time per step of each, against the standing robot's.

    python benchmarks/bench_collapsed_quadruped.py
    python benchmarks/bench_collapsed_quadruped.py --seeds 1 2 --settle 1000 --steps 1000
"""

from __future__ import annotations

import argparse
import collections
import time

import numpy as np

import rigidiff as rd


def scene(seed: int, joint_limits: bool):
    """The world and its start: dropped from a base height of 0.5 m, level, legs at a random pose (seed 0:
    the neutral pose, which lands standing)."""
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.8)
    world.add_skeleton(rd.models.load("quadruped", floating_base=True))
    world.contact_options(joint_limits=joint_limits)
    q = world.random_configuration(np.random.default_rng(seed)) if seed else world.neutral_configuration()
    q[:7] = [0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0]
    return world, q, np.zeros(world.nv)


def measure(seed: int, joint_limits: bool, settle: int, steps: int) -> dict:
    """{solver: [seconds per step]} over ``steps`` steps after ``settle`` steps, and the contact counts."""
    world, q, v = scene(seed, joint_limits)
    tau = np.zeros(world.nv)
    for _ in range(settle):
        q, v = world.step(q, v, tau)
    times, contacts = collections.defaultdict(list), set()
    for _ in range(steps):
        start = time.perf_counter()
        q, v = world.step(q, v, tau)
        elapsed = time.perf_counter() - start
        last = world.last_contacts()
        times[last.solver].append(elapsed)
        contacts.add(len(last))
    return {"times": times, "contacts": sorted(contacts), "base height": q[2], "speed": np.abs(v).max()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="random start poses (default 1 2 3)")
    parser.add_argument("--settle", type=int, default=2000, help="steps before timing (default 2000)")
    parser.add_argument("--steps", type=int, default=1000, help="timed steps (default 1000)")
    args = parser.parse_args()
    standing = measure(0, False, args.settle, args.steps)
    reference = np.median(np.concatenate([np.array(t) for t in standing["times"].values()]))
    print(f"standing on 4 feet: {1e6 * reference:.1f} us per step")
    for joint_limits in (False, True):
        for seed in args.seeds:
            result = measure(seed, joint_limits, args.settle, args.steps)
            per_solver = ", ".join(f"{name} {len(t)} steps at {1e6 * np.median(t):.0f} us "
                                   f"({np.median(t) / reference:.0f}x)" for name, t in result["times"].items())
            print(f"seed {seed}, joint limits {'on' if joint_limits else 'off'}: {result['contacts']} contacts, "
                  f"base at {result['base height']:.3f} m, largest speed {result['speed']:.1e}: {per_solver}")


if __name__ == "__main__":
    main()
