"""The regressor fit: Gauss-Newton on the residual of the discrete equations of motion."""

from __future__ import annotations

import numpy as np

from rigidiff.parameters import INERTIAL_FIELDS, _from6, inertial_parameter_jacobian, standard_parameters
from rigidiff.world import World

from ._common import rank_warning as _rank_warning
from ._common import rms as _rms

__all__ = ["fit_regressor"]


def fit_regressor(work: World, recs, idx, x0, lower, upper, max_iterations, tol):
    """Gauss-Newton on r(p) = Y(q, v, a; g) theta(p) + D v' + K (d + dt v') - clip(tau), stacked over steps."""
    layout = work._parameter_layout()
    kinds, nv, dt = layout.kinds, work.nv, work.dt
    # Y's columns: per body its 10 standard parameters (a particle: its mass alone), then the armature dofs
    counts, arm_dofs = work._regressor_columns()
    first = np.concatenate([[0], np.cumsum(counts)]).astype(int)
    body_at = [np.zeros(n, dtype=int) for n in counts]
    arm_column = {dof: first[-1] + c for c, dof in enumerate(arm_dofs)}
    dof_at = {f: np.full(nv, -1) for f in ("damping", "stiffness", "armature")}  # -1: none (a particle's dofs)
    grav_at = np.zeros(3, dtype=int)
    for i, k in enumerate(kinds):
        if k[0] == "body":
            body_at[k[1]][INERTIAL_FIELDS.index(k[2])] = i
        elif k[0] == "joint":
            dof_at[k[2]][k[1]] = i
        elif k[0] == "gravity":
            grav_at[k[1]] = i
    rest, effort = work.neutral_configuration(), np.full(nv, np.inf)
    for name in work.joint_names:
        info = work.joint(name)
        rest[info.q_index:info.q_index + info.nq] = info.joint.rest_position
        effort[info.v_index:info.v_index + info.nv] = info.effort_limit
    fit_gravity = any(kinds[i][0] == "gravity" for i in idx)
    gravity = work.gravity
    # a from the recorded velocities (free joints move on R^3 x SO(3): World.step_acceleration), and the
    # velocity v + dt a that the implicit damping and springs act on
    accelerations = [work.step_acceleration(V[:-1], V[1:]) for _, V, _ in recs]
    states = [(Q[t], V[t], A[t], V[t] + dt * A[t], TAU[t])
              for (Q, V, TAU), A in zip(recs, accelerations) for t in range(len(TAU))]

    def stacked_regressor(g):
        work.gravity = g
        return np.vstack([work.inverse_dynamics_regressor(q, v, a) for q, v, a, _, _ in states])

    if fit_gravity:  # Y is affine in gravity: Y(g) = Y0 + sum_k g_k G_k
        Y0 = stacked_regressor(np.zeros(3))
        G = [stacked_regressor(np.eye(3)[k]) - Y0 for k in range(3)]
    else:
        Y0, G = stacked_regressor(gravity), []
    work.gravity = gravity
    vnext = np.array([s[3] for s in states])
    spring = np.array([work.difference(rest, s[0]) + dt * s[3] for s in states])
    tau_c = np.clip(np.array([s[4] for s in states]), -effort, effort).ravel()
    full = work.parameters().values.copy()

    def evaluate(x, jacobian=True):
        pf = full.copy()
        pf[idx] = x
        theta = np.concatenate([standard_parameters(pf[b[0]], pf[b[1:4]], _from6(pf[b[4:]])) if len(b) == 10
                                else pf[b] for b in body_at] + [pf[dof_at["armature"][arm_dofs]]])
        Y = Y0 + sum(pf[grav_at[k]] * G[k] for k in range(len(G)))
        damping = np.where(dof_at["damping"] >= 0, pf[dof_at["damping"]], 0.0)
        stiffness = np.where(dof_at["stiffness"] >= 0, pf[dof_at["stiffness"]], 0.0)
        r = Y @ theta + (vnext * damping + spring * stiffness).ravel() - tau_c
        if not jacobian:
            return r
        J = np.zeros((len(r), len(idx)))
        cache = {}
        for c, i in enumerate(idx):
            k = kinds[i]
            if k[0] == "body":
                b = k[1]
                if b not in cache:
                    cols = Y[:, first[b]:first[b + 1]]
                    cache[b] = cols if counts[b] == 1 else cols @ inertial_parameter_jacobian(pf[body_at[b][0]],
                                                                                              pf[body_at[b][1:4]])
                J[:, c] = cache[b][:, INERTIAL_FIELDS.index(k[2])]
            elif k[0] == "gravity":
                J[:, c] = G[k[1]] @ theta
            elif k[2] == "armature":
                J[:, c] = Y[:, arm_column[k[1]]]
            else:
                J[k[1]::nv, c] = (vnext if k[2] == "damping" else spring)[:, k[1]]
        return r, J

    x = x0.copy()
    r, J = evaluate(x)
    r_start = _rms(r)
    its, ok, rank = 0, False, len(idx)
    while its < max_iterations:
        scale = np.linalg.norm(J, axis=0)
        scale[scale == 0] = 1.0
        sol, _, rank, _ = np.linalg.lstsq(J / scale, -r, rcond=None)
        dx = sol / scale
        its += 1
        cost, step = r @ r, 1.0
        for _ in range(40):  # halve the step until the cost does not grow
            r_new = evaluate(x + step * dx, jacobian=False)
            if r_new @ r_new <= cost:
                break
            step *= 0.5
        else:
            ok = True  # no step lowers the cost: round-off level
            break
        x = x + step * dx
        r, J = evaluate(x)
        if np.linalg.norm(step * dx) <= tol * (np.linalg.norm(x) + tol):
            ok = True
            break
    msg = "Gauss-Newton converged" if ok else f"Gauss-Newton stopped after {its} steps without converging"
    if np.any(x < lower) or np.any(x > upper):
        from scipy.optimize import least_squares

        sol = least_squares(lambda y: evaluate(y, jacobian=False), np.clip(x, lower, upper),
                            jac=lambda y: evaluate(y)[1], bounds=(lower, upper), method="trf", x_scale="jac",
                            ftol=tol, xtol=tol, gtol=tol, max_nfev=max_iterations)
        x, r, ok = sol.x, sol.fun, sol.status > 0
        its += sol.njev
        msg += f"; outside the parameter bounds, refitted within them: {sol.message.rstrip('.')}"
    if rank < len(idx):
        msg += _rank_warning(rank, len(idx))
    return x, r_start, _rms(r), its, ok, msg
