"""Projective Dynamics worlds on two of DiffPD's scenes, each solved by the world's three methods: forward
rollout, backward pass (step_vjp chained through the rollout) and the agreement of losses and gradients
with Newton-Cholesky's.

Scenes (Du et al. 2021, Sec. 6.2):
- cantilever: a 32 x 8 x 8 hexahedral beam (8019 dofs) fixed at one end, E = 1e6, nu = 0.45, 25 steps of
  10 ms from rest under gravity;
- sphere: a voxelised ball of radius 5 cm (552 hexahedra of 1 cm, 2469 dofs), E = 2e6, nu = 0.4, spinning
  at 10 rad/s about y on the ground (penalty contact, or DiffPD's complementarity with --contact
  complementarity; friction mu = 0.5), 100 steps of 5 ms.
The loss is a random weighted sum of the final q and v.
- napkin: DiffPD's contact-fraction table (Sec. 6.3, Table 2): a 0.4 m square sheet of 50 x 50 x 1 hexahedra
  (15606 dofs), E = 4e5, nu = 0.45, thrown at 0.5 m/s onto a kinematic, frictionless ball from 0.1 mm above
  it, 30 steps of 2 ms; the ball's radius sets the fraction of vertices in contact (about 6 % to 47 %; 50 % is
  the whole lower layer). Reported, over the last 15 steps (the sheet has wrapped the ball by then): the
  forward time per step and the mean fraction of vertices in contact, per method.
- paper: DiffPD's other scenes (Sec. 7) as the examples build them (their stand-in geometries where the paper's
  meshes are not at hand), each driven as its example's first guess drives it, the paper's step counts and the
  examples' time steps: plant (pushed, 200 steps), bouncing ball (125), bunny (tossed, 100), routing tendon
  (activated, 100), torus (a muscle wave, 400), quadruped (a trot, 100), cow (a walk, 600). Reported per scene:
  each method's forward and backward seconds and newton-cholesky's time over each method's (the paper's speed-up
  column: its Newton's time over DiffPD's).
Methods: "pd" (L-BFGS with the prefactorised PD
matrix as initial inverse Hessian, DiffPD's), "newton" (Newton-CG preconditioned by the PD matrix),
"newton-cholesky" (the assembled Hessian factorised at each Newton iteration; direct adjoint).

    python benchmarks/bench_deformable.py                      # both scenes, tolerance 1e-4, every core
    python benchmarks/bench_deformable.py --quick              # smaller meshes, fewer steps
    python benchmarks/bench_deformable.py --scene cantilever --threads 1
    python benchmarks/bench_deformable.py --material neohookean   # the neo-Hookean energy instead
    python benchmarks/bench_deformable.py --material corotated_hyperelastic   # or the corotated hyperelastic
    python benchmarks/bench_deformable.py --scene napkin       # the contact-fraction table
    python benchmarks/bench_deformable.py --scene sphere --contact complementarity   # DiffPD's active set
    python benchmarks/bench_deformable.py --scene paper --methods newton newton-cholesky   # the other scenes
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import trimesh

import rigidiff as rd

METHODS = ("pd", "newton", "newton-cholesky")


KINDS = {"pd": ("corotated", "volume"), "neohookean": "neohookean", "corotated_hyperelastic": "corotated_hyperelastic"}


def cantilever(method: str, tolerance: float, quick: bool = False, threads=None, kind=KINDS["pd"],
               contact: str = "penalty"):
    """The world, its initial state and its step count (no contact: `contact` is not used)."""
    cells = (16, 4, 4) if quick else (32, 8, 8)
    world = rd.World(dt=1e-2, solver="projective", tolerance=tolerance, method=method, max_iterations=20000,
                     threads=threads)
    mesh = rd.HexMesh.box(np.array(cells) * 0.01, cells)
    world.add_deformable(mesh, rd.ProjectiveMaterial(1e6, 0.45, 1000.0, kind=kind),
                         name="beam", fixed=np.flatnonzero(mesh.vertices[:, 0] == 0.0))
    return world, world.q, world.v, 10 if quick else 25


def sphere(method: str, tolerance: float, quick: bool = False, threads=None, kind=KINDS["pd"],
           contact: str = "penalty"):
    world = rd.World(dt=5e-3, solver="projective", tolerance=tolerance, method=method, max_iterations=20000,
                     friction=0.5, threads=threads, contact_model=contact)
    world.add_ground()
    ball = rd.HexMesh.from_surface(trimesh.creation.icosphere(radius=0.05), dx=0.02 if quick else 0.01)
    world.add_deformable(ball, rd.ProjectiveMaterial(2e6, 0.4, 1000.0, kind=kind),
                         name="ball", pose=rd.Transform((0.0, 0.0, 0.052)))
    x = world.q.reshape(-1, 3)
    v = np.cross(np.array([0.0, 10.0, 0.0]), x - x.mean(axis=0)).reshape(-1)
    return world, world.q, v, 20 if quick else 100


SCENES = {"cantilever": cantilever, "sphere": sphere}

# ball radii (m) under the 0.4 m napkin giving about 6, 24, 38 and 47 % of its vertices in contact
NAPKIN_RADII = (0.2, 0.5, 1.0, 5.0)


def napkin(method: str, tolerance: float, radius: float, quick: bool = False, threads=None, kind=KINDS["pd"]):
    """The napkin on a ball of the given radius: the world, its initial state and its step count. The ball's
    top is at the origin (coordinates stay small, and so does their rounding)."""
    cells = 25 if quick else 50
    world = rd.World(dt=2e-3, solver="projective", tolerance=tolerance, method=method, max_iterations=20000,
                     threads=threads)
    side = 0.4
    mesh = rd.HexMesh.box((side, side, side / cells), (cells, cells, 1), origin=(-side / 2, -side / 2, 0.0))
    world.add_deformable(mesh, rd.ProjectiveMaterial(4e5, 0.45, 1000.0, kind=kind), name="napkin",
                         pose=rd.Transform((0.0, 0.0, 1e-4)), velocity=(0.0, 0.0, -0.5))
    world.add_sphere((0.0, 0.0, -radius), radius, name="ball")
    return world, world.q, world.v, 16 if quick else 30


def napkin_table(methods, tolerance: float, quick: bool, threads, kind) -> None:
    """Forward seconds per step once the sheet has wrapped the ball, and the fraction of vertices in contact,
    per ball radius and method."""
    for radius in NAPKIN_RADII:
        for method in methods:
            world, q, v, steps = napkin(method, tolerance, radius, quick, threads, kind)
            seconds, fractions, iterations = [], [], []
            for t in range(steps):
                start = time.perf_counter()
                q, v = world.step(q, v)
                elapsed = time.perf_counter() - start
                contacts = world.last_step["contacts"]
                if t >= steps // 2:  # the first half wraps the sheet around the ball
                    seconds.append(elapsed)
                    fractions.append(contacts / (world.nq // 3))
                    iterations.append(world.last_step["iterations"])
            print(f"napkin     ball radius {radius:4g} m {method:15s} {world.nq} dofs, {world.threads} threads: "
                  f"{100 * np.mean(fractions):.0f} % of the vertices "
                  f"({100 * min(fractions):.0f} to {100 * max(fractions):.0f} %), {np.mean(seconds):.3f} s per step, "
                  f"{np.mean(iterations):.1f} iterations per step", flush=True)


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def paper_scene(name: str, quick: bool):
    """(world, q0, v0, forces (T, nv), activations (T, muscles) or None) of DiffPD's scene `name` as its example
    builds and drives it (the fast example and a fifth of the steps with quick)."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    import importlib

    module, steps = PAPER_SCENES[name]
    ex = importlib.import_module(module)
    steps = max(10, steps // 5) if quick else steps
    built = ex.build(quick)
    world = built[0] if isinstance(built, tuple) else built
    q0, v0, forces, acts = world.q, world.v, np.zeros((steps, world.nv)), None
    times = np.arange(steps) * world.dt
    if name == "plant":
        forces = ex.push(world, steps)
    elif name == "bunny":
        q0, v0 = ex.Toss(world, steps).initial_state(ex.GUESS)
    elif name == "tendon":
        acts = np.full((steps, len(world.muscle_names)), 0.8)  # every muscle pulling: the column bends
    elif name == "torus":
        acts = ex.wave(ex.GUESS, times)[0]
    elif name in ("quadruped", "cow"):
        acts = ex.gait(ex.GUESS, times)[0]
    return world, q0, v0, forces, acts


# scene: (its example's module, the paper's step count, Table 3)
PAPER_SCENES = {"plant": ("soft_plant_sysid", 200), "ball": ("soft_ball_sysid", 125), "bunny": ("soft_bunny_toss", 100),
                "tendon": ("soft_tendon_reach", 100), "torus": ("soft_torus_roll", 400),
                "quadruped": ("soft_quadruped_walk", 100), "cow": ("soft_cow_walk", 600)}


def paper_table(methods, tolerance: float, quick: bool, threads) -> None:
    for name in PAPER_SCENES:
        results = {}
        for method in methods:
            world, q0, v0, forces, acts = paper_scene(name, quick)
            world.solver_options(method=method, tolerance=tolerance, max_iterations=20000)
            if threads is not None:
                world.threads = threads
            rng = np.random.default_rng(0)
            a, b = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
            results[method] = run(world, q0, v0, len(forces), a, b, forces, acts)
            _, _, forward, backward = results[method]
            print(f"{name:10s} {method:15s} {world.nq} dofs, {len(forces)} steps of {world.dt:g} s, {world.threads} "
                  f"threads: forward {forward:.2f} s, backward {backward:.2f} s, total {forward + backward:.2f} s",
                  flush=True)
        against_cholesky(name, results)


def against_cholesky(scene: str, results: dict) -> None:
    """Each method's time over newton-cholesky's (and its inverse, the speed-up) and the relative differences of
    its loss and gradient, from results {method: run(...)}."""
    reference = results.get("newton-cholesky")
    for method, (loss, grad, forward, backward) in results.items():
        if reference is None or method == "newton-cholesky":
            continue
        loss_ref, grad_ref, forward_ref, backward_ref = reference
        ratio = (forward + backward) / (forward_ref + backward_ref)
        print(f"{scene:10s} {method:15s} vs newton-cholesky: time {ratio:.2f}x (speed-up {1.0 / ratio:.1f}x), "
              f"loss {abs(loss - loss_ref) / abs(loss_ref):.1e}, gradient (v0) "
              f"{np.abs(grad - grad_ref).max() / np.abs(grad_ref).max():.1e} (relative)", flush=True)


def run(world, q0, v0, steps: int, a, b, forces=None, activations=None):
    """Loss, its gradient with respect to v0, forward and backward (rollout_backward) seconds (under the vertex
    forces (steps, nv) and muscle activations given, none if None)."""
    forces = np.zeros((steps, world.nv)) if forces is None else forces
    start = time.perf_counter()
    Q, V = world.rollout(q0, v0, forces, activations)
    forward = time.perf_counter() - start
    dQ, dV = np.zeros_like(Q), np.zeros_like(V)
    dQ[-1], dV[-1] = a, b
    start = time.perf_counter()
    # each step is solved again from its recorded start, beginning at its recorded end (no iteration where
    # that still meets the tolerance), then its adjoint
    g = world.rollout_backward(Q, V, forces, dQ, dV, activations)
    backward = time.perf_counter() - start
    return a @ Q[-1] + b @ V[-1], g.v, forward, backward


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller meshes, fewer steps")
    parser.add_argument("--scene", choices=[*SCENES, "napkin", "paper", "all"], default="all")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--threads", type=int, default=None, help="threads of the per-element work (all cores)")
    parser.add_argument("--material", choices=KINDS, default="pd",
                        help="the PD energies corotated + volume (default), the neo-Hookean or the corotated "
                             "hyperelastic energy")
    parser.add_argument("--contact", choices=("penalty", "complementarity"), default="penalty",
                        help="the ground's contact model of the sphere scene")
    args = parser.parse_args()
    if args.scene == "napkin":
        napkin_table(args.methods, args.tolerance, args.quick, args.threads, KINDS[args.material])
        return
    if args.scene == "paper":
        paper_table(args.methods, args.tolerance, args.quick, args.threads)
        return
    for scene in SCENES if args.scene == "all" else [args.scene]:
        results = {}
        for method in args.methods:
            world, q0, v0, steps = SCENES[scene](method, args.tolerance, args.quick, args.threads,
                                                 KINDS[args.material], args.contact)
            rng = np.random.default_rng(0)
            a, b = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
            results[method] = run(world, q0, v0, steps, a, b)
            _, _, forward, backward = results[method]
            print(f"{scene:10s} {method:15s} {world.nq} dofs, {steps} steps, {world.threads} threads: "
                  f"forward {forward:.2f} s, backward {backward:.2f} s, total {forward + backward:.2f} s", flush=True)
        against_cholesky(scene, results)


if __name__ == "__main__":
    main()
