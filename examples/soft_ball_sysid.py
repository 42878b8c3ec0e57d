"""Young's modulus and Poisson's ratio of a soft ball recovered from a recording of it bouncing.

A projective world (``rd.World(dt, solver="projective")``) throws a voxelised sphere (trilinear hexahedra,
corotated and volume energies) at a penalty ground with Coulomb friction, once at the true material, and
records every vertex's trajectory. From a wrong guess, scipy's L-BFGS-B then minimises the mean squared
distance (mm²) between the simulated and the recorded vertices over log E and nu (within bounds); each gradient
comes from rollout_backward (one adjoint per step, with the step's factors), and is checked once against a
central difference of two rollouts.

Run ``python examples/soft_ball_sysid.py [--fast] [--out DIR]``; it writes ``soft_ball_sysid.png`` (the loss
per evaluation and the ball's height: recorded, initial guess and fitted).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import trimesh
from scipy.optimize import minimize

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
TRUE_E, TRUE_NU = 2e4, 0.32  # the material that made the recording
GUESS_E, GUESS_NU = 6e4, 0.2
NU_BOUNDS = (0.05, 0.45)
DENSITY = 800.0


def build(fast: bool = False):
    """The ball (radius 5 cm; cubes of 2.5 cm in the fast mode, 1.67 cm otherwise) thrown down and sideways from
    8 cm above a ground with friction 0.5, at the true material."""
    world = rd.World(dt=5e-3, solver="projective", tolerance=1e-9, contact_stiffness=2e4, friction=0.5)
    world.add_ground()
    dx = 0.025 if fast else 0.05 / 3
    mesh = rd.HexMesh.from_surface(trimesh.creation.icosphere(subdivisions=3, radius=0.05), dx=dx)
    world.add_deformable(mesh, material(TRUE_E, TRUE_NU), name="ball", pose=rd.Transform((0.0, 0.0, 0.08)),
                         velocity=(0.5, 0.0, -1.0))
    return world


def material(youngs_modulus: float, poisson_ratio: float):
    return rd.ProjectiveMaterial(youngs_modulus, poisson_ratio, DENSITY, kind=("corotated", "volume"))


class Fit:
    """The trajectory error of a material (x = [log E, nu]) against a recording, and its gradient."""

    def __init__(self, world, steps: int, recorded):
        self.world, self.recorded = world, recorded
        self.forces = np.zeros((steps, world.nv))
        # a mean over the recorded states after the first, in mm² so that the gradient is not below
        # L-BFGS-B's default tolerances
        self.scale = 1e6 / recorded[1:].size
        self.losses: list[float] = []

    def rollout(self, x):
        self.world.set_material("ball", material(np.exp(x[0]), x[1]))
        return self.world.rollout(self.world.q, self.world.v, self.forces)

    def loss(self, x) -> float:
        Q, _ = self.rollout(x)
        return self.scale * float(np.sum((Q - self.recorded) ** 2))

    def loss_and_gradient(self, x):
        Q, V = self.rollout(x)
        r = Q - self.recorded
        g = self.world.rollout_backward(Q, V, self.forces, 2.0 * self.scale * r, np.zeros_like(V))
        dE, dnu = g.parameter("youngs_modulus:ball"), g.parameter("poisson_ratio:ball")
        value = self.scale * float(np.sum(r**2))
        self.losses.append(value)
        return value, np.array([np.exp(x[0]) * dE, dnu])  # d/dlogE = E d/dE


def heights(world, Q) -> np.ndarray:
    """The ball's centre-of-mass height along a rollout."""
    m = world.masses("ball")
    return np.array([m @ world.positions(q, "ball")[:, 2] for q in Q]) / m.sum()


def plot(out: Path, losses, times, curves: dict) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    a.semilogy(np.arange(1, len(losses) + 1), losses, marker="o")
    a.set(xlabel="evaluation", ylabel="mean squared vertex error (mm²)", title="L-BFGS-B on log E and nu")
    for (label, h), style in zip(curves.items(), ("-", ":", "--")):
        b.plot(times, h, style, label=label)
    b.set(xlabel="time (s)", ylabel="centre-of-mass height (m)", title="the bouncing ball")
    b.legend()
    fig.tight_layout()
    path = out / "soft_ball_sysid.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    steps, iterations = (30, 6) if fast else (80, 40)
    world = build(fast)
    recorded, _ = world.rollout(world.q, world.v, np.zeros((steps, world.nv)))
    print(f"projective world: a ball of {len(world.mesh('ball').elements)} hexahedra, {world.nq // 3} vertices, "
          f"{steps} steps of {world.dt:g} s, ground friction {world.friction:g}; recorded at E = {TRUE_E:g} Pa, "
          f"nu = {TRUE_NU:g}")
    fit = Fit(world, steps, recorded)
    x0 = np.array([np.log(GUESS_E), GUESS_NU])
    # the adjoint's gradient against a central difference, once, at the initial guess, with a tighter solver
    # tolerance: the friction's smoothing (1 mm/s) makes the loss sharply curved, so the difference needs a small
    # step, and a small step needs rollouts solved well below the step
    fit_tolerance = world.tolerance
    world.tolerance = 1e-11
    _, grad = fit.loss_and_gradient(x0)
    fit.losses.clear()
    h = 1e-5
    # along log E and nu, or along one direction that moves both in the fast mode
    directions = np.array([[1.0, -0.5]]) if fast else np.eye(2)
    fd = np.array([(fit.loss(x0 + h * d) - fit.loss(x0 - h * d)) / (2 * h) for d in directions])
    world.tolerance = fit_tolerance
    rel = np.abs(directions @ grad - fd).max() / np.abs(fd).max()
    print(f"gradient check at the guess along {len(directions)} direction{'s' if len(directions) > 1 else ''}: "
          f"adjoint {directions @ grad}, central difference {fd}, relative difference {rel:.2e}")
    start = time.perf_counter()
    result = minimize(fit.loss_and_gradient, x0, jac=True, method="L-BFGS-B",
                      bounds=[(np.log(1e3), np.log(1e6)), NU_BOUNDS], options={"maxiter": iterations, "gtol": 1e-10})
    elapsed = time.perf_counter() - start
    E, nu = float(np.exp(result.x[0])), float(result.x[1])
    print(f"initial guess E = {GUESS_E:g} Pa, nu = {GUESS_NU:g}: loss {fit.losses[0]:.3e} mm²")
    print(f"fitted E = {E:.6g} Pa (relative error {abs(E - TRUE_E) / TRUE_E:.2e}), nu = {nu:.5f} "
          f"(relative error {abs(nu - TRUE_NU) / TRUE_NU:.2e}): loss {result.fun:.3e} mm²")
    print(f"{len(fit.losses)} evaluations (loss and gradient) in {elapsed:.1f} s; {result.message}")
    guess, _ = fit.rollout(x0)
    fitted, _ = fit.rollout(result.x)
    curves = {"recorded": heights(world, recorded), "initial guess": heights(world, guess),
              "fitted": heights(world, fitted)}
    pngs = plot(Path(out), fit.losses, np.arange(steps + 1) * world.dt, curves)
    for p in pngs:
        print(f"wrote {p}")
    return {"youngs_modulus": E, "poisson_ratio": nu, "losses": fit.losses, "gradient_check": rel, "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
