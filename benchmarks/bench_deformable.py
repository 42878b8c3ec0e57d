"""Projective Dynamics against our Newton baseline on DiffPD's cantilever: forward rollout, backward pass
(step_vjp chained through the rollout), and the agreement of their losses and gradients.

The cantilever of DiffPD (Du et al. 2021, Sec. 6.2): a hexahedral beam fixed at one end, 10 ms steps, 25 of
them, loss = a random weighted sum of the final q and v. Both methods solve the same steps to the same
relative tolerance; "pd" is L-BFGS with the prefactorised PD matrix, "newton" Newton-CG preconditioned by
it. Prints times and the ratio pd / newton (below 1: PD faster).

    python benchmarks/bench_deformable.py            # 32 x 8 x 8 hexahedra (8019 dofs), 25 steps
    python benchmarks/bench_deformable.py --quick    # 16 x 4 x 4, 10 steps
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import rigidiff as rd


def cantilever(cells, method: str, tolerance: float):
    world = rd.World(dt=1e-2, solver="projective", tolerance=tolerance, method=method, max_iterations=20000)
    size = np.array(cells) * 0.01
    mesh = rd.HexMesh.box(size, cells)
    world.add_deformable(mesh, rd.ProjectiveMaterial(1e6, 0.45, 1000.0, kind=("corotated", "volume")),
                         name="beam", fixed=np.flatnonzero(mesh.vertices[:, 0] == 0.0))
    return world


def run(world, steps: int, a, b):
    start = time.perf_counter()
    Q, V = world.rollout(world.q, world.v, np.zeros((steps, world.nv)))
    forward = time.perf_counter() - start
    start = time.perf_counter()
    gq, gv = a.copy(), b.copy()
    zero = np.zeros(world.nv)
    for t in range(steps - 1, -1, -1):
        g = world.step_vjp(Q[t], V[t], zero, gq, gv)
        gq, gv = g.q, g.v
    # step_vjp solves the step again before its adjoint: the backward pass proper is the difference
    backward = time.perf_counter() - start - forward
    return a @ Q[-1] + b @ V[-1], gv, forward, backward


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="16 x 4 x 4 hexahedra, 10 steps")
    parser.add_argument("--tolerance", type=float, default=1e-6)
    args = parser.parse_args()
    cells, steps = ((16, 4, 4), 10) if args.quick else ((32, 8, 8), 25)
    results = {}
    for method in ("pd", "newton"):
        world = cantilever(cells, method, args.tolerance)
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
        results[method] = run(world, steps, a, b)
        print(f"{method:7s} {world.nq} dofs, {steps} steps: forward {results[method][2]:.2f} s, "
              f"backward {results[method][3]:.2f} s")
    (lp, gp, fp, bp), (ln, gn, fn, bn) = results["pd"], results["newton"]
    print(f"pd / newton: forward {fp / fn:.2f}, backward {bp / bn:.2f}, total {(fp + bp) / (fn + bn):.2f}")
    print(f"loss difference {abs(lp - ln) / abs(ln):.1e} (relative), gradient with respect to v0 "
          f"{np.abs(gp - gn).max() / np.abs(gn).max():.1e} (relative, max norm)")


if __name__ == "__main__":
    main()
