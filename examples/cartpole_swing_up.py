"""Cartpole swing-up by trajectory optimisation: multiple shooting and iLQR on the same problem, then
MPC that keeps the pole up while the cart is pushed.

The pole hangs below the cart (q = (0, pi)); the cart force is bounded by 20 N and the pole's hinge
has no motor. The cost asks for the pole upright, at rest, over the cart's start after T steps, with
a small price on force. Both methods solve it from zero torques:

1. multiple shooting (SLSQP on knot states and torques, defects as equality constraints);
2. iLQR on the exact step Jacobians.

They must agree: the script reports both costs, the largest difference between their torques and
the final states. Then an MPC controller (iLQR, 2 iterations per replan, warm-started) balances the
pole for a few seconds while random pushes hit it, and the script reports the largest tilt after
the first push and the replan time. Run ``python examples/cartpole_swing_up.py [--fast] [--out DIR]``;
it writes ``cartpole_swing_up.png`` (the swing-up, the torques, the cost curves) and a GIF of the
swing-up to DIR.
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
FORCE_LIMIT = 20.0  # N on the cart
PUSH = 15.0  # N on the pole, for 20 ms, every second of the MPC run


def build_world(dt: float) -> rd.World:
    world = rd.World(dt=dt)
    world.add_skeleton(rd.models.load("cartpole"))  # cart on a rail along x, pole upright at q = 0
    return world


def swing_up_problem(world: rd.World, T: int) -> rd.trajopt.Problem:
    prob = rd.trajopt.Problem(world, T, q0=[0.0, np.pi])
    prob.add_state_cost(q_target=[0.0, 0.0], v_target=[0.0, 0.0], q_weight=[1.0, 50.0], v_weight=5.0,
                        final_only=True)
    prob.add_control_cost(1e-3)
    prob.set_control_bounds(-FORCE_LIMIT, FORCE_LIMIT)
    prob.set_actuated(["slider"])
    return prob


def balance_with_mpc(steps: int, seed: int = 0):
    """MPC on a 20 ms period; a PUSH newton push on the pole for one period every second."""
    world = build_world(dt=0.02)

    def setup(prob):
        prob.add_state_cost(q_target=[0.0, 0.0], v_target=[0.0, 0.0], q_weight=[1.0, 10.0], v_weight=0.1)
        prob.add_control_cost(1e-3)
        prob.set_control_bounds(-FORCE_LIMIT, FORCE_LIMIT)
        prob.set_actuated(["slider"])

    mpc = rd.mpc.MPC(world, horizon=30, setup=setup, method="ilqr", iterations=2)
    plant = build_world(dt=0.02)
    pole = plant.body_index("pole")
    rng = np.random.default_rng(seed)
    q, v = np.array([0.0, 0.2]), np.zeros(2)
    tilt = []
    for i in range(steps):
        tau = mpc(q, v)
        push = np.zeros((plant.nbodies, 6))
        if i % 50 == 25:
            push[pole, 0] = rng.choice([-PUSH, PUSH])
        q, v = plant.step(q, v, tau, f_ext=push)
        tilt.append(q[1])
    return np.array(tilt), np.array(mpc.replan_times)


def plot(out: Path, world, results, tilt) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots written")
        return []
    fig, ax = plt.subplots(2, 2, figsize=(12, 7), constrained_layout=True)
    for name, res in results.items():
        t = np.arange(len(res.q)) * world.dt
        ax[0, 0].plot(t, res.q[:, 1], label=name)
        ax[0, 1].step(t[:-1], res.tau[:, 0], where="post", label=name)
        ax[1, 0].semilogy(res.cost_history, label=name)
    ax[0, 0].set(title="pole angle (0 = upright)", xlabel="time (s)", ylabel="rad")
    ax[0, 1].set(title="cart force", xlabel="time (s)", ylabel="N")
    ax[1, 0].set(title="cost per iteration", xlabel="iteration", ylabel="cost")
    ax[1, 1].plot(np.arange(len(tilt)) * 0.02, tilt)
    ax[1, 1].set(title="MPC under pushes: pole angle", xlabel="time (s)", ylabel="rad")
    for a in ax.flat[:3]:
        a.legend()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "cartpole_swing_up.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    gif = rd.viz.render_trajectory(world, results["iLQR"].q, out / "cartpole_swing_up.gif", fps=20, stride=2,
                                   camera=rd.viz.Camera(elevation=5, azimuth=-90))
    return [path, gif]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    world = build_world(dt=0.05)
    T = 60  # 3 s
    results, times = {}, {}
    t0 = time.perf_counter()
    results["multiple shooting"] = swing_up_problem(world, T).solve("multiple_shooting", max_iters=400, tol=1e-10,
                                                                    verbose=False, shot_length=5)
    times["multiple shooting"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    results["iLQR"] = swing_up_problem(world, T).solve("ilqr", max_iters=300, tol=1e-10, verbose=False)
    times["iLQR"] = time.perf_counter() - t0
    for name, res in results.items():
        print(f"{name}: cost {res.cost:.6f} after {res.iterations} iterations in {times[name]:.2f} s "
              f"(converged: {res.converged}); final q = {np.array2string(res.q[-1], precision=4)}, "
              f"v = {np.array2string(res.v[-1], precision=4)}")
    ms, il = results["multiple shooting"], results["iLQR"]
    print(f"multiple shooting defects: {ms.constraint_violation:.2e}")
    print(f"cost difference: {abs(ms.cost - il.cost) / ms.cost:.2e} (relative)")
    print(f"largest torque difference: {np.abs(ms.tau - il.tau).max():.3f} N of {np.abs(ms.tau).max():.2f} N")

    steps = 150 if fast else 500
    tilt, replans = balance_with_mpc(steps)
    worst = np.abs(tilt[25:]).max()
    print(f"MPC: {steps} steps of 20 ms with a push every second; largest tilt after the first push "
          f"{worst:.4f} rad; replan {replans.mean() * 1e3:.1f} ms on average (horizon 30, 2 iLQR iterations)")
    pngs = plot(Path(out), world, results, tilt)
    for p in pngs:
        print(f"wrote {p}")
    return {"results": results, "tilt": tilt}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the pictures (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
