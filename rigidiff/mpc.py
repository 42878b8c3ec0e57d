"""Model-predictive control: a receding-horizon trajectory optimiser behind a ``controller(q, v) -> tau``.

    def setup(prob):                          # the objective, built once (rebuild=False)
        prob.add_state_cost(q_target=[0, 0], v_target=[0, 0], q_weight=[1, 10], v_weight=0.1)
        prob.add_control_cost(1e-3)
        prob.set_control_bounds(-20, 20)

    mpc = rd.mpc.MPC(world, horizon=30, setup=setup, method="ilqr", iterations=2, rebuild=False)
    for _ in range(steps):
        tau = mpc(q, v)                       # replans, warm-started from the previous plan
        q, v = plant.step(q, v, tau)
"""

from __future__ import annotations

import time

import numpy as np

from ._validate import as_array, as_threads
from .trajopt import Problem
from .trajopt.ilqr import solve_ilqr
from .trajopt.problem import check_method_options

__all__ = ["MPC"]


class MPC:
    """A receding-horizon controller on rigidiff's trajectory optimisers.

    Args:
        world: the model the controller plans with (its dt is the control period).
        horizon: steps planned ahead at every replan.
        setup: ``setup(problem)`` adds the costs, bounds and actuation to a fresh
            ``rd.trajopt.Problem(world, horizon, q, v)``; with ``rebuild`` it may read ``problem.q0``,
            ``problem.v0`` and ``mpc.time`` (seconds since reset) to build time-varying targets. A first
            guess it sets (``problem.set_initial_guess``) seeds the first solve; later replans start
            from the previous plan instead.
        method: the trajopt method of every replan ("ilqr" by default; any of trajopt.METHODS).
        iterations: solver iterations per replan (a few: the warm start carries the rest).
        replan_every: control steps between replans; in between, the controller plays the plan
            (with iLQR, plus its feedback gains on the state error). 1 replans at every call.
        first_iterations: iterations of the first solve (default 10 x iterations).
        rebuild: call ``setup`` on a new Problem at every replan (True, the default: for objectives
            that move with time or state). False builds the problem once, at the first replan; later
            replans only move its initial state, shift the warm start and iterate, and with iLQR on
            the built-in costs nothing runs per knot in Python.
        threads: with iLQR, the C++ threads that differentiate the plan's knots at every replan (None,
            the default: the RIGIDIFF_THREADS environment variable, else every core; 1: the calling
            thread alone). The plans are the same, bit for bit, whatever the count; docs/mpc.md says
            what the threads save and cost. Other methods take no threads (ValueError).
        **options: passed to ``Problem.solve`` (e.g. ``shot_length``).

    ``mpc(q, v)`` returns the torques (nv,) for this control step. ``replan_times`` holds the seconds
    of every replan (building the problem when it does, warm start and solve), ``last_result`` the
    last trajopt Result, ``plan`` its torques.
    """

    def __init__(self, world, horizon: int, setup, method: str = "ilqr", iterations: int = 2,
                 replan_every: int = 1, first_iterations: int | None = None, rebuild: bool = True,
                 threads: int | None = None, **options):
        from rigidiff.world import World

        if not isinstance(world, World):
            raise ValueError(f"world must be a rigidiff.World, got {type(world).__name__}")
        if not callable(setup):
            raise TypeError(f"setup must be a callable setup(problem), got {setup!r}")
        checked = [("iterations", iterations), ("replan_every", replan_every), ("horizon", horizon)]
        if first_iterations is not None:
            checked.append(("first_iterations", first_iterations))
        for name, val in checked:
            if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
                raise ValueError(f"{name} must be a positive int, got {val!r}")
        check_method_options(method, options)
        if method != "ilqr" and threads is not None:
            raise ValueError(f"threads is an option of method 'ilqr' only, got method {method!r} with threads "
                             f"{threads!r}")
        self.threads = as_threads(threads) if method == "ilqr" else None
        if self.threads is not None:
            options = {**options, "threads": self.threads}
        if replan_every > horizon:
            raise ValueError(f"replan_every ({replan_every}) must not exceed the horizon ({horizon})")
        self.world = world
        self.horizon = int(horizon)
        self.setup = setup
        self.method = method
        self.iterations = int(iterations)
        self.first_iterations = 10 * self.iterations if first_iterations is None else int(first_iterations)
        self.replan_every = int(replan_every)
        if not isinstance(rebuild, (bool, np.bool_)):
            raise TypeError(f"rebuild must be True or False, got {rebuild!r}")
        self.rebuild = bool(rebuild)
        self.options = options
        self.reset()

    def reset(self) -> None:
        """Forget the plan and the timings; the next call solves from scratch."""
        self.plan = None
        self.last_result = None
        self.replan_times: list[float] = []
        self.time = 0.0
        self._index = 0
        self._gains = None
        self._problem = None

    def __call__(self, q, v) -> np.ndarray:
        return self.controller(q, v)

    def controller(self, q, v) -> np.ndarray:
        """Torques (nv,) for the state (q, v), replanning when it is time to."""
        world = self.world
        q = as_array(q, (world.nq,), "q")
        v = as_array(v, (world.nv,), "v")
        if self.plan is None or self._index >= self.replan_every:
            self._replan(q, v)
        tau = self.plan[self._index].copy()
        if self._gains is not None:
            Q, V, K, S, lo, hi = self._gains
            i = self._index
            dx = np.concatenate([world.difference(Q[i], q), v - V[i]])
            u = np.clip(tau @ S + K[i] @ dx, lo[i], hi[i])
            tau = S @ u
        self._index += 1
        self.time += world.dt
        return tau

    def _replan(self, q, v) -> None:
        t0 = time.perf_counter()
        prob = self._problem
        if prob is None or self.rebuild:
            prob = Problem(self.world, self.horizon, q, v)
            self.setup(prob)
            self._problem = prob
        else:  # the same problem from the new state (q, v were checked by controller)
            prob.q0[:] = q
            prob.v0[:] = v
        if self.plan is not None:
            # warm start: the rest of the previous plan, then its last torques held
            rest = self.plan[self._index:]
            guess = np.concatenate([rest, np.repeat(self.plan[-1:], self.horizon - len(rest), axis=0)])
            if self.rebuild:
                prob.set_initial_guess(guess)
            else:
                prob._tau_guess = guess  # finite and of its shape: the previous plan's torques
            iters = self.iterations
        else:
            iters = self.first_iterations
        if self.plan is not None and not self.rebuild and self.method == "ilqr":
            res = solve_ilqr(prob, iters, 1e-6, False, **self.options)  # checked by the first solve
        else:
            res = prob.solve(method=self.method, max_iters=iters, verbose=False, **self.options)
        self.replan_times.append(time.perf_counter() - t0)
        self.last_result = res
        self.plan = res.tau
        self._index = 0
        gains = res.feedback
        self._gains = None if gains is None or self.replan_every == 1 else \
            (res.q, res.v, gains, prob.S, prob.u_lower, prob.u_upper)
