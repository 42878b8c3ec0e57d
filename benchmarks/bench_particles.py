"""Reverse mode through contact at scale: n particles on the ground inside a box, swept by a paddle on a
hinge. Times a recorded rollout (forward) and its backward pass (traj.backward), per step, and prints
backward / forward. The backward re-solves each step in its recorded contact mode and pulls the cotangent
through the clamped rows' factors, without forming the step's (2nv x 2nv) Jacobians.

    python benchmarks/bench_particles.py                 # n = 50 100 200 400, 500 steps
    python benchmarks/bench_particles.py --n 50 100 --steps 100 --repeat 3
    python benchmarks/bench_particles.py --scene rest    # no paddle: independent particles at rest
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import rigidiff as rd

R = 0.02  # particle radius
SPACING = 2.5 * R  # the grid leaves gaps between particles: a pile of independent bodies until pushed
PADDLE = 0.25  # paddle length: it sweeps into the corner of the grid and pushes a growing group


def box_walls(half: float) -> rd.Skeleton:
    """Four welded walls around the square [-half, half]^2."""
    sk = rd.Skeleton("walls")
    body = sk.add_body("walls", joint=rd.FixedJoint("walls_weld"))
    t, h = 0.02, 0.1
    for x, y, sx, sy in ((half + t, 0.0, t, half), (-half - t, 0.0, t, half),
                         (0.0, half + t, half, t), (0.0, -half - t, half, t)):
        body.add_shape(rd.Box((2 * sx, 2 * sy, h)), origin=rd.Transform(translation=(x, y, 0.5 * h)), friction=0.3)
    return sk


def paddle(length: float) -> rd.Skeleton:
    """A flat paddle on a vertical hinge at the origin, along +x, just above the ground."""
    sk = rd.Skeleton("paddle")
    body = sk.add_body("paddle", joint=rd.RevoluteJoint("hinge", axis=(0.0, 0.0, 1.0)),
                       inertia=rd.Inertia(2.0, com=(0.5 * length, 0.0, 0.0),
                                          rotational_inertia=np.diag([1e-3, 0.05, 0.05])))
    body.add_shape(rd.Box((length, 0.02, 0.03)), origin=rd.Transform(translation=(0.5 * length, 0.0, 0.016)),
                   friction=0.3)
    return sk


def particle_world(n: int, with_paddle: bool = True) -> tuple[rd.World, np.ndarray, np.ndarray, np.ndarray]:
    """The world with n particles on a grid beside the paddle (or alone), and (q0, v0, tau) of the push."""
    side = int(np.ceil(np.sqrt(n)))
    half = 0.5 * side * SPACING + 0.1
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.6)
    world.add_skeleton(box_walls(2.0 * half))
    if with_paddle:
        world.add_skeleton(paddle(PADDLE))
    ij = np.array([(i, j) for i in range(side) for j in range(side)][:n], dtype=float)
    pos = np.column_stack([0.02 + R + ij[:, 0] * SPACING, -half + R + ij[:, 1] * SPACING, np.full(n, R)])
    pos[:, 1] = 0.03 + R + ij[:, 1] * SPACING  # the grid starts beside the paddle, in its sweep
    pos[:, 0] -= 0.5 * PADDLE
    world.add_particles(pos, masses=0.01, radius=R, friction=0.5, name="pile")
    q0 = world.neutral_configuration()
    v0 = np.zeros(world.nv)
    tau = np.zeros(world.nv)
    if with_paddle:
        tau[world.layout("paddle").v] = 2.0
    return world, q0, v0, tau


def time_rollout(world, q0, v0, taus, repeat: int) -> tuple[float, float, int]:
    """(forward seconds, backward seconds) per step, the fastest of `repeat`, and the constrained steps."""
    fwd, bwd = [], []
    T = taus.shape[0]
    rng = np.random.default_rng(0)
    GQ, GV = rng.normal(size=(T + 1, world.nv)), rng.normal(size=(T + 1, world.nv))
    for _ in range(repeat):
        t0 = time.perf_counter()
        traj = world.rollout(q0, v0, taus, record=True)
        t1 = time.perf_counter()
        traj.backward(GQ, GV)
        t2 = time.perf_counter()
        fwd.append((t1 - t0) / T)
        bwd.append((t2 - t1) / T)
    return min(fwd), min(bwd), len(traj.constrained_steps)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[50, 100, 200, 400])
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--scene", choices=("push", "rest"), default="push",
                    help="push: a paddle sweeps into the grid (default); rest: the particles alone, at rest")
    args = ap.parse_args()
    print(f"{args.scene}: {args.steps}-step recorded rollout, dt = 1e-3; times per step (ms)")
    print("| n | nv | constrained steps | forward | backward | backward / forward |")
    print("|---|---|---|---|---|---|")
    for n in args.n:
        world, q0, v0, tau = particle_world(n, with_paddle=args.scene == "push")
        taus = np.tile(tau, (args.steps, 1))
        f, b, c = time_rollout(world, q0, v0, taus, args.repeat)
        print(f"| {n} | {world.nv} | {c} | {1e3 * f:.3f} | {1e3 * b:.3f} | {b / f:.2f} |", flush=True)


if __name__ == "__main__":
    main()
