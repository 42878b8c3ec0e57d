"""Two rigid boxes stacked on a soft pad in a projective world: links of different robots touch each other.

A projective world (``rd.World(dt, solver="projective")``) holds a soft pad (trilinear hexahedra, corotated and
volume energies, its bottom fixed) and two rigid boxes, each the one link of a skeleton on a free joint. The
lower box lands on the pad, the upper one on the lower box, a little off centre and sliding: the boxes push and
rub on each other through the links' penalty and lagged friction, as they do on the soft pad's vertices. The
script reports where the boxes come to rest (the upper one sits on the lower at the penalty's depth, about
m g / (4 k) at each of its four bottom corners, which the lower box's top face holds) and checks the gradient of the upper box's final x with respect to
its initial sliding speed, pulled back through the rollout by ``rollout_backward``, against a central difference
of two more rollouts.

Run ``python examples/rigid_boxes_on_a_soft_pad.py [--fast] [--out DIR]``; it writes
``rigid_boxes_on_a_soft_pad.png`` (the heights) and ``rigid_boxes_on_a_soft_pad_frames.png`` (the bodies, drawn
by ``rd.viz``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
SIZE, MASS, K = 0.1, 0.5, 2e4  # the lower box's edge (m) and mass (kg); the contact stiffness (N/m)
TOP, TOP_MASS = 0.06, 0.2  # the upper box's
PAD = 0.05  # the pad's thickness (m)


def box(name: str, size: float, mass: float) -> rd.Skeleton:
    sk = rd.Skeleton(name)
    cube = rd.Box((size, size, size))
    sk.add_body("box", rd.FreeJoint("root"), inertia=rd.Inertia.from_shape(cube, mass=mass)).add_shape(cube)
    return sk


def build():
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-8, contact_stiffness=K, friction=0.5)
    mesh = rd.HexMesh.box((0.3, 0.3, PAD), (12, 12, 2), origin=(-0.15, -0.15, 0.0))
    world.add_deformable(mesh, rd.ProjectiveMaterial(2e5, 0.3, 500.0), name="pad",
                         fixed=np.flatnonzero(mesh.vertices[:, 2] < 1e-9))
    world.add_skeleton(box("lower", SIZE, MASS), q=[0.0, 0.0, PAD + SIZE / 2 + 0.005, 0.0, 0.0, 0.0, 1.0])
    world.add_skeleton(box("upper", TOP, TOP_MASS), q=[-0.01, 0.005, PAD + SIZE + TOP / 2 + 0.01, 0.0, 0.0, 0.0, 1.0])
    return world


def start(world, speed: float):
    """The stored state with the upper box sliding along x at `speed` (its free joint's velocity, in its frame)."""
    v = world.v
    v[world.layout("upper").v.start] = speed
    return world.q, v


def centre(world, q, name: str) -> np.ndarray:
    return q[world.layout(name).q][:3]


def corner_depths(world, q) -> np.ndarray:
    """How far each bottom corner of the upper box lies below the lower box's top face, in the lower box's frame."""
    pose = {}
    for name in ("lower", "upper"):
        x = q[world.layout(name).q]
        pose[name] = (x[:3], Rotation.from_quat(x[3:7]).as_matrix())
    corners = np.array([[sx, sy, -1.0] for sx in (-1, 1) for sy in (-1, 1)]) * TOP / 2
    (p_l, R_l), (p_u, R_u) = pose["lower"], pose["upper"]
    local = (corners @ R_u.T + p_u - p_l) @ R_l  # in the lower box's frame
    return SIZE / 2 - local[:, 2]


def final_x_gradient(world, Q, V) -> float:
    """d x(upper box at the end) / d (its initial speed along x), by rollout_backward. The cotangent of a free joint's
    position is in its tangent (q (+) e moves the origin by R e): x's is R's first row."""
    s = world.layout("upper")
    dQ, dV = np.zeros((len(Q), world.nv)), np.zeros((len(Q), world.nv))
    R = Rotation.from_quat(Q[-1, s.q][3:7]).as_matrix()
    dQ[-1, s.v.start:s.v.start + 3] = R[0]
    g = world.rollout_backward(Q, V, np.zeros((len(Q) - 1, world.nv)), dQ, dV)
    return float(g.v[s.v.start])


def plot(out: Path, world, Q, times) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4))
    for name in ("lower", "upper"):
        ax.plot(times, [centre(world, q, name)[2] for q in Q], label=f"{name} box")
    ax.set(xlabel="time (s)", ylabel="height of the centre (m)", title="two rigid boxes stacked on a soft pad")
    ax.legend()
    fig.tight_layout()
    path = out / "rigid_boxes_on_a_soft_pad.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "rigid_boxes_on_a_soft_pad_frames.png", n_frames=4)
    return [path, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    world = build()
    steps = 30 if fast else 150
    speed = 0.1
    q0, v0 = start(world, speed)
    Q, V = world.rollout(q0, v0, np.zeros((steps, world.nv)))
    print(f"projective world: a soft pad of {len(world.mesh('pad').elements)} hexahedra and two rigid boxes "
          f"({SIZE:g} m, {MASS:g} kg; {TOP:g} m, {TOP_MASS:g} kg) on free joints, {steps} steps of {world.dt:g} s, friction {world.friction:g}")
    depths = corner_depths(world, Q[-1])
    depth = float(depths.mean())
    lower, upper = centre(world, Q[-1], "lower"), centre(world, Q[-1], "upper")
    print(f"upper box's bottom corners rest {depth * 1e3:.4f} mm into the lower one's top face on average (from "
          f"{depths.min() * 1e3:.4f} to {depths.max() * 1e3:.4f}; the penalty's m g / (4 k) = "
          f"{TOP_MASS * 9.81 / (4 * K) * 1e3:.4f} mm); its centre {np.abs(upper[:2] - lower[:2]).max() * 1e3:.1f} mm "
          f"off the lower's in x, y")
    print(f"speeds at the end: lower {np.linalg.norm(V[-1, world.layout('lower').v]):.2e}, upper "
          f"{np.linalg.norm(V[-1, world.layout('upper').v]):.2e} (m/s and rad/s)")
    grad = final_x_gradient(world, Q, V)
    h = 1e-4
    xs = []
    for dv in (h, -h):
        q, v = start(world, speed + dv)
        Qd, _ = world.rollout(q, v, np.zeros((steps, world.nv)))
        xs.append(centre(world, Qd[-1], "upper")[0])
    fd = (xs[0] - xs[1]) / (2 * h)
    print(f"d x_end / d speed: adjoint {grad:.6e}, central difference {fd:.6e}, relative difference "
          f"{abs(grad - fd) / abs(fd):.2e}")
    pngs = plot(Path(out), world, Q, np.arange(steps + 1) * world.dt)
    for p in pngs:
        print(f"wrote {p}")
    return {"depth": depth, "gradient": grad, "fd": fd, "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "") not in ("", "0")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for the pictures")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
