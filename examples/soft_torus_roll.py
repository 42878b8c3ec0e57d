"""A soft torus that rolls along the ground by squeezing its muscles in a travelling wave, the wave's
amplitude, speed and phase improved by gradient descent through the simulation.

DiffPD's torus (Du et al. 2021, Sec. 7.3) in a projective world: a voxelised torus (trilinear hexahedra,
corotated and volume energies) standing on a ground with Coulomb friction, its ring cut into eight sectors,
each a muscle whose fibres run around the ring. Sector k's activation (its fibres' target stretch, 1 at
rest) is the open-loop wave

    a_k(t) = 1 - A (1 + sin(omega t - 2 pi k / 8 + phi)) / 2,    omega = s x 30 rad/s,

three parameters (A, s, phi) of similar scales. The torus starts at rest: the muscles alone roll it. The
distance its centre of mass travels along x is maximised by rd.OpenLoopControl: its gradient with respect to
the three parameters chains rollout_backward's gradient with respect to every step's activations through the
wave, drives scipy's L-BFGS-B within bounds, and is checked once against a central difference.

Run ``python examples/soft_torus_roll.py [--fast] [--out DIR]``; it writes ``soft_torus_roll.png`` (the
distance per evaluation and the centre of mass's path, first guess and optimised) and
``soft_torus_roll_frames.png`` (the torus, drawn by ``rd.viz``).
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
SECTORS = 8
OMEGA = 30.0  # rad/s: the wave's angular speed per unit of its parameter s
GUESS = np.array([0.3, 1.0, 1.5])  # A, s, phi (rad)
BOUNDS = [(0.0, 0.5), (-2.0, 2.0), (-np.pi, np.pi)]


def build(fast: bool = False):
    """The torus (ring radius 6 cm, tube radius 2.5 cm, axis along y; cubes of 2 cm in the fast mode, 1.25 cm
    otherwise; E = 5e5 Pa, nu = 0.4) 1 mm above a ground with friction 0.8, and its eight sector muscles."""
    world = rd.World(dt=4e-3, solver="projective", tolerance=1e-7, friction=0.8)
    world.add_ground()
    surface = trimesh.creation.torus(major_radius=0.06, minor_radius=0.025)
    surface.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1.0, 0.0, 0.0]))
    mesh = rd.HexMesh.from_surface(surface, dx=0.02 if fast else 0.0125)
    lift = 1e-3 - mesh.vertices[:, 2].min()
    world.add_deformable(mesh, rd.ProjectiveMaterial(5e5, 0.4, 1000.0, kind=("corotated", "volume")),
                         name="torus", pose=rd.Transform((0.0, 0.0, lift)))
    centres = mesh.vertices[mesh.elements].mean(axis=1)
    angle = np.arctan2(centres[:, 2], centres[:, 0])
    sector = np.floor((angle + np.pi) / (2 * np.pi) * SECTORS).astype(int) % SECTORS
    for k in range(SECTORS):
        elements = np.flatnonzero(sector == k)
        a = angle[elements]
        around = np.stack([-np.sin(a), np.zeros(len(a)), np.cos(a)], axis=1)  # the ring's tangent
        world.add_muscle("torus", elements, around, 5e5, name=f"sector{k}")
    return world


def wave(x, times):
    """The activations (T, 8) of the parameters x = (A, s, phi) at the given times, and their derivatives
    (3, T, 8) with respect to A, s and phi."""
    A, speed, phi = x
    phase = OMEGA * speed * times[:, None] - 2 * np.pi * np.arange(SECTORS)[None, :] / SECTORS + phi
    s, c = np.sin(phase), np.cos(phase)
    acts = 1.0 - A * (1.0 + s) / 2.0
    return acts, np.stack([-(1.0 + s) / 2.0, -A * c * OMEGA * times[:, None] / 2.0, -A * c / 2.0])


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
    a.set(xlabel="evaluation", ylabel="distance rolled (cm)", title="L-BFGS-B on the wave (A, s, phi)")
    for label, path in paths.items():
        b.plot(path[:, 0] * 100, path[:, 2] * 100, label=label)
    b.set(xlabel="x (cm)", ylabel="z (cm)", title="the centre of mass")
    b.legend()
    fig.tight_layout()
    file = out / "soft_torus_roll.png"
    fig.savefig(file, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "soft_torus_roll_frames.png", n_frames=4)
    return [file, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    steps, iterations = (45, 2) if fast else (150, 8)
    world = build(fast)
    control = rd.OpenLoopControl(world, "torus", wave, steps)
    print(f"projective world: a torus of {len(world.mesh('torus').elements)} hexahedra with {SECTORS} muscles, "
          f"{steps} steps of {world.dt:g} s, ground friction {world.friction:g}, from rest")
    start = time.perf_counter()
    result = control.maximise(GUESS, BOUNDS, iterations)
    elapsed = time.perf_counter() - start
    best, Q0, Q = result["x"], result["Q_start"], result["Q"]
    before, after = result["travel_start"], result["travel"]
    print(f"distance rolled in {steps * world.dt:g} s: first guess {before * 100:.2f} cm, optimised "
          f"{after * 100:.2f} cm after {len(result['travels'])} evaluations ({elapsed:.1f} s)")
    print(f"wave: A = {best[0]:.3f}, omega = {OMEGA * best[1]:.2f} rad/s, phi = {best[2]:.3f} rad")
    # the adjoint's gradient at the first guess against a central difference of two rollouts, along a direction
    slope, fd = control.check_gradient(GUESS, np.array([1.0, 0.3, 0.5]), gradient=result["gradient_start"])
    print(f"gradient check along a direction: adjoint {slope:.6e}, central difference {fd:.6e}, "
          f"relative difference {abs(slope - fd) / abs(fd):.2e}")
    low = min(world.positions(q, "torus")[:, 2].min() for q in Q)
    print(f"lowest vertex over the optimised run: {low * 1e3:.2f} mm")
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
