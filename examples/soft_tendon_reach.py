"""A soft column that bends its tip to a target by contracting its muscles, the activations found by
gradient descent through the simulation.

DiffPD's routing tendon (Du et al. 2021, Sec. 7.2) in a projective world: a hexahedral column fixed at its
base, with four muscles running up its four quarters (fibres along z). Each muscle's activation is its
fibres' target stretch (1 at rest, below 1 it contracts). The loss is the squared distance of the column's
tip (the mean of its top face) to a target after the rollout; its gradient with respect to the four
activations comes from rollout_backward (one adjoint per step), is checked once against a central
difference, and drives scipy's L-BFGS-B within the bounds [0.5, 1.5].

Run ``python examples/soft_tendon_reach.py [--fast] [--out DIR]``; it writes ``soft_tendon_reach.png`` (the
loss per iteration and the tip's path) and ``soft_tendon_reach_frames.png`` (the column, drawn by ``rd.viz``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"


def build(fast: bool = False):
    """The column (0.1 x 0.1 x 0.4 m, E = 5e5 Pa, nu = 0.45; 4 x 4 x 16 cubes, 2 x 2 x 8 in the fast mode) and
    its four muscles; returns the world and the indices of its top vertices."""
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-7)
    cells = (2, 2, 8) if fast else (4, 4, 16)
    mesh = rd.HexMesh.box((0.1, 0.1, 0.4), cells, origin=(-0.05, -0.05, 0.0))
    world.add_deformable(mesh, rd.ProjectiveMaterial(5e5, 0.45, 1000.0, kind=("corotated", "volume")),
                         name="column", fixed=np.flatnonzero(mesh.vertices[:, 2] == 0.0))
    centres = mesh.vertices[mesh.elements].mean(axis=1)
    for sx in (-1, 1):
        for sy in (-1, 1):
            quarter = np.flatnonzero((np.sign(centres[:, 0]) == sx) & (np.sign(centres[:, 1]) == sy))
            world.add_muscle("column", quarter, (0.0, 0.0, 1.0), 2e5, name=f"muscle{'-+'[sx > 0]}x{'-+'[sy > 0]}y")
    top = np.flatnonzero(np.isclose(mesh.vertices[:, 2], 0.4))
    return world, top


class Reach:
    """The loss of constant activations over a rollout and its gradient, by the adjoint."""

    def __init__(self, world, top, steps: int, target):
        self.world, self.top, self.steps, self.target = world, top, steps, np.asarray(target)
        self.forces = np.zeros((steps, world.nv))

    def tip(self, q) -> np.ndarray:
        return self.world.positions(q, "column")[self.top].mean(axis=0)

    def rollout(self, activation):
        return self.world.rollout(self.world.q, self.world.v, self.forces, np.tile(activation, (self.steps, 1)))

    def loss(self, activation) -> float:
        Q, _ = self.rollout(activation)
        return float(np.sum((self.tip(Q[-1]) - self.target) ** 2))

    def loss_and_gradient(self, activation):
        acts = np.tile(activation, (self.steps, 1))
        Q, V = self.world.rollout(self.world.q, self.world.v, self.forces, acts)
        d = self.tip(Q[-1]) - self.target
        dL_dQ, dL_dV = np.zeros_like(Q), np.zeros_like(V)
        per_vertex = dL_dQ[-1].reshape(-1, 3)  # the column is the only body: q is its vertices
        per_vertex[self.top] = 2.0 * d / len(self.top)
        g = self.world.rollout_backward(Q, V, self.forces, dL_dQ, dL_dV, acts)
        return float(d @ d), g.activation.sum(axis=0), Q


def plot(out: Path, world, losses, path, Q) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.semilogy(losses, marker="o")
    a.set(xlabel="loss evaluation", ylabel="squared distance to the target (m²)", title="L-BFGS-B on activations")
    b.plot(path[:, 0], path[:, 2], label="tip, optimised")
    b.plot(*path[-1, [0, 2]], "o")
    b.set(xlabel="x (m)", ylabel="z (m)", title="the tip's path over the last rollout")
    fig.tight_layout()
    file = out / "soft_tendon_reach.png"
    fig.savefig(file, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "soft_tendon_reach_frames.png", n_frames=4)
    return [file, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    steps, iterations = (25, 5) if fast else (50, 25)
    world, top = build(fast)
    reach = Reach(world, top, steps, target=None)
    rest_tip = reach.tip(world.q)
    reach.target = rest_tip + np.array([0.06, 0.03, -0.02])
    print(f"projective world: a column of {len(world.mesh('column').elements)} hexahedra with "
          f"{len(world.muscle_names)} muscles, {steps} steps of {world.dt:g} s; tip at rest "
          f"{np.round(rest_tip, 4)}, target {np.round(reach.target, 4)}")
    a0 = np.ones(len(world.muscle_names))
    # the adjoint's gradient against a central difference, once, at a generic point: along each muscle, or along
    # one direction that moves them all in the fast mode
    probe = np.array([0.9, 1.05, 0.95, 1.1])
    _, grad, _ = reach.loss_and_gradient(probe)
    h = 1e-5
    directions = np.array([[1.0, -0.5, 0.3, 0.8]]) if fast else np.eye(len(probe))
    fd = np.array([(reach.loss(probe + h * d) - reach.loss(probe - h * d)) / (2 * h) for d in directions])
    rel = np.abs(directions @ grad - fd).max() / np.abs(fd).max()
    print(f"gradient check along {len(directions)} direction{'s' if len(directions) > 1 else ''}: adjoint vs central "
          f"difference, relative difference {rel:.2e}")
    losses = []

    def fun(a):
        value, gradient, _ = reach.loss_and_gradient(a)
        losses.append(value)
        return value, gradient

    start = time.perf_counter()
    result = minimize(fun, a0, jac=True, method="L-BFGS-B", bounds=[(0.5, 1.5)] * len(a0),
                      options={"maxiter": iterations})
    elapsed = time.perf_counter() - start
    Q, _ = reach.rollout(result.x)
    tip = reach.tip(Q[-1])
    print(f"initial distance {np.sqrt(losses[0]) * 1e3:.2f} mm, final distance "
          f"{np.linalg.norm(tip - reach.target) * 1e3:.2f} mm after {len(losses)} evaluations ({elapsed:.1f} s)")
    print("activations: " + ", ".join(f"{n} {a:.3f}" for n, a in zip(world.muscle_names, result.x)))
    path = np.array([reach.tip(q) for q in Q])
    pngs = plot(Path(out), world, losses, path, Q)
    for p in pngs:
        print(f"wrote {p}")
    return {"losses": losses, "activations": result.x, "tip": tip, "target": reach.target, "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
