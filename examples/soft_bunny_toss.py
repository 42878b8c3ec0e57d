"""A soft bunny tossed onto the ground so that it bounces to a target: its initial pose and velocity found by
gradient descent through the bounce.

DiffPD's bunny (Du et al. 2021, Sec. 7.2) in a projective world. The geometry is a procedural stand-in for the
Stanford bunny, which comes neither with rigidiff nor with its dependencies: a body, haunches, a head, two ears
and a tail (ellipsoids and spheres, trimesh), about 10 cm long, voxelised into trilinear hexahedra (E = 1e6 Pa,
nu = 0.49). It is thrown down at the ground, held by DiffPD's complementarity contact with friction, and bounces.
As in the paper, the nine unknowns are its initial orientation (three angles, within +-pi/3), the position of
its centre of mass (x, y within +-1 cm, z within 19-21 cm) and its velocity (x, y within +-1.5 m/s, z within
-5..-3 m/s, so that it always bounces), and the loss is half the squared distance from its centre of mass at
the end of 0.1 s to a target at (15, 15, 15) cm, over the bunny's size squared.

The gradient of the loss with respect to the nine unknowns chains rollout_backward's gradient with respect to
the initial state (every vertex's position and velocity) through the rigid placement of the rest shape; it is
checked once against a central difference, and scipy's L-BFGS-B uses it within the bounds.

Run ``python examples/soft_bunny_toss.py [--fast] [--out DIR]``; it writes ``soft_bunny_toss.png`` (the loss per
evaluation and the centre of mass's path, first guess and optimised) and ``soft_bunny_toss_frames.png`` (the
bunny, drawn by ``rd.viz``).
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
from scipy.spatial.transform import Rotation

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
SIZE = 0.1  # m: the bunny's length, the loss's unit
TARGET = np.array([0.15, 0.15, 0.15])
# the unknowns: three rotation angles (xyz, rad), the centre of mass's position (m) and velocity (m/s)
GUESS = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.2, 0.0, 0.0, -4.0])
BOUNDS = [(-np.pi / 3, np.pi / 3)] * 3 + [(-0.01, 0.01)] * 2 + [(0.19, 0.21)] + [(-1.5, 1.5)] * 2 + [(-5.0, -3.0)]


def bunny_surface() -> trimesh.Trimesh:
    """A bunny of ellipsoids and spheres facing +x, about 10 x 5 x 10 cm: overlapping closed surfaces, whose
    union is its inside."""

    def ellipsoid(centre, radii, tilt=0.0):
        part = trimesh.creation.icosphere(subdivisions=3, radius=1.0)
        part.apply_scale(radii)
        part.apply_transform(trimesh.transformations.rotation_matrix(tilt, (0.0, 1.0, 0.0)))
        part.apply_translation(centre)
        return part

    parts = [
        ellipsoid((0.0, 0.0, 0.028), (0.038, 0.024, 0.026), tilt=0.3),  # body, leaning forward
        ellipsoid((-0.018, 0.0, 0.024), (0.026, 0.026, 0.024)),  # haunches
        ellipsoid((0.033, 0.0, 0.05), (0.018, 0.015, 0.016)),  # head
        ellipsoid((0.027, 0.008, 0.078), (0.006, 0.005, 0.02), tilt=-0.35),  # ears, swept back
        ellipsoid((0.027, -0.008, 0.078), (0.006, 0.005, 0.02), tilt=-0.35),
        ellipsoid((-0.045, 0.0, 0.03), (0.008, 0.008, 0.008)),  # tail
    ]
    return trimesh.util.concatenate(parts)


def build(fast: bool = False):
    """The world: a ground with friction 0.5 under DiffPD's complementarity contact, and the bunny at rest in its
    rest shape (cubes of 1 cm in the fast mode, 4.5 mm otherwise: about the paper's 1601 hexahedra), E = 1e6 Pa, nu = 0.49, density 1000 kg/m^3."""
    world = rd.World(dt=1e-3, solver="projective", tolerance=1e-8, friction=0.5, contact_model="complementarity")
    world.add_ground()
    mesh = rd.HexMesh.from_surface(bunny_surface(), dx=0.01 if fast else 0.0045)
    world.add_deformable(mesh, rd.ProjectiveMaterial(1e6, 0.49, 1000.0, kind=("corotated", "volume")), name="bunny",
                         pose=rd.Transform((0.0, 0.0, 0.3)))
    return world


class Toss:
    """The loss of a toss x (9,) = (angles, centre of mass, velocity) and its gradient through the rollout."""

    def __init__(self, world, steps: int):
        self.world, self.steps = world, steps
        self.mass = world.masses("bunny")
        rest = world.positions(world.q, "bunny")
        self.rest = rest - self.mass @ rest / self.mass.sum()  # about the centre of mass
        self.forces = np.zeros((steps, world.nv))
        self.losses: list[float] = []

    def initial_state(self, x) -> tuple:
        """q0, v0 of the toss x: the rest shape turned by the angles about its centre of mass, moved there."""
        rotation = Rotation.from_euler("xyz", x[:3]).as_matrix()
        q0 = (self.rest @ rotation.T + x[3:6]).ravel()
        v0 = np.tile(x[6:9], len(self.rest))
        return q0, v0

    def centre(self, q) -> np.ndarray:
        return self.mass @ self.world.positions(q, "bunny") / self.mass.sum()

    def rollout(self, x) -> tuple:
        return self.world.rollout(*self.initial_state(x), self.forces)

    def loss(self, x) -> float:
        Q, _ = self.rollout(x)
        return float(0.5 * np.sum((self.centre(Q[-1]) - TARGET) ** 2) / SIZE**2)

    def loss_and_gradient(self, x) -> tuple:
        x = np.asarray(x, dtype=np.float64)
        Q, V = self.rollout(x)
        error = self.centre(Q[-1]) - TARGET
        loss = float(0.5 * error @ error / SIZE**2)
        dL_dQ, dL_dV = np.zeros_like(V), np.zeros_like(V)
        dL_dQ[-1] = np.outer(self.mass / self.mass.sum(), error / SIZE**2).ravel()
        g = self.world.rollout_backward(Q, V, self.forces, dL_dQ, dL_dV)
        gq, gv = g.q.reshape(-1, 3), g.v.reshape(-1, 3)
        gradient = np.empty(9)
        # each angle moves vertex i by dR/da (rest_i): by a central difference of the rotation itself (exact to
        # round-off at this step, and independent of the Euler convention's formulas)
        for k in range(3):
            h = np.zeros(3)
            h[k] = 1e-6
            dR = (Rotation.from_euler("xyz", x[:3] + h).as_matrix()
                  - Rotation.from_euler("xyz", x[:3] - h).as_matrix()) / 2e-6
            gradient[k] = np.sum(gq * (self.rest @ dR.T))
        gradient[3:6] = gq.sum(axis=0)
        gradient[6:9] = gv.sum(axis=0)
        self.losses.append(loss)
        return loss, gradient, Q


def plot(out: Path, world, toss, paths: dict, Q) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.semilogy(np.arange(1, len(toss.losses) + 1), toss.losses, marker="o")
    a.set(xlabel="evaluation", ylabel="loss", title="L-BFGS-B on the toss (9 unknowns)")
    for label, path in paths.items():
        b.plot(path[:, 0] * 100, path[:, 2] * 100, label=label)
    b.scatter([TARGET[0] * 100], [TARGET[2] * 100], marker="x", color="k", label="target")
    b.set(xlabel="centre of mass x (cm)", ylabel="centre of mass z (cm)", title="the bounce")
    b.legend()
    fig.tight_layout()
    file = out / "soft_bunny_toss.png"
    fig.savefig(file, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "soft_bunny_toss_frames.png", n_frames=4)
    return [file, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    steps, iterations = (60, 2) if fast else (100, 15)
    world = build(fast)
    toss = Toss(world, steps)
    print(f"projective world: a bunny of {len(world.mesh('bunny').elements)} hexahedra "
          f"({world.nq} dofs), {steps} steps of {world.dt:g} s, {world.contact_model} contact with the ground, "
          f"friction {world.friction:g}")
    loss0, gradient0, Q0 = toss.loss_and_gradient(GUESS)
    # the adjoint's gradient against a central difference of two rollouts, along a direction in the 9 unknowns
    direction = np.array([0.3, -0.2, 0.1, 0.002, -0.001, 0.003, 0.2, 0.1, -0.3])
    h = 1e-4
    fd = (toss.loss(GUESS + h * direction) - toss.loss(GUESS - h * direction)) / (2 * h)
    slope = float(gradient0 @ direction)
    print(f"gradient check along a direction: adjoint {slope:.6e}, central difference {fd:.6e}, "
          f"relative difference {abs(slope - fd) / abs(fd):.2e}")
    toss.losses.clear()
    start = time.perf_counter()
    evaluated = []

    def objective(x):
        loss, gradient, Q = toss.loss_and_gradient(x)
        evaluated.append((loss, x.copy(), Q))
        return loss, gradient

    minimize(objective, GUESS, jac=True, method="L-BFGS-B", bounds=BOUNDS, options={"maxiter": iterations})
    elapsed = time.perf_counter() - start
    loss, best, Q = min(evaluated, key=lambda e: e[0])
    print(f"loss: first guess {loss0:.4f}, optimised {loss:.4f} after {len(evaluated)} evaluations ({elapsed:.1f} s)")
    print(f"toss: angles {np.round(best[:3], 3)} rad, centre of mass {np.round(best[3:6] * 100, 2)} cm, "
          f"velocity {np.round(best[6:], 3)} m/s")
    end = toss.centre(Q[-1])
    print(f"centre of mass at the end: {np.round(end * 100, 2)} cm (target {np.round(TARGET * 100, 2)} cm, "
          f"{np.linalg.norm(end - TARGET) * 100:.2f} cm away; the first guess ended "
          f"{np.linalg.norm(toss.centre(Q0[-1]) - TARGET) * 100:.2f} cm away)")
    low = min(world.positions(q, "bunny")[:, 2].min() for q in Q)
    heights = [toss.centre(q)[2] for q in Q]
    print(f"lowest vertex over the optimised run: {low * 1e3:.2f} mm; centre of mass lowest at "
          f"{min(heights) * 100:.2f} cm, {heights[-1] * 100:.2f} cm at the end")
    paths = {label: np.array([toss.centre(q) for q in R]) for label, R in (("first guess", Q0), ("optimised", Q))}
    files = plot(Path(out), world, toss, paths, Q)
    for f in files:
        print(f"wrote {f}")
    return {"loss_start": loss0, "loss": loss, "losses": list(toss.losses), "x": best, "slope": slope, "fd": fd,
            "lowest": low, "heights": heights, "end": end, "files": files}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
