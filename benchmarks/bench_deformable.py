"""Projective Dynamics worlds on two of DiffPD's scenes, each solved by the world's three methods: forward
rollout, backward pass (step_vjp chained through the rollout) and the agreement of losses and gradients
with Newton-Cholesky's.

Scenes (Du et al. 2021, Sec. 6.2):
- cantilever: a 32 x 8 x 8 hexahedral beam (8019 dofs) fixed at one end, E = 1e6, nu = 0.45, 25 steps of
  10 ms from rest under gravity;
- sphere: a voxelised ball of radius 5 cm (552 hexahedra of 1 cm, 2469 dofs), E = 2e6, nu = 0.4, spinning
  at 10 rad/s about y on the ground (penalty contact, friction mu = 0.5), 100 steps of 5 ms.
The loss is a random weighted sum of the final q and v. Methods: "pd" (L-BFGS with the prefactorised PD
matrix as initial inverse Hessian, DiffPD's), "newton" (Newton-CG preconditioned by the PD matrix),
"newton-cholesky" (the assembled Hessian factorised at each Newton iteration; direct adjoint).

    python benchmarks/bench_deformable.py                      # both scenes, tolerance 1e-4, every core
    python benchmarks/bench_deformable.py --quick              # smaller meshes, fewer steps
    python benchmarks/bench_deformable.py --scene cantilever --threads 1
    python benchmarks/bench_deformable.py --material neohookean   # the neo-Hookean energy instead
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import trimesh

import rigidiff as rd

METHODS = ("pd", "newton", "newton-cholesky")


KINDS = {"pd": ("corotated", "volume"), "neohookean": "neohookean"}


def cantilever(method: str, tolerance: float, quick: bool = False, threads=None, kind=KINDS["pd"]):
    """The world, its initial state and its step count."""
    cells = (16, 4, 4) if quick else (32, 8, 8)
    world = rd.World(dt=1e-2, solver="projective", tolerance=tolerance, method=method, max_iterations=20000,
                     threads=threads)
    mesh = rd.HexMesh.box(np.array(cells) * 0.01, cells)
    world.add_deformable(mesh, rd.ProjectiveMaterial(1e6, 0.45, 1000.0, kind=kind),
                         name="beam", fixed=np.flatnonzero(mesh.vertices[:, 0] == 0.0))
    return world, world.q, world.v, 10 if quick else 25


def sphere(method: str, tolerance: float, quick: bool = False, threads=None, kind=KINDS["pd"]):
    world = rd.World(dt=5e-3, solver="projective", tolerance=tolerance, method=method, max_iterations=20000,
                     friction=0.5, threads=threads)
    world.add_ground()
    ball = rd.HexMesh.from_surface(trimesh.creation.icosphere(radius=0.05), dx=0.02 if quick else 0.01)
    world.add_deformable(ball, rd.ProjectiveMaterial(2e6, 0.4, 1000.0, kind=kind),
                         name="ball", pose=rd.Transform((0.0, 0.0, 0.052)))
    x = world.q.reshape(-1, 3)
    v = np.cross(np.array([0.0, 10.0, 0.0]), x - x.mean(axis=0)).reshape(-1)
    return world, world.q, v, 20 if quick else 100


SCENES = {"cantilever": cantilever, "sphere": sphere}


def run(world, q0, v0, steps: int, a, b):
    """Loss, its gradient with respect to v0, forward and backward (rollout_backward) seconds."""
    start = time.perf_counter()
    Q, V = world.rollout(q0, v0, np.zeros((steps, world.nv)))
    forward = time.perf_counter() - start
    dQ, dV = np.zeros_like(Q), np.zeros_like(V)
    dQ[-1], dV[-1] = a, b
    start = time.perf_counter()
    # each step is solved again from its recorded start, beginning at its recorded end (no iteration where
    # that still meets the tolerance), then its adjoint
    g = world.rollout_backward(Q, V, np.zeros((steps, world.nv)), dQ, dV)
    backward = time.perf_counter() - start
    return a @ Q[-1] + b @ V[-1], g.v, forward, backward


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller meshes, fewer steps")
    parser.add_argument("--scene", choices=[*SCENES, "all"], default="all")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--threads", type=int, default=None, help="threads of the per-element work (all cores)")
    parser.add_argument("--material", choices=KINDS, default="pd",
                        help="the PD energies corotated + volume (default), or the neo-Hookean energy")
    args = parser.parse_args()
    for scene in SCENES if args.scene == "all" else [args.scene]:
        results = {}
        for method in args.methods:
            world, q0, v0, steps = SCENES[scene](method, args.tolerance, args.quick, args.threads,
                                                 KINDS[args.material])
            rng = np.random.default_rng(0)
            a, b = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
            results[method] = run(world, q0, v0, steps, a, b)
            _, _, forward, backward = results[method]
            print(f"{scene:10s} {method:15s} {world.nq} dofs, {steps} steps, {world.threads} threads: "
                  f"forward {forward:.2f} s, backward {backward:.2f} s, total {forward + backward:.2f} s", flush=True)
        reference = results.get("newton-cholesky")
        for method, (loss, grad, forward, backward) in results.items():
            if reference is None or method == "newton-cholesky":
                continue
            loss_ref, grad_ref, forward_ref, backward_ref = reference
            print(f"{scene:10s} {method:15s} vs newton-cholesky: time {(forward + backward) / (forward_ref + backward_ref):.2f}x, "
                  f"loss {abs(loss - loss_ref) / abs(loss_ref):.1e}, gradient (v0) "
                  f"{np.abs(grad - grad_ref).max() / np.abs(grad_ref).max():.1e} (relative)")


if __name__ == "__main__":
    main()
