"""Gradients of barrier-world rollouts (affine bodies, World(solver="barrier")): the reverse pass of a recorded
rollout (``world.rollout(q0, v0, taus, record=True).backward(...)``) against the forward rollout's time.

Scenes:

1. three 0.2 m cubes with friction 0.3 (one sliding into a second that carries the third), dt = 1e-2,
   dhat = 5e-3, at Newton tolerances 1e-2 (the default) and 1e-10, 50 and 100 steps;
2. the pile of bench_abd.py: 100 cubes of 0.1 m (friction 0.5) falling into a box, 100 steps (1 s: the fall
   and the impacts), default tolerance.

Printed per scene: the forward rollout (recorded) and its reverse pass with respect to the initial state, every
step's forces and every parameter (each body's density and stiffness, friction, dhat), in ms, and their
ratio (median of --repeat runs; the pile once).

    python benchmarks/bench_abd_gradients.py
    python benchmarks/bench_abd_gradients.py --skip-pile
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import rigidiff as rd

BOX = rd.Box((0.2, 0.2, 0.2))


def three_cubes(tolerance: float):
    world = rd.World(dt=1e-2, solver="barrier", dhat=5e-3, friction=0.3, newton_tolerance=tolerance,
                     max_newton_iterations=500)
    world.add_ground()
    world.add_affine_body(BOX, density=400.0, pose=rd.Transform((0.0, 0.0, 0.103), rpy=(0.0, 0.0, 0.05)),
                          velocity=(1.6, 0.1, 0.0, 0.0, 0.0, 0.3), name="a")
    world.add_affine_body(BOX, density=500.0, pose=rd.Transform((0.3, 0.02, 0.103)), name="b")
    world.add_affine_body(BOX, density=600.0, pose=rd.Transform((0.32, 0.0, 0.306), rpy=(0.0, 0.0, 0.2)),
                          velocity=(0.0, 0.05, 0.0), name="c")
    return world


def forward_and_backward(world, steps: int) -> tuple[float, float]:
    """Seconds of the recorded rollout and of its reverse pass (loss: the sum of the final coordinates)."""
    taus = np.zeros((steps, world.nv))
    t0 = time.perf_counter()
    traj = world.rollout(world.q, world.v, taus, record=True)
    t1 = time.perf_counter()
    dL_dQ = np.zeros_like(traj.q)
    dL_dQ[-1] = 1.0
    traj.backward(dL_dQ, None, wrt="all")
    return t1 - t0, time.perf_counter() - t1


def report(label: str, runs: list) -> None:
    fwd, bwd = np.median([r[0] for r in runs]), np.median([r[1] for r in runs])
    print(f"{label:<44} forward {fwd * 1e3:8.1f} ms   backward {bwd * 1e3:8.1f} ms   ratio {bwd / fwd:5.2f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="runs of the three-cube rollouts (median)")
    parser.add_argument("--skip-pile", action="store_true", help="only the three cubes")
    args = parser.parse_args(argv)
    for tolerance in (1e-2, 1e-10):
        for steps in (50, 100):
            runs = [forward_and_backward(three_cubes(tolerance), steps) for _ in range(args.repeat)]
            report(f"3 cubes, {steps} steps, tolerance {tolerance:g}", runs)
    if not args.skip_pile:
        from bench_abd import barrier_pile

        report("100-cube pile, 100 steps, tolerance 1e-2", [forward_and_backward(barrier_pile(), 100)])


if __name__ == "__main__":
    main()
