"""A trajectory optimisation problem: a world, a horizon, an initial state, costs, bounds and unknowns."""

from __future__ import annotations

import contextlib
import os

import numpy as np
from threadpoolctl import ThreadpoolController

from .. import _core
from .._validate import as_array, as_scalar, as_threads, real_array
from .costs import BodyTarget, ControlCost, CostDerivatives, StateCost, UserCost
from .ilqr import solve_ilqr
from .multiple_shooting import solve_multiple_shooting
from .shooting import solve_shooting

__all__ = ["Problem", "METHODS"]

METHODS = ("multiple_shooting", "shooting", "ilqr", "adam")
# the options each method's solve accepts
OPTIONS = {"multiple_shooting": ("shot_length", "solver"), "shooting": (), "ilqr": ("mu", "threads"),
           "adam": ("learning_rate", "betas")}


_CONTROLLER = []


def check_method_options(method, options: dict) -> None:
    """ValueError / TypeError for an unknown method, an option it does not take or a bad option value."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    unknown = sorted(set(options) - set(OPTIONS[method]))
    if unknown:
        raise TypeError(f"method {method!r} takes no option {unknown[0]!r} (its options: {OPTIONS[method]})")
    if "learning_rate" in options:
        as_scalar(options["learning_rate"], "learning_rate", minimum=0.0, strict=True)
    if "betas" in options:
        betas = options["betas"]
        try:
            b1, b2 = (float(b) for b in betas)
        except (TypeError, ValueError):
            raise ValueError(f"betas must be two numbers in [0, 1), got {betas!r}") from None
        if not (0.0 <= b1 < 1.0 and 0.0 <= b2 < 1.0):
            raise ValueError(f"betas must be two numbers in [0, 1), got {betas!r}")
    if "mu" in options:
        as_scalar(options["mu"], "mu", minimum=0.0)
    if "threads" in options:
        as_threads(options["threads"])


def _blas_controller() -> ThreadpoolController:
    """The BLAS libraries loaded (found once: the search reads the process's memory map)."""
    if not _CONTROLLER:
        import scipy.optimize  # noqa: F401  (loads the BLAS SLSQP calls, so that the controller finds it)

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def _available_memory() -> int | None:
    """Bytes of memory available now (None where the system does not tell)."""
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _check_memory(T: int, nq: int, nv: int) -> None:
    """ValueError naming the horizon when the arrays a problem of T steps needs at least (its torque
    bounds and guess, and the states and torques of one rollout) exceed half the available memory."""
    need = 8 * (3 * T * nv + (T + 1) * (nq + nv) + T * nv)
    available = _available_memory()
    if available is not None and need > available // 2:
        raise ValueError(f"horizon={T} needs at least {need / 2**30:.3g} GiB for its trajectories, more than half "
                         f"of the {available / 2**30:.3g} GiB of memory available: use a shorter horizon")


class Problem:
    """Optimise the torques of a T-step rollout of ``world`` from (q0, v0).

    Args:
        world: the World to simulate (its dt, contacts and parameters). A solve restores the world's
            parameters when it ends.
        horizon: number of steps T (the trajectory has T+1 states). ValueError if its trajectories alone
            would take more than half of the memory available.
        q0: (nq,) initial configuration; v0: (nv,) initial velocity (zero if None).
        explore_contact_modes: differentiate rollouts with DiffDART's complementarity-aware backward
            (``Trajectory.backward(explore_contact_modes=True)``), which lets a loss lift a resting
            body off the ground. Only the gradient-based methods ("shooting", "adam") use it.

    Build the objective with ``add_state_cost``, ``add_control_cost``, ``add_body_target`` and
    ``add_cost``; restrict it with ``set_control_bounds``, ``set_state_bounds`` and ``set_actuated``;
    add unknowns with ``optimize_initial_state`` and ``optimize_parameters``; then ``solve``.
    """

    def __init__(self, world, horizon: int, q0, v0=None, explore_contact_modes: bool = False):
        from rigidiff.world import World

        if not isinstance(world, World):
            raise ValueError(f"world must be a rigidiff.World, got {type(world).__name__}")
        if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
            raise ValueError(f"horizon must be a positive int (number of steps), got {horizon!r}")
        world._ensure_compiled()
        if world.nv == 0:
            raise ValueError("the world has no degrees of freedom: there is nothing to optimise")
        _check_memory(int(horizon), world.nq, world.nv)
        self.world = world
        self.T = int(horizon)
        self.nq, self.nv = world.nq, world.nv
        self.q0 = as_array(q0, (self.nq,), "q0").copy()
        world.difference(self.q0, self.q0)  # ValueError for a quaternion that is not of unit norm
        self.v0 = np.zeros(self.nv) if v0 is None else as_array(v0, (self.nv,), "v0").copy()
        self.explore_contact_modes = bool(explore_contact_modes)
        self._costs = []
        self.S = np.eye(self.nv)
        self.actuated = np.arange(self.nv)
        self._u_lower = np.full((self.T, self.nv), -np.inf)
        self._u_upper = np.full((self.T, self.nv), np.inf)
        self.q_lower = self.q_upper = self.v_lower = self.v_upper = None
        self.param_names: tuple = ()
        self.param_lower = self.param_upper = np.zeros(0)
        self.opt_q0 = self.opt_v0 = False
        self._tau_guess = np.zeros((self.T, self.nv))
        self._native = None  # the C++ twin of the costs and bounds (_native_core), made on first use

    # ------------------------------------------------------------------ objective
    def add_state_cost(self, q_target=None, v_target=None, q_weight=1.0, v_weight=1.0, final_only: bool = False):
        """0.5 |difference(q_target, q_t)|^2_q_weight + 0.5 |v_t - v_target|^2_v_weight at every knot
        t = 0..T, or at t = T only with ``final_only``.

        Targets: one (nq,) / (nv,) target, or a (T+1, nq) / (T+1, nv) reference to track; None leaves
        that part out. Weights: a scalar, an (nv,) diagonal or an (nv, nv) matrix; the q error is the
        tangent-space difference, so a free joint's rotation error is a rotation vector.
        """
        if q_target is None and v_target is None:
            raise ValueError("add_state_cost needs q_target, v_target or both")
        self._native = None
        self._costs.append(StateCost(self.world, self.T, q_target, v_target, q_weight, v_weight, final_only))
        return self

    def add_control_cost(self, weight=1.0, tau_target=None):
        """0.5 |tau_t - tau_target|^2_weight summed over the T steps (tau_target: (nv,), (T, nv) or None
        for zero; weight: scalar, (nv,) or (nv, nv))."""
        self._native = None
        self._costs.append(ControlCost(self.world, self.T, weight, tau_target))
        return self

    def add_body_target(self, body, position=None, weight=1.0, time=-1, point=None, orientation=None,
                        orientation_weight=1.0):
        """0.5 |p_t - position|^2_weight for a point of a body, plus 0.5 |log(R_target^T R_t)|^2 for its
        orientation when ``orientation`` is given.

        Args:
            body: body name or index. point: (3,) the point in the body frame (its origin if None).
            position: (3,) world target (None: orientation only). weight: scalar, (3,) or (3, 3).
            time: the knot (default -1, the final state), a sequence of knots, or "all".
            orientation: a (3, 3) rotation matrix or an (x, y, z, w) quaternion; the error is the
                rotation vector of R_target^T R_t. orientation_weight: scalar, (3,) or (3, 3).
        """
        self._native = None
        self._costs.append(BodyTarget(self.world, self.T, body, position, weight, time, point, orientation,
                                      orientation_weight))
        return self

    def add_cost(self, fn):
        """A cost of your own: ``fn(Q, V, TAU) -> (value, dQ, dV, dTAU)`` with Q (T+1, nq), V (T+1, nv),
        TAU (T, nv), and the gradients of value with respect to them (dQ in q's coordinates; None for
        zero). iLQR uses its gradient with no Hessian."""
        self._native = None
        self._costs.append(UserCost(self.world, self.T, fn))
        return self

    # ------------------------------------------------------------------ constraints
    def set_control_bounds(self, lower, upper):
        """Bounds on the torques: scalars, (nv,) or (T, nv) arrays (use +-inf for none)."""
        lo = self._broadcast(lower, (self.T, self.nv), "lower")
        hi = self._broadcast(upper, (self.T, self.nv), "upper")
        if np.any(lo > hi):
            raise ValueError("control bounds: lower must be <= upper")
        if np.any(lo == np.inf) or np.any(hi == -np.inf):
            raise ValueError("control bounds: lower cannot be +inf nor upper -inf (no torque would fit)")
        self._native = None
        self._u_lower, self._u_upper = lo, hi
        return self

    def set_state_bounds(self, q_lower=None, q_upper=None, v_lower=None, v_upper=None):
        """Bounds on every knot's q ((nq,) coordinates, or scalars) and v ((nv,)); None for none.
        Only multiple shooting enforces them (they bound its knot states); the other methods refuse a
        problem with state bounds."""
        def pair(lo, hi, n, name):
            if lo is None and hi is None:
                return None, None
            lo = np.full(n, -np.inf) if lo is None else self._broadcast(lo, (n,), f"{name}_lower")
            hi = np.full(n, np.inf) if hi is None else self._broadcast(hi, (n,), f"{name}_upper")
            if np.any(lo > hi):
                raise ValueError(f"state bounds: {name}_lower must be <= {name}_upper")
            return lo, hi

        self.q_lower, self.q_upper = pair(q_lower, q_upper, self.nq, "q")
        self.v_lower, self.v_upper = pair(v_lower, v_upper, self.nv, "v")
        return self

    def set_actuated(self, dofs):
        """Only these dofs take torques (the others stay at zero): dof indices or joint names, e.g.
        all joints but a floating base's."""
        chosen = []
        for d in dofs if not isinstance(dofs, (str, int, np.integer)) else [dofs]:
            if isinstance(d, str):
                info = self.world.joint(d)
                chosen.extend(range(info.v_index, info.v_index + info.nv))
            elif isinstance(d, (int, np.integer)) and not isinstance(d, bool) and 0 <= d < self.nv:
                chosen.append(int(d))
            else:
                raise ValueError(f"actuated dofs must be joint names or dof indices in [0, {self.nv}), got {d!r}")
        if not chosen:
            raise ValueError("set_actuated needs at least one dof")
        self._native = None
        self.actuated = np.array(sorted(set(chosen)))
        self.S = np.eye(self.nv)[:, self.actuated]
        return self

    def optimize_initial_state(self, q: bool = True, v: bool = True):
        """Make the initial configuration and/or velocity unknowns too (q0, v0 are the first guess)."""
        self.opt_q0, self.opt_v0 = bool(q), bool(v)
        return self

    def optimize_parameters(self, names, lower=None, upper=None):
        """Make physical parameters (names of ``world.parameters()``, or anything ``wrt=`` accepts)
        unknowns, starting from the world's values, within ``lower``/``upper`` (default: the
        parameters' own bounds, e.g. masses >= 0)."""
        world = self.world
        idx = world._resolve_wrt(names)
        if not idx:
            raise ValueError(f"optimize_parameters: {names!r} selects no parameter")
        params = world.parameters()
        self.param_names = tuple(params.names[i] for i in idx)
        lo = params.lower[idx].copy() if lower is None else self._broadcast(lower, (len(idx),), "lower")
        hi = params.upper[idx].copy() if upper is None else self._broadcast(upper, (len(idx),), "upper")
        own_lo, own_hi = params.lower[idx], params.upper[idx]
        for k, name in enumerate(self.param_names):
            if not lo[k] <= hi[k]:
                raise ValueError(f"optimize_parameters: {name!r} has lower bound {lo[k]:g} > upper bound {hi[k]:g}")
            if lo[k] < own_lo[k] or hi[k] > own_hi[k]:
                raise ValueError(f"optimize_parameters: bounds [{lo[k]:g}, {hi[k]:g}] of {name!r} leave its "
                                 f"physical range [{own_lo[k]:g}, {own_hi[k]:g}]")
        self.param_lower, self.param_upper = lo, hi
        self.param_start = params.values[idx].copy()
        return self

    def set_initial_guess(self, tau):
        """First guess of the torques: (T, nv), or (nv,) held for every step."""
        guess = self._broadcast(tau, (self.T, self.nv), "tau")
        if not np.all(np.isfinite(guess)):
            raise ValueError("tau: the initial guess must be finite")
        self._tau_guess = guess
        return self

    # ------------------------------------------------------------------ solve
    def solve(self, method: str = "multiple_shooting", max_iters: int = 100, tol: float = 1e-6,
              verbose: bool = True, **options):
        """Solve the problem.

        Args:
            method:
                "multiple_shooting": knot states every ``shot_length`` steps (option, default 10; 1
                makes every state a knot) and all torques are the unknowns, the state defects at the
                shots' ends equality constraints with sparse Jacobians; SLSQP, or trust-constr with
                ``solver="trust-constr"``. The only method that enforces state bounds.
                "shooting": the unknowns drive one rollout and its reverse pass per evaluation;
                L-BFGS-B.
                "ilqr": iLQR on the step Jacobians with a line search and Levenberg-Marquardt
                regularisation (option ``mu``, its start), control bounds by a box QP per step;
                torques only. Option ``threads``: the threads that differentiate the knots (None,
                the default: the RIGIDIFF_THREADS environment variable, else every core); the
                result is the same, bit for bit, whatever their count (docs/mpc.md).
                "adam": projected Adam steps on the shooting gradient (options ``learning_rate``,
                default 0.01, and ``betas``). The method to use with ``explore_contact_modes``,
                whose gradients are not those of one function, so line searches may reject them.
            max_iters: iteration limit. tol: tolerance (relative cost change; scipy's ftol / gtol).
            verbose: show progress (a tqdm bar if tqdm is installed).
        Returns:
            a Result. The world's parameters are restored afterwards.
        """
        check_method_options(method, options)
        if (self.world.nq, self.world.nv) != (self.nq, self.nv):
            raise RuntimeError(f"the world changed since this Problem was made (nq, nv: {(self.nq, self.nv)} -> "
                               f"{(self.world.nq, self.world.nv)}): make a new Problem")
        if isinstance(max_iters, bool) or not isinstance(max_iters, (int, np.integer)) or max_iters < 0:
            raise ValueError(f"max_iters must be a non-negative int, got {max_iters!r}")
        tol = as_scalar(tol, "tol", minimum=0.0, strict=True)
        if not self._costs:
            raise ValueError("the problem has no cost: add one with add_state_cost, add_control_cost, "
                             "add_body_target or add_cost")
        if method != "multiple_shooting" and (self.q_lower is not None or self.v_lower is not None):
            raise ValueError(f"state bounds are enforced by multiple shooting only; method {method!r} "
                             "cannot keep them")
        if method == "ilqr" and (self.param_names or self.opt_q0 or self.opt_v0):
            raise ValueError("iLQR optimises the torques only; use 'shooting' or 'multiple_shooting' to "
                             "optimise the initial state or parameters")
        if method == "multiple_shooting":
            run = solve_multiple_shooting
        elif method == "ilqr":
            run = solve_ilqr
        else:
            run = solve_shooting
            options["method"] = method
        # SLSQP's dense matrices are small: BLAS threads only add overhead, and on a busy machine their
        # spinning slows multiple shooting by up to ten times (the other methods barely call BLAS)
        limit = _blas_controller().limit(limits=1, user_api="blas") if run is solve_multiple_shooting \
            else contextlib.nullcontext()
        with self._restoring_parameters(), limit:
            return run(self, int(max_iters), tol, bool(verbose), **options)

    # ------------------------------------------------------------------ shared by the solvers
    @property
    def nu(self) -> int:
        return len(self.actuated)

    @property
    def u_lower(self) -> np.ndarray:
        return self._u_lower[:, self.actuated]

    @property
    def u_upper(self) -> np.ndarray:
        return self._u_upper[:, self.actuated]

    def initial_controls(self) -> np.ndarray:
        """(T, nu) first guess, clipped into the bounds."""
        return np.clip(self._tau_guess[:, self.actuated], self.u_lower, self.u_upper)

    def torques(self, U) -> np.ndarray:
        """(T, nv) torques from (T, nu) controls."""
        return U @ self.S.T

    def costs(self, Q, V, TAU, derivatives: bool = True, hessians: bool = False) -> CostDerivatives:
        acc = CostDerivatives(self.T, self.nv, hessians)
        native = self._native_core()
        if native is None:
            for term in self._costs:
                term.add(acc, Q, V, TAU, derivatives)
            return acc
        value, gq, gv, gtau, hxx, huu = native.costs(self.world, Q, V, TAU, derivatives, hessians)
        acc.value = value
        if derivatives:
            acc.gq, acc.gv, acc.gtau = gq, gv, gtau
            if hessians:
                acc.hxx, acc.huu = hxx, huu
        return acc

    def _native_core(self):
        """The costs, actuation and control bounds in C++ (one call evaluates every term along the
        trajectory; iLQR runs on it), made once; None when a cost is written in Python (add_cost)."""
        if self._native is None:
            if any(not term.native for term in self._costs):
                return None
            core = _core.IlqrCore(self.T, self.nq, self.nv, self.S, self.u_lower, self.u_upper)
            for term in self._costs:
                term.to_native(core)
            self._native = core
        return self._native

    def set_parameter_values(self, p) -> None:
        if self.param_names:
            self.world.set_parameters(dict(zip(self.param_names, np.asarray(p, dtype=float).tolist())))

    @contextlib.contextmanager
    def _restoring_parameters(self):
        saved = self.world.parameters().values.copy() if self.param_names else None
        try:
            yield
        finally:
            if saved is not None:
                self.world.set_parameters(saved, check_inertia=False)

    @staticmethod
    def _broadcast(x, shape, name) -> np.ndarray:
        arr = real_array(x, name, f"broadcastable to {shape}")  # no strings, no complex values
        try:
            arr = np.broadcast_to(arr, shape).copy()
        except ValueError:
            raise ValueError(f"{name} must broadcast to shape {shape}, got {arr.shape}") from None
        if np.any(np.isnan(arr)):
            raise ValueError(f"{name} must not contain NaN")
        return arr

    def __repr__(self) -> str:
        return (f"Problem(T={self.T}, nq={self.nq}, nv={self.nv}, costs={len(self._costs)}, "
                f"parameters={len(self.param_names)})")
