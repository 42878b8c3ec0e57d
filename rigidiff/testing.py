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
itself: a tangent perturbation starts from zero whatever the size of q. A torque's step stays within
half its distance to its effort limit, so that no difference straddles the step's clip.

**Parameters.** ``wrt`` may also name physical parameters (anything ``world.step_jacobians(wrt=...)``
accepts: "inertia", "damping", "stiffness", "armature", "gravity", "all", a parameter, body or joint
name). Each is perturbed through ``world.set_parameters(..., check_inertia=False)`` and restored exactly
afterwards; the blocks are ``dq_dp`` and ``dv_dp`` (nv, n_params). The step of a parameter is ``eps``
times its size, the scale at which it changes the dynamics (``_parameter_scales``): for an entry of a
body's rotational inertia, the inertia that the dofs turning the body about that entry's axes move,
1 / (M(q)^-1)_kk (with the other dofs free); for a centre of mass coordinate, the larger of |com|, the
radius of gyration of the body's rigid group and the length at which its mass turned by those dofs
matters; for a mass, the group's mass; for a joint's armature, damping and stiffness, the inertia its
dof moves, over dt or dt^2 for damping and stiffness. The step function is smooth in the parameters
wherever its articulated inertias are positive definite, physical or not, so a step may leave the
physical set: a central step shrinks (by 4, up to 6 times) until both sides are within the bounds the
world enforces (masses and passive coefficients >= 0) and the step is defined, else the column is a
second-order one-sided difference into the side where it is (a damping of 0), extrapolated by Ridders
as a series in h, h^2, h^3, ... rather than h^2, h^4, ...

**The finite differences' own error.** One step rarely suits a whole column: scaled to the output that
changes fastest, it leaves the small entries to round-off. ``check_jacobians`` therefore looks again
at every column where an entry fails: Ridders' columns are extrapolated from first steps 16, 256 and
4096 times larger and each entry keeps the result with the smallest error estimate; central columns are
differenced with half the step. An entry then also passes if it is within twice the finite differences'
error estimate (Ridders' estimate, at least the round-off of q_next and v_next over the step, or the
distance between two results, whichever is larger), which is taken as at least 1e-2 rtol and at most
rtol times the largest entry of its column. Such entries are
counted as ``n_within_noise``; ``fd_noise=False`` gives the plain rule.

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


def _effort_limits(world) -> np.ndarray:
    """(nv,) effort limit of every dof (inf where there is none, particles included, and for every dof of
    a world that names no joints)."""
    limits = np.full(world.nv, np.inf)
    if not (hasattr(world, "joint_names") and hasattr(world, "joint")):
        return limits
    for name in world.joint_names:
        j = world.joint(name)
        limits[j.v_index:j.v_index + j.nv] = j.effort_limit
    return limits


def _base_step(state, wrt: str, k: int, eps: float, limits=None, factor=1.0) -> float:
    """Step size for entry k of input ``wrt``: eps for q (tangent space), eps * max(1, |x_k|) otherwise,
    times ``factor``. A torque's step stays within half its distance to the effort limit the step clips
    it at (on either side of it), so that no difference straddles the clip's kink: a torque clipped 0.03
    beyond a limit of 30 has a zero column, which a first Ridders step of 0.3 turned into 6e-4."""
    if wrt == "q":
        return factor * eps
    x = state[WRT.index(wrt)][k]
    h = factor * eps * max(1.0, abs(x))
    if wrt == "tau" and limits is not None and np.isfinite(limits[k]):
        gap = abs(abs(x) - limits[k])
        if gap > 0.0:
            h = min(h, 0.5 * gap)
    return h


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


def _ridders_column(world, state, wrt, k, h, q_ref, central=None, stride=2, roundoff=None) -> tuple:
    """(column, error estimate per entry): Ridders' extrapolation of central differences, entry by entry
    (Numerical Recipes' dfridr). ``central(step)`` replaces the state's central difference. Its error is
    a series in h from h^2 on: even powers only (``stride`` 2) for a central difference, every power
    (``stride`` 1) for the second-order one-sided one; each column of the tableau removes the next.
    ``roundoff`` (per entry: the round-off of the outputs differenced) bounds the returned estimate from
    below by roundoff / h at the step h of the entry kept: a step too small to change an output at all
    gives identical differences, whose tableau claims an error of 0."""
    if central is None:
        def central(step):
            return _central_column(world, state, wrt, k, step, q_ref)
    prev = [central(h)]
    best = prev[0].copy()
    best_step = np.full(best.shape, h)
    err = np.full(best.shape, np.inf)
    done = np.zeros(best.shape, dtype=bool)
    for i in range(1, _RIDDERS_LEVELS):
        h /= _RIDDERS_FACTOR
        row = [central(h)]
        for j in range(1, i + 1):  # Neville: eliminate the h^(2 + stride (j - 1)) term
            fac = _RIDDERS_FACTOR**(2 + stride * (j - 1))
            row.append((row[j - 1] * fac - prev[j - 1]) / (fac - 1.0))
            est = np.maximum(np.abs(row[j] - row[j - 1]), np.abs(row[j] - prev[j - 1]))
            better = (est <= err) & ~done
            best[better] = row[j][better]
            best_step[better] = h
            err[better] = est[better]
        done |= np.abs(row[i] - prev[i - 1]) >= _RIDDERS_SAFE * err  # higher order got worse: stop
        if done.all():
            break
        prev = row
    if roundoff is not None:
        err = np.maximum(err, roundoff / best_step)
    return best, err


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


def _turning_inertia(world, q, body, axes, cache) -> float:
    """The inertia at which entry ``axes`` = (a, b) of ``body``'s rotational inertia (body axes) starts to
    change the dynamics: the smallest m_k / w_k over the dofs k that turn the body, with m_k the inertia
    dof k moves when the others are free (``_free_dof_inertia``) and w_k = |w_a w_b| (twice that for
    a != b) the weight the entry gets in it, w the body's angular velocity per unit of dof k; for
    ``axes`` None, w_k = |w|^2 (any axis). A weight counts as at least 0.1, so that a dof turning the body
    about other axes still bounds the scale (an off-diagonal entry a dof weighs at 1e-12 is not to be
    moved by 1e12 m_k). 0 if no dof turns the body. M_kk is no scale here: a floating UR10's base turns about z with
    M_kk = 1 (the arm comes along) but moves only its own 0.011 once the shoulder joint is free."""
    key = (body, axes)
    if key not in cache:
        if ("J", body) not in cache:
            cache[("J", body)] = world.body_jacobian(q, body, frame="local")[3:]
        w = cache[("J", body)]
        if axes is None:
            weight = (w**2).sum(axis=0)
        else:
            a, b = axes
            weight = np.abs(w[a] * w[b]) * (1.0 if a == b else 2.0)
        dofs = np.flatnonzero((w**2).sum(axis=0) > 1e-12)
        cache[key] = min((_free_dof_inertia(world, q, k, cache) / max(weight[k], 0.1) for k in dofs), default=0.0)
    return cache[key]


def _free_dof_inertia(world, q, k, cache) -> float:
    """1 / (M(q)^-1)_kk: the inertia dof k moves when the other dofs are free (M^-1 computed once per
    ``cache``)."""
    if "Minv" not in cache:
        cache["Minv"] = world.mass_matrix_inverse(q)
    return 1.0 / cache["Minv"][k, k]


def _parameter_scales(world, p, names, q) -> dict:
    """{name: size}: the step of a parameter's column is eps times its size, the size at which it changes
    the dynamics. Inertial parameters of a body take the sizes of the rigid group it moves in (a small
    body welded to a large one matters at the large one's scale): its mass; for a centre of mass
    coordinate the larger of |com|, its radius of gyration and sqrt(m / mass), with m the inertia the
    body's turning dofs move (``_turning_inertia``: a point mass on iCub's neck has no radius of gyration,
    and its com matters once mass com^2 compares with the neck's inertia); for an entry of the rotational
    inertia, the inertia the dofs that turn the body along that entry's axes move (a finger's or a foot's
    inertia matters at the scale of the joints that carry it, a floating base's at its own once the
    joints are free, a free disc's smallest moment at that moment, not at the mean of its moments), or
    its mean principal moment if no dof turns it. Armature, damping
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
                turning = max(1.5 * moment, _turning_inertia(world, q, body, None, cache))
                size = max(float(np.linalg.norm(com)), np.sqrt(turning / mass) if mass > 0 else 0.0)
            else:
                axes = tuple("xyz".index(a) for a in kind[2][-2:])
                size = _turning_inertia(world, q, body, axes, cache) or moment
        elif kind[0] == "joint":
            power = {"armature": 0, "damping": 1, "stiffness": 2}[kind[2]]
            size = max(value, _free_dof_inertia(world, q, kind[1], cache) / world.dt**power)
        out[name] = size if np.isfinite(size) and size > 0 else 1.0
    return out


def _parameter_output(world, state, q_ref, name, value):
    """Step output with parameter ``name`` set to ``value``, or None where the step is undefined (a
    singular articulated inertia)."""
    world.set_parameters({name: value}, check_inertia=False)
    try:
        return _output(world, state, q_ref)
    except RuntimeError:
        return None


_SHRINK_TRIES = 6  # a step shrinks by 4 at most this often to keep the step defined on both sides
_CLOSEST_TO_A_BOUND = 1e-4  # a central step fits between the bounds down to this part of the step wanted


def _parameter_difference(p, name, h, defined):
    """(difference(f, step), stride of its error series in h (2 central, 1 one-sided), first step) for
    parameter ``name``, in this order of preference: a central difference from the largest of s, s / 4,
    s / 16, ... where the step is ``defined`` on both sides, s being h or, nearer to a bound of the
    parameter (none for a rotational inertia's entries), 0.9 times the distance to it, down to 1e-4 h;
    a second-order one-sided one from the largest of h, h / 4, ... into the side where it is (a damping
    or an armature of 0). The step is a smooth function of the parameters wherever its articulated
    inertias are positive definite, physical or not, so an inertia may leave the physical set: a finger link's inertia of 3e-7 matters at the scale of 1e-4 (the finger
    joint's), and steps kept within its positive semi-definite set were 1e-4 off in round-off. Along a
    mass or an entry of an inertia the defined values are an interval (the mass matrix is affine in
    them), so every smaller step of the Ridders sequence stays defined too."""
    p0 = p[name]
    i = p.index(name)
    # a rotational inertia's bound (a principal moment >= 0) is physical, not needed for the step
    lower, upper = (-np.inf, np.inf) if name.rsplit("/", 1)[-1].startswith("inertia_") else (p.lower[i], p.upper[i])

    def valid(value):
        return bool(lower <= value <= upper) and defined(value)

    def central(f, s):
        return (f(p0 + s) - f(p0 - s)) / ((p0 + s) - (p0 - s))

    steps = [h / 4.0**k for k in range(_SHRINK_TRIES + 1)]
    # within the bounds first: a mass of 1e-4 welded to 43 kg is differenced centrally by 9e-5, not
    # one-sided by 0.43 (off by 3e-4); iCub's base mass of 1e-6 on 4.7 kg one-sided by 0.05, as a
    # central step of 9e-7 drowns in round-off
    room = 0.9 * min(p0 - lower, upper - p0)
    if room >= _CLOSEST_TO_A_BOUND * h:
        for s in [min(h, room) / 4.0**k for k in range(_SHRINK_TRIES + 1)]:
            if valid(p0 + s) and valid(p0 - s):
                return central, 2, s  # error series h^2, h^4, ...
    for s in steps:
        for sign in (1.0, -1.0):  # second order: (4 (f(p0 + s) - f(p0)) - (f(p0 + 2s) - f(p0))) / 2s
            if valid(p0 + sign * s) and valid(p0 + 2.0 * sign * s):
                def one_sided(f, s, sign=sign):
                    near, far = p0 + sign * s, p0 + 2.0 * sign * s
                    return (4.0 * (f(near) - f(p0)) - (f(far) - f(p0))) / (2.0 * (near - p0))
                return one_sided, 1, s  # error series h^2, h^3, ...
    raise ValueError(f"parameter {name!r} = {p0:g} cannot be moved by {h:g} or {steps[-1]:g} either way "
                     f"within its bounds [{lower:g}, {upper:g}] without making the step undefined")


def _parameter_column(world, state, p, name, h, q_ref, method, roundoff=None) -> tuple:
    """(d(step output)/d(parameter), Ridders' error estimate or None) by central (or Ridders')
    differences, one-sided where the step is defined on one side only (see _parameter_difference).
    Leaves the parameter at its value in ``p``."""
    memo = {}

    def f(value):
        if value not in memo:
            memo[value] = _parameter_output(world, state, q_ref, name, value)
        if memo[value] is None:
            raise RuntimeError(f"the step with parameter {name!r} = {value:.6g} is undefined (an articulated "
                               f"inertia turned singular)")
        return memo[value]

    def defined(value):
        if value not in memo:
            memo[value] = _parameter_output(world, state, q_ref, name, value)
        return memo[value] is not None

    try:
        difference, stride, h = _parameter_difference(p, name, h, defined)
        if method == "central":
            return difference(f, h), None
        return _ridders_column(world, state, None, 0, h, q_ref, central=lambda s: difference(f, s), stride=stride,
                               roundoff=roundoff)
    finally:
        world.set_parameters({name: p[name]})


def _fd_blocks(world, state, wrt: tuple, method: str, eps: float, params=None, columns=None, factor=1.0):
    """(q_next, v_next, {block name: (nv, m)}, parameter names, {block name: Ridders' error estimates}
    (empty for central differences)) by finite differences for the inputs in ``wrt`` and the parameters
    selected by ``params``. ``columns`` ({"q": [k, ...], "p": [...], ...}) limits the work to those
    columns of each input (the others are NaN; an input not named is skipped); ``factor`` multiplies
    every step as chosen."""
    n = world.nv
    q_next, v_next = _evaluate_step(world, *state)
    limits = _effort_limits(world) if "tau" in wrt else None
    # the last bits of q_next and v_next: a difference at step h carries at least this over h (a
    # one-sided one 4 times it)
    roundoff = 4.0 * np.finfo(float).eps * np.repeat([np.abs(q_next).max(), np.abs(v_next).max()], n)
    jobs = [(name, k, None) for name in wrt for k in (range(n) if columns is None else columns.get(name, ()))]
    if params is not None:
        p = world.parameters()
        names = tuple(p.names[i] for i in world._resolve_wrt(params))
        scales = _parameter_scales(world, p, names, state[0])
        jobs += [("p", c, names[c]) for c in (range(len(names)) if columns is None else columns.get("p", ()))]
    width = {name: n for name in wrt}
    if params is not None:
        width["p"] = len(names)
    J = {name: np.full((2 * n, m), np.nan) for name, m in width.items()}
    E = {name: np.full((2 * n, m), np.nan) for name, m in width.items()}
    try:
        for name, k, param in jobs:
            if param is None:
                h = _base_step(state, name, k, eps, limits, factor)
                column = ((_central_column(world, state, name, k, h, q_next), None) if method == "central"
                          else _ridders_column(world, state, name, k, h, q_next, roundoff=roundoff))
            else:
                column = _parameter_column(world, state, p, param, factor * eps * scales[param], q_next, method,
                                           roundoff)
            J[name][:, k] = column[0]
            if column[1] is not None:
                E[name][:, k] = column[1]
    finally:
        if params is not None:
            world.set_parameters(p.values)  # exactly the values we started from
    blocks, errors = {}, {}
    for name in width:
        blocks[f"dq_d{name}"], blocks[f"dv_d{name}"] = J[name][:n], J[name][n:]
        if method != "central":
            errors[f"dq_d{name}"], errors[f"dv_d{name}"] = E[name][:n], E[name][n:]
    return q_next, v_next, blocks, (names if params is not None else ()), errors


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
        q_next, v_next, b, names, _ = _fd_blocks(world, state, WRT, method, eps, parameters)
    extra = {} if parameters is None else {"parameter_names": names, "dq_dp": b["dq_dp"], "dv_dp": b["dv_dp"]}
    return StepJacobians(q_next, v_next, b["dq_dq"], b["dq_dv"], b["dq_dtau"], b["dv_dq"], b["dv_dv"],
                         b["dv_dtau"], **extra)


# ------------------------------------------------------------------------------------------ the report


@dataclass(frozen=True)
class BlockReport:
    """Analytic against finite differences for one block, e.g. ``dv_dq``.

    ``max_rel_error`` is the largest |a - f| / max(|f|, atol / rtol): relative where the entry is large
    enough for ``rtol`` to matter, absolute (scaled) below. An entry passes when |a - f| <= atol + rtol
    * |f| (numpy.allclose with the finite differences as reference), or, in ``check_jacobians``, when it
    is within the finite differences' own error as well (``n_within_noise`` counts those entries; the
    rule is in ``check_jacobians``). ``worst`` is the entry that comes closest to failing (or fails
    worst), as (row, col, analytic, fd); ``n_failed`` counts failing entries.
    """

    name: str
    shape: tuple
    max_abs_error: float
    max_rel_error: float
    worst: tuple
    n_failed: int
    passed: bool
    n_within_noise: int = 0


_RESOLUTION = 1e-2  # times rtol: the part of a column's largest entry that differences may not resolve
_NOISE_SAFETY = 2.0  # an error estimate is an estimate: the allowance is twice it


def _noise_allowance(fd: np.ndarray, noise, rtol: float) -> np.ndarray:
    """What an entry may differ by beyond atol + rtol |f|: twice its finite differences' own error
    estimate ``noise``, at least 1e-2 rtol and at most rtol times the largest |f| of its column (zero
    where ``noise`` is None). Round-off in a step is relative to the outputs the input moves most, not to
    one small entry: a one-sided difference of a finger's zero armature moves the finger's velocity by
    1e5 and the floating base's by 4e-3, which it gets 1 % off at every step; on example-robot-data's
    arms and hands such entries come out 1e-8 to 1e-7 of their column's largest off, at every step."""
    if noise is None:
        return np.zeros_like(fd)
    column = np.nanmax(np.abs(np.where(np.isfinite(fd), fd, np.nan)), axis=0, initial=0.0)
    estimate = np.maximum(_NOISE_SAFETY * np.where(np.isfinite(noise), noise, 0.0), _RESOLUTION * rtol * column)
    return np.minimum(estimate, rtol * column)


def _within(analytic: np.ndarray, fd: np.ndarray, rtol: float, atol: float, noise=None):
    """(|a - f| with inf where not finite, tolerance, mask of the entries that pass)."""
    err = np.abs(analytic - fd)
    err = np.where(np.isfinite(err), err, np.inf)
    tol = atol + rtol * np.abs(fd) + _noise_allowance(fd, noise, rtol)
    return err, tol, err <= tol


def _compare(name: str, analytic: np.ndarray, fd: np.ndarray, rtol: float, atol: float,
             noise=None) -> BlockReport:
    err_or_inf, tol, within = _within(analytic, fd, rtol, atol, noise)
    n_within_noise = int((within & ~_within(analytic, fd, rtol, atol)[2]).sum())
    floor = max(atol / rtol, np.finfo(float).tiny)
    rel = err_or_inf / np.maximum(np.abs(fd), floor)
    # how close each entry comes to failing (> 1: fails); with atol = 0 an entry with fd = 0 has tol 0
    ratio = np.where(tol > 0, err_or_inf / np.where(tol > 0, tol, 1.0), np.where(err_or_inf > 0, np.inf, 0.0))
    row, col = np.unravel_index(int(np.argmax(ratio)), err_or_inf.shape)
    worst = (int(row), int(col), float(analytic[row, col]), float(fd[row, col]))
    return BlockReport(name, tuple(err_or_inf.shape), float(err_or_inf.max()), float(rel.max()), worst,
                       int((~within).sum()), bool(within.all()), n_within_noise)


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
                 f"{b.n_failed}", f"{b.n_within_noise}", "ok" if b.passed else "FAILED"] for b in self.blocks]
        header = ["block", "shape", "max abs err", "max rel err", "worst (row, col)", "analytic", "finite diff",
                  "failed", "within fd noise", "status"]
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
        all_names = world.parameters().names  # once: a generator calling parameters() per name was quadratic
        names = tuple(all_names[i] for i in world._resolve_wrt(params))
        if tuple(getattr(J, "parameter_names", ())) != names:
            raise ValueError(f"analytic has parameter columns {getattr(J, 'parameter_names', ())}, expected {names}")
        out["dq_dp"] = np.asarray(J.dq_dp, dtype=float)
        out["dv_dp"] = np.asarray(J.dv_dp, dtype=float)
    return out


def check_jacobians(world, q, v, tau, wrt=WRT, method: str = "central", eps: float | None = None,
                    rtol: float = 1e-5, atol: float = 1e-7, analytic=None, fd_noise: bool = True) -> JacobianReport:
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
        rtol, atol: an entry passes when |analytic - fd| <= atol + rtol * |fd| (rtol > 0, atol >= 0),
            plus, with ``fd_noise``, the finite differences' own error.
        analytic: None (use world.step_jacobians), a StepJacobians, or a callable (q, v, tau) returning
            one; lets you check a Jacobian from elsewhere or a deliberately wrong one.
        fd_noise: in every column where an entry fails, difference again (Ridders from first steps 16,
            256 and 4096 times larger, keeping each entry's best; central with half the step) and let an
            entry also differ by twice the finite differences' own error estimate, at least 1e-2 rtol
            and at most rtol times the largest |fd| of its column (a small entry next to large ones in
            a column carries their round-off: a finger joint's armature on a floating humanoid moves
            the finger's velocity by 1e5 and the base's by 4e-3, off by 10 % in round-off; module
            docstring). Entries that pass only so are counted in each block's ``n_within_noise``.
            False: the plain rule.

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
    if not isinstance(fd_noise, (bool, np.bool_)):
        raise TypeError(f"fd_noise must be True or False, got {fd_noise!r}")
    rtol = as_scalar(rtol, "rtol", minimum=0.0, strict=True)
    atol = as_scalar(atol, "atol", minimum=0.0)
    state = _check_state(world, q, v, tau)
    with _KeptWarmStart(world) as kept:
        expected = _analytic_blocks(world, state, analytic, wrt, params)
        kept.restore()  # the unperturbed step of the differences is solved as the analytic one
        _, _, fd, _, errors = _fd_blocks(world, state, wrt, method, eps, params)
        noise = {}
        if fd_noise:
            kept.restore()
            noise = _fd_noise(world, state, expected, fd, errors, wrt, method, eps, params, rtol, atol)
    blocks = [_compare(name, expected[name], fd[name], rtol, atol, noise.get(name)) for name in expected]
    return JacobianReport(blocks, method, eps, rtol, atol)


_WIDER_STARTS = (16.0, 256.0, 4096.0)  # Ridders' further first steps, in units of the first one


def _fd_noise(world, state, expected, fd, errors, wrt, method, eps, params, rtol, atol) -> dict:
    """{block name: (nv, m)} error estimates of the finite differences in the columns where an entry
    fails the plain rule (0 elsewhere; none at all when nothing fails, so a passing check costs nothing
    more). Central: |F(h) - F(h / 2)|, every step halved. Ridders: the columns are extrapolated again
    from first steps 16, 256 and 4096 times larger, each entry of ``fd`` keeps the result with the
    smallest Ridders error estimate, and its estimate is the larger of that and the distance to the
    runner-up (an estimate drowned in round-off can claim a small error by chance). One step rarely
    suits a whole column: scaled to the output that changes fastest, it drowns the others in round-off
    (iCub's neck yaw moves 3e-8 kg m^2, so its armature's first step is 3e-10, while the legs' entries
    of that column need 1e-6)."""
    failing = {}
    for name in expected:
        cols = np.flatnonzero(~_within(expected[name], fd[name], rtol, atol)[2].all(axis=0))
        if cols.size:
            failing.setdefault(name.split("_d", 1)[1], set()).update(cols.tolist())
    if not failing:
        return {}
    columns = {w: sorted(c) for w, c in failing.items()}
    inputs = tuple(w for w in wrt if w in columns)
    selected = params if "p" in columns else None
    if method == "central":
        half = _fd_blocks(world, state, inputs, method, eps, selected, columns=columns, factor=0.5)[2]
        return {name: np.nan_to_num(np.abs(fd[name] - half[name]), nan=0.0) for name in half}
    runs = [_fd_blocks(world, state, inputs, method, eps, selected, columns=columns, factor=f)
            for f in _WIDER_STARTS]
    noise = {}
    for name in runs[0][2]:
        values = np.stack([fd[name]] + [r[2][name] for r in runs])
        estimates = np.stack([errors[name]] + [r[4][name] for r in runs])
        estimates = np.where(np.isfinite(estimates) & np.isfinite(values), estimates, np.inf)
        order = np.argsort(estimates, axis=0)
        best, second = (np.take_along_axis(values, order[i:i + 1], axis=0)[0] for i in (0, 1))
        best_estimate = np.take_along_axis(estimates, order[:1], axis=0)[0]
        redone = np.isfinite(runs[0][2][name])
        fd[name][redone] = best[redone]
        spread = np.where(np.isfinite(second), np.abs(best - second), np.inf)
        noise[name] = np.where(redone, np.nan_to_num(np.maximum(best_estimate, spread), nan=0.0, posinf=0.0), 0.0)
    return noise
