"""Non-convex meshes touching triangle by triangle: a ring hanging from a ring, and a gripper holding a torus.

Two tori with a hole through each: one welded, the other interlocked with it and let go 2 mm above its
rim. Same tessellation, at right angles: a vertex of the rim's top meets a vertex of the hanging ring's
inner arc, a saddle of its surface (docs/contact.md, "Triangle meshes": contacts inside, past a valley or
at a saddle). Then a gripper of two boxes on prismatic joints squeezes a third torus from both sides and
holds it up by friction, and lets it slip when the squeeze is below the friction limit
2 mu F = m g. Each contact is a feature pair (vertex-face, edge-edge, ...), so the step Jacobians are
exact: the script compares them with finite differences of the step at the hanging ring and at the held
torus.

Run ``python examples/rings_and_gripper.py [--fast] [--out DIR]``; it writes ``rings_and_gripper.png``
(the hanging ring) and ``rings_and_gripper_grip.png`` (the held torus) to DIR.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import trimesh

import rigidiff as rd
import rigidiff.testing as rdt

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
DT = 1e-3
MAJOR, MINOR = 0.08, 0.012  # the hanging rings' radii (m)
RING_MASS, FRICTION = 0.1, 1.0
UPRIGHT = [np.sin(np.pi / 4), 0.0, 0.0, np.cos(np.pi / 4)]  # quaternion (xyzw): a torus turned into the xz plane


def torus(major: float, minor: float) -> trimesh.Trimesh:
    return trimesh.creation.torus(major_radius=major, minor_radius=minor, major_sections=32, minor_sections=12)


def free_ring(name: str, mesh: trimesh.Trimesh) -> rd.Skeleton:
    sk = rd.Skeleton(name)
    shape = rd.Mesh(mesh)
    sk.add_body(name, joint=rd.FreeJoint(f"{name}_free"), inertia=rd.Inertia.from_shape(shape, mass=RING_MASS)) \
        .add_shape(shape, friction=FRICTION)
    return sk


def hanging_rings() -> tuple[rd.World, np.ndarray]:
    """A welded ring in the xy plane around the origin and a free one upright through its rim at x = MAJOR,
    its inner arc 2 mm above the rim's top."""
    world = rd.World(dt=DT)
    hook = rd.Skeleton("hook")
    hook.add_body("hook", joint=rd.FixedJoint("hook_weld")).add_shape(rd.Mesh(torus(MAJOR, MINOR)), friction=FRICTION)
    world.add_skeleton(hook)
    world.add_skeleton(free_ring("ring", torus(MAJOR, MINOR)))
    q0 = np.array([MAJOR, 0.0, 2 * MINOR - MAJOR + 0.002, *UPRIGHT])
    return world, q0


def gripper_world() -> tuple[rd.World, np.ndarray]:
    """Two 2 x 6 x 8 cm fingers sliding towards each other along x, 1 cm from an upright torus between them."""
    major, minor = 0.05, 0.012
    world = rd.World(dt=DT)
    hand = rd.Skeleton("gripper")
    hand.add_body("palm", joint=rd.FixedJoint("mount"), joint_origin=rd.Transform(translation=(0.0, 0.0, 0.3)))
    for side, sign in (("left", 1.0), ("right", -1.0)):
        finger = rd.Box((0.02, 0.06, 0.08))
        body = hand.add_body(f"{side}_finger", joint=rd.PrismaticJoint(f"{side}_slide", axis=(-sign, 0.0, 0.0)),
                             parent="palm", joint_origin=rd.Transform(translation=(sign * (major + minor + 0.02), 0, 0)),
                             inertia=rd.Inertia.from_shape(finger, mass=0.2))
        body.add_shape(finger, friction=FRICTION)
    world.add_skeleton(hand)
    world.add_skeleton(free_ring("torus", torus(major, minor)))
    return world, np.array([0.0, 0.0, 0.0, 0.0, 0.3, *UPRIGHT])


def squeeze(world: rd.World, q0: np.ndarray, force: float, steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fingers pushed inwards with `force` (N each) for `steps` steps: configurations, velocities, torques."""
    taus = np.zeros((steps, world.nv))
    taus[:, :2] = force
    Q, V = world.rollout(q0, np.zeros(world.nv), taus)
    return Q, V, taus


def jacobian_error(world: rd.World, q: np.ndarray, v: np.ndarray, tau: np.ndarray) -> float:
    """Largest |analytic - finite difference| of the step Jacobians (q, v, tau) over the largest entry."""
    report = rdt.check_jacobians(world, q, v, tau, wrt=("q", "v", "tau"), eps=1e-7)
    jac = world.step_jacobians(q, v, tau)
    scale = max(np.abs(getattr(jac, name)).max() for name in ("dq_dq", "dq_dv", "dv_dq", "dv_dv"))
    return report.max_abs_error / scale


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    steps = 800 if fast else 2000

    # a ring hanging from a ring
    world, q0 = hanging_rings()
    Q, V = world.rollout(q0, np.zeros(6), np.zeros((steps, 6)))
    half = steps // 2
    drop = q0[2] - Q[-1, 2]
    drift = np.linalg.norm(Q[-1, :3] - Q[half, :3])
    c = world.collide(Q[-1])
    print(f"hanging ring: {len(Q) - 1} steps of {DT} s, dropped {1e3 * drop:.3f} mm onto the rim "
          f"(its gap was 2 mm), drift over the last {half * DT:.1f} s: {1e3 * drift:.2e} mm")
    print(f"hanging ring contacts: {len(c)} ({', '.join(sorted(set(c.types)))}), deepest {1e3 * -c.distances.min():.4f} mm, "
          f"fastest speed {np.abs(V[-1]).max():.2e}")
    ring_error = jacobian_error(world, Q[-1], V[-1], np.array([0.01, -0.02, 0.0, 0.001, 0.0, -0.002]))
    print(f"hanging ring step Jacobians against finite differences: {ring_error:.2e} (relative to the largest entry)")

    # a gripper holding a torus, and letting it slip
    grip, g0 = gripper_world()
    weight = RING_MASS * 9.81
    limit = weight / (2 * FRICTION)  # the squeeze where friction just holds the weight
    Qh, Vh, taus = squeeze(grip, g0, 2.0 * limit, steps)
    Qs, _, _ = squeeze(grip, g0, 0.3 * limit, steps)
    half = steps // 2
    print(f"gripper: friction {FRICTION}, torus weight {weight:.3f} N, squeeze that just holds it {limit:.3f} N per finger")
    print(f"squeeze {2.0 * limit:.3f} N: the torus fell {1e3 * (g0[4] - Qh[half, 4]):.1f} mm while the fingers closed, "
          f"then {1e3 * (Qh[half, 4] - Qh[-1, 4]):.2e} mm in the last {half * DT:.1f} s (held)")
    print(f"squeeze {0.3 * limit:.3f} N: the torus fell {1e3 * (Qs[half, 4] - Qs[-1, 4]):.1f} mm in the last "
          f"{half * DT:.1f} s (slips)")
    grip_error = jacobian_error(grip, Qh[-1], Vh[-1], taus[-1])
    print(f"held torus step Jacobians against finite differences: {grip_error:.2e} (relative to the largest entry)")

    result = {"drop": drop, "drift": drift, "ring_error": ring_error, "grip_error": grip_error}
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib is not installed: no plot")
        return result
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, w, frames in (("rings_and_gripper.png", world, Q), ("rings_and_gripper_grip.png", grip, Qh)):
        path = rd.viz.frame_strip(w, frames, out / name, n_frames=3)
        print(f"wrote {path}")
    return result


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNG (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
