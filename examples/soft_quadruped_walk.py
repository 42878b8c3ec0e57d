"""A soft quadruped that walks by swinging its legs with muscles, its gait improved by gradient descent
through the simulation.

DiffPD's quadruped (Du et al. 2021, Sec. 7.3) in a projective world: a body block on four legs, the union of
five boxes (trimesh) voxelised into trilinear hexahedra, standing on a ground with Coulomb friction. Each leg
has two muscles, its front and its back (halves, or thirds with a passive middle), with fibres along the leg;
they work against each other to swing it, in a trot (the diagonal pairs in phase):

    front a = 1 - A (1 + sin(theta)) / 2,   back a = 1 - A (1 - sin(theta)) / 2,
    theta = omega t + phi_leg,   omega = s x 10 rad/s,   phi_leg = 0 or pi,

with the amplitude A = A_f for the front legs and A_b for the hind legs: three parameters (A_f, A_b, s), as in
the paper. The distance its centre of mass travels along x is maximised by rd.OpenLoopControl: its gradient
chains rollout_backward's gradient with respect to every step's activations through the gait, drives scipy's
L-BFGS-B within bounds, and is checked once against a central difference.

Run ``python examples/soft_quadruped_walk.py [--fast] [--out DIR]``; it writes ``soft_quadruped_walk.png``
(the distance per evaluation and the centre of mass's x over time, first guess and optimised) and
``soft_quadruped_walk_frames.png`` (the quadruped, drawn by ``rd.viz``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import trimesh

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
OMEGA = 10.0  # rad/s of the gait per unit of its parameter s
GUESS = np.array([0.2, 0.25, 2.0])  # A_f, A_b, s
BOUNDS = [(0.0, 0.4), (0.0, 0.4), (0.2, 4.0)]
LEGS = ("front_left", "front_right", "hind_left", "hind_right")


def body_surface(foot: float, legs: float, size=(4, 4, 1)) -> trimesh.Trimesh:
    """The union of a body block of size (in feet of edge foot) and four legs of one foot square and legs
    tall under its corners, as one closed surface (the boxes overlap, so every point of the union is inside at
    least one of them)."""
    bx, by, bz = np.array(size) * foot
    block = trimesh.creation.box((bx, by, bz))
    block.apply_translation((bx / 2, by / 2, legs + bz / 2))
    parts = [block]
    for x in (0.0, bx - foot):
        for y in (0.0, by - foot):
            leg = trimesh.creation.box((foot, foot, legs + bz / 2))  # up into the middle of the block
            leg.apply_translation((x + foot / 2, y + foot / 2, (legs + bz / 2) / 2))
            parts.append(leg)
    return trimesh.util.concatenate(parts)


def build(fast: bool = False):
    """The quadruped (feet of 10 cm, a 4 x 4 x 1-foot body on 2-foot legs, cubes of a third of a foot; in the
    fast mode a 4 x 3 x 1-foot body on 1.5-foot legs of 5 cm feet, cubes of 2.5 cm), E = 1e6 Pa, nu = 0.45,
    density 300 kg/m^3, on a ground with friction 0.8, and its eight muscles; returns the world."""
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-7, friction=0.8)
    world.add_ground()
    foot = 0.05 if fast else 0.1
    surface = body_surface(foot, 1.5 * foot if fast else 2 * foot, (4, 3, 1) if fast else (4, 4, 1))
    mesh = rd.HexMesh.from_surface(surface, dx=foot / 2 if fast else foot / 3)
    world.add_deformable(mesh, rd.ProjectiveMaterial(1e6, 0.45, 300.0, kind=("corotated", "volume")),
                         name="quadruped", pose=rd.Transform((0.0, 0.0, 1e-3)))
    centres = mesh.vertices[mesh.elements].mean(axis=1)
    top = mesh.vertices[:, 2].max()
    leg_top = top - foot  # the body block is one foot thick
    lx, ly = mesh.vertices[:, 0].max(), mesh.vertices[:, 1].max()
    for name in LEGS:
        x0 = lx - foot if name.startswith("front") else 0.0
        y0 = 0.0 if name.endswith("left") else ly - foot
        inside = ((centres[:, 0] > x0) & (centres[:, 0] < x0 + foot) & (centres[:, 1] > y0)
                  & (centres[:, 1] < y0 + foot) & (centres[:, 2] < leg_top))
        # the halves mirror each other: with an odd number of cubes across a leg, its middle column is passive
        middle = x0 + foot / 2
        front, back = centres[:, 0] > middle + 1e-9, centres[:, 0] < middle - 1e-9
        world.add_muscle("quadruped", np.flatnonzero(inside & front), (0.0, 0.0, 1.0), 5e5, name=f"{name}/front")
        world.add_muscle("quadruped", np.flatnonzero(inside & back), (0.0, 0.0, 1.0), 5e5, name=f"{name}/back")
    return world


def gait(x, times):
    """The activations (T, 8) of the parameters x = (A_f, A_b, s) at the given times (muscles in the order
    leg by leg, front half then back half) and their derivatives (3, T, 8) with respect to A_f, A_b and s."""
    a_front, a_hind, speed = x
    acts, d = np.empty((len(times), 8)), np.zeros((3, len(times), 8))
    for i, name in enumerate(LEGS):
        phase = 0.0 if name in ("front_left", "hind_right") else np.pi  # a trot: diagonal legs together
        amplitude, which = (a_front, 0) if name.startswith("front") else (a_hind, 1)
        theta = OMEGA * speed * times + phase
        s, c = np.sin(theta), np.cos(theta)
        for j, sign in ((2 * i, 1.0), (2 * i + 1, -1.0)):
            acts[:, j] = 1.0 - amplitude * (1.0 + sign * s) / 2.0
            d[which, :, j] = -(1.0 + sign * s) / 2.0
            d[2, :, j] = -amplitude * sign * c * OMEGA * times / 2.0
    return acts, d


def plot(out: Path, world, distances, paths: dict, Q) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.plot(np.arange(1, len(distances) + 1), np.array(distances) * 100, marker="o")
    a.set(xlabel="evaluation", ylabel="distance walked (cm)", title="L-BFGS-B on the gait (A_f, A_b, s)")
    for label, path in paths.items():
        b.plot(np.arange(len(path)) * world.dt, path[:, 0] * 100, label=label)
    b.set(xlabel="time (s)", ylabel="centre of mass x (cm)", title="the walk")
    b.legend()
    fig.tight_layout()
    file = out / "soft_quadruped_walk.png"
    fig.savefig(file, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "soft_quadruped_walk_frames.png", n_frames=4)
    return [file, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    steps, iterations = (30, 1) if fast else (100, 6)
    world = build(fast)
    control = rd.OpenLoopControl(world, "quadruped", gait, steps)
    print(f"projective world: a quadruped of {len(world.mesh('quadruped').elements)} hexahedra with "
          f"{len(world.muscle_names)} muscles, {steps} steps of {world.dt:g} s, ground friction {world.friction:g}")
    start = time.perf_counter()
    result = control.maximise(GUESS, BOUNDS, iterations)
    elapsed = time.perf_counter() - start
    best, Q0, Q = result["x"], result["Q_start"], result["Q"]
    before, after = result["travel_start"], result["travel"]
    print(f"distance walked in {steps * world.dt:g} s: first guess {before * 100:.2f} cm, optimised "
          f"{after * 100:.2f} cm after {len(result['travels'])} evaluations ({elapsed:.1f} s)")
    print(f"gait: A_f = {best[0]:.3f}, A_b = {best[1]:.3f}, omega = {OMEGA * best[2]:.2f} rad/s")
    # the adjoint's gradient at the first guess against a central difference of two rollouts, along a direction
    slope, fd = control.check_gradient(GUESS, np.array([1.0, -0.5, 0.3]), gradient=result["gradient_start"])
    print(f"gradient check along a direction: adjoint {slope:.6e}, central difference {fd:.6e}, "
          f"relative difference {abs(slope - fd) / abs(fd):.2e}")
    low = min(world.positions(q, "quadruped")[:, 2].min() for q in Q)
    tilt = max(abs(control.centre(q)[2] - control.start[2]) for q in Q)
    print(f"lowest vertex over the optimised run: {low * 1e3:.2f} mm; centre of mass height change at most "
          f"{tilt * 1e3:.1f} mm")
    paths = {label: np.array([control.centre(q) for q in R]) for label, R in (("first guess", Q0), ("optimised", Q))}
    pngs = plot(Path(out), world, result["travels"], paths, Q)
    for p in pngs:
        print(f"wrote {p}")
    return {"before": before, "after": after, "parameters": best, "distances": result["travels"], "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
