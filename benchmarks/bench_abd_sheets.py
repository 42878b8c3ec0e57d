"""Two 1 m sheets within dhat of each other: the barrier's contact parts, rigidiff against IPC Toolkit.

Each sheet is a closed thin box (2 mm thick; an affine body needs a closed surface) whose two large faces are
grids of n x n squares, 2 n^2 triangles each (n = 49: 4,802, so that the two facing faces hold 9,604 triangles
together; with the far faces and the rims each sheet has 9,996). The upper sheet lies over the lower one, turned
by 0.3 rad about z and shifted by a fraction of a square so that no vertex lies over a vertex, its lower face
0.5 dhat above the lower sheet's upper face: every vertex of either facing grid is within dhat of the other.
Timed on the same surfaces, the median of --repeat rounds each:

- the pairs within dhat from scratch (rigidiff: the bodies' boxes, then their primitives' boxes, then the
  distances; ipctk: `NormalCollisions.build`),
- the barrier gradient of those pairs (ipctk: `BarrierPotential.gradient`),
- their barrier Hessian, each pair's block projected to PSD (ipctk: `BarrierPotential.hessian` with clamped
  eigenvalues, a sparse matrix over the vertices' coordinates; rigidiff: the 12 x 12 body blocks, mapped
  through the affine bodies' point Jacobians and written into the Newton matrix's kept sparsity pattern),
- additive CCD of the upper sheet moving 1.5 gaps down (ipctk: `compute_collision_free_stepsize` with
  `AdditiveCCD`; rigidiff: the collision-free step, its swept broad phase included).

rigidiff computes the pairs' terms on two threads when there are 256 or more; ipctk runs on one thread and
then on two (`ipctk.set_num_threads`).

    python benchmarks/bench_abd_sheets.py            # n = 49
    python benchmarks/bench_abd_sheets.py --n 98     # four times the triangles
"""

from __future__ import annotations

import argparse

import numpy as np
import trimesh
from bench_abd import ipctk, timed  # bench_abd exits with a message when ipctk is missing

import rigidiff as rd

DHAT, THICK, SIZE = 1e-3, 2e-3, 1.0


def sheet(n: int) -> trimesh.Trimesh:
    """A closed SIZE x SIZE x THICK box whose upper and lower faces are grids of n x n squares, outward wound."""
    g = np.linspace(-SIZE / 2, SIZE / 2, n + 1)
    X, Y = np.meshgrid(g, g, indexing="ij")
    upper = np.c_[X.ravel(), Y.ravel(), np.full(X.size, THICK / 2)]
    lower = upper * [1.0, 1.0, -1.0]
    m = (n + 1) ** 2
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    a, b = (i * (n + 1) + j).ravel(), ((i + 1) * (n + 1) + j).ravel()
    c, d = b + 1, a + 1
    faces = [np.c_[a, b, c], np.c_[a, c, d], np.c_[a, c, b] + m, np.c_[a, d, c] + m]
    # the rim: the boundary loop of the upper grid joined to the lower's
    k = np.arange(n)
    loop = np.concatenate([k * (n + 1), n * (n + 1) + k, (n - k) * (n + 1) + n, n - k])
    nxt = np.roll(loop, -1)
    faces += [np.c_[loop, loop + m, nxt + m], np.c_[loop, nxt + m, nxt]]
    mesh = trimesh.Trimesh(np.vstack([upper, lower]), np.vstack(faces), process=False)
    if mesh.volume < 0:
        mesh.invert()
    return mesh


def two_sheets(n: int):
    """The barrier world of the two sheets (no gravity), its state, and the move of the upper sheet 1.5 gaps
    down."""
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, gravity=(0.0, 0.0, 0.0))
    mesh = sheet(n)
    world.add_affine_body(mesh, density=1000.0, name="lower")
    cell = SIZE / n
    world.add_affine_body(mesh, density=1000.0, name="upper",
                          pose=rd.Transform((0.31 * cell, 0.17 * cell, THICK + 0.5 * DHAT), rpy=(0.0, 0.0, 0.3)))
    dq = np.zeros(world.nq)
    dq[world.layout("upper").q.start + 2] = -0.75 * DHAT
    return world, world.q, dq


def ipctk_parts(world, q, dq, repeat: int) -> dict:
    V, F = world.surfaces(q)
    V1, _ = world.surfaces(q + dq)
    mesh = ipctk.CollisionMesh(V, ipctk.edges(F), F)
    collisions = ipctk.NormalCollisions()
    out = {"build": timed(lambda: collisions.build(mesh, V, DHAT), repeat)[0], "pairs": len(collisions)}
    potential = ipctk.BarrierPotential(DHAT, 1.0)
    out["gradient"] = timed(lambda: potential.gradient(collisions, mesh, V), repeat)[0]
    out["hessian"] = timed(lambda: potential.hessian(collisions, mesh, V, ipctk.PSDProjectionMethod.CLAMP),
                           repeat)[0]
    out["value"] = potential(collisions, mesh, V)
    accd = ipctk.AdditiveCCD(conservative_rescaling=0.9)
    out["ccd"], out["step"] = timed(lambda: ipctk.compute_collision_free_stepsize(mesh, V, V1, 0.0, None, accd),
                                    repeat)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=49, help="squares along a side of each sheet's faces")
    parser.add_argument("--repeat", type=int, default=5, help="rounds of each timing (median)")
    args = parser.parse_args(argv)
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    world, q, dq = two_sheets(args.n)
    faces = len(world.surface(q, "lower")[1])
    print(f"rigidiff {rd.__version__}, ipctk {ipctk.__version__}; load average {load}")
    print(f"two sheets of {faces} triangles each ({2 * args.n ** 2} on each large face), dhat {DHAT}, "
          f"{args.repeat} rounds (median)")
    t = world._bw_contact_timings(q, dq, args.repeat)
    ours = {"build": t[0], "gradient": t[1], "hessian": t[2], "ccd": t[3], "candidates": int(t[4]),
            "pairs": int(t[5]), "step": t[6], "value": t[7]}
    theirs = {}
    for threads in (1, 2):
        ipctk.set_num_threads(threads)
        theirs[threads] = ipctk_parts(world, q, dq, args.repeat)
    print(f"pairs within dhat: rigidiff {ours['pairs']} (point-triangle both ways and edge-edge, from "
          f"{ours['candidates']} candidates), ipctk {theirs[1]['pairs']} (one per closest feature pair)")
    print(f"barrier sum: rigidiff {ours['value']:.6g}, ipctk {theirs[1]['value']:.6g}")
    print(f"{'ms':24s} {'rigidiff':>9s} {'ipctk 1 thr':>12s} {'ipctk 2 thr':>12s}")
    rows = [("pairs within dhat", "build"), ("barrier gradient", "gradient"), ("barrier Hessian (PSD)", "hessian"),
            ("additive CCD", "ccd")]
    for label, key in rows:
        print(f"{label:24s} {1e3 * ours[key]:9.1f} {1e3 * theirs[1][key]:12.1f} {1e3 * theirs[2][key]:12.1f}")
    print(f"CCD step: rigidiff {ours['step']:.3f}, ipctk {theirs[1]['step']:.3f}")


if __name__ == "__main__":
    main()
