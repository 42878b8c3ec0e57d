"""Times Nimble's (nimblephysics) trajectory optimisation of the cartpole swing-up, in the interpreter that has it.

    python _nimble_trajopt_timer.py < request.json

Nimble needs numpy < 2 and torch, so it usually lives in its own environment: this script imports neither
rigidiff nor the other benchmark modules. The problem is solved by multiple shooting
(`nimble.trajectory.MultiShot`) with IPOPT (`nimble.trajectory.IPOptOptimizer`, limited-memory BFGS Hessian),
the loss given with its analytic gradient with respect to the rollout (without it Nimble differentiates the
loss by finite differences).

The request (one JSON object) holds:

- "urdf": the URDF text; its root is welded to the world (Nimble's loader frees the root unless a link is
  called `world`) and its collision elements are dropped (nothing to collide with);
- "dofs": joint names, the order of every per-dof list below (mapped onto Nimble's dof order);
- "dt", "gravity" (default [0, 0, -9.81]), "horizon" (steps T), "shot_length" (steps per shot);
- "q0", "v0": the start state; "q_goal" (default zeros);
- "force_limits": the bound |f| <= limit on each dof's control force (0 for an unactuated joint: IPOPT then
  treats those forces as fixed; Nimble's trajectory problem keeps one force per dof whatever the action space);
- "w_q", "w_v", "w_u": the loss 0.5 sum_i w_q[i] (q_T[i] - q_goal[i])^2 + 0.5 sum_i w_v[i] v_T[i]^2
  + 0.5 w_u sum_t |f_t|^2, with (q_T, v_T) the state after the last of the T steps;
- "max_iter", "tol", "lbfgs_history" (default 5; Nimble's own default is 1), "repeats";
- "check_gradient" (default true): compare the analytic loss gradient with central differences on a
  rollout, once, outside the timing;
- "derivative_test" (default false): run IPOPT's derivative checker on the gradient Nimble hands IPOPT.

Nimble's own limits stay in force: the knot states of the later shots are bounded by the URDF's position and
velocity limits. Nimble's step integrates the positions with the velocities from before the step
(q' = q + dt v, then v' = v + dt a).

Nimble 0.10.52 drops the part of the gradient that comes from the loss's direct dependence on the control
forces (SingleShot::backpropGradientWrt adds the rollout gradient's force column only after it has copied the
force gradient out), so IPOPT gets the gradient of the final-state terms alone while the objective value holds
the force term too: "derivative_test" shows it. With w_u > 0, IPOPT then stops at any trajectory that reaches
the goal, and the force cost of the result is not minimised.

The answer, one line "@@JSON@@{...}" on stdout (what Nimble and IPOPT print to stdout goes to stderr), holds
the median wall-clock seconds of `optimize` over the repeats, IPOPT's exit message and iterations, the loss
at the solution, the final state (x, theta, xdot, thetadot for the cartpole: q_T then v_T, in the request's
dof order) of the solution's rollout and of a single-shooting re-simulation of its forces, IPOPT's primal
infeasibility (the largest knot defect) at the last iterate, and the Nimble version; or an "error".
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import time

from _nimble_timer import _fixed_base, answer, load_skeleton, nimble_version


def _without_collisions(text: str) -> str:
    """The URDF without its collision elements (DART's collision detector warns about cylinders, and the
    cartpole has nothing to touch)."""
    return re.sub(r"<collision\b.*?</collision>", "", text, flags=re.S)


def _flush_c_stdout() -> None:
    import ctypes

    ctypes.CDLL(None).fflush(None)


@contextlib.contextmanager
def _captured_stdout(sink: list):
    """Captures what C++ writes to stdout (IPOPT's banner and derivative checker, Nimble's messages), appends it to
    sink and copies it to stderr, so that stdout holds only the answer."""
    sys.stdout.flush()
    _flush_c_stdout()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            yield
        finally:
            sys.stdout.flush()
            _flush_c_stdout()
            os.dup2(saved, 1)
            os.close(saved)
            tmp.seek(0)
            text = tmp.read().decode(errors="replace")
            sys.stderr.write(text)
            sink.append(text)


def make_loss(nimble, np, w_q, w_v, w_u: float, q_goal):
    """The swing-up loss of a rollout and its gradient. A rollout holds (dofs, T) matrices of the positions and
    velocities after each step and of the control forces of each step; the gradient is written into the
    writable views of the same shape that the second rollout hands out."""

    def loss(rollout) -> float:
        dq = rollout.getPoses()[:, -1] - q_goal
        v = rollout.getVels()[:, -1]
        f = rollout.getControlForces()
        return float(0.5 * (w_q @ (dq * dq)) + 0.5 * (w_v @ (v * v)) + 0.5 * w_u * np.sum(f * f))

    def loss_and_grad(rollout, grad) -> float:
        q, v, f = rollout.getPoses(), rollout.getVels(), rollout.getControlForces()
        gq, gv, gf = grad.getPoses(), grad.getVels(), grad.getControlForces()
        gq[:] = 0.0
        gv[:] = 0.0
        gq[:, -1] = w_q * (q[:, -1] - q_goal)
        gv[:, -1] = w_v * v[:, -1]
        gf[:] = w_u * f
        return loss(rollout)

    return nimble.trajectory.LossFn(loss, loss_and_grad), loss, loss_and_grad


def check_gradient(np, rollout, loss, loss_and_grad, h: float = 1e-6) -> float:
    """Largest error of the analytic gradient against central differences, relative to the largest gradient
    entry, on a rollout whose entries are perturbed to be generic. Reads the gradient back through fresh views
    of the gradient rollout, so that it also checks that the writes reach Nimble's storage."""
    rng = np.random.default_rng(0)
    r = rollout.copy()
    for get in (r.getPoses, r.getVels, r.getControlForces):
        m = get()
        m += 0.3 * rng.standard_normal(m.shape)
    grad = rollout.copy()
    loss_and_grad(r, grad)
    err, scale = 0.0, 0.0
    for name in ("getPoses", "getVels", "getControlForces"):
        g = np.array(getattr(grad, name)())
        m = getattr(r, name)()
        fd = np.zeros_like(g)
        for idx in np.ndindex(*m.shape):
            x = m[idx]
            m[idx] = x + h
            up = loss(r)
            m[idx] = x - h
            down = loss(r)
            m[idx] = x
            fd[idx] = (up - down) / (2 * h)
        err = max(err, float(np.max(np.abs(g - fd))))
        scale = max(scale, float(np.max(np.abs(fd))))
    return err / max(scale, 1e-300)


def resimulate(world, rollout, q0, v0):
    """The rollout overwritten with the single-shooting simulation of its forces from (q0, v0). (The Problem's
    getRolloutCache(useKnots=False) hands back the cached knot rollout once that is cached.)"""
    q, v, f = rollout.getPoses(), rollout.getVels(), rollout.getControlForces()
    world.setPositions(q0)
    world.setVelocities(v0)
    for t in range(f.shape[1]):
        world.setControlForces(f[:, t])
        world.step()
        q[:, t] = world.getPositions()
        v[:, t] = world.getVelocities()
    return rollout


def derivative_test(shot, opt) -> dict:
    """IPOPT's first-order derivative checker on the problem's gradient (Nimble's backpropagation through the
    rollout of the loss gradient given by the LossFn), at IPOPT's randomly perturbed starting point: the number of
    entries it flags and, for each, its index, the gradient Nimble gave and IPOPT's finite difference."""
    opt.setCheckDerivatives(True)
    opt.setIterationLimit(0)
    opt.setSuppressOutput(False)  # IPOPT prints nothing, the checker's report included, at print level 0
    opt.setSilenceOutput(False)
    printed: list = []
    with _captured_stdout(printed):
        opt.optimize(shot)
    text = printed[0]
    count = re.search(r"Derivative checker detected (\d+) error", text)
    number = r"([-+0-9.eE]+)"
    flagged = re.findall(rf"\*\s*grad_f\[\s*(\d+)\]\s*=\s*{number}\s*~\s*{number}", text)
    return {"errors": int(count.group(1)) if count else 0,
            "grad_f": [[int(i), float(a), float(b)] for i, a, b in flagged]}


def ipopt_status(shot, opt) -> dict:
    """IPOPT's exit message and iteration count, from an untimed run that prints its summary (the timed runs print
    nothing: at print level 0 IPOPT does not even say how it ended; the runs are deterministic)."""
    opt.setSuppressOutput(False)
    opt.setSilenceOutput(False)
    opt.setPrintFrequency(1000000)  # the summary, not a line per iteration
    printed: list = []
    with _captured_stdout(printed):
        opt.optimize(shot)
    text = printed[0]
    exit_line = re.search(r"EXIT: (.*)", text)
    iterations = re.search(r"Number of Iterations\.*: (\d+)", text)
    return {"exit": exit_line.group(1).strip() if exit_line else "?",
            "iterations": int(iterations.group(1)) if iterations else None}


def run(req: dict) -> dict:
    import nimblephysics as nimble
    import numpy as np

    world = nimble.simulation.World()
    skel = load_skeleton(world, _without_collisions(_fixed_base(req["urdf"])))
    world.setGravity(np.array(req.get("gravity", [0.0, 0.0, -9.81]), dtype=float))
    world.setTimeStep(req["dt"])
    nv = world.getNumDofs()
    nimble_dofs = [skel.getDofByIndex(i).getName() for i in range(nv)]
    names = req["dofs"]
    if sorted(names) != sorted(nimble_dofs):
        raise ValueError(f"request dofs {names} are not Nimble's {nimble_dofs}")
    order = [names.index(n) for n in nimble_dofs]  # request index of each Nimble dof

    def vec(key, default=None):
        value = req.get(key, default)
        return np.array(value, dtype=float)[order]

    q0, v0 = vec("q0"), vec("v0")
    q_goal = vec("q_goal", [0.0] * nv)
    w_q, w_v, w_u = vec("w_q"), vec("w_v"), float(req["w_u"])
    limits = vec("force_limits")
    world.setControlForcesUpperLimits(limits)
    world.setControlForcesLowerLimits(-limits)
    lossfn, loss, loss_and_grad = make_loss(nimble, np, w_q, w_v, w_u, q_goal)
    horizon, shot_length = int(req["horizon"]), int(req["shot_length"])

    def problem():
        # every shot starts from the world's state: the first is pinned there, the later knots start there
        world.setPositions(q0)
        world.setVelocities(v0)
        world.setControlForces(np.zeros(nv))
        return nimble.trajectory.MultiShot(world, lossfn, horizon, shot_length, False)

    lbfgs = int(req.get("lbfgs_history", 5))

    def optimizer():
        opt = nimble.trajectory.IPOptOptimizer()
        opt.setIterationLimit(int(req["max_iter"]))
        opt.setTolerance(float(req["tol"]))
        opt.setLBFGSHistoryLength(lbfgs)
        opt.setRecoverBest(False)  # keep IPOPT's last iterate, not the best nearly feasible one seen
        opt.setRecordIterations(True)  # one rollout copy per iteration: gives the iteration count and defect
        opt.setSuppressOutput(True)
        opt.setSilenceOutput(True)
        return opt

    out = {"dofs_nimble": nimble_dofs, "lbfgs_history": lbfgs}
    with _captured_stdout([]):
        if req.get("check_gradient", True):
            shot = problem()  # the rollout it hands out is its cache: keep it alive while that is used
            out["gradient_rel_error"] = check_gradient(np, shot.getRolloutCache(world), loss, loss_and_grad)
    if req.get("derivative_test", False):
        out["derivative_test"] = derivative_test(problem(), optimizer())
    seconds = []
    for _ in range(int(req["repeats"])):
        shot, opt = problem(), optimizer()
        with _captured_stdout([]):
            t0 = time.perf_counter()
            solution = opt.optimize(shot)
            seconds.append(time.perf_counter() - t0)
    out["ipopt"] = ipopt_status(problem(), optimizer())
    with _captured_stdout([]):
        knots = shot.getRolloutCache(world)
        resim = resimulate(world, knots.copy(), q0, v0)
    steps = solution.getNumSteps()
    last = solution.getStep(steps - 1) if steps else None

    def final_state(rollout):
        q, v = rollout.getPoses()[:, -1], rollout.getVels()[:, -1]
        inverse = [nimble_dofs.index(n) for n in names]  # Nimble index of each request dof
        return [float(x) for x in np.concatenate([q[inverse], v[inverse]])]

    forces = np.array(knots.getControlForces())
    out.update({
        "seconds": float(np.median(seconds)),
        "all_seconds": seconds,
        "iterations": out["ipopt"]["iterations"],
        # Nimble records IPOPT's iteration 0 and, after a restoration phase, some iterations twice
        "recorded_iterations": steps - 1 if steps else 0,
        "final_cost": loss(knots),
        "final_state": final_state(knots),
        "final_cost_resim": loss(resim),
        "final_state_resim": final_state(resim),
        "max_defect": float(last.constraintViolation) if last is not None else None,
        "last_iterate_loss": float(last.loss) if last is not None else None,
        "max_abs_force": [float(x) for x in np.max(np.abs(forces), axis=1)[[nimble_dofs.index(n) for n in names]]],
    })
    out["nimble_version"] = nimble_version()
    return out


def main() -> int:
    return answer(run)


if __name__ == "__main__":
    sys.exit(main())
