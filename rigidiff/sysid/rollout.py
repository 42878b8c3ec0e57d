"""The rollout fit: trust-region least squares on the state errors of shots simulated from recorded states."""

from __future__ import annotations

import numpy as np

from rigidiff.world import World

from ._common import guarded as _guarded
from ._common import rank_warning as _rank_warning
from ._common import rms as _rms

__all__ = ["fit_rollout"]


def fit_rollout(work: World, recs, names, x0, lower, upper, shot_length, weights, max_iterations, tol):
    """Trust-region least squares on the state errors of shots simulated from recorded states."""
    from scipy.optimize import least_squares

    wq, wv = weights
    nv = work.nv
    shots = []
    for Q, V, TAU in recs:
        T = len(TAU)
        length = T if shot_length is None else int(shot_length)
        shots += [(Q, V, TAU, s, min(s + length, T)) for s in range(0, T, length)]

    def apply(x):
        work.set_parameters(dict(zip(names, x)), check_inertia=False)

    def fun(x):
        apply(x)
        out = []
        for Q, V, TAU, s, e in shots:
            Qs, Vs = _guarded(work.rollout, Q[s], V[s], TAU[s:e])
            for k in range(1, e - s + 1):
                out += [wq * work.difference(Q[s + k], Qs[k]), wv * (Vs[k] - V[s + k])]
        return np.concatenate(out)

    def jac(x):
        apply(x)
        rows = []
        for Q, V, TAU, s, e in shots:
            q, v, S = Q[s], V[s], np.zeros((2 * nv, len(names)))
            for t in range(s, e):
                J = _guarded(work.step_jacobians, q, v, TAU[t], wrt=names)
                S = J.A @ S + J.P  # d(q, v)_{t+1} / dp, q in the tangent space
                q, v = J.q_next, J.v_next
                rows += [wq * (work.difference_jacobians(Q[t + 1], q)[1] @ S[:nv]), wv * S[nv:]]
        return np.vstack(rows)

    r0 = fun(x0)
    sol = least_squares(fun, x0, jac=jac, bounds=(lower, upper), method="trf", x_scale="jac", ftol=tol,
                        xtol=tol, gtol=tol, max_nfev=max_iterations)
    msg = sol.message.rstrip(".")
    scale = np.linalg.norm(sol.jac, axis=0)
    rank = int(np.linalg.matrix_rank(sol.jac / np.where(scale > 0, scale, 1.0)))
    if rank < len(names):
        msg += _rank_warning(rank, len(names))
    return sol.x, _rms(r0), _rms(sol.fun), int(sol.njev or 0), bool(sol.status > 0), msg
