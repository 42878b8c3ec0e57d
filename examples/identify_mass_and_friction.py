"""System identification: recover the mass of a box and its friction on the ground from a recording.

A 20 cm box rests on the ground; a push along x that changes at every step makes it slide. The script
records that motion with the true box (2 kg, friction coefficient 0.3), then starts from a wrong model
(1 kg, 0.8) and fits both numbers with ``rigidiff.sysid.fit``. The steps solve contacts, so "auto"
picks the rollout fit: shots of 10 steps simulated from recorded states, their state errors minimised
by trust-region least squares with the exact Jacobian through the contacts.

Then the double pendulum that ships with rigidiff swings freely under random torques: its two masses
and joint damping come back from the regressor fit (linear least squares on the discrete equations of
motion), in one Gauss-Newton step.

Every fitted value must be within a relative error of 1e-6 of the truth; otherwise the script raises.
Run ``python examples/identify_mass_and_friction.py [--fast] [--out DIR]``; it writes ``sysid_box.png``
(the box's position: recorded, simulated with the start model and with the fitted one) to DIR.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

import rigidiff as rd
from rigidiff import sysid

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
TOLERANCE = 1e-6  # largest relative error accepted on a fitted value
BOX_TRUE = {"box/mass": 2.0, "ground/plane/friction": 0.3}
BOX_START = {"box/mass": 1.0, "ground/plane/friction": 0.8}
PENDULUM_TRUE = {"link1/mass": 1.3, "link2/mass": 0.7, "joint1/damping": 0.05, "joint2/damping": 0.02}
PENDULUM_START = {"link1/mass": 0.5, "link2/mass": 1.5, "joint1/damping": 0.0, "joint2/damping": 0.1}


def box_world(values: dict) -> rd.World:
    """The box on the ground. Its own friction coefficient is 1 and contacts take the smaller of the two
    shapes' coefficients, so the ground's coefficient is the friction of the contact."""
    world = rd.World(dt=1e-2)
    world.add_ground()
    sk = rd.Skeleton("box")
    body = sk.add_body("box", joint=rd.FreeJoint("free"),
                       inertia=rd.Inertia.from_shape(rd.Box((0.2, 0.2, 0.2)), mass=1.0))
    body.add_shape(rd.Box((0.2, 0.2, 0.2)), friction=1.0, name="box")
    world.add_skeleton(sk)
    world.contact_options(friction_combine="min")
    world.set_parameters(values)
    return world


def record_push(world: rd.World, steps: int, rng):
    """The box settles for 0.2 s, then a push between 8 and 14 N (changing every step) makes it slide."""
    q = world.neutral_configuration()
    q[2] = 0.1
    Q, V = world.rollout(q, np.zeros(6), np.zeros((20, 6)))
    taus = np.zeros((steps, 6))
    taus[:, 0] = rng.uniform(8.0, 14.0, steps)
    traj = world.rollout(Q[-1], V[-1], taus, record=True)
    return traj.q, traj.v, taus, len(traj.constrained_steps)


def report(title: str, res, true: dict) -> float:
    print(title)
    worst = 0.0
    for name, value in res.values.items():
        rel = abs(value - true[name]) / abs(true[name])
        worst = max(worst, rel)
        print(f"  {name:22s} true {true[name]:.4f}  start {res.start[name]:.4f}  fitted {value:.10f}")
    print(f"  method: {res.method}, {res.iterations} iterations, success: {res.success}")
    print(f"  residual (RMS): {res.initial_residual:.3e} -> {res.residual:.3e}")
    print(f"  largest relative error: {worst:.2e}")
    return worst


def identify_box(fast: bool) -> dict:
    steps = 40 if fast else 150
    Q, V, taus, constrained = record_push(box_world(BOX_TRUE), steps, np.random.default_rng(0))
    start = box_world(BOX_START)
    t0 = time.perf_counter()
    res = sysid.fit(start, Q, V, taus, params=list(BOX_TRUE))
    seconds = time.perf_counter() - t0
    print(f"box pushed along the ground: {steps} steps of {start.dt * 1e3:g} ms, {constrained} with contacts")
    worst = report(f"box fit ({seconds:.2f} s)", res, BOX_TRUE)
    x_start = start.rollout(Q[0], V[0], taus)[0][:, 0]
    x_fit = res.world.rollout(Q[0], V[0], taus)[0][:, 0]
    print(f"  final position error over the whole push: start model {abs(x_start[-1] - Q[-1, 0]):.3e} m, "
          f"fitted model {abs(x_fit[-1] - Q[-1, 0]):.3e} m")
    return {"worst": worst, "t": start.dt * np.arange(steps + 1), "x": (Q[:, 0], x_start, x_fit), "res": res}


def identify_pendulum(fast: bool) -> dict:
    world = rd.World(dt=2e-3)
    world.add_skeleton(rd.load_urdf(rd.models.path("double_pendulum")))
    steps = 200 if fast else 1000
    world.set_parameters(PENDULUM_TRUE)
    rng = np.random.default_rng(1)
    taus = rng.normal(scale=0.5, size=(steps, world.nv))
    Q, V = world.rollout(np.array([1.2, -0.6]), np.array([0.0, 1.0]), taus)
    world.set_parameters(PENDULUM_START)
    t0 = time.perf_counter()
    res = sysid.fit(world, Q, V, taus, params=list(PENDULUM_TRUE))
    seconds = time.perf_counter() - t0
    print(f"double pendulum under random torques: {steps} steps of {world.dt * 1e3:g} ms")
    return {"worst": report(f"pendulum fit ({seconds:.3f} s)", res, PENDULUM_TRUE), "res": res}


def plot(out: Path, box: dict) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots written")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(8, 4))
    recorded, start, fitted = box["x"]
    ax.plot(box["t"], recorded, "k-", lw=3, alpha=0.4, label="recorded")
    ax.plot(box["t"], start, "r--", label="start model (1 kg, friction 0.8)")
    ax.plot(box["t"], fitted, "b:", lw=2, label="fitted model")
    ax.set(title="box pushed along the ground", xlabel="time (s)", ylabel="x (m)")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = out / "sysid_box.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    box = identify_box(fast)
    print()
    pendulum = identify_pendulum(fast)
    for p in plot(Path(out), box):
        print(f"wrote {p}")
    worst = max(box["worst"], pendulum["worst"])
    if worst > TOLERANCE:
        raise RuntimeError(f"a fitted value is off by a relative {worst:.2e} > {TOLERANCE:g}")
    print(f"every fitted value within a relative {TOLERANCE:g} of the truth")
    return {"box": box, "pendulum": pendulum}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNG (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
