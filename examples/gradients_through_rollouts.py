"""Exact gradients through whole rollouts: identify masses and damping, then optimise torques.

The double pendulum that ships with rigidiff swings for a while; the script records that trajectory,
forgets the masses and joint damping it was made with, and recovers them by fitting the recorded
states: the loss is the squared state error summed over the trajectory, its gradient with respect to
the named physical parameters comes from one reverse pass (``world.rollout(..., record=True)`` then
``traj.backward(..., wrt=[...])``), and scipy's L-BFGS-B does the rest. The gradient is first checked
against central finite differences of the whole rollout.

Then the same machinery optimises controls: the torques of the 7-joint arm that ships with rigidiff
(held over 10 pieces of 50 ms, within the effort limits) so that its joints reach a target
configuration at rest after 0.5 s. scipy's least_squares runs Gauss-Newton on the final-state
residuals; each row of their Jacobian with respect to all torques is one reverse pass.

Run ``python examples/gradients_through_rollouts.py [--fast] [--out DIR]``; it writes
``gradient_fits.png`` (the two loss curves) to DIR.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares, minimize

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
TRUE = {"link1/mass": 1.3, "link2/mass": 0.7, "joint1/damping": 0.05, "joint2/damping": 0.02}
START = {"link1/mass": 0.5, "link2/mass": 1.5, "joint1/damping": 0.01, "joint2/damping": 0.1}


def pendulum() -> rd.World:
    world = rd.World(dt=2e-3)
    world.add_skeleton(rd.load_urdf(rd.models.path("double_pendulum")))
    return world


def state_loss(world, q0, v0, taus, Q_ref, V_ref, names):
    """L = 1/2 sum |Q - Q_ref|^2 + 1/2 sum |V - V_ref|^2 and its gradient with respect to `names`."""
    traj = world.rollout(q0, v0, taus, record=True)
    eQ, eV = traj.q - Q_ref, traj.v - V_ref
    loss = 0.5 * float(np.sum(eQ**2) + np.sum(eV**2))
    g = traj.backward(eQ, eV, wrt=names, coordinates=True)
    return loss, dict(zip(g.parameter_names, g.parameters))


def identify(fast: bool):
    world = pendulum()
    steps = 300 if fast else 1000
    q0, v0 = np.array([1.2, -0.6]), np.array([0.0, 1.0])
    taus = np.zeros((steps, world.nv))
    names = sorted(TRUE, key=world.parameters().names.index)
    world.set_parameters(TRUE)
    Q_ref, V_ref = world.rollout(q0, v0, taus)
    world.set_parameters(START)

    # the analytic gradient against central differences of the whole rollout
    loss0, grad = state_loss(world, q0, v0, taus, Q_ref, V_ref, names)
    h, fd = 1e-6, {}
    for n in names:
        p = world.parameters()[n]
        world.set_parameters({n: p + h})
        lp = state_loss(world, q0, v0, taus, Q_ref, V_ref, names)[0]
        world.set_parameters({n: p - h})
        lm = state_loss(world, q0, v0, taus, Q_ref, V_ref, names)[0]
        world.set_parameters({n: p})
        fd[n] = (lp - lm) / (2 * h)
    scale = max(abs(v) for v in fd.values())
    grad_err = max(abs(grad[n] - fd[n]) for n in names) / scale

    history = []

    def fun(x):
        world.set_parameters(dict(zip(names, x)))
        loss, g = state_loss(world, q0, v0, taus, Q_ref, V_ref, names)
        history.append(loss)
        return loss, np.array([g[n] for n in names])

    p = world.parameters()
    bounds = [(max(p.lower[p.index(n)], 1e-6), None) for n in names]
    res = minimize(fun, [START[n] for n in names], jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": 200, "ftol": 1e-30, "gtol": 1e-12})
    fitted = dict(zip(names, res.x))
    return {"names": names, "fitted": fitted, "grad_err": grad_err, "loss0": loss0, "history": history,
            "iters": res.nit}


def reach(fast: bool):
    """Gauss-Newton on the final-state residuals: each Jacobian row is one reverse pass."""
    world = rd.World(dt=5e-3)
    world.add_skeleton(rd.load_urdf(rd.models.path("arm7")))
    steps, pieces = 100, 10  # torques held constant over 10 pieces of 10 steps
    nv = world.nv
    q0, v0 = world.neutral_configuration(), np.zeros(nv)
    q_goal = np.array([0.5, -0.4, 0.3, -1.0, 0.2, 0.6, -0.3])
    w_v, w_tau = 0.3, 1e-4  # weights of the final velocity and of the torques in the residual

    def torques(x):
        return np.repeat(x.reshape(pieces, nv), steps // pieces, axis=0)

    def residual(x):
        taus = torques(x)
        Q, V = world.rollout(q0, v0, taus)
        r = np.concatenate([Q[-1] - q_goal, w_v * V[-1], w_tau * x])
        history.append(0.5 * float(r @ r))
        return r

    def jacobian(x):
        traj = world.rollout(q0, v0, torques(x), record=True)
        rows = []
        for k in range(2 * nv):  # d(final q_k or v_k) / d(torques): one reverse pass each
            GQ, GV = np.zeros_like(traj.q), np.zeros_like(traj.v)
            if k < nv:
                GQ[-1, k] = 1.0
            else:
                GV[-1, k - nv] = w_v
            g_tau = traj.backward(GQ, GV).tau
            rows.append(g_tau.reshape(pieces, steps // pieces, nv).sum(axis=1).ravel())
        return np.vstack(rows + [w_tau * np.eye(pieces * nv)])

    history = []
    # stay within the effort limits: beyond them the step clips the torque and its gradient is zero
    limit = np.tile(np.concatenate([world.joint(n).effort_limit for n in world.joint_names]), pieces)
    x0 = np.tile(world.gravity_forces(q0), pieces)
    t0 = time.perf_counter()
    res = least_squares(residual, x0, jac=jacobian, bounds=(-limit, limit), max_nfev=30 if fast else 100,
                        xtol=1e-12, ftol=1e-12)
    seconds = time.perf_counter() - t0
    Q, V = world.rollout(q0, v0, torques(res.x))
    return {"history": history, "final_error": float(np.abs(Q[-1] - q_goal).max()),
            "final_speed": float(np.abs(V[-1]).max()), "seconds": seconds, "iters": res.nfev}


def timing():
    """Reverse pass over a 1000-step rollout against the rollout itself."""
    world = rd.World(dt=1e-3)
    world.add_skeleton(rd.load_urdf(rd.models.path("arm7")))
    rng = np.random.default_rng(0)
    taus = 0.5 * rng.normal(size=(1000, world.nv))
    q0, v0 = world.neutral_configuration(), np.zeros(world.nv)
    G = np.ones((1001, world.nv))
    fwd, bwd = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        traj = world.rollout(q0, v0, taus, record=True)
        t1 = time.perf_counter()
        traj.backward(G, G)
        bwd.append(time.perf_counter() - t1)
        fwd.append(t1 - t0)
    return min(fwd), min(bwd)


def plot(out: Path, ident, reach_res) -> list:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots written")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    axes[0].semilogy(ident["history"])
    axes[0].set(title="identifying masses and damping", xlabel="evaluation", ylabel="state error loss")
    axes[1].semilogy(reach_res["history"])
    axes[1].set(title="arm7: torques that reach a target", xlabel="evaluation", ylabel="residual loss")
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    path = out / "gradient_fits.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    ident = identify(fast)
    print("identification of the double pendulum from a recorded swing")
    print(f"rollout gradient vs central differences: max relative error {ident['grad_err']:.2e}")
    worst = 0.0
    for n in ident["names"]:
        rel = abs(ident["fitted"][n] - TRUE[n]) / TRUE[n]
        worst = max(worst, rel)
        print(f"  {n:16s} true {TRUE[n]:.4f}  start {START[n]:.4f}  fitted {ident['fitted'][n]:.8f}")
    print(f"largest relative parameter error: {worst:.2e} after {ident['iters']} L-BFGS-B iterations")
    print(f"loss {ident['loss0']:.3e} -> {ident['history'][-1]:.3e}")

    reach_res = reach(fast)
    print()
    print("arm7 torques optimised through the reverse pass (100 steps of 5 ms)")
    print(f"final joint error: {reach_res['final_error']:.2e} rad, final speed {reach_res['final_speed']:.2e} rad/s "
          f"after {reach_res['iters']} evaluations ({reach_res['seconds']:.2f} s)")

    fwd, bwd = timing()
    print()
    print(f"1000-step rollout of arm7: forward {fwd * 1e3:.2f} ms, reverse pass {bwd * 1e3:.2f} ms "
          f"(backward / forward ratio: {bwd / fwd:.2f})")
    for p in plot(Path(out), ident, reach_res):
        print(f"wrote {p}")
    return {"ident": ident, "reach": reach_res}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNG (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)
