"""A soft cow that walks by its leg and back muscles, its gait improved by gradient descent through the
simulation.

DiffPD's cow (Du et al. 2021, Sec. 7.3) in a projective world. The geometry is a procedural stand-in for Keenan
Crane's Spot, which comes neither with rigidiff nor with its dependencies: an ellipsoid body, a head on the
front, four round legs (trimesh), 30 cm long, voxelised into trilinear hexahedra with cubes of a sixteenth of
its length (about the paper's 475 hexahedra), density 700 kg/m^3, E = 1e6 Pa, nu = 0.49, standing
on a ground with friction. Each leg has two muscles, its front and its back half, with fibres along the leg;
they work against each other to swing it:

    front a = 1 - A_l (1 + sin(theta)) / 2,   back a = 1 - A_l (1 - sin(theta)) / 2,
    theta = omega t + phi_leg,   omega = s x 10 rad/s,

in a walk (the left and right legs of a pair in opposition, the hind pair a phase phi behind the front one),
and the back's upper and lower halves, with fibres along the body, flex it in time with the front legs by an
amplitude A_b. The four parameters (A_l, A_b, s, phi) maximise, as in the paper, the distance the centre of mass
travels along x plus 0.3 times its rise (so that the cow stays up) over the run, by rd.OpenLoopControl: its
gradient chains rollout_backward's gradient with respect to every step's activations through the gait, drives
scipy's L-BFGS-B within bounds, and is checked once against a central difference.

Run ``python examples/soft_cow_walk.py [--fast] [--out DIR]``; it writes ``soft_cow_walk.png`` (the objective per
evaluation and the centre of mass's x over time, first guess and optimised) and ``soft_cow_walk_frames.png``
(the cow, drawn by ``rd.viz``).
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
LENGTH = 0.3  # m, nose to tail
GUESS = np.array([0.25, 0.1, 1.5, np.pi])  # A_l, A_b, s, phi: a trot (the diagonal legs together)
BOUNDS = [(0.0, 0.4), (0.0, 0.3), (0.5, 4.0), (0.0, 2.0 * np.pi)]
LEGS = ("front_left", "front_right", "hind_left", "hind_right")
LEG_X, LEG_Y, LEG_RADIUS, LEG_TOP = 0.075, 0.04, 0.025, 0.13  # where the legs stand and how far up they reach


def cow_surface() -> trimesh.Trimesh:
    """A cow facing +x, standing on the plane z = 0: an ellipsoid body, a head and four legs (cylinders), as
    overlapping closed surfaces whose union is its inside."""

    def ellipsoid(centre, radii):
        part = trimesh.creation.icosphere(subdivisions=3, radius=1.0)
        part.apply_scale(radii)
        part.apply_translation(centre)
        return part

    parts = [ellipsoid((0.0, 0.0, 0.15), (0.12, 0.065, 0.06)),  # body
             ellipsoid((0.13, 0.0, 0.19), (0.05, 0.035, 0.035))]  # head, forward and up
    for x in (LEG_X, -LEG_X):
        for y in (LEG_Y, -LEG_Y):
            leg = trimesh.creation.cylinder(radius=LEG_RADIUS, height=LEG_TOP, sections=24)
            leg.apply_translation((x, y, LEG_TOP / 2))
            parts.append(leg)
    return trimesh.util.concatenate(parts)


def build(fast: bool = False):
    """The cow (cubes of LENGTH / 16 and steps of 1 ms as in the paper, or LENGTH / 12 and 10 ms in the fast mode),
    E = 1e6 Pa, nu = 0.49, density 700 kg/m^3, on a ground with friction 0.8, with its eight leg muscles and two back
    muscles; returns the world."""
    world = rd.World(dt=1e-2 if fast else 1e-3, solver="projective", tolerance=1e-9, friction=0.8)
    world.add_ground()
    mesh = rd.HexMesh.from_surface(cow_surface(), dx=LENGTH / (12 if fast else 16))
    world.add_deformable(mesh, rd.ProjectiveMaterial(1e6, 0.49, 700.0, kind=("corotated", "volume")), name="cow",
                         pose=rd.Transform((0.0, 0.0, 1e-3 - mesh.vertices[:, 2].min())))
    centres = mesh.vertices[mesh.elements].mean(axis=1)
    legs = centres[:, 2] < LEG_TOP - 0.04  # below the belly
    for name in LEGS:
        # a leg's cubes: those below the belly on its side of the body, cut into a front and a back half
        inside = (legs & ((centres[:, 0] > 0.0) == name.startswith("front"))
                  & ((centres[:, 1] > 0.0) == name.endswith("left")))
        middle = centres[inside, 0].mean()
        front, back = centres[:, 0] > middle + 1e-9, centres[:, 0] < middle - 1e-9
        world.add_muscle("cow", np.flatnonzero(inside & front), (0.0, 0.0, 1.0), 5e5, name=f"{name}/front")
        world.add_muscle("cow", np.flatnonzero(inside & back), (0.0, 0.0, 1.0), 5e5, name=f"{name}/back")
    torso = ~legs & (np.abs(centres[:, 0]) < 0.1)
    middle = np.median(centres[torso, 2])
    world.add_muscle("cow", np.flatnonzero(torso & (centres[:, 2] > middle)), (1.0, 0.0, 0.0), 5e5, name="back/upper")
    world.add_muscle("cow", np.flatnonzero(torso & (centres[:, 2] <= middle)), (1.0, 0.0, 0.0), 5e5, name="back/lower")
    return world


def gait(x, times):
    """The activations (T, 10) of the parameters x = (A_l, A_b, s, phi) at the given times (the legs' front and
    back halves leg by leg, then the back's upper and lower halves) and their derivatives (4, T, 10)."""
    a_legs, a_back, speed, phi = x
    acts, d = np.empty((len(times), 10)), np.zeros((4, len(times), 10))
    phases = {"front_left": 0.0, "front_right": np.pi, "hind_left": phi, "hind_right": phi + np.pi}
    for i, name in enumerate(LEGS):
        theta = OMEGA * speed * times + phases[name]
        s, c = np.sin(theta), np.cos(theta)
        for j, sign in ((2 * i, 1.0), (2 * i + 1, -1.0)):
            acts[:, j] = 1.0 - a_legs * (1.0 + sign * s) / 2.0
            d[0, :, j] = -(1.0 + sign * s) / 2.0
            d[2, :, j] = -a_legs * sign * c * OMEGA * times / 2.0
            if name.startswith("hind"):
                d[3, :, j] = -a_legs * sign * c / 2.0
    theta = OMEGA * speed * times
    s, c = np.sin(theta), np.cos(theta)
    for j, sign in ((8, 1.0), (9, -1.0)):
        acts[:, j] = 1.0 - a_back * (1.0 + sign * s) / 2.0
        d[1, :, j] = -(1.0 + sign * s) / 2.0
        d[2, :, j] = -a_back * sign * c * OMEGA * times / 2.0
    return acts, d


def plot(out: Path, world, scores, paths: dict, Q) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.plot(np.arange(1, len(scores) + 1), np.array(scores) * 100, marker="o")
    a.set(xlabel="evaluation", ylabel="distance + 0.3 rise (cm)", title="L-BFGS-B on the gait (A_l, A_b, s, phi)")
    for label, path in paths.items():
        b.plot(np.arange(len(path)) * world.dt, path[:, 0] * 100, label=label)
    b.set(xlabel="time (s)", ylabel="centre of mass x (cm)", title="the walk")
    b.legend()
    fig.tight_layout()
    file = out / "soft_cow_walk.png"
    fig.savefig(file, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "soft_cow_walk_frames.png", n_frames=4)
    return [file, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    steps, iterations = (28, 1) if fast else (600, 8)
    world = build(fast)
    control = rd.OpenLoopControl(world, "cow", gait, steps, height_weight=0.3)
    print(f"projective world: a cow of {len(world.mesh('cow').elements)} hexahedra ({world.nq} dofs) with "
          f"{len(world.muscle_names)} muscles, {steps} steps of {world.dt:g} s, ground friction {world.friction:g}")
    start = time.perf_counter()
    result = control.maximise(GUESS, BOUNDS, iterations)
    elapsed = time.perf_counter() - start
    best, Q0, Q = result["x"], result["Q_start"], result["Q"]
    print(f"objective (distance along x + 0.3 rise) over {steps * world.dt:g} s: first guess "
          f"{result['travel_start'] * 100:.2f} cm, optimised {result['travel'] * 100:.2f} cm after "
          f"{len(result['travels'])} evaluations ({elapsed:.1f} s)")
    print(f"gait: A_l = {best[0]:.3f}, A_b = {best[1]:.3f}, omega = {OMEGA * best[2]:.2f} rad/s, "
          f"hind phase {best[3]:.2f} rad")
    # the adjoint's gradient at the first guess against a central difference of two rollouts, along a direction
    # (a small step: the walk's contacts make the objective curve sharply)
    slope, fd = control.check_gradient(GUESS, np.array([1.0, -0.5, 0.3, 0.2]), h=1e-6,
                                       gradient=result["gradient_start"])
    print(f"gradient check along a direction: adjoint {slope:.6e}, central difference {fd:.6e}, "
          f"relative difference {abs(slope - fd) / abs(fd):.2e}")
    paths = {label: np.array([control.centre(q) for q in R]) for label, R in (("first guess", Q0), ("optimised", Q))}
    for label, path in paths.items():
        print(f"{label}: the centre of mass moves {(path[-1, 0] - path[0, 0]) * 100:.2f} cm along x and "
              f"{(path[-1, 2] - path[0, 2]) * 100:+.2f} cm in height")
    low = min(world.positions(q, "cow")[:, 2].min() for q in Q)
    sag = max(control.start[2] - path[2] for path in paths["optimised"])
    print(f"lowest vertex over the optimised run: {low * 1e3:.2f} mm; centre of mass at most {sag * 1e3:.1f} mm "
          f"below its start")
    files = plot(Path(out), world, result["travels"], paths, Q)
    for f in files:
        print(f"wrote {f}")
    return {"x": best, "travel": result["travel"], "travel_start": result["travel_start"], "slope": slope, "fd": fd,
            "paths": paths, "lowest": low, "files": files}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
