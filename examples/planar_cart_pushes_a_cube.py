"""A cart on a planar joint swings a rod into an affine cube and pushes it; gradients of where the cube ends up with
respect to the robot's own masses, damping and armature, through the barrier world's recorded rollout.

The cart (2 kg) slides and turns on a planar joint 20 cm above the ground (x, y and a turn about the vertical: a
mobile base), and carries an 18 cm rod on a hinge at its front, sprung about hanging straight down. A force drives
the cart towards a 10 cm affine cube (0.2 kg, friction 0.3 with the ground and the rod) while the rod swings
forward; the rod's end strikes the cube's side and pushes it along. Every step is intersection-free (the barrier
world's CCD follows the planar joint's turn and the hinge).

The recorded rollout's ``backward`` gives the gradient of the cube's final x with respect to every parameter of the
world in one reverse pass: the cart's and the rod's masses, the joints' damping and armature, the cube's density,
friction, gravity. The report checks one of them, the cart's mass, against central differences of whole
rollouts. Run ``python examples/planar_cart_pushes_a_cube.py [--fast] [--out DIR]``; it writes
``planar_cart_pushes_a_cube.png`` (the cube's and the cart's x over time) and
``planar_cart_pushes_a_cube_frames.png`` (the scene, drawn by ``rd.viz``).
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
DHAT = 1e-3
CUBE = 0.1
PUSH = 3.0  # N on the cart along x


def build():
    cart = rd.Skeleton("cart")
    box = rd.Box((0.2, 0.1, 0.06))
    body = cart.add_body("cart", rd.PlanarJoint("base", damping=0.1), joint_origin=rd.Transform((0.0, 0.0, 0.2)),
                         inertia=rd.Inertia.from_shape(box, mass=2.0, origin=rd.Transform((0.02, 0.0, 0.0))))
    body.add_shape(box)
    rod = rd.Box((0.04, 0.04, 0.18))
    link = cart.add_body("rod", rd.RevoluteJoint("hinge", axis=(0, 1, 0), damping=0.05, stiffness=2.0), parent=body,
                         joint_origin=rd.Transform((0.12, 0.0, 0.0)),
                         inertia=rd.Inertia.from_shape(rod, mass=0.4, origin=rd.Transform((0.0, 0.0, -0.09))))
    link.add_shape(rod, origin=rd.Transform((0.0, 0.0, -0.09)))
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.3, newton_tolerance=1e-10,
                     max_newton_iterations=500)
    world.add_ground()
    world.add_skeleton(cart, q=[0.06, 0.0, 0.0, 0.0])
    world.add_affine_body(rd.Box((CUBE,) * 3), density=200.0, pose=rd.Transform((0.30, 0.02, CUBE / 2 + DHAT / 2)),
                          name="cube")
    return world


def start(world):
    q, v = world.q, world.v
    v[:4] = [1.0, 0.0, 0.5, 2.0]  # the cart rolling on and turning, the rod swinging forward
    return q, v


def final_x(world, q0, v0, taus) -> float:
    Q, _ = world.rollout(q0, v0, taus)
    return world.body_pose(Q[-1], "cube")[0, 3]


def plot(out: Path, world, traj) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4))
    times = np.arange(len(traj.q)) * world.dt
    ax.plot(times, [world.body_pose(q, "cube")[0, 3] for q in traj.q], label="cube")
    ax.plot(times, traj.q[:, 0], label="cart (joint origin)")
    ax.set(xlabel="time (s)", ylabel="x (m)", title="a planar cart pushes a cube (barrier world)")
    ax.legend()
    fig.tight_layout()
    path = out / "planar_cart_pushes_a_cube.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, traj.q, out / "planar_cart_pushes_a_cube_frames.png", n_frames=4)
    return [path, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    duration = 0.3 if fast else 0.6
    world = build()
    q0, v0 = start(world)
    steps = int(round(duration / world.dt))
    taus = np.zeros((steps, world.nv))
    taus[:, 0] = PUSH
    t0 = time.perf_counter()
    traj = world.rollout(q0, v0, taus, record=True)
    per_step = (time.perf_counter() - t0) / steps
    for q in traj.q:
        world.check_state(q)  # raises if any two surfaces cross or touch
    cube = world.layout("cube")
    x0, x1 = world.body_pose(q0, "cube")[0, 3], world.body_pose(traj.q[-1], "cube")[0, 3]

    # dL/dq_final for L = the cube's final x: its translation's x is the first of its 12 coordinates
    dL_dQ = np.zeros((steps + 1, world.nv))
    dL_dQ[-1, cube.v.start] = 1.0
    t0 = time.perf_counter()
    grads = traj.backward(dL_dQ, None, wrt="all")
    backward = time.perf_counter() - t0

    name = "cart/mass"
    mass = world.parameters()[name]
    h = 1e-4 * mass
    world.set_parameters({name: mass + h})
    plus = final_x(world, q0, v0, taus)
    world.set_parameters({name: mass - h})
    minus = final_x(world, q0, v0, taus)
    world.set_parameters({name: mass})
    fd = (plus - minus) / (2 * h)
    analytic = grads.parameter(name)

    print(f"barrier world: a planar cart with a hinged rod and a cube, dt = {world.dt:g} s, {duration:g} s, "
          f"dhat = {DHAT:g} m")
    print(f"the cube moved {x1 - x0:.4f} m along x (from {x0:.3f} m)")
    print(f"{1e3 * per_step:.2f} ms per step; backward pass over {steps} steps and {len(grads.parameters)} "
          f"parameters: {1e3 * backward:.1f} ms")
    print("d(cube's final x)/d(parameter):")
    for n in ("cart/mass", "rod/mass", "rod/com_z", "base/damping_0", "hinge/damping", "hinge/armature",
              "cube/density", "friction"):
        print(f"  {n:16s} {grads.parameter(n):+.5e}")
    print(f"{name}: backward {analytic:+.6e}, central differences of rollouts {fd:+.6e}, "
          f"relative difference {abs(analytic - fd) / abs(fd):.1e}")
    pngs = plot(Path(out), world, traj)
    for p in pngs:
        print(f"wrote {p}")
    return {"moved": x1 - x0, "gradient": analytic, "central": fd, "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
