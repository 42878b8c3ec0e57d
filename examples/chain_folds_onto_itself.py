"""A chain of four links curls up until its last link strikes its first: with ``self_collision`` off the links pass
through each other, with it on the barrier world keeps them apart.

The chain lies in a horizontal plane (joints about the vertical, so gravity does not act on the fold): four 18 cm
links on revolute joints 20 cm apart, each link stopping 1 cm short of its joints. Springs on the three elbows
(1 N m/rad, lightly damped) pull them from 0.6 rad towards 2 rad, a curl tighter than the chain can close without
its last link reaching into its first. The run is made twice, with ``rd.Skeleton("chain", self_collision=False)``
and ``=True``; the report gives, every few steps, the smallest signed distance between two links that are neither
the same nor parent and child (``rd.distance``, negative when they overlap), its minimum over the run, and how many
steps had self-contact pairs within dhat. Run ``python examples/chain_folds_onto_itself.py [--fast] [--out DIR]``;
it writes ``chain_folds_onto_itself.png`` (the distance over time for both runs) and
``chain_folds_onto_itself_frames.png`` (the curl with self-collision on, drawn by ``rd.viz``).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
DHAT = 1e-3
LINK = rd.Box((0.18, 0.04, 0.04))
LINKS = 4
START = np.array([0.0, 0.6, 0.6, 0.6])  # rad: the open curl
CURL = 2.0  # rad: the elbow springs' rest angle


def build(self_collision: bool):
    chain = rd.Skeleton("chain", self_collision=self_collision)
    inertia = rd.Inertia.from_shape(LINK, density=1000.0, origin=rd.Transform((0.1, 0.0, 0.0)))
    parent = None
    for i in range(LINKS):
        origin = rd.Transform((0.0, 0.0, 0.1)) if parent is None else rd.Transform((0.2, 0.0, 0.0))
        spring = {} if parent is None else dict(stiffness=1.0, damping=0.02, rest_position=CURL)
        joint = rd.RevoluteJoint(f"j{i + 1}", axis=(0, 0, 1), **spring)
        parent = chain.add_body(f"link{i + 1}", joint, parent=parent, joint_origin=origin, inertia=inertia)
        parent.add_shape(LINK, rd.Transform((0.1, 0.0, 0.0)))
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT)
    world.add_skeleton(chain, q=START)
    return world


def closest_links(world, q) -> float:
    """The smallest signed distance between two links that are neither the same nor parent and child."""
    poses = world.skeleton_world().body_poses(q)
    shape = rd.Transform((0.1, 0.0, 0.0)).matrix
    return min(rd.distance(LINK, poses[a] @ shape, LINK, poses[b] @ shape).distance
               for a in range(LINKS) for b in range(a + 2, LINKS))


def run(self_collision: bool, steps: int):
    world = build(self_collision)
    q, v = world.q, world.v
    Q, contact_steps = [q], 0
    t0 = time.perf_counter()
    for _ in range(steps):
        q, v = world.step(q, v)
        Q.append(q)
        contact_steps += world.last_step["active_pairs"] > 0
    per_step = (time.perf_counter() - t0) / steps
    return world, np.array(Q), np.array([closest_links(world, q) for q in Q]), contact_steps, per_step


def plot(out: Path, dt: float, runs: dict, world, Q) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, d in runs.items():
        ax.plot(np.arange(len(d)) * dt, 1e3 * d, label=f"self_collision={label}")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set(xlabel="time (s)", ylabel="closest non-adjacent links (mm)", title="a chain folds onto itself")
    ax.legend()
    fig.tight_layout()
    path = out / "chain_folds_onto_itself.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "chain_folds_onto_itself_frames.png", n_frames=4)
    return [path, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    duration = 0.4 if fast else 1.0
    steps = int(round(duration / 1e-2))
    print(f"barrier world: a {LINKS}-link chain curling up on its elbow springs, dt = 0.01 s, {duration:g} s, "
          f"dhat = {DHAT:g} m")
    results = {}
    for self_collision in (False, True):
        world, Q, d, contact_steps, per_step = run(self_collision, steps)
        results[self_collision] = (world, Q, d)
        print(f"self_collision={self_collision}: {1e3 * per_step:.2f} ms per step, {contact_steps} steps with "
              f"self-contact pairs")
        print("  t (s)   closest non-adjacent links (mm)")
        for k in range(0, steps + 1, 5):
            print(f"  {k * 1e-2:5.2f}   {1e3 * d[k]:+8.3f}")
        print(f"  smallest over the run: {1e3 * d.min():+.3f} mm")
    pngs = plot(Path(out), 1e-2, {k: v[2] for k, v in results.items()}, results[True][0], results[True][1])
    for p in pngs:
        print(f"wrote {p}")
    return {"off": results[False][2].min(), "on": results[True][2].min(), "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
