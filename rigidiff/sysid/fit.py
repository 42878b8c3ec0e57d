"""The entry point of system identification: checks, dispatch to a fit, the result."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from rigidiff._validate import real_array
from rigidiff.errors import UnknownNameError
from rigidiff.parameters import GROUPS
from rigidiff.parameters import unknown_message as _unknown_message
from rigidiff.world import World

from .regressor import fit_regressor as _fit_regressor
from .rollout import fit_rollout as _fit_rollout

__all__ = ["fit", "FitResult", "METHODS"]

#: the values of ``fit(..., method=)``
METHODS = ("auto", "regressor", "rollout")


@dataclass
class FitResult:
    """The outcome of :func:`fit`.

    Attributes:
        values: {name: fitted value} for every fitted parameter, in ``world.parameters().names`` order.
        world: a copy of the world with the fitted values set (the world given to ``fit`` is unchanged).
        residual: root mean square of the final residual: torques (N m or N) for "regressor", weighted
            state errors for "rollout" (docs/sysid.md).
        initial_residual: the same measure at the start values.
        method: the method that ran, "regressor" or "rollout".
        iterations: Gauss-Newton steps ("regressor") or Jacobian evaluations ("rollout").
        success: whether the solver met its convergence test.
        message: the solver's account of how it stopped, and warnings such as unidentifiable parameters.
        start: {name: start value}.
    """

    values: dict
    world: World
    residual: float
    initial_residual: float
    method: str
    iterations: int
    success: bool
    message: str = ""
    start: dict = dataclasses.field(default_factory=dict)

    def __repr__(self) -> str:
        vals = ", ".join(f"{k}={v:.6g}" for k, v in self.values.items())
        return (f"FitResult(method={self.method!r}, success={self.success}, residual={self.residual:.3g} "
                f"(from {self.initial_residual:.3g}), iterations={self.iterations}, values: {vals})")


def fit(world: World, q, v, tau, params, method: str = "auto", *, start: dict | None = None,
        shot_length: int | None = 10, weights=None, max_iterations: int = 100, tol: float = 1e-12) -> FitResult:
    """Fit physical parameters of ``world`` to recorded motion.

    Args:
        world: the model; its current values are the start of the fit and the value of every parameter
            that is not fitted. It is not modified.
        q, v, tau: one recording, q (T+1, nq), v (T+1, nv) and the torques tau (T, nv) applied at each
            step of length ``world.dt``; or lists of such arrays for several recordings.
        params: names from ``world.parameters().names``, or groups ("inertia", "damping", "friction", ...,
            "all") and body or joint names (all of their parameters), as ``world.step_jacobians(wrt=)``.
        method: "regressor", "rollout", or "auto": the regressor when every name enters the rigid-body
            equations (inertial, damping, stiffness, armature, gravity) and no recorded step solves a
            contact, joint-limit or joint-friction constraint, the rollout fit otherwise.
        start: {name: value} start values for some fitted parameters instead of the world's.
        shot_length: "rollout": steps per shot (None: each recording is one shot).
        weights: "rollout": (w_q, w_v), the weights of configuration errors (tangent space) and of
            velocity errors; default (1, dt), which measures a velocity error by the configuration
            error it makes in one step.
        max_iterations: at most this many Gauss-Newton steps ("regressor") or residual evaluations
            ("rollout").
        tol: relative tolerance on the step of the parameters (and on the cost for "rollout").
    Returns:
        a FitResult (values, world, residual, initial_residual, method, iterations, success, message).
    Raises:
        ValueError for inconsistent shapes, non-finite data, an empty ``params``, an unknown method, or
        method="regressor" where it does not apply (constrained steps, contact parameters);
        UnknownNameError (a KeyError) for an unknown parameter name (naming close matches).
    """
    if not isinstance(world, World):
        raise ValueError(f"world must be a rigidiff.World, got {type(world).__name__}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    recs = _recordings(world, q, v, tau)
    idx = _resolve(world, params)
    _positive_int(max_iterations, "max_iterations")
    _positive_int(shot_length, "shot_length", allow_none=True)
    if isinstance(tol, bool) or not isinstance(tol, (float, int)) or not np.isfinite(tol) or tol <= 0:
        raise ValueError(f"tol must be a positive number, got {tol!r}")
    weights = _weights(weights, world.dt)
    work = world._copy()
    layout = work._parameter_layout()
    names = [layout.names[i] for i in idx]
    if start is not None:
        if not isinstance(start, dict):
            raise ValueError(f"start must be a dict {{name: value}}, got {type(start).__name__}")
        extra = [n for n in start if n not in names]
        if extra:
            raise ValueError(f"start names {extra} are not among the fitted parameters {names}")
        work.set_parameters(start)
    p = work.parameters()
    x0, lower, upper = p.values[idx].copy(), p.lower[idx], p.upper[idx]

    contact_names = [n for i, n in zip(idx, names) if layout.kinds[i][0] == "contact"]
    if method == "regressor" and contact_names:
        raise ValueError(f"{contact_names} act only through contacts and do not enter the inverse dynamics: "
                         "method='regressor' cannot fit them; use method='rollout'")
    if method == "auto" and contact_names:
        method = "rollout"
    if method == "regressor":
        bad = [(r, s) for r, s in enumerate(_constrained_steps(work, recs)) if s]
        if bad:
            where = "; ".join(f"recording {r}: steps {_brief(s)}" for r, s in bad)
            raise ValueError(f"method='regressor' needs steps without constraints, but these steps solve contact, "
                             f"joint-limit or joint-friction constraints ({where}); use method='rollout'")
    elif method == "auto":
        method = "rollout" if any(_constrained_steps(work, recs)) else "regressor"

    if method == "regressor":
        x, r0, r1, its, ok, msg = _fit_regressor(work, recs, idx, x0, lower, upper, max_iterations, tol)
    else:
        x, r0, r1, its, ok, msg = _fit_rollout(work, recs, names, x0, lower, upper, shot_length, weights,
                                               max_iterations, tol)
    values = dict(zip(names, x.tolist()))
    try:
        work.set_parameters(values)
    except ValueError as exc:
        warnings.warn(f"the fitted values are not physical ({exc}); res.world holds them unchecked",
                      UserWarning, stacklevel=2)
        msg += f"; the fitted values are not physical: {exc}"
        work.set_parameters(values, check_inertia=False)
    return FitResult(values, work, r1, r0, method, its, ok, msg, dict(zip(names, x0.tolist())))


# ---------------------------------------------------------------------------------------------- inputs
def _positive_int(val, name: str, allow_none: bool = False) -> None:
    if val is None and allow_none:
        return
    if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
        raise ValueError(f"{name} must be a positive integer{' or None' if allow_none else ''}, got {val!r}")


def _weights(weights, dt: float) -> tuple:
    if weights is None:
        return 1.0, dt
    try:
        w = real_array(weights, "weights")
    except ValueError:
        w = np.zeros(0)
    if w.shape != (2,) or not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
        raise ValueError(f"weights must be (w_q, w_v), two non-negative numbers not both zero, got {weights!r}")
    return float(w[0]), float(w[1])


def _is_list_of_arrays(x) -> bool:
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(np.ndim(e) == 2 for e in x)


def _matrix(x, name: str, shape: str, rows, cols: int) -> np.ndarray:
    arr = real_array(x, name, shape)  # real numbers only: no complex value loses its imaginary part
    if arr.ndim != 2 or arr.shape[1] != cols or (rows is not None and arr.shape[0] != rows):
        want = f"({'T+1' if rows is None else rows}, {cols})"
        raise ValueError(f"{name} must have shape {shape} = {want}, got {arr.shape}")
    bad = np.argwhere(~np.isfinite(arr))
    if len(bad):
        raise ValueError(f"{name} must be finite, got {arr[tuple(bad[0])]} at row {bad[0][0]}, column {bad[0][1]}")
    return arr


def _recordings(world: World, q, v, tau) -> list:
    """[(Q, V, TAU)] validated against the world's nq and nv."""
    multi = [_is_list_of_arrays(x) for x in (q, v, tau)]
    if any(multi) and not all(multi):
        raise ValueError("q, v and tau must be all arrays (one recording) or all lists of arrays (several "
                         f"recordings); got lists for {[n for n, m in zip('q v tau'.split(), multi) if m]} only")
    if all(multi):
        if not len(q) == len(v) == len(tau):
            raise ValueError(f"q, v and tau must hold as many recordings: got {len(q)}, {len(v)} and {len(tau)}")
        items = [(a, b, c, f"[{k}]") for k, (a, b, c) in enumerate(zip(q, v, tau))]
    else:
        items = [(q, v, tau, "")]
    nq, nv = world.nq, world.nv
    out = []
    for a, b, c, k in items:
        Q = _matrix(a, f"q{k}", "(T+1, nq)", None, nq)
        if Q.shape[0] < 2:
            raise ValueError(f"q{k} must hold at least 2 states (T+1 rows for T steps), got {Q.shape[0]}")
        V = _matrix(b, f"v{k}", "(T+1, nv)", Q.shape[0], nv)
        TAU = _matrix(c, f"tau{k}", "(T, nv)", Q.shape[0] - 1, nv)
        out.append((Q, V, TAU))
    return out


def _resolve(world: World, params) -> list[int]:
    """Indices into world.parameters().names of ``params``, in names order."""
    names = world.parameters().names
    if isinstance(params, str):
        params = [params]
    if params is None or not isinstance(params, Iterable):
        raise ValueError(f"params must be a list of parameter names, got {params!r}")
    chosen = set()
    for item in list(params):
        if not isinstance(item, str):
            raise ValueError(f"params entries must be strings, got {item!r}")
        if item in names:
            chosen.add(names.index(item))
        elif item == "all" or item in GROUPS or any(n.startswith(item + "/") for n in names):
            chosen.update(world._resolve_wrt([item]))
        else:
            raise UnknownNameError(_unknown_message(item, names))
    if not chosen:
        raise ValueError(f"params selects no parameter (got {params!r}): name at least one of "
                         "world.parameters().names")
    return sorted(chosen)


def _brief(steps: list) -> str:
    more = f", ... ({len(steps)} steps)" if len(steps) > 8 else ""
    return ", ".join(map(str, steps[:8])) + more


def _constrained_steps(world: World, recs) -> list[list[int]]:
    """Per recording, the steps whose solve has a constraint row that acts (any class but separating)."""
    out = []
    for Q, V, TAU in recs:
        steps = []
        for t in range(len(TAU)):
            world.step(Q[t], V[t], TAU[t])
            if any(c != "separating" for c in world.last_contacts().row_classes):
                steps.append(t)
        out.append(steps)
    return out
