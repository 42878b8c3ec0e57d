"""iLQR on rigidiff's exact step Jacobians: a Riccati backward pass on the Gauss-Newton cost model,
a forward pass with a backtracking line search, Levenberg-Marquardt regularisation of Q_uu, and
control bounds through a small projected-Newton box QP per step (Tassa, Mansard and Todorov 2014)."""

from __future__ import annotations

import time

import numpy as np

from .progress import Progress
from .result import Result

__all__ = ["solve_ilqr", "box_qp"]

MU_MIN, MU_MAX, MU_FACTOR = 1e-8, 1e10, 4.0
ALPHAS = 0.5 ** np.arange(12)
ARMIJO = 1e-4


def box_qp(H, g, lo, hi, x0=None, iters: int = 30):
    """min 0.5 x^T H x + g^T x subject to lo <= x <= hi (H positive definite), by projected Newton.

    Returns (x, free) with ``free`` the mask of the dofs not held at a bound; raises
    np.linalg.LinAlgError if H's free block is not positive definite.
    """
    n = len(g)
    x = -_pd_solve(H, g)
    if np.all(x >= lo) and np.all(x <= hi):  # the unconstrained minimum is feasible
        return x, np.ones(n, dtype=bool)
    x = np.clip(np.zeros(n) if x0 is None else x0, lo, hi)
    free = np.ones(n, dtype=bool)
    for _ in range(iters):
        grad = H @ x + g
        clamped = ((x <= lo) & (grad > 0)) | ((x >= hi) & (grad < 0))
        free = ~clamped
        if not free.any():
            break
        direction = np.zeros(n)
        direction[free] = -_pd_solve(H[np.ix_(free, free)], grad[free])
        if np.max(np.abs(direction)) < 1e-13 * (1.0 + np.max(np.abs(x))):
            break
        f0 = 0.5 * x @ H @ x + g @ x
        step = 1.0
        while step > 1e-10:
            trial = np.clip(x + step * direction, lo, hi)
            if 0.5 * trial @ H @ trial + g @ trial <= f0 + ARMIJO * grad @ (trial - x):
                break
            step *= 0.5
        if np.array_equal(trial, x):
            break
        x = trial
    grad = H @ x + g
    free = ~(((x <= lo) & (grad > 0)) | ((x >= hi) & (grad < 0)))
    return x, free


def _pd_solve(H, b):
    """H^-1 b for a symmetric positive-definite H; np.linalg.LinAlgError if it is not."""
    L = np.linalg.cholesky(H)
    return np.linalg.solve(L.T, np.linalg.solve(L, b))


class _Ilqr:
    def __init__(self, prob):
        self.prob = prob
        self.world = prob.world
        self.dynamics_time = 0.0
        self.lower, self.upper = prob.u_lower, prob.u_upper
        self.bounded = bool(np.any(np.isfinite(self.lower)) or np.any(np.isfinite(self.upper)))

    def rollout(self, U, ref=None, k=None, K=None, alpha=1.0):
        """States and cost of the (closed-loop, when ref/k/K are given) rollout; None if it diverged."""
        prob, world = self.prob, self.world
        T, nv = prob.T, prob.nv
        t0 = time.perf_counter()
        if ref is None:
            TAU = prob.torques(U)
            try:
                Q, V = world.rollout(prob.q0, prob.v0, TAU)
            except (RuntimeError, ValueError):
                return None
            self.dynamics_time += time.perf_counter() - t0
            if not (np.all(np.isfinite(Q)) and np.all(np.isfinite(V))):
                return None
            return Q, V, U, prob.costs(Q, V, TAU, derivatives=False).value
        Qr, Vr, Ur = ref
        Q = np.empty_like(Qr)
        V = np.empty_like(Vr)
        Un = np.empty_like(Ur)
        Q[0], V[0] = prob.q0, prob.v0
        dx = np.empty(2 * nv)
        try:
            for t in range(T):
                dx[:nv] = world.difference(Qr[t], Q[t])
                dx[nv:] = V[t] - Vr[t]
                Un[t] = np.clip(Ur[t] + alpha * k[t] + K[t] @ dx, self.lower[t], self.upper[t])
                Q[t + 1], V[t + 1] = world.step(Q[t], V[t], prob.S @ Un[t])
        except (RuntimeError, ValueError):
            return None
        self.dynamics_time += time.perf_counter() - t0
        if not (np.all(np.isfinite(Q)) and np.all(np.isfinite(V))):
            return None
        return Q, V, Un, prob.costs(Q, V, prob.torques(Un), derivatives=False).value

    def linearize(self, Q, V, U):
        prob, world = self.prob, self.world
        t0 = time.perf_counter()
        A, B = [], []
        for t in range(prob.T):
            J = world.step_jacobians(Q[t], V[t], prob.S @ U[t])
            A.append(J.A)
            B.append(J.B @ prob.S)
        self.dynamics_time += time.perf_counter() - t0
        acc = prob.costs(Q, V, prob.torques(U), derivatives=True, hessians=True)
        lx = np.concatenate([acc.gq, acc.gv], axis=1)
        lu = acc.gtau @ prob.S
        luu = np.einsum("ia,tij,jb->tab", prob.S, acc.huu, prob.S)
        return A, B, lx, acc.hxx, lu, luu

    def backward(self, model, U, mu):
        """Gains k (T, nu), K (T, nu, 2nv) and the expected-reduction terms; None if Q_uu is not
        positive definite at this regularisation."""
        A, B, lx, lxx, lu, luu = model
        prob = self.prob
        T, nu = prob.T, prob.nu
        Vx, Vxx = lx[T].copy(), lxx[T].copy()
        k = np.zeros((T, nu))
        K = np.zeros((T, nu, 2 * prob.nv))
        dV = np.zeros(2)
        for t in range(T - 1, -1, -1):
            At, Bt = A[t], B[t]
            Qx = lx[t] + At.T @ Vx
            Qu = lu[t] + Bt.T @ Vx
            VA = Vxx @ At
            Qxx = lxx[t] + At.T @ VA
            Qux = Bt.T @ VA
            Quu = luu[t] + Bt.T @ Vxx @ Bt
            Quu_reg = Quu + mu * np.eye(nu)
            try:
                np.linalg.cholesky(Quu_reg)  # positive definite, or LinAlgError
                sol = np.linalg.solve(Quu_reg, np.column_stack([Qu, Qux]))
                kt, Kt = -sol[:, 0], -sol[:, 1:]
                lo, hi = self.lower[t] - U[t], self.upper[t] - U[t]
                if self.bounded and (np.any(kt < lo) or np.any(kt > hi)):
                    kt, free = box_qp(Quu_reg, Qu, lo, hi, x0=k[t])
                    Kt = np.zeros((nu, 2 * prob.nv))
                    if free.any():
                        Kt[free] = -_pd_solve(Quu_reg[np.ix_(free, free)], Qux[free])
            except np.linalg.LinAlgError:
                return None
            k[t], K[t] = kt, Kt
            dV += (kt @ Qu, 0.5 * kt @ Quu @ kt)
            Vx = Qx + Kt.T @ Quu @ kt + Kt.T @ Qu + Qux.T @ kt
            Vxx = Qxx + Kt.T @ Quu @ Kt + Kt.T @ Qux + Qux.T @ Kt
            Vxx = 0.5 * (Vxx + Vxx.T)
        return k, K, dV


def solve_ilqr(prob, max_iters: int, tol: float, verbose: bool, mu: float = 1e-6):
    """iLQR from the problem's initial guess; stops when the relative cost decrease is below tol."""
    t_start = time.perf_counter()
    solver = _Ilqr(prob)
    first = solver.rollout(prob.initial_controls())
    if first is None:
        raise RuntimeError("the rollout of the initial guess failed (diverged or invalid); start from other torques")
    Q, V, U, cost = first
    history = [float(cost)]
    progress = Progress(verbose, max_iters, "ilqr")
    converged, message, iterations = False, "iteration limit reached", 0
    mu = max(float(mu), MU_MIN)
    gains_kept = None
    for iterations in range(1, max_iters + 1):
        model = solver.linearize(Q, V, U)
        accepted = False
        while not accepted:
            gains = solver.backward(model, U, mu)
            if gains is None:
                mu *= MU_FACTOR
                if mu > MU_MAX:
                    break
                continue
            k, K, dV = gains
            for alpha in ALPHAS:
                trial = solver.rollout(None, (Q, V, U), k, K, alpha)
                if trial is None:
                    continue
                expected = -(alpha * dV[0] + alpha**2 * dV[1])
                if trial[3] < cost and cost - trial[3] >= ARMIJO * max(expected, 0.0):
                    accepted = True
                    break
            if accepted:
                break
            if expected <= 1e-14 * max(abs(cost), 1.0):
                break  # no descent left at any regularisation: a (local) minimum
            mu *= MU_FACTOR
            if mu > MU_MAX:
                break
        if not accepted:
            converged = mu <= MU_MAX
            message = "no further decrease: converged" if converged else "regularisation limit reached"
            break
        decrease = cost - trial[3]
        gains_kept = K
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
