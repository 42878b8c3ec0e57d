"""Contact on the ground: a pile of shapes that comes to rest, and a ball that bounces.

Two experiments:

1. A pile. A box, a sphere, a capsule and a cylinder fall onto the ground, the sphere onto the box.
   Each step detects the contacts (feature pairs: a box corner on the ground is a point on a face) and
   solves one boxed LCP for their impulses. The script reports when everything is at rest, the contacts
   by feature type, and checks that the ground's impulses carry exactly the weight of the pile.
2. A bouncing ball with restitution e. Each rebound reaches e^2 times the height of the one before; the
   script reports the measured ratios.

Run ``python examples/contact_on_the_ground.py [--fast] [--out DIR]``; it writes ``contact_heights.png``.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
from pathlib import Path

import numpy as np

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
G = 9.81
RESTITUTION = 0.7


def free_body(name: str, shape: rd.Shape, mass: float, restitution: float = 0.0) -> rd.Skeleton:
    """A skeleton of one body on a free joint carrying `shape`."""
    sk = rd.Skeleton(name)
    body = sk.add_body(name, joint=rd.FreeJoint(f"{name}_free"), inertia=rd.Inertia.from_shape(shape, mass=mass))
    body.add_shape(shape, friction=0.6, restitution=restitution)
    return sk


def pile(duration: float):
    """The falling pile; returns times, heights (T, 4), the final contacts, the world and its mass."""
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.6)
    shapes = {"box": (rd.Box((0.3, 0.3, 0.2)), 2.0, (0.0, 0.0, 0.15)),
              "sphere": (rd.Sphere(0.08), 0.5, (0.05, 0.02, 0.5)),
              "capsule": (rd.Capsule(0.05, 0.3), 0.4, (0.6, 0.0, 0.3)),
              "cylinder": (rd.Cylinder(0.1, 0.2), 0.8, (-0.6, 0.1, 0.25))}
    q = []
    for name, (shape, mass, position) in shapes.items():
        world.add_skeleton(free_body(name, shape, mass))
        q += [*position, 0.0, 0.0, 0.0, 1.0]
    q = np.array(q)
    capsule = list(shapes).index("capsule")
    q[7 * capsule + 3:7 * capsule + 7] = rd.Transform(rpy=(np.pi / 2, 0.0, 0.0)).quaternion  # lying down
    v = np.zeros(world.nv)
    steps = int(duration / world.dt)
    heights = np.zeros((steps + 1, len(shapes)))
    heights[0] = q[2::7]
    rest_time = None
    for t in range(steps):
        q, v = world.step(q, v, np.zeros(world.nv))
        heights[t + 1] = q[2::7]
        if rest_time is None and np.abs(v).max() < 1e-6:
            rest_time = (t + 1) * world.dt
        elif np.abs(v).max() >= 1e-6:
            rest_time = None
    mass = sum(m for _, m, _ in shapes.values())
    return np.arange(steps + 1) * world.dt, heights, world.last_contacts(), world, mass, rest_time, list(shapes)


def bounce(duration: float):
    """Heights of a ball dropped from 1 m and the peak of each rebound."""
    world = rd.World(dt=2e-4)
    world.add_ground(restitution=RESTITUTION)
    world.add_skeleton(free_body("ball", rd.Sphere(0.1), 1.0, restitution=RESTITUTION))
    q = world.neutral_configuration()
    q[2] = 1.1
    Q, V = world.rollout(q, np.zeros(6), np.zeros((int(duration / world.dt), 6)))
    z = Q[:, 2] - 0.1
    peaks = [z[0]]
    for k in range(1, len(z) - 1):
        if V[k, 2] > 0 >= V[k + 1, 2]:
            peaks.append(z[k + 1])
    return np.arange(len(z)) * world.dt, z, np.array(peaks)


def plot(out: Path, pile_data, bounce_data) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    times, heights, names = pile_data
    tb, zb = bounce_data
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for k, name in enumerate(names):
        axes[0].plot(times, heights[:, k], label=name)
    axes[0].set(xlabel="time (s)", ylabel="height of the centre (m)", title="a pile comes to rest")
    axes[0].legend()
    axes[1].plot(tb, zb)
    axes[1].set(xlabel="time (s)", ylabel="height of the ball's bottom (m)",
                title=f"bouncing ball, restitution {RESTITUTION}")
    fig.tight_layout()
    path = out / "contact_heights.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    duration = 1.5 if fast else 4.0
    times, heights, contacts, world, mass, rest_time, names = pile(duration)
    on_ground = [k for k in range(len(contacts)) if "ground" in (contacts.body_a[k], contacts.body_b[k])]
    weight_ratio = contacts.normal_impulses[on_ground].sum() / (mass * G * world.dt)
    types = collections.Counter(contacts.types)
    print(f"pile: {len(names)} bodies, {duration:g} s; at rest after {rest_time} s")
    print(f"contacts at the end: {len(contacts)} ({', '.join(f'{n} {t}' for t, n in sorted(types.items()))})")
    print(f"ground impulses / weight of the pile: {weight_ratio:.9f}")
    print(f"last solve: {contacts.solver}")

    tb, zb, peaks = bounce(2.0 if fast else 4.0)
    ratios = peaks[1:] / peaks[:-1]
    print(f"bouncing ball, e = {RESTITUTION}: rebound peaks {np.array2string(peaks[:4], precision=4)} m")
    print(f"first rebound ratio: {ratios[0]:.4f} (e^2 = {RESTITUTION**2:.4f})")
    pngs = plot(Path(out), (times, heights, names), (tb, zb))
    for p in pngs:
        print(f"wrote {p}")
    return {"rest_time": rest_time, "weight_ratio": weight_ratio, "ratios": ratios, "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
