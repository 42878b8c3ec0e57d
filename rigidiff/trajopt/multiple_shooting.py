"""Multiple shooting: knot states every ``shot_length`` steps and all torques are the unknowns; each shot
is simulated from its knot, and the state defects at the shots' ends are equality constraints with a
sparse Jacobian, built by chaining the step Jacobians along each shot."""

from __future__ import annotations

import time

import numpy as np

from .dynamics import trajectory_jacobians
from .progress import Progress
from .result import Result

__all__ = ["solve_multiple_shooting", "setup_multiple_shooting"]

_ADDITIVE = ("revolute", "continuous", "prismatic", "translational")


class _Layout:
    """z = [knots 1..K-1: (tangent offset of q from its reference, v) each 2nv; controls T*nu;
    tangent offset of q0 (nv, if optimised); v0 (nv, if optimised); parameters]."""

    def __init__(self, prob, shot_length: int):
        T, nv, nu = prob.T, prob.nv, prob.nu
        self.L = shot_length
        self.starts = list(range(0, T, shot_length))  # knot times t_k
        self.K = len(self.starts)
        self.ends = self.starts[1:] + [T]
        sizes = [(self.K - 1) * 2 * nv, T * nu, nv if prob.opt_q0 else 0, nv if prob.opt_v0 else 0,
                 len(prob.param_names)]
        self.off = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.size = int(self.off[-1])
        self.nv, self.nu, self.np = nv, nu, len(prob.param_names)

    def knot(self, k):
        """Slice of knot k's (dq, v) in z (k >= 1)."""
        a = (k - 1) * 2 * self.nv
        return slice(a, a + 2 * self.nv)

    def controls(self, t0, t1):
        return slice(self.off[1] + t0 * self.nu, self.off[1] + t1 * self.nu)

    def part(self, z, i):
        return z[self.off[i]:self.off[i + 1]]


class _Evaluator:
    """Simulates every shot from its knot at z, with the Jacobians of every state with respect to z."""

    def __init__(self, prob, layout: _Layout, q_refs):
        self.prob, self.lay, self.q_refs = prob, layout, q_refs
        self._key = None
        self.dynamics_time = 0.0
        nv, nu = layout.nv, layout.nu
        # z's column of every local unknown of shot k ([start dq, start v, controls, parameters]; -1: fixed)
        self.local_cols = []
        for k, (t0, t1) in enumerate(zip(layout.starts, layout.ends)):
            cq, cv = self.knot_columns(k)
            ctrl = np.arange(layout.off[1] + t0 * nu, layout.off[1] + t1 * nu)
            cols = np.concatenate([np.full(nv, -1) if cq is None else cq, np.full(nv, -1) if cv is None else cv,
                                   ctrl, np.arange(layout.off[4], layout.off[5])])
            self.local_cols.append(cols)
        self._pattern = None

    def knot_columns(self, k):
        """Columns of z holding knot k's (dq, v): two index arrays, or None when they are fixed."""
        prob, lay, nv = self.prob, self.lay, self.lay.nv
        if k == 0:
            cq = np.arange(lay.off[2], lay.off[3]) if prob.opt_q0 else None
            cv = np.arange(lay.off[3], lay.off[4]) if prob.opt_v0 else None
            return cq, cv
        s = lay.knot(k)
        return np.arange(s.start, s.start + nv), np.arange(s.start + nv, s.stop)

    def _knot_state(self, z, k):
        """(q, v, Jq): knot k's state and the tangent Jacobian of q w.r.t. its offset (identity if fixed)."""
        prob, lay = self.prob, self.lay
        world = prob.world
        if k == 0:
            if prob.opt_q0:
                d = lay.part(z, 2)
                q, Jq = world.integrate(prob.q0, d), world.integrate_jacobians(prob.q0, d)[1]
            else:
                q, Jq = prob.q0, np.eye(lay.nv)
            return q, (lay.part(z, 3) if prob.opt_v0 else prob.v0), Jq
        x = z[lay.knot(k)]
        d = x[:lay.nv]
        return world.integrate(self.q_refs[k], d), x[lay.nv:], world.integrate_jacobians(self.q_refs[k], d)[1]

    def evaluate(self, z):
        key = z.tobytes()
        if key == self._key:
            return
        prob, lay = self.prob, self.lay
        world, T, nv, nu = prob.world, prob.T, lay.nv, lay.nu
        TAU = prob.torques(lay.part(z, 1).reshape(T, nu))
        prob.set_parameter_values(lay.part(z, 4))
        wrt = list(prob.param_names) if prob.param_names else None
        Q = np.empty((T + 1, prob.nq))
        V = np.empty((T + 1, nv))
        # D[t]: d(state t in the tangent space at q_t) / d(local unknowns of its shot)
        D = [None] * (T + 1)
        self.knots = [self._knot_state(z, k) for k in range(lay.K)]
        ends = []
        t_start = time.perf_counter()
        if lay.np:  # parameter columns: step by step, with the parameter Jacobians
            for k, (t0, t1) in enumerate(zip(lay.starts, lay.ends)):
                ends.append(self._shot_with_parameters(k, t0, t1, TAU, wrt, Q, V, D))
        else:  # every shot's rollout, then all the step Jacobians in one C++ call
            for k, (t0, t1) in enumerate(zip(lay.starts, lay.ends)):
                q, v, _ = self.knots[k]
                Qs, Vs = world.rollout(q, v, TAU[t0:t1])
                Q[t0:t1], V[t0:t1] = Qs[:-1], Vs[:-1]
                ends.append((Qs[-1], Vs[-1]))
            A, B = trajectory_jacobians(world, Q, V, TAU, threads=1)  # its solve has no threads option yet
            B = B @ prob.S
            for k, (t0, t1) in enumerate(zip(lay.starts, lay.ends)):
                Dt = np.zeros((2 * nv, 2 * nv + (t1 - t0) * nu))
                Dt[:, :2 * nv] = np.eye(2 * nv)
                D[t0] = Dt
                for t in range(t0, t1):
                    Dt = A[t] @ Dt
                    c = 2 * nv + (t - t0) * nu
                    Dt[:, c:c + nu] += B[t]
                    if t + 1 < t1:
                        D[t + 1] = Dt
                ends[k] = (ends[k][0], ends[k][1], Dt)
        self.dynamics_time += time.perf_counter() - t_start
        Q[T], V[T], D[T] = ends[-1]
        self.Q, self.V, self.TAU, self.D, self.ends = Q, V, TAU, D, ends
        self._key = key

    def _shot_with_parameters(self, k, t0, t1, TAU, wrt, Q, V, D):
        """Shot k step by step with step_jacobians (parameter columns included); its end (q, v, D)."""
        world, prob, lay = self.prob.world, self.prob, self.lay
        nv, nu = lay.nv, lay.nu
        q, v, _ = self.knots[k]
        Dt = np.zeros((2 * nv, 2 * nv + (t1 - t0) * nu + lay.np))
        Dt[:, :2 * nv] = np.eye(2 * nv)
        Q[t0], V[t0], D[t0] = q, v, Dt
        for t in range(t0, t1):
            J = world.step_jacobians(q, v, TAU[t], wrt=wrt)
            Dt = J.A @ Dt
            c = 2 * nv + (t - t0) * nu
            Dt[:, c:c + nu] += J.B @ prob.S
            Dt[:, -lay.np:] += J.P
            q, v = J.q_next, J.v_next
            if t + 1 < t1:
                Q[t + 1], V[t + 1], D[t + 1] = q, v, Dt
        return q, v, Dt

    def _to_z(self, k, M):
        """(rows, z columns) of M (rows x local unknowns of shot k): the knot offset's chain rule applied,
        the fixed unknowns dropped."""
        nv = self.lay.nv
        M = M.copy()
        M[:, :nv] = M[:, :nv] @ self.knots[k][2]
        cols = self.local_cols[k]
        keep = cols >= 0
        return M[:, keep], cols[keep]

    def cost(self, z):
        self.evaluate(z)
        acc = self.prob.costs(self.Q, self.V, self.TAU)
        grad = np.zeros(self.lay.size)
        lay, T = self.lay, self.prob.T
        grad[lay.off[1]:lay.off[2]] += (acc.gtau @ self.prob.S).ravel()
        G = np.concatenate([acc.gq, acc.gv], axis=1)
        for k, (t0, t1) in enumerate(zip(lay.starts, lay.ends)):
            last = t1 + 1 if t1 == T else t1  # the shot's end state is the next knot, except at T
            g_local = sum(G[t] @ self.D[t] for t in range(t0, last))
            vals, cols = self._to_z(k, g_local[None])
            np.add.at(grad, cols, vals[0])
        return acc.value, grad

    def defects(self, z):
        self.evaluate(z)
        world, nv = self.prob.world, self.lay.nv
        out = np.empty((self.lay.K - 1, 2 * nv))
        for k in range(self.lay.K - 1):
            q_end, v_end, _ = self.ends[k]
            q_knot, v_knot, _ = self.knots[k + 1]
            out[k, :nv] = world.difference(q_knot, q_end)
            out[k, nv:] = v_end - v_knot
        return out.ravel()

    def defect_jacobian(self, z):
        """Sparse (2nv (K-1), len(z)) Jacobian of the defects: each shot's block, and the next knot's."""
        self.evaluate(z)
        world, lay, nv = self.prob.world, self.lay, self.lay.nv
        rows, cols, vals = [], [], []
        for k in range(lay.K - 1):
            q_end, _, D_end = self.ends[k]
            q_knot, _, Jq = self.knots[k + 1]
            J0, J1 = world.difference_jacobians(q_knot, q_end)
            r0 = k * 2 * nv
            M = D_end.copy()
            M[:nv] = J1 @ D_end[:nv]
            block, c = self._to_z(k, M)
            cq, cv = self.knot_columns(k + 1)
            block = np.concatenate([block, np.vstack([J0 @ Jq, np.zeros((nv, nv))]),
                                    np.vstack([np.zeros((nv, nv)), -np.eye(nv)])], axis=1)
            c = np.concatenate([c, cq, cv])
            rows.append(np.repeat(np.arange(r0, r0 + 2 * nv), len(c)))
            cols.append(np.tile(c, 2 * nv))
            vals.append(block.ravel())
        import scipy.sparse as sp  # here: importing rigidiff does not pay for scipy.sparse

        n = (lay.K - 1) * 2 * nv
        if not rows:
            return sp.csr_matrix((n, lay.size))
        return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(n, lay.size))


def _knot_bounds(prob, q_ref):
    """Bounds of one knot's (dq, v) from the problem's state bounds (additive joints only)."""
    nv = prob.nv
    lo, hi = np.full(2 * nv, -np.inf), np.full(2 * nv, np.inf)
    if prob.q_lower is not None:
        for name in prob.world.joint_names:
            j = prob.world.joint(name)
            qs = slice(j.q_index, j.q_index + j.nq)
            if not (np.any(np.isfinite(prob.q_lower[qs])) or np.any(np.isfinite(prob.q_upper[qs]))):
                continue
            if j.type not in _ADDITIVE or j.nq != j.nv:
                raise ValueError(f"state bounds on joint {name!r} ({j.type}) are not supported: only revolute, "
                                 "prismatic and translational coordinates can be bounded")
            vs = slice(j.v_index, j.v_index + j.nv)
            lo[vs] = prob.q_lower[qs] - q_ref[qs]
            hi[vs] = prob.q_upper[qs] - q_ref[qs]
    if prob.v_lower is not None:
        lo[nv:], hi[nv:] = prob.v_lower, prob.v_upper
    return lo, hi


def setup_multiple_shooting(prob, shot_length: int):
    """(evaluator, z0, lower, upper) of the problem: knot references from the rollout of the first guess."""
    lay = _Layout(prob, int(min(shot_length, prob.T)))
    world = prob.world
    U0 = prob.initial_controls()
    prob.set_parameter_values(prob.param_start if prob.param_names else [])
    Q0, V0 = world.rollout(prob.q0, prob.v0, prob.torques(U0))
    q_refs = [Q0[t] for t in lay.starts]
    ev = _Evaluator(prob, lay, q_refs)

    z0 = np.zeros(lay.size)
    lo, hi = np.full(lay.size, -np.inf), np.full(lay.size, np.inf)
    for k in range(1, lay.K):
        s = lay.knot(k)
        z0[s] = np.concatenate([np.zeros(lay.nv), V0[lay.starts[k]]])
        lo[s], hi[s] = _knot_bounds(prob, q_refs[k])
    z0[lay.off[1]:lay.off[2]] = U0.ravel()
    lo[lay.off[1]:lay.off[2]], hi[lay.off[1]:lay.off[2]] = prob.u_lower.ravel(), prob.u_upper.ravel()
    if prob.opt_q0 or prob.opt_v0:
        kl, kh = _knot_bounds(prob, prob.q0)
        if prob.opt_q0:
            lo[lay.off[2]:lay.off[3]], hi[lay.off[2]:lay.off[3]] = kl[:lay.nv], kh[:lay.nv]
        if prob.opt_v0:
            z0[lay.off[3]:lay.off[4]] = prob.v0
            lo[lay.off[3]:lay.off[4]], hi[lay.off[3]:lay.off[4]] = kl[lay.nv:], kh[lay.nv:]
    if lay.np:
        z0[lay.off[4]:] = prob.param_start
        lo[lay.off[4]:], hi[lay.off[4]:] = prob.param_lower, prob.param_upper
    z0 = np.clip(z0, lo, hi)

    return ev, z0, lo, hi


def solve_multiple_shooting(prob, max_iters: int, tol: float, verbose: bool, shot_length: int = 10,
                            solver: str = "SLSQP"):
    """SLSQP (dense) or trust-constr (sparse constraint Jacobian) on the multiple-shooting problem."""
    import scipy.optimize as so  # here: it takes most of rigidiff's import time
    if isinstance(shot_length, bool) or not isinstance(shot_length, (int, np.integer)) or shot_length < 1:
        raise ValueError(f"shot_length must be a positive int, got {shot_length!r}")
    if solver not in ("SLSQP", "trust-constr"):
        raise ValueError(f"solver must be 'SLSQP' or 'trust-constr', got {solver!r}")
    t_start = time.perf_counter()
    ev, z0, lo, hi = setup_multiple_shooting(prob, shot_length)
    lay = ev.lay
    history = [float(ev.cost(z0)[0])]
    progress = Progress(verbose, max_iters, "multiple_shooting")

    def callback(zk, *args):
        history.append(float(ev.cost(zk)[0]))
        progress.update(len(history) - 1, history[-1], float(np.max(np.abs(ev.defects(zk)), initial=0.0)))

    bounds = so.Bounds(lo, hi)
    if solver == "SLSQP":
        cons = [{"type": "eq", "fun": ev.defects, "jac": lambda z: ev.defect_jacobian(z).toarray()}] \
            if lay.K > 1 else []
        res = so.minimize(ev.cost, z0, jac=True, method="SLSQP", bounds=bounds, constraints=cons, callback=callback,
                          options={"maxiter": max_iters, "ftol": tol})
        iterations = int(getattr(res, "nit", 0))  # scipy leaves nit out when the bounds fix every unknown
    else:
        cons = [so.NonlinearConstraint(ev.defects, 0.0, 0.0, jac=ev.defect_jacobian, hess=so.BFGS())] \
            if lay.K > 1 else []
        res = so.minimize(ev.cost, z0, jac=True, hess=so.BFGS(), method="trust-constr", bounds=bounds,
                          constraints=cons, callback=lambda zk, state: callback(zk),
                          options={"maxiter": max_iters, "gtol": tol, "xtol": tol * 1e-3, "verbose": 0})
        iterations = int(getattr(res, "nit", 0))  # scipy leaves nit out when the bounds fix every unknown
    z = res.x
    value = float(ev.cost(z)[0])
    violation = float(np.max(np.abs(ev.defects(z)), initial=0.0))
    violation = max(violation, float(np.max(np.maximum(lo - z, 0.0), initial=0.0)),
                    float(np.max(np.maximum(z - hi, 0.0), initial=0.0)))
    progress.close(str(res.message))
    total = time.perf_counter() - t_start
    p = lay.part(z, 4)
    return Result(q=ev.Q.copy(), v=ev.V.copy(), tau=ev.TAU.copy(),
                  parameters=dict(zip(prob.param_names, p.tolist())), cost=value, cost_history=history,
                  constraint_violation=violation, converged=bool(res.success), iterations=iterations,
                  message=str(res.message), method="multiple_shooting",
                  timings={"total": total, "dynamics": ev.dynamics_time, "per_iteration": total / max(iterations, 1)})
