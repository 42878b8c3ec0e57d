"""A quadruped on a floating base drops onto a soft mattress in a projective world and stands on it.

example-robot-data's solo12 (a free root joint and 12 leg joints) is dropped from 2 cm onto a soft mattress
(a Projective Dynamics solid, 0.5 x 0.4 x 0.06 m, Young's modulus 50 kPa, glued to the floor at its bottom), with
friction 0.8. Its feet touch the mattress as spheres (a projective world's links touch soft bodies with spheres,
boxes and capsules); its legs hold a standing pose by a joint-space PD controller given as the joints' springs and
dampers about the pose, which the step treats implicitly.

The robot is a skeleton of the projective world (``world.add_skeleton(solo, q=...)`` places its base): its free
joint's q holds a quaternion (nq = 19, nv = 18), and each step minimises one incremental potential over the
mattress's vertices and the robot's joints together, the free joint's unknown being its displacement in the lcp
world's step chart (docs/deformable.md, "Floating bases").

The report: the base's height above the mattress's rest top and its tilt, the legs' largest error from the pose,
how deep the feet press the mattress, the solver's iterations and the cost of a step. Run
``python examples/solo12_on_a_soft_mattress.py [--fast] [--out DIR]``; it writes
``solo12_on_a_soft_mattress.png`` (the base's height and the mattress's dent over time) and
``solo12_on_a_soft_mattress_frames.png`` (the scene, drawn by ``rd.viz``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
URDF = "solo_description/robots/solo12.urdf"
# hips abducted 0, thighs +-0.8 rad, knees -+1.6 rad: the feet under the hips
STAND = np.array([0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6])
KP, KD = 20.0, 0.5  # the legs' springs (N m / rad) and dampers (N m s / rad)
FOOT_RADIUS = 0.02  # m: the surface vertices 2.5 cm apart never let it slip between them
MATTRESS = (0.5, 0.4, 0.06)  # m


def load_solo(robots_dir: Path) -> rd.Skeleton:
    """solo12 on its floating base, its legs' PD controller as joint springs, a sphere on each foot."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the URDF's unused elements
        solo = rd.load_urdf(robots_dir / URDF, package_dirs=[robots_dir.parent], load_geometry=False,
                            floating_base=True, strict=False)
    legs = [b.joint for b in solo.bodies if b.joint.type == "revolute"]
    for joint, angle in zip(legs, STAND):
        joint.stiffness, joint.damping, joint.rest_position = np.array([KP]), np.array([KD]), np.array([angle])
    for body in solo.bodies:
        if body.name.endswith("_FOOT"):
            body.add_shape(rd.Sphere(FOOT_RADIUS))
    return solo


def feet_depth(world, q) -> float:
    """How far the feet spheres' bottom lies below the base's origin at q."""
    lcp = world.skeleton_world()
    qs = q[world.nq - lcp.nq:]
    feet = [name for name in lcp.body_names if name.endswith("_FOOT")]
    return max(qs[2] - lcp.body_pose(qs, name)[2, 3] for name in feet) + FOOT_RADIUS


def build(robots_dir: Path, dt: float = 1e-2):
    world = rd.World(dt=dt, solver="projective", friction=0.8, contact_stiffness=2e4, tolerance=1e-6,
                     max_iterations=500)
    mesh = rd.HexMesh.box(MATTRESS, (20, 16, 2), origin=(-MATTRESS[0] / 2, -MATTRESS[1] / 2, 0.0))
    bottom = np.flatnonzero(mesh.vertices[:, 2] < 1e-9)
    world.add_deformable(mesh, rd.ProjectiveMaterial(5e4, 0.3, 300.0), name="mattress", fixed=bottom)
    solo = load_solo(robots_dir)
    world.add_skeleton(solo, q=np.concatenate([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], STAND]))
    depth = feet_depth(world, world.q)
    q = world.q
    q[world.layout(solo.name).q.start + 2] = MATTRESS[2] + depth + 0.02
    return world, q, world.v, solo.name, depth


def simulate(world, q, v, steps: int):
    Q, iterations = [q], []
    start = time.perf_counter()
    for _ in range(steps):
        q, v = world.step(q, v)
        iterations.append(world.last_step["iterations"])
        Q.append(q)
    per_step = (time.perf_counter() - start) / steps
    return np.array(Q), v, iterations, per_step


def plot(out: Path, world, Q, base, dent) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4))
    times = np.arange(len(Q)) * world.dt
    ax.plot(times, (Q[:, base.start + 2] - MATTRESS[2]) * 1e3, label="base above the mattress's rest top")
    ax.plot(times, dent * 1e3, label="the mattress's deepest dent")
    ax.set(xlabel="time (s)", ylabel="mm", title="solo12 on a soft mattress (projective world)")
    ax.legend()
    fig.tight_layout()
    path = out / "solo12_on_a_soft_mattress.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(world, Q, out / "solo12_on_a_soft_mattress_frames.png", n_frames=4)
    return [path, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    robots_dir = rd.models.example_robot_data_dir()
    if robots_dir is None:
        print("example-robot-data is not installed (pip install example-robot-data): no robot to load; skipping.")
        return {}
    duration = 0.5 if fast else 1.5
    world, q0, v0, name, depth = build(robots_dir)
    Q, v, iterations, per_step = simulate(world, q0, v0, int(round(duration / world.dt)))
    base = world.layout(name).q
    q = Q[-1]
    top = np.flatnonzero(world.positions(q0, "mattress")[:, 2] > MATTRESS[2] - 1e-9)  # the top face's vertices
    dent = np.array([MATTRESS[2] - world.positions(state, "mattress")[top, 2].min() for state in Q])
    x, y = q[base.start + 3], q[base.start + 4]
    tilt = np.arccos(np.clip(1.0 - 2.0 * (x * x + y * y), -1.0, 1.0))  # the base's z axis from the vertical
    legs = np.abs(q[base.start + 7:base.stop] - STAND).max()
    print(f"projective world: solo12 (nq = {world.skeleton_world().nq}, nv = {world.skeleton_world().nv}) on a "
          f"{MATTRESS[0]} x {MATTRESS[1]} x {MATTRESS[2]} m mattress ({len(world.positions(q, 'mattress'))} "
          f"vertices), dt = {world.dt:g} s, {duration:g} s")
    print(f"base above the mattress's rest top at the end: {q[base.start + 2] - MATTRESS[2]:.4f} m "
          f"(its feet's reach: {depth:.4f} m)")
    print(f"the mattress's deepest dent at the end: {dent[-1] * 1e3:.2f} mm (largest over the run: "
          f"{dent.max() * 1e3:.2f} mm)")
    print(f"base tilt at the end: {tilt:.2e} rad; largest leg-joint error from the pose: {legs:.3f} rad; "
          f"fastest joint velocity at the end: {np.abs(v[world.layout(name).v]).max():.2e}")
    print(f"Newton iterations per step: mean {np.mean(iterations):.2f}, max {max(iterations)}; "
          f"{1e3 * per_step:.1f} ms per step")
    pngs = plot(Path(out), world, Q, base, dent)
    for p in pngs:
        print(f"wrote {p}")
    return {"Q": Q, "dent": dent, "tilt": tilt, "legs": legs, "depth": depth, "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
