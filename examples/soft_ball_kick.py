"""A two-link leg standing on the ground kicks a soft ball along it, and the kick that sends the ball to a target
distance is found by Newton steps on the gradient through the rollout.

A projective world (``rd.World(dt, solver="projective")``) holds a voxelised soft ball and a skeleton: a hip on a
translational joint (springs and dampers hold it near its start), a thigh on a hip joint and a shin on a knee joint
(both revolute about -y, so that they turn the foot forward, to +x), with capsules for bones and a sphere for a foot.
The foot stands on the ground (the ground pushes and rubs on the links' shapes with the penalty and lagged friction
it applies to soft vertices), and the bones and the foot push the ball two-way. The kick is a torque on the hip joint
over a few steps (open loop: the skeleton's slice of ``f``); gravity acts on the links and the ball.

The script lets the leg settle on its foot and reports the foot's share of the weight and its depth in the
ground, kicks the ball, checks the gradient of the ball's travel with respect to the kick's torque from
``rollout_backward`` against a central difference, then finds the torque that sends the ball to a target.

Run ``python examples/soft_ball_kick.py [--fast] [--out DIR]``; it writes ``soft_ball_kick.png`` (the ball's
and the foot's paths) and ``soft_ball_kick_frames.png`` (the scene, drawn by ``rd.viz``).
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
RADIUS = 0.04  # the ball's
FOOT = rd.Sphere(0.02)
HIP = 0.21  # the hip's height at q = 0: the foot's bottom on the ground
K = 5e3  # N/m, the contact stiffness
SETTLE, KICK = 40, (40, 60)  # steps: standing still, then the hip's torque over KICK


def leg() -> rd.Skeleton:
    """A hip on springs (translational joint), a thigh and a shin (revolute joints about y) ending in a foot."""
    sk = rd.Skeleton("leg")
    hip = sk.add_body("hip", rd.TranslationalJoint("hip", damping=20.0, stiffness=300.0),
                      joint_origin=rd.Transform((0.0, 0.0, HIP)),
                      inertia=rd.Inertia.from_shape(rd.Box((0.06, 0.06, 0.04)), mass=0.5))
    bone = rd.Capsule(0.012, 0.076)
    thigh = sk.add_body("thigh", rd.RevoluteJoint("hip_pitch", axis=(0, -1, 0), damping=0.02), parent=hip,
                        inertia=rd.Inertia.from_shape(bone, mass=0.2, origin=rd.Transform((0.0, 0.0, -0.05))))
    thigh.add_shape(bone, rd.Transform((0.0, 0.0, -0.05)))
    shin = sk.add_body("shin", rd.RevoluteJoint("knee", axis=(0, -1, 0), damping=0.02, stiffness=5.0), parent=thigh,
                       joint_origin=rd.Transform((0.0, 0.0, -0.1)),
                       inertia=rd.Inertia.from_shape(bone, mass=0.1, origin=rd.Transform((0.0, 0.0, -0.045))))
    shin.add_shape(bone, rd.Transform((0.0, 0.0, -0.045)))
    shin.add_shape(FOOT, rd.Transform((0.0, 0.0, -0.09)))
    return sk


def build():
    world = rd.World(dt=5e-3, solver="projective", friction=0.5, contact_stiffness=K, tolerance=1e-9)
    world.add_ground()
    mesh = rd.HexMesh.from_surface(rd.Sphere(RADIUS), dx=0.02)
    world.add_deformable(mesh, rd.ProjectiveMaterial(3e4, 0.3, 500.0, kind=("corotated", "volume")), name="ball",
                         pose=rd.Transform((0.08, 0.0, RADIUS)))
    world.add_skeleton(leg())
    return world


MASS = 0.8  # kg, the leg's
LOAD = 1.0  # N, the weight the foot carries: the hip's lift holds the rest
TORQUE = 0.2  # N m, the first kick


def controls(world, steps: int, torque: float) -> np.ndarray:
    """Joint forces (steps, nv): the hip's lift (all the leg's weight but LOAD) and the hip's torque `torque`
    (N m, forward) over KICK."""
    F = np.zeros((steps, world.nv))
    s = world.layout("leg").v.start
    F[:, s + 2] = MASS * 9.81 - LOAD
    F[KICK[0]:KICK[1], s + 3] = torque
    return F


def ball_x(world, q) -> float:
    m = world.masses("ball")
    return float(m @ world.positions(q, "ball")[:, 0] / m.sum())


def travel_gradient(world, Q, V, F) -> float:
    """d ball_x(q_T) / d torque by rollout_backward (the torque acts over KICK)."""
    m = world.masses("ball")
    dQ, dV = np.zeros_like(Q), np.zeros_like(V)
    dQ[-1, world.layout("ball").q] = np.repeat(m / m.sum(), 3) * np.tile([1.0, 0.0, 0.0], len(m))
    tau = world.rollout_backward(Q, V, F, dQ, dV).tau
    return float(tau[KICK[0]:KICK[1], world.layout("leg").v.start + 3].sum())


def foot_height(world, q) -> float:
    """The height of the foot's bottom."""
    s = world.layout("leg").q
    pose = world.skeleton_world().body_pose(q[s], "shin")
    return float(pose[2, 3] + pose[2, :3] @ (0.0, 0.0, -0.09) - FOOT.radius)


def plot(out: Path, world, Q) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    t = np.arange(len(Q)) * world.dt
    fig, ax = plt.subplots(figsize=(7, 4))
    x0 = ball_x(world, Q[0])
    ax.plot(t, [1e3 * (ball_x(world, q) - x0) for q in Q], label="the ball's travel along x")
    ax.plot(t, [1e3 * foot_height(world, q) for q in Q], label="the foot's bottom above the ground")
    ax.axvspan(KICK[0] * world.dt, KICK[1] * world.dt, alpha=0.15, label="hip torque")
    ax.set(xlabel="time (s)", ylabel="mm", title="a leg standing on the ground kicks a soft ball")
    ax.legend()
    fig.tight_layout()
    path = out / "soft_ball_kick.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "soft_ball_kick_frames.png", n_frames=4)
    return [path, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    steps = 100  # 0.5 s: the kick and the ball rolling off (later the leg swings back into it)
    world = build()
    # standing: the foot carries what the hip's springs do not
    Q, _ = world.rollout(world.q, world.v, controls(world, SETTLE, 0.0))
    depth = -foot_height(world, Q[-1])
    print(f"standing: the foot is {1e3 * depth:.4f} mm deep in the ground, carrying {K * depth:.4f} N "
          f"(the load {LOAD:g} N)")
    start = time.perf_counter()
    Q, V = world.rollout(world.q, world.v, controls(world, steps, TORQUE))
    per_step = (time.perf_counter() - start) / steps
    x0 = ball_x(world, Q[0])
    print(f"kick {TORQUE:g} N m: the ball's centre of mass moves {ball_x(world, Q[-1]) - x0:.4f} m "
          f"({1e3 * per_step:.1f} ms per step)")
    # the torque that sends the ball to a target: Newton's method on its travel through the rollout's gradient
    target = x0 + 0.02
    torque = TORQUE
    for it in range(3 if fast else 5):
        F = controls(world, steps, torque)
        if it:  # the first iterate is the kick above
            Q, V = world.rollout(world.q, world.v, F)
        slope = travel_gradient(world, Q, V, F)
        err = ball_x(world, Q[-1]) - target
        print(f"iteration {it}: torque {torque:.4f} N m, ball at {ball_x(world, Q[-1]):.5f} m (target {target:.5f}), "
              f"d x / d torque {slope:.4e} m/(N m)")
        torque = float(np.clip(torque - err / slope, 0.5 * torque, 2.0 * torque))
    F = controls(world, steps, torque)
    Q, V = world.rollout(world.q, world.v, F)
    adjoint = travel_gradient(world, Q, V, F)
    h = 1e-5  # N m: contacts that begin or end within a wider step make the difference jump
    up, down = (ball_x(world, world.rollout(world.q, world.v, controls(world, steps, torque + d))[0][-1])
                for d in (h, -h))
    fd = (up - down) / (2 * h)
    print(f"torque {torque:.4f} N m: the ball ends at {ball_x(world, Q[-1]):.5f} m, target {target:.5f} m")
    print(f"d(ball x)/d(torque): adjoint {adjoint:.6e}, central difference {fd:.6e} m/(N m) "
          f"(relative difference {abs(adjoint - fd) / abs(fd):.2e})")
    pngs = plot(Path(out), world, Q)
    for p in pngs:
        print(f"wrote {p}")
    return {"depth": depth, "torque": torque, "gradient": adjoint, "fd": fd, "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
