"""iLQR on rigidiff's exact step Jacobians: a Riccati backward pass on the Gauss-Newton cost model,
a forward pass with a backtracking line search, Levenberg-Marquardt regularisation of Q_uu, and
control bounds through a small projected-Newton box QP per step (Tassa, Mansard and Todorov 2014)."""

from __future__ import annotations

import time

import numpy as np

from .. import _core
from .._validate import as_array, as_threads, real_array
from .dynamics import trajectory_jacobians
from .progress import Progress
from .result import Result

__all__ = ["solve_ilqr", "box_qp"]

# the schedule ilqr_solver.cpp follows too
MU_MIN, MU_MAX, MU_FACTOR = 1e-8, 1e10, 4.0
MAX_RAISES = 8  # per iteration: mu grows at most 4^8 = 65536 times before the solve stops
ALPHAS = 0.5 ** np.arange(12)
ARMIJO = 1e-4


def box_qp(H, g, lo, hi, x0=None):
    """min 0.5 x^T H x + g^T x subject to lo <= x <= hi (H symmetric positive definite), by projected
    Newton from x0: the box QP iLQR solves for the controls of every step.

    Returns (x, free) with ``free`` the mask of the entries not held at a bound; raises
    np.linalg.LinAlgError if H is not positive definite.
    """
    g = as_array(g, (-1,), "g")
    n = len(g)
    H = as_array(H, (n, n), "H (n = len(g))")
    lo, hi = (_bound(b, n, name) for b, name in ((lo, "lo"), (hi, "hi")))
    if np.any(lo > hi) or np.any(lo == np.inf) or np.any(hi == -np.inf):
        raise ValueError(f"box_qp: the box is empty (lo must be <= hi, lo < inf and hi > -inf), got lo {lo}, hi {hi}")
    start = np.zeros(n) if x0 is None else as_array(x0, (n,), "x0")
    # one backward step with no dynamics (B = 0) and the cost 0.5 u^T H u + g^T u is this QP
    out = _core._riccati_backward(np.zeros((1, 1, 1)), np.zeros((1, 1, n)), np.zeros((2, 1)), np.zeros((2, 1, 1)),
                                  g[None], H[None], lo[None], hi[None], start[None], 0.0)
    if out is None:
        raise np.linalg.LinAlgError("box_qp: H is not positive definite")
    x = out[0][0]
    grad = H @ x + g
    return x, ~(((x <= lo) & (grad > 0)) | ((x >= hi) & (grad < 0)))


def _bound(b, n: int, name: str) -> np.ndarray:
    """A box_qp bound: a number, or (n,) numbers (one per entry of g), +-inf allowed, NaN not."""
    arr = real_array(b, name, f"({n},) or a number")
    if arr.shape not in ((), (1,), (n,)):
        raise ValueError(f"{name} must be a number or have shape ({n},) like g, got {arr.shape}")
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} must not contain NaN, got {arr}")
    return np.broadcast_to(arr, (n,))


class _Ilqr:
    def __init__(self, prob, threads: int = 1):
        self.prob = prob
        self.threads = threads
        self.world = prob.world
        self.dynamics_time = 0.0
        self.lower, self.upper = prob.u_lower, prob.u_upper
        self.bounded = bool(np.any(np.isfinite(self.lower)) or np.any(np.isfinite(self.upper)))

    def rollout(self, U, ref=None, k=None, K=None, alpha=1.0):
        """States and cost of the open-loop rollout of U, or of the closed-loop one around ref = (Q, V, U)
        with the gains k, K; None if it diverged."""
        prob, world = self.prob, self.world
        t0 = time.perf_counter()
        try:
            if ref is None:
                Q, V = world.rollout(prob.q0, prob.v0, prob.torques(U))
            else:
                Q, V, U = world._core_closed_loop_rollout(prob.q0, prob.v0, ref[0], ref[1], ref[2], k, K, alpha,
                                                          prob.S, self.lower, self.upper)
        except (RuntimeError, ValueError):
            return None
        self.dynamics_time += time.perf_counter() - t0
        if not (np.all(np.isfinite(Q)) and np.all(np.isfinite(V))):
            return None
        return Q, V, U, prob.costs(Q, V, prob.torques(U), derivatives=False).value

    def linearize(self, Q, V, U):
        """Step Jacobians A (T, 2nv, 2nv), B (T, 2nv, nu) along the trajectory, and the cost's model."""
        prob = self.prob
        t0 = time.perf_counter()
        A, B = trajectory_jacobians(self.world, Q, V, prob.torques(U), threads=self.threads)
        B = B @ prob.S
        self.dynamics_time += time.perf_counter() - t0
        acc = prob.costs(Q, V, prob.torques(U), derivatives=True, hessians=True)
        lx = np.concatenate([acc.gq, acc.gv], axis=1)
        lu = acc.gtau @ prob.S
        luu = np.einsum("ia,tij,jb->tab", prob.S, acc.huu, prob.S)
        return A, B, lx, acc.hxx, lu, luu

    def backward(self, model, U, mu, k_start):
        """Gains k (T, nu), K (T, nu, 2nv) and the expected-reduction terms (C++ Riccati pass); None if
        Q_uu is not positive definite at this regularisation."""
        A, B, lx, lxx, lu, luu = model
        lo, hi = (self.lower - U, self.upper - U) if self.bounded else (None, None)
        return _core._riccati_backward(A, B, lx, lxx, lu, luu, lo, hi, k_start, mu)


NO_DECREASE = "no further decrease: converged"
NO_STEP = ("no step accepted at any regularisation tried (a change of contact mode, or a cost the local model "
           "misses)")
FIRST_ROLLOUT = "the rollout of the initial guess failed (diverged or invalid); start from other torques"


def solve_ilqr(prob, max_iters: int, tol: float, verbose: bool, mu: float = 1e-6, threads: int | None = None):
    """iLQR from the problem's initial guess; stops when the relative cost decrease is below tol.

    Runs in C++ (trajopt/ilqr_solver.hpp: rollouts, step Jacobians, costs, backward pass and line
    search) unless a cost is written in Python, then in _solve_python (the same algorithm). The knots'
    step Jacobians run on ``threads`` threads (None: RIGIDIFF_THREADS, else every core), with the same
    results whatever their count."""
    threads = as_threads(threads)
    native = prob._native_core()
    if native is None:
        return _solve_python(prob, max_iters, tol, verbose, mu, threads)
    t_start = time.perf_counter()
    world = prob.world
    native.threads = threads
    if not native.start(world, prob.q0, prob.v0, prob._tau_guess, float(mu)):
        raise RuntimeError(FIRST_ROLLOUT)
    cost = native.cost
    history = [cost]
    progress = Progress(verbose, max_iters, "ilqr")
    converged, message, iterations = False, "iteration limit reached", 0
    for iterations in range(1, max_iters + 1):
        status = native.iterate(world, tol)
        if status >= 2:  # no step accepted
            converged = status == 2
            message = NO_DECREASE if converged else NO_STEP
            break
        cost = native.cost
        history.append(cost)
        progress.update(iterations, cost)
        if status == 1:
            converged, message = True, "relative cost decrease below tol"
            break
    progress.close(message)
    Q, V, U = native.trajectory()
    total = time.perf_counter() - t_start
    return Result(q=Q, v=V, tau=prob.torques(U), parameters={}, cost=cost, cost_history=history,
                  constraint_violation=0.0, converged=converged, iterations=iterations, message=message,
                  method="ilqr", timings={"total": total, "dynamics": native.dynamics_seconds,
                                          "per_iteration": total / max(iterations, 1)},
                  feedback=native.gains())


def _solve_python(prob, max_iters: int, tol: float, verbose: bool, mu: float, threads: int):
    """solve_ilqr with the costs evaluated in Python (a problem with a cost of add_cost)."""
    t_start = time.perf_counter()
    solver = _Ilqr(prob, threads)
    first = solver.rollout(prob.initial_controls())
    if first is None:
        raise RuntimeError(FIRST_ROLLOUT)
    Q, V, U, cost = first
    history = [float(cost)]
    progress = Progress(verbose, max_iters, "ilqr")
    converged, message, iterations = False, "iteration limit reached", 0
    mu = max(float(mu), MU_MIN)
    gains_kept = None
    k_start = np.zeros_like(U)
    for iterations in range(1, max_iters + 1):
        model = solver.linearize(Q, V, U)
        accepted = False
        raises = 0  # regularisation increases in this iteration: bounded, so that one iteration's time is
        while not accepted and raises <= MAX_RAISES:
            gains = solver.backward(model, U, mu, k_start)
            if gains is None:
                mu *= MU_FACTOR
                raises += 1
                if mu > MU_MAX:
                    break
                continue
            k, K, dV = gains
            if -(dV[0] + dV[1]) <= 1e-14 * max(abs(cost), 1.0):
                break  # the model predicts no decrease: a (local) minimum
            for alpha in ALPHAS:
                trial = solver.rollout(None, (Q, V, U), k, K, alpha)
                if trial is None:  # diverged: a shorter step
                    continue
                expected = -(alpha * dV[0] + alpha**2 * dV[1])
                if trial[3] < cost and cost - trial[3] >= ARMIJO * max(expected, 0.0):
                    accepted = True
                    break
            if accepted:
                break
            mu *= MU_FACTOR
            raises += 1
            if mu > MU_MAX:
                break
        if not accepted:
            converged = mu <= MU_MAX and raises <= MAX_RAISES
            message = NO_DECREASE if converged else NO_STEP
            break
        decrease = cost - trial[3]
        gains_kept = K
        k_start = k
        Q, V, U, cost = trial
        history.append(float(cost))
        progress.update(iterations, cost)
        mu = max(MU_MIN, mu / MU_FACTOR)
        if decrease <= tol * max(abs(cost), 1e-12):
            converged, message = True, "relative cost decrease below tol"
            break
    progress.close(message)
    total = time.perf_counter() - t_start
    return Result(q=Q, v=V, tau=prob.torques(U), parameters={}, cost=float(cost), cost_history=history,
                  constraint_violation=0.0, converged=converged, iterations=iterations, message=message,
                  method="ilqr", timings={"total": total, "dynamics": solver.dynamics_time,
                                          "per_iteration": total / max(iterations, 1)},
                  feedback=gains_kept)
