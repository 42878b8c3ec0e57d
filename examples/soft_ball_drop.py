"""A soft ball dropped on the ground under Projective Dynamics, and the gradient of where it ends up with
respect to its Young's modulus.

A projective world (``rd.World(dt, solver="projective")``) simulates a voxelised sphere (trilinear hexahedra,
corotated and volume energies) falling onto a penalty ground plane. Each implicit Euler step is solved by
Newton's method, its conjugate gradients preconditioned by the prefactorised Projective Dynamics matrix.
The script then pulls the gradient of the ball's final height back through the whole rollout with step_vjp
(one adjoint per step, the same factors) and compares it with a central difference of two more rollouts.

Run ``python examples/soft_ball_drop.py [--fast] [--out DIR]``; it writes ``soft_ball_drop.png`` (the
height) and ``soft_ball_drop_frames.png`` (the ball's surface, drawn by ``rd.viz``).
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
YOUNGS_MODULUS = 5e4


def build(youngs_modulus: float = YOUNGS_MODULUS):
    world = rd.World(dt=5e-3, solver="projective", tolerance=1e-8, contact_stiffness=2e4)
    world.add_ground()
    mesh = rd.HexMesh.from_surface(trimesh.creation.icosphere(subdivisions=3, radius=0.05), dx=0.02)
    material = rd.ProjectiveMaterial(youngs_modulus, 0.3, 800.0, kind=("corotated", "volume"))
    world.add_deformable(mesh, material, name="ball", pose=rd.Transform((0.0, 0.0, 0.2)))
    return world


def rollout(world, steps: int):
    Q, V = world.rollout(world.q, world.v, np.zeros((steps, world.nv)))
    return Q, V


def height(world, q) -> float:
    """Mass-weighted mean height of the ball's vertices."""
    m = world.masses("ball")
    return float(m @ world.positions(q, "ball")[:, 2] / m.sum())


def height_gradient(world, Q, V) -> float:
    """d height(q_T) / d E, by step_vjp chained backwards through the rollout (rollout_backward)."""
    m = world.masses("ball")
    dL_dQ, dL_dV = np.zeros_like(Q), np.zeros_like(V)
    dL_dQ[-1, 2::3] = m / m.sum()
    grads = world.rollout_backward(Q, V, np.zeros((len(Q) - 1, world.nv)), dL_dQ, dL_dV)
    return grads.parameter("youngs_modulus:ball")


def plot(out: Path, world, Q, times, heights) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(times, heights)
    ax.set(xlabel="time (s)", ylabel="mean height of the ball (m)", title="a soft ball dropped on the ground")
    fig.tight_layout()
    path = out / "soft_ball_drop.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "soft_ball_drop_frames.png", n_frames=4)  # its surface
    return [path, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    steps = 60 if fast else 200
    world = build()
    start = time.perf_counter()
    Q, V = rollout(world, steps)
    per_step = (time.perf_counter() - start) / steps
    heights = np.array([height(world, q) for q in Q])
    lowest = min(world.positions(q, "ball")[:, 2].min() for q in Q)
    print(f"projective world: a ball of {len(world.mesh('ball').elements)} hexahedra, "
          f"{world.nq // 3} vertices, dt = {world.dt:g} s, {steps} steps")
    print(f"lowest vertex over the run: {lowest:.3e} m (the penalty lets it dip below the ground)")
    print(f"final mean height: {heights[-1]:.5f} m; {1e3 * per_step:.2f} ms per step")
    start = time.perf_counter()
    analytic = height_gradient(world, Q, V)
    backward = time.perf_counter() - start
    h = 1e-4 * YOUNGS_MODULUS
    up, down = build(YOUNGS_MODULUS + h), build(YOUNGS_MODULUS - h)
    fd = (height(up, rollout(up, steps)[0][-1]) - height(down, rollout(down, steps)[0][-1])) / (2 * h)
    rel = abs(analytic - fd) / abs(fd)
    print(f"d(final height)/dE: adjoint {analytic:.6e}, central difference {fd:.6e} m/Pa "
          f"(relative difference {rel:.2e}); backward {backward:.2f} s")
    pngs = plot(Path(out), world, Q, np.arange(len(Q)) * world.dt, heights)
    for p in pngs:
        print(f"wrote {p}")
    return {"heights": heights, "gradient": analytic, "fd": fd, "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
