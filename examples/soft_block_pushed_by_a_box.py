"""A rigid box on a rail pushes a soft block across the ground, and the push that moves the block a target
distance is found by Newton steps on the gradient through the rollout.

A projective world (``rd.World(dt, solver="projective")``) holds a soft block (trilinear hexahedra, corotated and
volume energies) standing on a ground with Coulomb friction, and a skeleton: a rigid box on a prismatic joint
along x, its front face a millimetre behind the block. A constant force on the joint (the skeleton's slice of
``f``) drives the box into the block; box and block push each other two-way through the links' penalty contact,
and the ground rubs on the block's bottom vertices with IPC's lagged smoothed friction.

The script checks the physics against Coulomb's law (a push below mu m g leaves the block in place; above it,
box and block accelerate together at (F - mu m g) / (M + m)), checks the gradient of the block's final position
with respect to the push, from ``rollout_backward``, against a central difference, then finds the push that moves
the block to a target.

Run ``python examples/soft_block_pushed_by_a_box.py [--fast] [--out DIR]``; it writes
``soft_block_pushed_by_a_box.png`` (the paths of the box and the block) and
``soft_block_pushed_by_a_box_frames.png`` (the scene, drawn by ``rd.viz``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
G = 9.81
MU = 0.4  # ground friction
BLOCK = (0.1, 0.1, 0.05)  # the soft block's size (m), its back face at x = 0
DENSITY = 1000.0
PUSHER = rd.Box((0.04, 0.08, 0.04))
PUSHER_MASS = 1.0
GAP = 1e-3  # between the box's front face and the block at the start


def rail() -> rd.Skeleton:
    """The box on a prismatic joint along x (no damping: the push alone drives it), above the ground."""
    sk = rd.Skeleton("pusher")
    x = -GAP - 0.5 * PUSHER.size[0]
    body = sk.add_body("box", rd.PrismaticJoint("rail", axis=(1, 0, 0)),
                       joint_origin=rd.Transform((x, 0.5 * BLOCK[1], 0.5 * BLOCK[2])),
                       inertia=rd.Inertia.from_shape(PUSHER, mass=PUSHER_MASS))
    body.add_shape(PUSHER)
    return sk


def build(fast: bool):
    """The world (dt 5 ms, the ground's friction MU, contact stiffness 2e4 N/m) with the block at rest on the
    ground after a settling phase: returns the world and the settled state (q, v)."""
    world = rd.World(dt=5e-3, solver="projective", friction=MU, contact_stiffness=2e4, tolerance=1e-10)
    world.add_ground()
    cells = (4, 4, 2) if fast else (8, 8, 4)
    material = rd.ProjectiveMaterial(5e4, 0.3, DENSITY, kind=("corotated", "volume"))
    world.add_deformable(rd.HexMesh.box(BLOCK, cells), material, name="block")
    world.add_skeleton(rail())
    q, v = world.q, world.v
    for _ in range(20):  # the block sinks to the penalty's depth under its weight
        q, v = world.step(q, v)
    return world, q, v


def block_x(world, q) -> float:
    """The x of the block's centre of mass."""
    m = world.masses("block")
    return float(m @ world.positions(q, "block")[:, 0] / m.sum())


def block_speed(world, v) -> float:
    """The x velocity of the block's centre of mass."""
    m = world.masses("block")
    return float(m @ v[world.layout("block").v].reshape(-1, 3)[:, 0] / m.sum())


def pushes(world, steps: int, force: float) -> np.ndarray:
    """The joint forces (steps, nv): `force` newtons on the rail at every step."""
    F = np.zeros((steps, world.nv))
    F[:, world.layout("pusher").v] = force
    return F


def final_x_gradient(world, Q, V, F) -> float:
    """d block_x(q_T) / d force, the push's gradient through the whole rollout (rollout_backward)."""
    m = world.masses("block")
    dQ, dV = np.zeros_like(Q), np.zeros_like(V)
    dQ[-1, world.layout("block").q] = np.repeat(m / m.sum(), 3) * np.tile([1.0, 0.0, 0.0], len(m))
    return float(world.rollout_backward(Q, V, F, dQ, dV).tau[:, world.layout("pusher").v].sum())


def plot(out: Path, world, Q, paths: dict) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, x in paths.items():
        ax.plot(np.arange(len(x)) * world.dt, 100 * x, label=label)
    ax.set(xlabel="time (s)", ylabel="x (cm)",
           title="a rigid box pushes a soft block across the ground (push: 3 mu m g)")
    ax.legend()
    fig.tight_layout()
    path = out / "soft_block_pushed_by_a_box.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "soft_block_pushed_by_a_box_frames.png", n_frames=4)
    return [path, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    steps = 60 if fast else 160
    world, q0, v0 = build(fast)
    rail_q = world.layout("pusher").q
    m = world.masses("block").sum()
    coulomb = MU * m * G
    print(f"projective world: a soft block of {len(world.mesh('block').elements)} hexahedra ({m:.3f} kg) on a ground "
          f"with friction {MU:g}, a {PUSHER_MASS:g} kg rigid box on a rail, {steps} steps of {world.dt:g} s; "
          f"mu m g = {coulomb:.3f} N")
    x0 = block_x(world, q0)
    # below mu m g the ground holds the block (it creeps only within the friction's smoothing); above, box and
    # block slide together with the acceleration Coulomb's law gives
    weak = 0.5 * coulomb
    Q, V = world.rollout(q0, v0, pushes(world, steps, weak))
    print(f"push {weak:.3f} N (half of mu m g): the block moves {1e3 * (block_x(world, Q[-1]) - x0):.3f} mm "
          f"(its box closing in and the block's give) and ends at {1e3 * block_speed(world, V[-1]):.3f} mm/s")
    strong = 3.0 * coulomb
    start = time.perf_counter()
    Q, V = world.rollout(q0, v0, pushes(world, steps, strong))
    per_step = (time.perf_counter() - start) / steps
    x = np.array([block_x(world, q) for q in Q])
    box = Q[:, rail_q.start]  # the rail's coordinate: the box's displacement
    print(f"push {strong:.3f} N (three times mu m g): the block moves {1e2 * (x[-1] - x0):.2f} cm "
          f"({1e3 * per_step:.1f} ms per step)")
    # the acceleration over the second half of the push (once the contact has built up): a parabola fitted to the
    # block's centre of mass, against (F - mu m g) / (M + m)
    half = steps // 2
    t = np.arange(steps + 1) * world.dt
    measured = 2.0 * np.polyfit(t[half:], x[half:], 2)[0]
    predicted = (strong - coulomb) / (PUSHER_MASS + m)
    print(f"acceleration of the block: {measured:.4f} m/s^2, Coulomb's law (F - mu m g) / (M + m) = "
          f"{predicted:.4f} m/s^2 (relative difference {abs(measured - predicted) / predicted:.2e})")
    paths = {"block (centre of mass)": x - x0, "box": box - box[0]}
    # the push that moves the block a target distance: Newton's method on the final x through the gradient
    target = x0 + 0.5 * (x[-1] - x0)
    force = strong
    for it in range(3 if fast else 5):
        F = pushes(world, steps, force)
        Q, V = world.rollout(q0, v0, F)
        slope = final_x_gradient(world, Q, V, F)
        err = block_x(world, Q[-1]) - target
        print(f"iteration {it}: push {force:.4f} N, the block moves {1e2 * (block_x(world, Q[-1]) - x0):.4f} cm "
              f"(target {1e2 * (target - x0):.4f} cm), d x / d push {slope:.4e} m/N")
        if abs(err) < 1e-7:
            break
        force = float(np.clip(force - err / slope, coulomb, 2.0 * force))
    F = pushes(world, steps, force)
    Q, V = world.rollout(q0, v0, F)
    adjoint = final_x_gradient(world, Q, V, F)
    h = 1e-4
    up, down = (block_x(world, world.rollout(q0, v0, pushes(world, steps, force + d))[0][-1]) for d in (h, -h))
    fd = (up - down) / (2 * h)
    print(f"push {force:.4f} N: the block ends {1e2 * (block_x(world, Q[-1]) - x0):.4f} cm along, target "
          f"{1e2 * (target - x0):.4f} cm")
    print(f"d(final x)/d(push): adjoint {adjoint:.6e}, central difference {fd:.6e} m/N "
          f"(relative difference {abs(adjoint - fd) / abs(fd):.2e})")
    pngs = plot(Path(out), world, Q, paths)
    for p in pngs:
        print(f"wrote {p}")
    return {"force": force, "measured": measured, "predicted": predicted, "gradient": adjoint, "fd": fd,
            "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
