"""The Young's modulus of a soft plant recovered from a recording of it swaying after a push.

DiffPD's plant (Du et al. 2021, Sec. 7.1) in a projective world. The geometry is a procedural stand-in for
the paper's plant mesh: a square stem 20 cm tall with four leaves (flat slabs) around it at rising heights,
the union of five boxes (trimesh) voxelised into trilinear hexahedra, its base attached (``fixed=``) and no
gravity, as in the paper. A sideways force pushes every vertex for the first 0.1 s, then lets go, and the
plant sways; the motion at the true material is recorded. From a wrong guess, scipy's L-BFGS-B minimises the
mean squared distance (mm²) between the simulated and the recorded vertices over log E; the gradient comes
from rollout_backward (parameter "youngs_modulus:plant") and is checked once against a central difference.

Run ``python examples/soft_plant_sysid.py [--fast] [--out DIR]``; it writes ``soft_plant_sysid.png`` (the loss
per evaluation and the stem's tip: recorded, initial guess and fitted) and ``soft_plant_sysid_frames.png``
(the plant, drawn by ``rd.viz``).
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
TRUE_E, GUESS_E = 1e6, 3e5
POISSON, DENSITY = 0.4, 1000.0
PUSH = 3.0  # m/s^2: the sideways force per unit mass, along (1, 0.5, 0), for the first PUSH_STEPS steps
PUSH_STEPS = 10


def plant_surface() -> trimesh.Trimesh:
    """A 2 x 2 x 20 cm stem on the origin and four 6 x 4 x 1 cm leaves reaching out of it in turn along +x, +y,
    -x and -y, at heights 8, 12, 15 and 18 cm: overlapping closed boxes, so the union is their inside."""
    stem = trimesh.creation.box((0.02, 0.02, 0.2))
    stem.apply_translation((0.0, 0.0, 0.1))
    parts = [stem]
    for height, angle in zip((0.08, 0.12, 0.15, 0.18), (0.0, 0.5, 1.0, 1.5)):
        leaf = trimesh.creation.box((0.06, 0.04, 0.01))
        leaf.apply_translation((0.03, 0.0, height + 0.005))  # from the stem's axis outwards
        leaf.apply_transform(trimesh.transformations.rotation_matrix(angle * np.pi, (0.0, 0.0, 1.0)))
        parts.append(leaf)
    return trimesh.util.concatenate(parts)


def build(fast: bool = False):
    """The plant (cubes of 1 cm in the fast mode, 5 mm otherwise) at the true material, its base fixed."""
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-7, gravity=(0.0, 0.0, 0.0))
    mesh = rd.HexMesh.from_surface(plant_surface(), dx=0.01 if fast else 0.005)
    world.add_deformable(mesh, material(TRUE_E), name="plant", fixed=np.flatnonzero(mesh.vertices[:, 2] < 1e-9))
    return world


def material(youngs_modulus: float):
    return rd.ProjectiveMaterial(youngs_modulus, POISSON, DENSITY, kind=("corotated", "volume"))


def push(world, steps: int) -> np.ndarray:
    """The forces (steps, nv): mass times PUSH along (1, 0.5, 0) on every vertex for the first PUSH_STEPS steps."""
    forces = np.zeros((steps, world.nv))
    direction = np.array([1.0, 0.5, 0.0]) / np.linalg.norm([1.0, 0.5, 0.0])
    forces[:PUSH_STEPS] = np.outer(world.masses("plant"), PUSH * direction).ravel()
    return forces


class Fit:
    """The trajectory error of a material (x = [log E]) against a recording, and its gradient."""

    def __init__(self, world, forces, recorded):
        self.world, self.forces, self.recorded = world, forces, recorded
        self.scale = 1e6 / recorded[1:].size  # a mean over the recorded states after the first, in mm²
        self.losses: list[float] = []
        self.unit = 1.0  # what the optimiser sees is loss * unit
        self.rollouts: dict = {}  # log E -> Q of the evaluations
        self._last = None  # (x, loss, gradient) of the last evaluation: the optimiser starts where the check did

    def rollout(self, x):
        self.world.set_material("plant", material(np.exp(x[0])))
        return self.world.rollout(self.world.q, self.world.v, self.forces)

    def loss(self, x) -> float:
        Q, _ = self.rollout(x)
        return self.scale * float(np.sum((Q - self.recorded) ** 2))

    def loss_and_gradient(self, x):
        if self._last is None or not np.array_equal(self._last[0], x):
            Q, V = self.rollout(x)
            self.rollouts[float(x[0])] = Q
            r = Q - self.recorded
            g = self.world.rollout_backward(Q, V, self.forces, 2.0 * self.scale * r, np.zeros_like(V))
            gradient = np.array([np.exp(x[0]) * g.parameter("youngs_modulus:plant")])  # d/dlogE = E d/dE
            self._last = (np.array(x, dtype=float), self.scale * float(np.sum(r**2)), gradient)
        _, value, gradient = self._last
        self.losses.append(value)
        return self.unit * value, self.unit * gradient


def plot(out: Path, world, losses, times, tips: dict, Q) -> list:
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
    a.set(xlabel="evaluation", ylabel="mean squared vertex error (mm²)", title="L-BFGS-B on log E")
    for (label, x), style in zip(tips.items(), ("-", ":", "--")):
        b.plot(times, x * 1e3, style, label=label)
    b.set(xlabel="time (s)", ylabel="stem tip x (mm)", title="the plant swaying")
    b.legend()
    fig.tight_layout()
    file = out / "soft_plant_sysid.png"
    fig.savefig(file, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "soft_plant_sysid_frames.png", n_frames=4)
    return [file, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    steps, iterations = (20, 4) if fast else (100, 30)
    world = build(fast)
    forces = push(world, steps)
    recorded, _ = world.rollout(world.q, world.v, forces)
    mesh = world.mesh("plant")
    base, tip = world.fixed_vertices("plant"), np.argmax(mesh.vertices[:, 2] - 1e-3 * np.abs(mesh.vertices[:, 0]))
    print(f"projective world: a plant of {len(mesh.elements)} hexahedra, {len(mesh.vertices)} vertices "
          f"({len(base)} fixed at the base), {steps} steps of {world.dt:g} s, pushed for {PUSH_STEPS * world.dt:g} s; "
          f"recorded at E = {TRUE_E:g} Pa")
    positions = recorded.reshape(len(recorded), -1, 3)
    sway = np.linalg.norm(positions[:, :, :2] - positions[0, :, :2], axis=2)
    print(f"largest sway of a vertex: {sway.max() * 1e3:.1f} mm; of a fixed base vertex: {sway[:, base].max():.1e} m")
    fit = Fit(world, forces, recorded)
    x0 = np.array([np.log(GUESS_E)])
    loss0, grad = fit.loss_and_gradient(x0)
    fit.losses.clear()
    # the optimiser sees the loss relative to the guess's: its first step, the gradient itself, is then about
    # the right length (in mm² it would jump to a bound, where the stiff plant barely moves)
    fit.unit = 1.0 / loss0
    h = 1e-5
    fd = (fit.loss(x0 + h) - fit.loss(x0 - h)) / (2 * h)
    print(f"gradient check at the guess: adjoint {grad[0]:.6e}, central difference {fd:.6e}, relative difference "
          f"{abs(grad[0] - fd) / abs(fd):.2e}")
    start = time.perf_counter()
    result = minimize(fit.loss_and_gradient, x0, jac=True, method="L-BFGS-B",
                      bounds=[(np.log(1e5), np.log(5e6))], options={"maxiter": iterations, "ftol": 1e-8, "gtol": 1e-6})
    elapsed = time.perf_counter() - start
    E = float(np.exp(result.x[0]))
    print(f"initial guess E = {GUESS_E:g} Pa: loss {fit.losses[0]:.3e} mm²")
    print(f"fitted E = {E:.6g} Pa (relative error {abs(E - TRUE_E) / TRUE_E:.2e}): loss {result.fun * loss0:.3e} mm²")
    print(f"{len(fit.losses)} evaluations (loss and gradient) in {elapsed:.1f} s; {result.message}")
    guess, fitted = fit.rollouts[float(x0[0])], fit.rollouts[float(result.x[0])]
    tips = {label: Q.reshape(len(Q), -1, 3)[:, tip, 0] for label, Q in
            (("recorded", recorded), ("initial guess", guess), ("fitted", fitted))}
    pngs = plot(Path(out), world, fit.losses, np.arange(steps + 1) * world.dt, tips, fitted)
    for p in pngs:
        print(f"wrote {p}")
    return {"youngs_modulus": E, "losses": fit.losses, "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
