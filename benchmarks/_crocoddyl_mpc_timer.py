"""Times Crocoddyl's FDDP as an MPC replan for bench_mpc.py, in the interpreter that has crocoddyl installed.

    python _crocoddyl_mpc_timer.py < request.json

Crocoddyl (with Pinocchio and example-robot-data) usually lives in its own environment: this script imports
neither rigidiff nor the other benchmark modules. The crocoddyl 3.2.1 wheels are built against pinocchio 4.0
(pip install crocoddyl==3.2.1 pin==4.0.0); with pin 4.1 they crash, so that pair is refused with an "error".

The request (one JSON object) holds:

- "robot": "panda" (fingers locked at their neutral values, nv = 7; free dynamics, full actuation) or
  "solo12" (the four feet in 3D contact, floating-base actuation);
- "dt" (control period), "horizons" (list of N), "iterations" (FDDP iterations per replan), "replans" (timed
  replans per horizon), optionally "repeats" (of the replan sequence from the first solve, default 1);
- "q0": start configuration in Pinocchio's layout (panda: 7 or 9 entries; solo12: default the target);
- "target": panda, the world position (3,) of the frame "frame" (default "panda_hand"); solo12, the standing
  configuration (19,) that the costs hold (free flyer xyz, quaternion xyzw, 12 joints);
- "weights": {"state", "control", "target"}: the state regularisation towards (q_ref, 0) with q_ref the
  panda's q0 or solo12's standing q, the control regularisation, the goal on the panda frame's translation;
- optional: "control_reference" ("zero", the panda's default, or "gravity": ResidualModelControlGrav on the
  panda, the quasi-static standing torques on solo12, its default), "baumgarte" (solo12 contact gains,
  default [0, 50]), "first_iterations" (cap of the first solve, default 200), "threads" (default 1).

For every horizon N the shooting problem is built and solved to convergence from xs = [x0] * (N + 1) and
the quasi-static controls; then every replan moves x0 to the state one running-model step ahead under the
first planned control, shifts the previous plan by one knot and calls solve(xs, us, maxiter=iterations,
is_feasible=False). Only the solve call is timed (as rigidiff's MPC times its solve).

The answer is one JSON object, the only line on stdout (what the libraries print goes to stderr). It holds per
horizon the median, max and min replan time in ms, the mean FDDP iterations done, the cost after the last
replan, how many replans ended on a line-search step below 1 ("short_steps": each tried the step lengths
down to it, one rollout each) and the first solve's time, iterations and cost; with the versions, the
frame, nv and notes; or an "error" with the traceback.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback

PANDA_FINGERS = ("panda_finger_joint1", "panda_finger_joint2")
SOLO_FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")


def _panda(req: dict, notes: list):
    """Reduced panda (fingers locked at neutral), its free-dynamics running and terminal models, x0."""
    import crocoddyl
    import example_robot_data
    import numpy as np
    import pinocchio

    full = example_robot_data.load("panda").model
    locked = [full.getJointId(n) for n in PANDA_FINGERS if full.existJointName(n)]
    model = pinocchio.buildReducedModel(full, locked, pinocchio.neutral(full))
    notes.append(f"panda: joints {', '.join(PANDA_FINGERS)} locked at their neutral values (nq = nv = {model.nv})")
    q0 = np.asarray(req["q0"], dtype=float)
    if q0.shape == (full.nq,):  # a full configuration: keep the arm's joints
        keep = [full.joints[full.getJointId(n)].idx_q for n in model.names[1:]]
        q0 = q0[keep]
    if q0.shape != (model.nq,):
        raise ValueError(f"q0 must have {model.nq} (or {full.nq}) entries, got {q0.shape}")
    frame = req.get("frame", "panda_hand")
    if not model.existFrame(frame):
        raise ValueError(f"panda has no frame {frame!r}")
    fid = model.getFrameId(frame)
    target = np.asarray(req["target"], dtype=float)
    if target.shape != (3,):
        raise ValueError(f"target must be a position (3,) for panda, got {target.shape}")

    w = req["weights"]
    state = crocoddyl.StateMultibody(model)
    actuation = crocoddyl.ActuationModelFull(state)
    nu = actuation.nu
    x0 = np.concatenate([q0, np.zeros(model.nv)])
    xreg = crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelState(state, x0, nu))
    goal = crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelFrameTranslation(state, fid, target, nu))
    uref = req.get("control_reference", "zero")
    if uref == "gravity":
        ureg = crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelControlGrav(state, nu))
        notes.append("control cost: u - g(q) (ResidualModelControlGrav)")
    elif uref == "zero":
        ureg = crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelControl(state, nu))
        notes.append("control cost: u towards zero (ResidualModelControl)")
    else:
        raise ValueError(f"control_reference must be 'zero' or 'gravity', got {uref!r}")

    running = crocoddyl.CostModelSum(state, nu)
    running.addCost("state", xreg, float(w["state"]))
    running.addCost("control", ureg, float(w["control"]))
    running.addCost("goal", goal, float(w["target"]))
    terminal = crocoddyl.CostModelSum(state, nu)
    terminal.addCost("state", xreg, float(w["state"]))
    terminal.addCost("goal", goal, float(w["target"]))
    notes.append("costs: running = state + control + goal, terminal = state + goal; state reference (q0, 0)")

    def dam(costs):
        return crocoddyl.DifferentialActionModelFreeFwdDynamics(state, actuation, costs)

    return model, frame, x0, dam(running), dam(terminal)


def _solo12(req: dict, notes: list):
    """solo12 with its four feet in 3D contact, the contact-dynamics running and terminal models, x0."""
    import crocoddyl
    import example_robot_data
    import numpy as np
    import pinocchio

    model = example_robot_data.load("solo12").model
    qstand = np.asarray(req["target"], dtype=float)
    q0 = np.asarray(req.get("q0", qstand), dtype=float)
    for name, q in (("target", qstand), ("q0", q0)):
        if q.shape != (model.nq,):
            raise ValueError(f"{name} must be a configuration ({model.nq},) for solo12, got {q.shape}")
    data = model.createData()
    pinocchio.framesForwardKinematics(model, data, qstand)

    state = crocoddyl.StateMultibody(model)
    actuation = crocoddyl.ActuationModelFloatingBase(state)
    nu = actuation.nu
    gains = np.asarray(req.get("baumgarte", [0.0, 50.0]), dtype=float)
    contacts = crocoddyl.ContactModelMultiple(state, nu)
    for foot in SOLO_FEET:
        fid = model.getFrameId(foot)
        contact = crocoddyl.ContactModel3D(state, fid, data.oMf[fid].translation.copy(),
                                           pinocchio.LOCAL_WORLD_ALIGNED, nu, gains)
        contacts.addContact(foot, contact)
    notes.append(f"solo12: ContactModel3D (LOCAL_WORLD_ALIGNED) on {', '.join(SOLO_FEET)}, Baumgarte gains "
                 f"{gains.tolist()}, anchored at the feet of the standing configuration")

    xstand = np.concatenate([qstand, np.zeros(model.nv)])
    uref = req.get("control_reference", "gravity")
    if uref == "gravity":  # the torques that hold the standing posture on the four feet
        probe = crocoddyl.DifferentialActionModelContactFwdDynamics(
            state, actuation, contacts, crocoddyl.CostModelSum(state, nu), 0.0, True)
        ustand = probe.quasiStatic(probe.createData(), xstand)
        notes.append("control cost: u towards the quasi-static standing torques "
                     f"(max |u_ref| = {float(np.abs(ustand).max()):.3g} Nm)")
    elif uref == "zero":
        ustand = np.zeros(nu)
        notes.append("control cost: u towards zero")
    else:
        raise ValueError(f"control_reference must be 'zero' or 'gravity', got {uref!r}")

    w = req["weights"]
    xreg = crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelState(state, xstand, nu))
    ureg = crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelControl(state, ustand))
    running = crocoddyl.CostModelSum(state, nu)
    running.addCost("state", xreg, float(w["state"]))
    running.addCost("control", ureg, float(w["control"]))
    terminal = crocoddyl.CostModelSum(state, nu)
    terminal.addCost("state", xreg, float(w["state"]))
    notes.append("costs: running = state + control, terminal = state; state reference (standing q, 0); "
                 "weights['target'] unused")

    def dam(costs):
        return crocoddyl.DifferentialActionModelContactFwdDynamics(state, actuation, contacts, costs, 0.0, True)

    x0 = np.concatenate([q0, np.zeros(model.nv)])
    return model, None, x0, dam(running), dam(terminal)


def _iterations(solver, converged: bool, maxiter: int) -> int:
    """FDDP iterations done by the last solve: the loop counter stops at maxiter, or at the converging
    iteration's index when it returns early."""
    return min(solver.iter + 1, maxiter) if converged else solver.iter


def _horizon(crocoddyl, np, x0, running, terminal, N: int, req: dict, threads: int) -> dict:
    dt = float(req["dt"])
    iters = int(req["iterations"])
    rmodel = crocoddyl.IntegratedActionModelEuler(running, dt)
    tmodel = crocoddyl.IntegratedActionModelEuler(terminal, 0.0)
    problem = crocoddyl.ShootingProblem(x0.copy(), [rmodel] * N, tmodel)
    problem.nthreads = threads
    solver = crocoddyl.SolverFDDP(problem)
    plant, plant_data = rmodel, rmodel.createData()  # the "real" system: one running-model step

    first_max = int(req.get("first_iterations", 200))
    xs0 = [x0.copy() for _ in range(N + 1)]
    us0 = list(problem.quasiStatic(xs0[:-1]))
    t0 = time.perf_counter()
    ok = solver.solve(xs0, us0, first_max, False)
    first_ms = 1e3 * (time.perf_counter() - t0)
    first = {"ms": first_ms, "iterations": _iterations(solver, ok, first_max), "converged": bool(ok),
             "cost": float(solver.cost)}
    xs_first, us_first = list(solver.xs), list(solver.us)

    times, done, costs, steps = [], [], [], []
    for _ in range(int(req.get("repeats", 1))):
        x, xs, us = x0.copy(), xs_first, us_first
        for _ in range(int(req["replans"])):
            plant.calc(plant_data, x, us[0])
            x = plant_data.xnext.copy()
            problem.x0 = x
            xs_init, us_init = xs[1:] + [xs[-1]], us[1:] + [us[-1]]
            t0 = time.perf_counter()
            ok = solver.solve(xs_init, us_init, iters, False)
            times.append(time.perf_counter() - t0)
            done.append(_iterations(solver, ok, iters))
            costs.append(float(solver.cost))
            steps.append(float(solver.stepLength))
            xs, us = list(solver.xs), list(solver.us)
    ms = 1e3 * np.asarray(times)
    return {"median_ms": float(np.median(ms)), "max_ms": float(ms.max()), "min_ms": float(ms.min()),
            "iterations": float(np.mean(done)), "cost": costs[-1], "mean_cost": float(np.mean(costs)),
            "short_steps": int(np.sum(np.asarray(steps) < 1.0)),
            "samples": len(times), "first_solve": first}


def run(req: dict) -> dict:
    threads = int(req.get("threads", 1))
    os.environ["OMP_NUM_THREADS"] = str(threads)  # before libgomp starts, in case anything reads it
    import crocoddyl
    import numpy as np
    import pinocchio

    pin_version = tuple(int(p) for p in pinocchio.__version__.split(".")[:2])
    if crocoddyl.__version__.startswith("3.2.") and pin_version >= (4, 1) and not req.get("skip_abi_check"):
        # the crocoddyl 3.2 wheels were built against pinocchio 4.0: with 4.1 they crash or corrupt memory
        raise RuntimeError(f"crocoddyl {crocoddyl.__version__} with pinocchio {pinocchio.__version__}: the wheels are "
                           "built against pinocchio 4.0 (pip install pin==4.0.0), set skip_abi_check to try anyway")
    notes = []
    robot = req["robot"]
    if robot == "panda":
        model, frame, x0, running, terminal = _panda(req, notes)
    elif robot == "solo12":
        model, frame, x0, running, terminal = _solo12(req, notes)
    else:
        raise ValueError(f"robot must be 'panda' or 'solo12', got {robot!r}")

    probe = crocoddyl.ShootingProblem(x0, [crocoddyl.IntegratedActionModelEuler(running, float(req["dt"]))],
                                      crocoddyl.IntegratedActionModelEuler(terminal, 0.0))
    notes.append(f"threads: ShootingProblem.nthreads {probe.nthreads} by default, set to {threads}; "
                 f"OMP_NUM_THREADS={threads}")
    notes.append("integrator: IntegratedActionModelEuler (running costs scaled by dt, terminal model dt = 0); "
                 "FDDP without control limits")
    notes.append("timed: solver.solve only (the x0 update, the shift and the plant step are not)")

    results = {str(int(N)): _horizon(crocoddyl, np, x0, running, terminal, int(N), req, threads)
               for N in req["horizons"]}
    return {"robot": robot, "crocoddyl_version": crocoddyl.__version__, "pinocchio_version": pinocchio.__version__,
            "frame": frame, "nv": int(model.nv), "nthreads": threads, "results": results, "notes": notes}


def main() -> int:
    req = json.load(sys.stdin)
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)  # whatever the libraries print goes to stderr, the answer alone to stdout
    try:
        out = run(req)
    except Exception as e:  # report why, the benchmark goes on without Crocoddyl
        out = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc(limit=3)}
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
