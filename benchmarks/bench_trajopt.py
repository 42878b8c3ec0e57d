"""Time to solution of the cartpole swing-up: rigidiff's trajectory optimisers next to Nimble's
MultiShot + IPOPT, in the same run.

    python benchmarks/bench_trajopt.py [--repeats 3] [--nimble-python PATH]

The problem (docs/trajopt.md, examples/cartpole_swing_up.py): the shipped cartpole, dt = 0.05 s,
T = 60 steps from hanging (q = (0, pi)) to upright at rest over the start, cart force within 20 N, no
motor on the hinge, cost 0.5 (x² + 50 θ²) + 0.5·5 (ẋ² + θ̇²) at the final state + 0.5·1e-3 Σ f².
rigidiff solves it with iLQR, multiple shooting (SLSQP; shots of 5 and 10 steps) and shooting
(L-BFGS-B) from zero forces, each at its default tolerance. Nimble (run by `_nimble_trajopt_timer.py`
in the interpreter given by --nimble-python, default $RIGIDIFF_NIMBLE_PYTHON) solves the same problem
with MultiShot (shots of 10 steps) and IPOPT (L-BFGS history 5), the loss given with its analytic
gradient.

Two differences to keep in mind when reading the numbers: Nimble's step moves the positions with the
velocities from before the step (rigidiff's with those after it), so the optimal trajectories differ
slightly; and Nimble 0.10.52 drops the force term of the loss's gradient (its IPOPT stops at the first
trajectory that reaches the goal, without minimising force), so its final cost is higher than the
optimum. Prints the wall time (median over the repeats), iterations, final cost and final state error
of each, and the time ratios rigidiff / Nimble (below 1: rigidiff is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import rigidiff as rd

DT, T, LIMIT = 0.05, 60, 20.0
W_Q, W_V, W_U = [1.0, 50.0], [5.0, 5.0], 1e-3


def problem() -> rd.trajopt.Problem:
    world = rd.World(dt=DT)
    world.add_skeleton(rd.models.load("cartpole"))
    prob = rd.trajopt.Problem(world, T, q0=[0.0, np.pi])
    prob.add_state_cost(q_target=[0.0, 0.0], v_target=[0.0, 0.0], q_weight=W_Q, v_weight=W_V, final_only=True)
    prob.add_control_cost(W_U)
    prob.set_control_bounds(-LIMIT, LIMIT)
    prob.set_actuated(["slider"])
    return prob


RUNS = {
    "iLQR": dict(method="ilqr", max_iters=500),
    "multiple shooting, shots of 5": dict(method="multiple_shooting", max_iters=500, shot_length=5),
    "multiple shooting, shots of 10": dict(method="multiple_shooting", max_iters=500, shot_length=10),
    "shooting (L-BFGS-B)": dict(method="shooting", max_iters=2000),
}


def time_rigidiff(repeats: int) -> dict:
    out = {}
    for name, kwargs in RUNS.items():
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            res = problem().solve(verbose=False, **kwargs)
            times.append(time.perf_counter() - t0)
        final = np.concatenate([res.q[-1], res.v[-1]])
        out[name] = {"seconds": float(np.median(times)), "iterations": res.iterations, "cost": res.cost,
                     "final_error": float(np.abs(final).max()), "converged": res.converged}
    return out


def time_nimble(python: str | None, repeats: int) -> dict:
    if not python:
        return {"error": "no Nimble interpreter (--nimble-python or $RIGIDIFF_NIMBLE_PYTHON)"}
    request = {"urdf": Path(rd.models.path("cartpole")).read_text(), "dofs": ["slider", "hinge"], "dt": DT,
               "horizon": T, "shot_length": 10, "q0": [0.0, float(np.pi)], "v0": [0.0, 0.0],
               "force_limits": [LIMIT, 0.0], "w_q": W_Q, "w_v": W_V, "w_u": W_U, "max_iter": 500, "tol": 1e-6,
               "repeats": repeats, "check_gradient": False}
    script = Path(__file__).with_name("_nimble_trajopt_timer.py")
    try:
        proc = subprocess.run([python, str(script)], input=json.dumps(request), capture_output=True, text=True,
                              timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    for line in proc.stdout.splitlines():
        if line.startswith("@@JSON@@"):
            return json.loads(line[len("@@JSON@@"):])
    return {"error": (proc.stderr or proc.stdout)[-2000:] or f"exit status {proc.returncode}"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--nimble-python", default=os.environ.get("RIGIDIFF_NIMBLE_PYTHON"))
    args = parser.parse_args(argv)
    ours = time_rigidiff(args.repeats)
    nimble = time_nimble(args.nimble_python, args.repeats)
    print(f"cartpole swing-up, T = {T}, dt = {DT}: wall time to solution (median of {args.repeats})")
    print(f"{'solver':38} {'seconds':>8} {'iters':>6} {'cost':>9} {'|final state|':>14} {'vs Nimble':>10}")
    t_nimble = nimble.get("seconds")
    for name, r in ours.items():
        ratio = f"{r['seconds'] / t_nimble:10.2f}" if t_nimble else f"{'-':>10}"
        print(f"rigidiff {name:29} {r['seconds']:8.3f} {r['iterations']:6d} {r['cost']:9.4f} "
              f"{r['final_error']:14.1e} {ratio}" + ("" if r["converged"] else "  (not converged)"))
    if "error" in nimble:
        print(f"Nimble: {nimble['error'].strip().splitlines()[-1]}")
    else:
        final = np.abs(np.asarray(nimble["final_state_resim"])).max()
        print(f"{'Nimble MultiShot (10) + IPOPT':38} {t_nimble:8.3f} {nimble['iterations']:6d} "
              f"{nimble['final_cost']:9.4f} {final:14.1e} {1.0:10.2f}  ({nimble['ipopt'].get('exit', '?')}, "
              f"nimblephysics {nimble['nimble_version']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
