"""Single shooting: the torques (and optionally the initial state and parameters) are the unknowns; each
evaluation is one rollout and its reverse pass (``Trajectory.backward``)."""

from __future__ import annotations

import time

import numpy as np

from .progress import Progress
from .result import Result

__all__ = ["solve_shooting", "ShootingVariables"]


class ShootingVariables:
    """The unknown vector z = [controls (T*nu), tangent offset of q0 (nv), v0 (nv), parameters] and its
    bounds; the q0 and v0 parts are there only when the problem optimises them."""

    def __init__(self, prob):
        self.prob = prob
        T, nu, nv = prob.T, prob.nu, prob.nv
        sizes = [T * nu, nv if prob.opt_q0 else 0, nv if prob.opt_v0 else 0, len(prob.param_names)]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)])
        self.size = int(self.offsets[-1])

    def part(self, z, k):
        return z[self.offsets[k]:self.offsets[k + 1]]

    def start(self) -> np.ndarray:
        prob = self.prob
        return np.concatenate([prob.initial_controls().ravel(), np.zeros(self.offsets[2] - self.offsets[1]),
                               prob.v0 if prob.opt_v0 else [], prob.param_start if prob.param_names else []])

    def bounds(self):
        prob = self.prob
        n_state = self.offsets[3] - self.offsets[1]
        lo = np.concatenate([prob.u_lower.ravel(), np.full(n_state, -np.inf), prob.param_lower])
        hi = np.concatenate([prob.u_upper.ravel(), np.full(n_state, np.inf), prob.param_upper])
        return lo, hi

    def unpack(self, z):
        """(U (T, nu), q0, v0, p) from z."""
        prob = self.prob
        U = self.part(z, 0).reshape(prob.T, prob.nu)
        q0 = prob.world.integrate(prob.q0, self.part(z, 1)) if prob.opt_q0 else prob.q0
        v0 = self.part(z, 2) if prob.opt_v0 else prob.v0
        return U, q0, v0, self.part(z, 3)

    def gradient(self, z, gU, gq0, gv0, gp) -> np.ndarray:
        """dL/dz from the gradients with respect to U, q0 (tangent at q0), v0 and the parameters."""
        prob = self.prob
        parts = [gU.ravel()]
        if prob.opt_q0:
            d = self.part(z, 1)
            parts.append(prob.world.integrate_jacobians(prob.q0, d)[1].T @ gq0)
        if prob.opt_v0:
            parts.append(gv0)
        parts.append(gp)
        return np.concatenate(parts)


class _Objective:
    """Cost and gradient of z by one rollout and its reverse pass, with timing and the best point seen."""

    def __init__(self, prob, variables: ShootingVariables):
        self.prob, self.vars = prob, variables
        self.dynamics_time = 0.0
        self.evaluations = 0
        self.best = (np.inf, None)
        self.last = (None, np.inf)

    def __call__(self, z):
        prob = self.prob
        world = prob.world
        U, q0, v0, p = self.vars.unpack(z)
        TAU = prob.torques(U)
        t0 = time.perf_counter()
        try:
            prob.set_parameter_values(p)
            traj = world.rollout(q0, v0, TAU, record=True)
        except (RuntimeError, ValueError):
            return np.inf, np.zeros_like(z)  # a diverged rollout: the line search steps back
        acc = prob.costs(traj.q, traj.v, TAU)
        wrt = list(prob.param_names) if prob.param_names else None
        g = traj.backward(dL_dQ=acc.gq, dL_dV=acc.gv, wrt=wrt, explore_contact_modes=prob.explore_contact_modes)
        self.dynamics_time += time.perf_counter() - t0
        self.evaluations += 1
        gU = (g.tau + acc.gtau) @ prob.S
        grad = self.vars.gradient(z, gU, g.q, g.v, g.parameters)
        self.last = (z.copy(), acc.value)
        if acc.value < self.best[0]:
            self.best = (acc.value, z.copy())
        return acc.value, grad


def _finish(prob, variables, z, history, converged, iterations, message, method, t_start, dynamics_time):
    U, q0, v0, p = variables.unpack(z)
    prob.set_parameter_values(p)
    TAU = prob.torques(U)
    Q, V = prob.world.rollout(q0, v0, TAU)
    cost = prob.costs(Q, V, TAU, derivatives=False).value
    total = time.perf_counter() - t_start
    return Result(q=Q, v=V, tau=TAU, parameters=dict(zip(prob.param_names, np.asarray(p, dtype=float).tolist())),
                  cost=float(cost), cost_history=history, constraint_violation=0.0, converged=bool(converged),
                  iterations=int(iterations), message=message, method=method,
                  timings={"total": total, "dynamics": dynamics_time,
                           "per_iteration": total / max(iterations, 1)})


def solve_shooting(prob, max_iters: int, tol: float, verbose: bool, method: str = "shooting",
                   learning_rate: float = 0.01, betas=(0.9, 0.999)):
    """L-BFGS-B (method "shooting") or Adam (method "adam") on the single-shooting objective."""
    import scipy.optimize as so  # here: it takes most of rigidiff's import time
    t_start = time.perf_counter()
    variables = ShootingVariables(prob)
    objective = _Objective(prob, variables)
    lo, hi = variables.bounds()
    z0 = np.clip(variables.start(), lo, hi)
    f0, _ = objective(z0)
    if not np.isfinite(f0):
        raise RuntimeError("the rollout of the initial guess failed (diverged or invalid); start from other torques")
    history = [float(f0)]
    progress = Progress(verbose, max_iters, method)
    if np.all(lo == hi):  # the bounds fix every unknown: the first guess is the answer
        progress.close("every unknown is fixed by its bounds")
        return _finish(prob, variables, z0, history, True, 0, "every unknown is fixed by its bounds", method, t_start,
                       objective.dynamics_time)
    if method == "adam":
        z, converged, iterations, message = _adam(objective, z0, lo, hi, max_iters, tol, learning_rate, betas,
                                                   history, progress)
    else:
        def callback(zk, *args):
            z_last, f_last = objective.last
            history.append(float(f_last if z_last is not None and np.array_equal(z_last, zk) else objective(zk)[0]))
            progress.update(len(history) - 1, history[-1])

        def fun(z):
            return objective(z)

        res = so.minimize(fun, z0, jac=True, method="L-BFGS-B", bounds=list(zip(lo, hi)), callback=callback,
                          options={"maxiter": max_iters, "ftol": tol, "gtol": tol * 1e-2})
        z = res.x if objective.best[1] is None or res.fun <= objective.best[0] else objective.best[1]
        converged, message = bool(res.success), str(res.message)
        iterations = int(getattr(res, "nit", 0))  # scipy leaves nit out when the bounds fix every unknown
        if converged and min(history) >= history[0] and np.abs(res.jac).max() > max(tol, 1e-8):
            # scipy's ftol test passes when a first step overshoots on a stiff cost and nothing improved
            converged = False
            message += "; no decrease from the first guess with a nonzero gradient (a badly scaled cost: " \
                       "try 'ilqr' or 'multiple_shooting')"
    progress.close(message)
    return _finish(prob, variables, z, history, converged, iterations, message, method, t_start,
                   objective.dynamics_time)


def _adam(objective, z0, lo, hi, max_iters, tol, lr, betas, history, progress):
    """Projected Adam; keeps the best point. Converged when the projected step is below tol."""
    b1, b2 = betas
    z = z0.copy()
    m = np.zeros_like(z)
    s = np.zeros_like(z)
    best_f, best_z = history[0], z0.copy()
    message = "iteration limit reached"
    converged = False
    k = 0
    f, g = objective(z)
    for k in range(1, max_iters + 1):
        m = b1 * m + (1 - b1) * g
        s = b2 * s + (1 - b2) * g * g
        step = lr * (m / (1 - b1**k)) / (np.sqrt(s / (1 - b2**k)) + 1e-12)
        z_new = np.clip(z - step, lo, hi)
        moved = np.max(np.abs(z_new - z)) if z.size else 0.0
        z = z_new
        f, g = objective(z)
        history.append(float(f))
        progress.update(k, f)
        if f < best_f:
            best_f, best_z = f, z.copy()
        if not np.any(g) or moved < tol * lr:
            converged, message = True, "the gradient vanished" if not np.any(g) else "steps below tolerance"
            break
    return best_z, converged, k, message
