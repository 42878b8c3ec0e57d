"""Check rigidiff's analytic derivatives against finite differences of the step itself.

Two functions and a report::

    import rigidiff.testing as rdt

    fd = rdt.finite_difference_jacobians(world, q, v, tau)             # a StepJacobians, like
    J = world.step_jacobians(q, v, tau)                                # ... this one, block for block
    report = rdt.check_jacobians(world, q, v, tau)                     # compares the two
    print(report)                                                      # one aligned line per block
    report.raise_if_failed()                                           # AssertionError with the table

The command ``rigidiff check-grad model.urdf`` runs ``check_jacobians`` on random states of a URDF model.

**Tangent space** (docs/conventions.md, "Names of derivatives"). Columns of ``dq_dq`` and ``dv_dq`` are
directions of the tangent space of q: the perturbed configuration is ``world.integrate(q, h e_k)``, never
q with a quaternion entry moved. Rows of ``dq_d*`` are tangent vectors too: a change of q_next is
measured as ``world.difference(q_next, q_next_perturbed)``. So every block is (nv, nv), quaternion joints
included, and the finite differences have exactly the layout of ``world.step_jacobians``.

**Methods.** ``"central"``: (f(x + h) - f(x - h)) / 2h, two steps per column, error O(h^2) plus
round-off over h. The default ``eps`` is 1e-5, not 1e-6: the round-off of a step grows with the
conditioning of the mass matrix, and at 1e-6 it already puts entries of the shipped arm7 and quadruped
models off by 5e-5 (relative); at 1e-5 they get 6-8 correct digits. ``"ridders"``: Ridders' method, a
sequence of central differences with steps shrinking by 1.6 (8 levels from ``eps``, default 1e-2),
extrapolated to h -> 0 in a Neville tableau; each entry keeps the estimate with the smallest error
estimate, so it is typically accurate to 10-12 digits, at up to 8 times the cost.

**Step sizes.** For v and tau the step of entry k is ``eps * max(1, |x_k|)``, and the difference is
divided by the step actually taken (``(x + h) - (x - h)`` in floating point). For q the step is ``eps``
itself: a tangent perturbation starts from zero whatever the size of q.

**Parameters.** ``wrt`` may also name physical parameters (anything ``world.step_jacobians(wrt=...)``
accepts: "inertia", "damping", "stiffness", "armature", "gravity", "all", a parameter, body or joint
name). Each is perturbed through ``world.set_parameters(..., check_inertia=False)`` and restored exactly
afterwards; the blocks are ``dq_dp`` and ``dv_dp`` (nv, n_params). The step of a parameter is ``eps``
times its size, the scale at which it changes the dynamics (``_parameter_scales``: the mass and mean
principal moment of the rigid body it belongs to, M(q)'s diagonal for the dofs that carry it; for a
joint's armature, damping and stiffness the inertia its dof moves, 1 / (M(q)^-1)_kk, over dt or dt^2 for
damping and stiffness; with ``"central"`` at least ``eps``). The perturbed values stay physical:
within the bounds of ``world.parameters()``, and every rigid body (a body with those welded to it)
keeps a positive semi-definite rotational inertia. A central step shrinks until both sides are
physical, else the column is a second-order one-sided difference into the physical side (a damping of
0, a zero principal moment), extrapolated by Ridders as a series in h rather than h^2.

**Purity.** Every evaluation goes through ``_evaluate_step``. With ``contact_options(warm_start=False)`` the
step is a pure function of (q, v, tau); with the warm start on (the default) a contact step whose friction
problem has several solutions answers with the one the previous step's mode selects (docs/contact.md),
so checks at such degenerate states should turn the warm start off. Both functions leave the world's
warm start as they found it (``world.warm_start()`` / ``set_warm_start``): the unperturbed step of the
finite differences, and the analytic step of ``check_jacobians``, are solved as ``world.step(q, v, tau)``
would be at the call, and a chain of steps continues after a check as if no check had run (the
perturbed steps start elsewhere, so they solve cold).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidiff.errors import UnknownNameError

__all__ = ["finite_difference_jacobians", "check_jacobians", "JacobianReport", "BlockReport", "METHODS", "WRT"]

METHODS = ("central", "ridders")
"""Finite-difference methods understood by ``method=``."""

WRT = ("q", "v", "tau")
"""State inputs of the step; ``wrt`` may name physical parameters too (see the module docstring)."""

_DEFAULT_EPS = {"central": 1e-5, "ridders": 1e-2}
_RIDDERS_FACTOR = 1.6  # each level divides the step by this
_RIDDERS_LEVELS = 8  # central differences computed at most, per column
_RIDDERS_SAFE = 2.0  # stop once a higher order is worse than SAFE times the best error so far


# ------------------------------------------------------------------------------------------ arguments


def _check_world(world):
    if not all(hasattr(world, name) for name in ("step", "integrate", "difference", "nv", "nq")):
        raise ValueError(f"world must be a rigidiff.World (with step, integrate, difference, nq and nv), "
                         f"got {type(world).__name__}")
    if world.nv == 0:
        raise ValueError("world has no degrees of freedom (world.nv == 0): nothing to differentiate")


def _check_state(world, q, v, tau):
    from rigidiff._validate import as_array

    return (as_array(q, (world.nq,), "q"), as_array(v, (world.nv,), "v"), as_array(tau, (world.nv,), "tau"))


def _check_method(method, eps) -> float:
    """The step size to use: ``eps``, or the method's default when it is None."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if eps is None:
        return _DEFAULT_EPS[method]
    from rigidiff._validate import as_scalar

    return as_scalar(eps, "eps", minimum=0.0, strict=True)


def _check_wrt(wrt, world=None) -> tuple:
    """(state inputs, parameter specification or None) of ``wrt``: names from WRT keep their order,
    every other entry is handed to the world's parameter selection (which names unknown ones)."""
    if isinstance(wrt, str):
        wrt = (wrt,)
    try:
        names = list(wrt)
    except TypeError:
        raise ValueError(f"wrt must be a string or a sequence of strings from {WRT} or parameter names, "
                         f"got {wrt!r}") from None
    if not names:
        raise ValueError(f"wrt is empty; give one or more of {WRT} or parameter names")
    if not all(isinstance(w, str) for w in names):
        raise ValueError(f"wrt entries must be strings, got {names}")
    state = tuple(dict.fromkeys(w for w in names if w in WRT))
    params = [w for w in names if w not in WRT]
    if params and (world is None or not hasattr(world, "parameters")):
        raise ValueError(f"wrt has entries {params} that are not in {WRT}")
    if params:
        world._resolve_wrt(params)  # ValueError naming unknown parameters
    return state, (params or None)


# ------------------------------------------------------------------------------------------ evaluations


def _evaluate_step(world, q, v, tau):
    """One step, (q_next, v_next). The single place where finite differences call the world (pure with
    the contact warm start off; see the module's note on purity)."""
    return world.step(q, v, tau)


class _KeptWarmStart:
    """``with _KeptWarmStart(world) as kept:`` restores the world's contact warm start on exit, and on
    ``kept.restore()``; a no-op for an object without ``warm_start``."""

    def __init__(self, world):
        self.world = world
        self.saved = world.warm_start() if hasattr(world, "warm_start") else None

    def restore(self) -> None:
        if self.saved is not None:
            self.world.set_warm_start(self.saved)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.restore()
        return False


def _base_step(state, wrt: str, k: int, eps: float) -> float:
    """Step size for entry k of input ``wrt``: eps for q (tangent space), eps * max(1, |x_k|) otherwise."""
    if wrt == "q":
        return eps
    x = state[WRT.index(wrt)][k]
    return eps * max(1.0, abs(x))


def _perturb(world, state, wrt: str, k: int, h: float):
    """(perturbed state, step actually taken) for entry k of input ``wrt`` moved by h."""
    q, v, tau = state
    if wrt == "q":
        d = np.zeros(world.nv)
        d[k] = h
        return (world.integrate(q, d), v, tau), h
    i = WRT.index(wrt)
    x = state[i].copy()
    x[k] += h
    moved = list(state)
    moved[i] = x
    return tuple(moved), x[k] - state[i][k]


def _output(world, state, q_ref) -> np.ndarray:
    """(2nv,) step output of a state: (difference(q_ref, q_next), v_next)."""
    qn, vn = _evaluate_step(world, *state)
    return np.concatenate([world.difference(q_ref, qn), vn])


def _central_column(world, state, wrt, k, h, q_ref) -> np.ndarray:
    plus, hp = _perturb(world, state, wrt, k, h)
    minus, hm = _perturb(world, state, wrt, k, -h)
    return (_output(world, plus, q_ref) - _output(world, minus, q_ref)) / (hp - hm)


def _ridders_column(world, state, wrt, k, h, q_ref, central=None, order=2) -> np.ndarray:
    """Ridders' extrapolation of central differences, entry by entry (Numerical Recipes' dfridr).
    ``central(step)`` replaces the state's central difference; ``order`` is the power of h in its
    leading error term (2 for a central difference, 1 for a one-sided one)."""
    if central is None:
        def central(step):
            return _central_column(world, state, wrt, k, step, q_ref)
    con2 = _RIDDERS_FACTOR**order
    prev = [central(h)]
    best = prev[0].copy()
    err = np.full(best.shape, np.inf)
    done = np.zeros(best.shape, dtype=bool)
    for i in range(1, _RIDDERS_LEVELS):
        h /= _RIDDERS_FACTOR
        row = [central(h)]
        fac = con2
        for j in range(1, i + 1):  # Neville: eliminate the h^(order j) term
            row.append((row[j - 1] * fac - prev[j - 1]) / (fac - 1.0))
            fac *= con2
            est = np.maximum(np.abs(row[j] - row[j - 1]), np.abs(row[j] - prev[j - 1]))
            better = (est <= err) & ~done
            best[better] = row[j][better]
            err[better] = est[better]
        done |= np.abs(row[i] - prev[i - 1]) >= _RIDDERS_SAFE * err  # higher order got worse: stop
        if done.all():
            break
        prev = row
    return best


# ------------------------------------------------------------------------------------------ parameters


def _rigid_groups(p, layout) -> dict:
    """{body name: [(member body name, rotation of the member in the joint frame)]}: the bodies that move
    as one rigid body with it (on the same core joint, welded ones included)."""
    slots = {}
    for name, kind in zip(p.names, layout.kinds):
        if kind[0] == "body" and kind[2] == "mass":
            slots[kind[1]] = name[: -len("/mass")]
    members = {}
    for slot, body in slots.items():
        members.setdefault(layout.body_joint[slot], []).append((body, layout.body_pose[slot].rotation))
    return {body: members[layout.body_joint[slot]] for slot, body in slots.items()}


def _group_sizes(p, groups) -> dict:
    """{body name: (mass, mean principal moment)} of the rigid body it belongs to (``_rigid_groups``;
    moments summed without parallel-axis terms). A rigid body without rotational inertia gets the
    smallest moment of the others."""
    sizes = {}
    for body, members in groups.items():
        # a particle has a mass only (no rotation): no moments
        sizes[body] = (sum(p[f"{m}/mass"] for m, _ in members),
                       sum(p[f"{m}/inertia_{a}{a}"] for m, _ in members for a in "xyz"
                           if f"{m}/inertia_{a}{a}" in p.names) / 3.0)
    smallest = min((moment for _, moment in sizes.values() if moment > 0), default=1.0)
    return {body: (mass, moment or smallest) for body, (mass, moment) in sizes.items()}


def _turning_inertia(world, q, body, cache) -> float:
    """The smallest diagonal entry of M(q) over the dofs that turn ``body`` (nonzero angular rows of its
    Jacobian): the scale at which its rotational inertia starts to change the dynamics; 0 if none."""
    if body not in cache:
        turning = np.abs(world.body_jacobian(q, body)[3:]).max(axis=0) > 1e-12
        diagonal = np.diag(_mass_matrix(world, q, cache))[turning]
        cache[body] = float(diagonal.min()) if diagonal.size else 0.0
    return cache[body]


def _mass_matrix(world, q, cache) -> np.ndarray:
    """M(q), computed once per ``cache``."""
    if "M" not in cache:
        cache["M"] = world.mass_matrix(q)
    return cache["M"]


def _free_dof_inertia(world, q, k, cache) -> float:
    """1 / (M(q)^-1)_kk: the inertia dof k moves when the other dofs are free (M^-1 computed once per
    ``cache``)."""
    if "Minv" not in cache:
        cache["Minv"] = world.mass_matrix_inverse(q)
    return 1.0 / cache["Minv"][k, k]


def _parameter_scales(world, p, names, q) -> dict:
    """{name: size}: the step of a parameter's column is eps times its size, the size at which it changes
    the dynamics. Inertial parameters of a body take the sizes of the rigid group it moves in (a small
    body welded to a large one matters at the large one's scale): its mass; the larger of |com| and its
    radius of gyration for a centre of mass coordinate; for an entry of the rotational inertia, the larger
    of its mean principal moment and the smallest diagonal entry of M(q) over the dofs that turn the body
    (a finger's or a foot's inertia matters at the scale of the joints that carry it). Armature, damping
    and stiffness of a dof: the larger of the value and m, m / dt and m / dt^2, where m = 1 / (M(q)^-1)_kk
    is the inertia the dof feels with the others free (the step solves with M + dt D + dt^2 K, and adding
    a to M_kk changes M^-1 by a factor 1 / (1 + a (M^-1)_kk): each moves it by about eps). M_kk itself
    can be far larger: a double pendulum on a free base has M_kk = 0.02 on a base rotation that moves
    inertia of 3e-4, and a stiffness step scaled by M_kk put the differences off by 100 %.
    Gravity, friction and restitution: max(1, |p|)."""
    layout = world._parameter_layout()
    sizes = _group_sizes(p, _rigid_groups(p, layout))
    cache = {}
    out = {}
    for name in names:
        kind = layout.kinds[p.index(name)]
        value = abs(p[name])
        size = max(1.0, value)
        if kind[0] == "body":
            body = name[: -len(kind[2]) - 1]
            mass, moment = sizes[body]
            if kind[2] == "mass":
                size = mass
            elif kind[2].startswith("com_"):
                com = np.array([p[f"{body}/com_{a}"] for a in "xyz"])
                size = max(float(np.linalg.norm(com)), np.sqrt(1.5 * moment / mass) if mass > 0 else 0.0)
            else:
                size = max(moment, _turning_inertia(world, q, body, cache))
        elif kind[0] == "joint":
            power = {"armature": 0, "damping": 1, "stiffness": 2}[kind[2]]
            size = max(value, _free_dof_inertia(world, q, kind[1], cache) / world.dt**power)
        out[name] = size if np.isfinite(size) and size > 0 else 1.0
    return out


def _rotational_inertia(p, body, field=None, value=None) -> np.ndarray:
    """(3, 3) rotational inertia of ``body`` from ``p``, with entry ``field`` set to ``value`` if given."""
    I = np.empty((3, 3))
    for a, b in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)):
        entry = f"inertia_{'xyz'[a]}{'xyz'[b]}"
        I[a, b] = I[b, a] = value if field == entry else p[f"{body}/{entry}"]
    return I


def _physical(p, groups, name, value) -> bool:
    """Whether parameter ``name`` set to ``value`` keeps the model physical: within its bounds, and for an
    entry of a rotational inertia, the rigid body it belongs to (the body and those welded to it, their
    rotational inertias summed in the joint frame; the parallel-axis terms only add to it) keeps a
    positive semi-definite inertia. A small body welded to a large one may thus be moved at the large
    one's scale, where its own inertia alone would turn indefinite."""
    field = name.rsplit("/", 1)[-1]
    if "/" not in name or not field.startswith("inertia_"):
        i = p.index(name)
        return bool(p.lower[i] <= value <= p.upper[i])
    body = name[: -len(field) - 1]  # the rigid body's inertia, not this body's bounds, decides
    total = np.zeros((3, 3))
    for member, R in groups[body]:
        I = _rotational_inertia(p, member, field, value) if member == body else _rotational_inertia(p, member)
        total += R @ I @ R.T
    eig = np.linalg.eigvalsh(total)
    # rounding in a URDF's inertia leaves zero moments at -1e-20 or so: those count as zero
    return bool(eig[0] >= -1e-12 * max(abs(eig[-1]), np.finfo(float).tiny))


def _parameter_output(world, state, q_ref, name, value):
    """Step output with parameter ``name`` set to ``value``."""
    world.set_parameters({name: value}, check_inertia=False)
    try:
        return _output(world, state, q_ref)
    except RuntimeError as exc:
        raise RuntimeError(f"the step with parameter {name!r} = {value:.6g} failed ({exc})") from None


_SHRINK_TRIES = 6  # a central step shrinks by 4 at most this often to keep both sides physical


def _parameter_difference(p, groups, name, h):
    """(difference(f, step), order, first step) for parameter ``name``, in this order of preference: a
    central difference from the largest of h, h / 4, h / 16, ... that keeps both sides physical (the
    physical values along one parameter are an interval, so every smaller step of the Ridders sequence
    stays inside too); a second-order one-sided one from h into the physical side (a damping of 0, a
    diagonal entry of an inertia with a zero principal moment); a central one from h through unphysical
    but defined values (an off-diagonal entry of a body without rotational inertia)."""
    p0 = p[name]
    i = p.index(name)

    def central(f, s):
        return (f(p0 + s) - f(p0 - s)) / ((p0 + s) - (p0 - s))

    def physical_both(s):
        return _physical(p, groups, name, p0 + s) and _physical(p, groups, name, p0 - s)

    for k in range(_SHRINK_TRIES + 1):
        if physical_both(h / 4.0**k):
            return central, 2, h / 4.0**k
    for sign in (1.0, -1.0):  # second order: (4 (f(p0 + s) - f(p0)) - (f(p0 + 2s) - f(p0))) / 2s
        if _physical(p, groups, name, p0 + 2.0 * sign * h):
            def one_sided(f, s, sign=sign):
                near, far = p0 + sign * s, p0 + 2.0 * sign * s
                return (4.0 * (f(near) - f(p0)) - (f(far) - f(p0))) / (2.0 * (near - p0))
            return one_sided, 1, h
    if p.lower[i] <= p0 - h and p0 + h <= p.upper[i]:
        return central, 2, h
    raise ValueError(f"parameter {name!r} = {p0:g} cannot be moved by {h:g} either way within its bounds "
                     f"[{p.lower[i]:g}, {p.upper[i]:g}]")


def _parameter_column(world, state, p, groups, name, h, q_ref, method) -> np.ndarray:
    """d(step output)/d(parameter) by central (or Ridders') differences, one-sided where only one side
    stays physical (see _parameter_difference). Leaves the parameter at its value in ``p``."""
    difference, order, h = _parameter_difference(p, groups, name, h)
    memo = {}

    def f(value):
        if value not in memo:
            memo[value] = _parameter_output(world, state, q_ref, name, value)
        return memo[value]

    try:
        if method == "central":
            return difference(f, h)
        return _ridders_column(world, state, None, 0, h, q_ref, central=lambda s: difference(f, s), order=order)
    finally:
        world.set_parameters({name: p[name]})


def _fd_blocks(world, state, wrt: tuple, method: str, eps: float, params=None):
    """(q_next, v_next, {block name: (nv, nv)}, parameter names) by finite differences for the inputs in
    ``wrt`` and the parameters selected by ``params``."""
    n = world.nv
    q_next, v_next = _evaluate_step(world, *state)
    column = _central_column if method == "central" else _ridders_column
    blocks = {}
    for name in wrt:
        J = np.empty((2 * n, n))
        for k in range(n):
            J[:, k] = column(world, state, name, k, _base_step(state, name, k, eps), q_next)
        blocks[f"dq_d{name}"] = J[:n]
        blocks[f"dv_d{name}"] = J[n:]
    names = ()
    if params is not None:
        p = world.parameters()
        names = tuple(p.names[i] for i in world._resolve_wrt(params))
        J = np.empty((2 * n, len(names)))
        scales = _parameter_scales(world, p, names, state[0])
        groups = _rigid_groups(p, world._parameter_layout())
        try:
            for c, name in enumerate(names):
                size = scales[name] if method == "ridders" else max(1.0, scales[name])
                J[:, c] = _parameter_column(world, state, p, groups, name, eps * size, q_next, method)
        finally:
            world.set_parameters(p.values)  # exactly the values we started from
        blocks["dq_dp"] = J[:n]
        blocks["dv_dp"] = J[n:]
    return q_next, v_next, blocks, names


def finite_difference_jacobians(world, q, v, tau, method: str = "central", eps: float | None = None,
                                parameters=None):
    """Step Jacobians by finite differences of ``world.step``, in the layout of ``world.step_jacobians``.

    Args:
        world: a rigidiff.World.
        q: (nq,) configuration.
        v: (nv,) velocity.
        tau: (nv,) joint torques.
        method: "central" (2 steps per column) or "ridders" (Ridders' extrapolation, up to 16 steps per
            column, far more accurate); see docs/conventions.md, "Checking gradients".
        eps: step size (central) or initial step size (ridders); None for 1e-5 or 1e-2. For v and tau it
            is scaled by max(1, |x_k|) per entry; for q it is a tangent-space step; for a parameter it is
            scaled by the parameter's size (module docstring, "Parameters").
        parameters: physical parameters to differentiate with respect to as well, as ``wrt`` of
            ``world.step_jacobians`` (None: none).

    Returns:
        a rigidiff.StepJacobians: q_next, v_next of the unperturbed step and the six (nv, nv) blocks,
        q perturbed with integrate and q_next changes measured with difference (tangent space); with
        parameters, also parameter_names, dq_dp and dv_dp.

    Raises:
        ValueError: for a wrong shape, a non-finite state, an unknown method or eps <= 0.
    """
    from rigidiff.jacobians import StepJacobians

    _check_world(world)
    eps = _check_method(method, eps)
    state = _check_state(world, q, v, tau)
    if parameters is not None:
        world._resolve_wrt(parameters)
    with _KeptWarmStart(world):
        q_next, v_next, b, names = _fd_blocks(world, state, WRT, method, eps, parameters)
    extra = {} if parameters is None else {"parameter_names": names, "dq_dp": b["dq_dp"], "dv_dp": b["dv_dp"]}
    return StepJacobians(q_next, v_next, b["dq_dq"], b["dq_dv"], b["dq_dtau"], b["dv_dq"], b["dv_dv"],
                         b["dv_dtau"], **extra)


# ------------------------------------------------------------------------------------------ the report


@dataclass(frozen=True)
class BlockReport:
    """Analytic against finite differences for one block, e.g. ``dv_dq``.

    ``max_rel_error`` is the largest |a - f| / max(|f|, atol / rtol): relative where the entry is large
    enough for ``rtol`` to matter, absolute (scaled) below. An entry passes when |a - f| <= atol + rtol
    * |f| (numpy.allclose with the finite differences as reference); ``worst`` is the entry that comes
    closest to failing (or fails worst), as (row, col, analytic, fd); ``n_failed`` counts failing entries.
    """

    name: str
    shape: tuple
    max_abs_error: float
    max_rel_error: float
    worst: tuple
    n_failed: int
    passed: bool


def _compare(name: str, analytic: np.ndarray, fd: np.ndarray, rtol: float, atol: float) -> BlockReport:
    err = np.abs(analytic - fd)
    bad = ~np.isfinite(err)
    err_or_inf = np.where(bad, np.inf, err)
    tol = atol + rtol * np.abs(fd)
    within = err_or_inf <= tol
    floor = max(atol / rtol, np.finfo(float).tiny)
    rel = err_or_inf / np.maximum(np.abs(fd), floor)
    # how close each entry comes to failing (> 1: fails); with atol = 0 an entry with fd = 0 has tol 0
    ratio = np.where(tol > 0, err_or_inf / np.where(tol > 0, tol, 1.0), np.where(err_or_inf > 0, np.inf, 0.0))
    row, col = np.unravel_index(int(np.argmax(ratio)), err.shape)
    worst = (int(row), int(col), float(analytic[row, col]), float(fd[row, col]))
    return BlockReport(name, tuple(err.shape), float(err_or_inf.max()), float(rel.max()), worst,
                       int((~within).sum()), bool(within.all()))


def _table(header: list, rows: list) -> str:
    """Columns left-aligned to their widest cell, separated by two spaces."""
    cells = [[str(c) for c in r] for r in [header, *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells)


@dataclass(frozen=True)
class JacobianReport:
    """The result of ``check_jacobians``: one BlockReport per block, in the order dq_d<wrt>, dv_d<wrt>.

    ``report["dv_dq"]`` is one block; ``str(report)`` an aligned table; ``report.raise_if_failed()``
    raises AssertionError with that table when a block fails.
    """

    blocks: list
    method: str
    eps: float
    rtol: float
    atol: float

    @property
    def passed(self) -> bool:
        """True when every block passed."""
        return all(b.passed for b in self.blocks)

    @property
    def failed(self) -> list:
        """Names of the blocks that failed."""
        return [b.name for b in self.blocks if not b.passed]

    @property
    def max_abs_error(self) -> float:
        """Largest |analytic - fd| over all blocks."""
        return max(b.max_abs_error for b in self.blocks)

    @property
    def max_rel_error(self) -> float:
        """Largest relative error over all blocks (rule in BlockReport)."""
        return max(b.max_rel_error for b in self.blocks)

    def __getitem__(self, name: str) -> BlockReport:
        for b in self.blocks:
            if b.name == name:
                return b
        raise UnknownNameError(f"no block {name!r} in this report; blocks: {[b.name for b in self.blocks]}")

    def __str__(self) -> str:
        status = "passed" if self.passed else f"FAILED ({len(self.failed)} of {len(self.blocks)} blocks)"
        head = (f"step Jacobians vs {self.method} differences (eps {self.eps:g}, rtol {self.rtol:g}, "
                f"atol {self.atol:g}): {status}")
        rows = [[b.name, f"{b.shape[0]}x{b.shape[1]}", f"{b.max_abs_error:.2e}", f"{b.max_rel_error:.2e}",
                 f"({b.worst[0]}, {b.worst[1]})", f"{b.worst[2]:+.6e}", f"{b.worst[3]:+.6e}",
                 f"{b.n_failed}", "ok" if b.passed else "FAILED"] for b in self.blocks]
        header = ["block", "shape", "max abs err", "max rel err", "worst (row, col)", "analytic", "finite diff",
                  "failed", "status"]
        return head + "\n" + _table(header, rows)

    def raise_if_failed(self) -> None:
        """Raise AssertionError with the table if a block failed."""
        if not self.passed:
            raise AssertionError(str(self))


def _analytic_blocks(world, state, analytic, wrt: tuple, params=None) -> dict:
    """{block name: array} from world.step_jacobians, a given StepJacobians or a callable(q, v, tau)."""
    if analytic is None:
        J = world.step_jacobians(*state) if params is None else world.step_jacobians(*state, wrt=params)
    elif callable(analytic):
        J = analytic(*state)
    else:
        J = analytic
    n = world.nv
    out = {}
    for name in [f"d{y}_d{w}" for y in ("q", "v") for w in wrt]:
        if not hasattr(J, name):
            raise ValueError(f"analytic must be a StepJacobians, or a callable (q, v, tau) returning one; "
                             f"{type(J).__name__} has no {name!r}")
        block = np.asarray(getattr(J, name), dtype=float)
        if block.shape != (n, n):
            raise ValueError(f"analytic.{name} must have shape ({n}, {n}), got {block.shape}")
        out[name] = block
    if params is not None:
        names = tuple(world.parameters().names[i] for i in world._resolve_wrt(params))
        if tuple(getattr(J, "parameter_names", ())) != names:
            raise ValueError(f"analytic has parameter columns {getattr(J, 'parameter_names', ())}, expected {names}")
        out["dq_dp"] = np.asarray(J.dq_dp, dtype=float)
        out["dv_dp"] = np.asarray(J.dv_dp, dtype=float)
    return out


def check_jacobians(world, q, v, tau, wrt=WRT, method: str = "central", eps: float | None = None,
                    rtol: float = 1e-5, atol: float = 1e-7, analytic=None) -> JacobianReport:
    """Compare ``world.step_jacobians`` with finite differences of ``world.step``, block by block.

    Args:
        world: a rigidiff.World.
        q: (nq,) configuration.
        v: (nv,) velocity.
        tau: (nv,) joint torques.
        wrt: the inputs to check, from ("q", "v", "tau") (or one name), each giving the blocks dq_d<wrt>
            and dv_d<wrt>, and physical parameters as ``world.step_jacobians(wrt=...)`` takes them
            (e.g. "gravity", "link3/mass"), giving the blocks dq_dp and dv_dp.
        method, eps: as in finite_difference_jacobians.
        rtol, atol: an entry passes when |analytic - fd| <= atol + rtol * |fd| (rtol > 0, atol >= 0).
        analytic: None (use world.step_jacobians), a StepJacobians, or a callable (q, v, tau) returning
            one; lets you check a Jacobian from elsewhere or a deliberately wrong one.

    Returns:
        a JacobianReport: ``passed``, ``blocks``, ``max_abs_error``, a table as ``str(report)``.

    Raises:
        ValueError: for an unknown wrt entry or method, eps <= 0, rtol <= 0, atol < 0, a wrong shape.

    Example::

        report = rdt.check_jacobians(world, q, v, tau, wrt=("q", "v"), method="ridders")
        report.raise_if_failed()
    """
    from rigidiff._validate import as_scalar

    _check_world(world)
    wrt, params = _check_wrt(wrt, world)
    eps = _check_method(method, eps)
    rtol = as_scalar(rtol, "rtol", minimum=0.0, strict=True)
    atol = as_scalar(atol, "atol", minimum=0.0)
    state = _check_state(world, q, v, tau)
    with _KeptWarmStart(world) as kept:
        expected = _analytic_blocks(world, state, analytic, wrt, params)
        kept.restore()  # the unperturbed step of the differences is solved as the analytic one
        _, _, fd, _ = _fd_blocks(world, state, wrt, method, eps, params)
    blocks = [_compare(name, expected[name], fd[name], rtol, atol) for name in expected]
    return JacobianReport(blocks, method, eps, rtol, atol)
