"""A cartpole built by hand: a free swing with an energy check, then a PD controller on the cart.

The cart slides along x on a prismatic joint; the pole hangs from it on a hinge about y and points
straight up at q = 0. Two experiments:

1. Free swing. The pole starts tilted by 0.3 rad and falls; no torque acts. The semi-implicit Euler
   step is first order, so the total energy (kinetic + potential) is not exactly conserved: it
   wobbles by O(dt). The script reports the largest drift relative to the largest kinetic energy of
   the swing, for dt and dt / 2 (the ratio of the two is close to 2 for a first-order method).
2. PD on the cart. The same tilted start, with a force f = kp (x* - x) - kd xdot on the cart and the
   pole left free. The script reports the cart's final error and the work-energy balance
   E(t) - E(0) = integral of f xdot dt, which the simulation satisfies up to O(dt).

Run ``python examples/cartpole_by_hand.py [--fast] [--out DIR]``; it writes ``cartpole.png`` to DIR.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"

# PD gains on the cart and its target position
KP, KD, X_TARGET = 40.0, 12.0, 0.5
TILT = 0.3  # initial pole angle (rad) away from upright


def build_world(dt: float = 1e-3) -> rd.World:
    """The cartpole exactly as one writes it by hand: two bodies, a slider and a hinge."""
    sk = rd.Skeleton("cartpole")
    cart = sk.add_body("cart", joint=rd.PrismaticJoint("slider", axis=(1, 0, 0)),
                       inertia=rd.Inertia(mass=1.0, com=(0, 0, 0), rotational_inertia=np.eye(3) * 0.01))
    pole = sk.add_body("pole", parent=cart, joint=rd.RevoluteJoint("hinge", axis=(0, 1, 0)),
                       joint_origin=rd.Transform(translation=(0, 0, 0.1)),
                       inertia=rd.Inertia.from_shape(rd.Capsule(radius=0.02, length=1.0), mass=0.1,
                                                     origin=rd.Transform(translation=(0, 0, 0.5))))
    pole.add_shape(rd.Capsule(radius=0.02, length=1.0), origin=rd.Transform(translation=(0, 0, 0.5)))
    world = rd.World(dt=dt, gravity=(0, 0, -9.81))
    world.add_skeleton(sk)
    return world


def energy(world: rd.World, q, v) -> float:
    return world.kinetic_energy(q, v) + world.potential_energy(q)


def free_swing(world: rd.World, duration: float):
    """Roll out the unactuated swing in one C++ call; return times, Q, V, total and kinetic energy."""
    steps = int(round(duration / world.dt))
    q0 = np.array([0.0, TILT])
    Q, V = world.rollout(q0, np.zeros(world.nv), np.zeros((steps, world.nv)))
    kinetic = np.array([world.kinetic_energy(q, v) for q, v in zip(Q, V)])
    total = kinetic + np.array([world.potential_energy(q) for q in Q])
    return np.arange(steps + 1) * world.dt, Q, V, total, kinetic


def relative_drift(total: np.ndarray, kinetic: np.ndarray) -> float:
    """max |E(t) - E(0)| over the swing, relative to the largest kinetic energy reached."""
    return float(np.max(np.abs(total - total[0])) / np.max(kinetic))


def pd_on_cart(world: rd.World, duration: float):
    """Step loop with a PD force on the cart; also accumulates the work the force does."""
    steps = int(round(duration / world.dt))
    q, v = np.array([0.0, TILT]), np.zeros(world.nv)
    e0 = energy(world, q, v)
    Q, V, dE, W = [q], [v], [0.0], [0.0]
    work = 0.0
    for _ in range(steps):
        tau = np.array([KP * (X_TARGET - q[0]) - KD * v[0], 0.0])
        q_next, v_next = world.step(q, v, tau)
        work += tau @ (0.5 * (v + v_next)) * world.dt  # power at the mid-step velocity
        q, v = q_next, v_next
        Q.append(q)
        V.append(v)
        dE.append(energy(world, q, v) - e0)
        W.append(work)
    return np.arange(steps + 1) * world.dt, np.array(Q), np.array(V), np.array(dE), np.array(W)


def plot(out: Path, swing, pd) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots written")
        return []
    t, Q, _, total, kinetic = swing
    tp, Qp, _, dE, W = pd
    fig, ax = plt.subplots(2, 2, figsize=(12, 7), constrained_layout=True)
    ax[0, 0].plot(t, (total - total[0]) / kinetic.max() * 100.0)
    ax[0, 0].set(title="free swing: energy drift", xlabel="time (s)", ylabel="(E - E0) / max KE (%)")
    ax[0, 1].plot(t, Q[:, 1], label="free swing")
    ax[0, 1].plot(tp, Qp[:, 1], label="PD on the cart")
    ax[0, 1].axhline(np.pi, color="k", ls=":", lw=0.8, label="hanging down")
    ax[0, 1].set(title="pole angle (0 = upright)", xlabel="time (s)", ylabel="rad")
    ax[0, 1].legend()
    ax[1, 0].plot(tp, Qp[:, 0], label="cart x")
    ax[1, 0].axhline(X_TARGET, color="k", ls="--", lw=0.8, label="target")
    ax[1, 0].set(title="PD on the cart: position", xlabel="time (s)", ylabel="m")
    ax[1, 0].legend(loc="lower right")
    ax[1, 1].plot(tp, dE, label="E(t) - E(0)")
    ax[1, 1].plot(tp, W, ls="--", label="work of the cart force")
    ax[1, 1].set(title="PD on the cart: work-energy balance", xlabel="time (s)", ylabel="J")
    ax[1, 1].legend()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "cartpole.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    duration = 2.0 if fast else 10.0
    world = build_world(dt=1e-3)
    print(world.summary())

    swing = free_swing(world, duration)
    drift = relative_drift(swing[3], swing[4])
    world.dt = 0.5e-3
    fine = free_swing(world, duration)
    drift_half = relative_drift(fine[3], fine[4])
    world.dt = 1e-3

    pd = pd_on_cart(world, 2.5 if fast else 5.0)
    _, Qp, _, dE, W = pd
    cart_error = abs(Qp[-1, 0] - X_TARGET)
    balance = float(np.max(np.abs(dE - W)) / np.max(np.abs(W)))

    pngs = plot(Path(out), swing, pd)
    print()
    print(f"free swing: {duration:g} s from a {TILT} rad tilt; the pole falls through the bottom and climbs back "
          f"to {swing[1][:, 1].max():.4f} rad (2 pi - {TILT} = {2 * np.pi - TILT:.4f})")
    print(f"max energy drift (dt = 1 ms): {drift * 100:.4f} % of the max kinetic energy")
    print(f"max energy drift (dt = 0.5 ms): {drift_half * 100:.4f} %")
    print(f"drift ratio dt / (dt/2): {drift / drift_half:.3f} (2 for a first-order integrator)")
    print(f"PD cart: final cart error {cart_error:.3e} m (target {X_TARGET} m)")
    print(f"work-energy balance error: {balance * 100:.4f} % of the work done")
    for p in pngs:
        print(f"wrote {p}")
    return {"drift": drift, "drift_half": drift_half, "cart_error": cart_error, "balance": balance,
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
