"""The result of a trajectory optimisation."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Result"]


@dataclass
class Result:
    """What ``Problem.solve`` found.

    Attributes:
        q: (T+1, nq) configurations of the optimised trajectory (a rollout of ``tau`` from the
            optimised initial state; for multiple shooting, the knot states stitched with their shots).
        v: (T+1, nv) velocities. tau: (T, nv) torques (zero on dofs that are not actuated).
        parameters: {name: value} of the optimised physical parameters (empty if none were optimised).
            The world keeps its own values: apply these with ``world.set_parameters(res.parameters)``.
        cost: the final cost. cost_history: the cost after every iteration, the initial guess's first.
        constraint_violation: the largest violation of the defects (multiple shooting) and of the
            bounds, at the solution.
        converged: did the solver meet its tolerance (False when it stopped on max_iters or failed).
        iterations: iterations done. message: the solver's reason for stopping. method: the method.
        timings: seconds: "total", "dynamics" (steps and their Jacobians), "per_iteration".
        feedback: iLQR's (T, nu, 2nv) feedback gains of its last accepted iteration, on the
            actuated torques and the state error (tangent difference of q, then v); None otherwise.
    """

    q: np.ndarray
    v: np.ndarray
    tau: np.ndarray
    parameters: dict
    cost: float
    cost_history: list
    constraint_violation: float
    converged: bool
    iterations: int
    message: str
    method: str
    timings: dict = field(default_factory=dict)
    feedback: np.ndarray | None = None

    def __repr__(self) -> str:
        return (f"Result(method={self.method!r}, converged={self.converged}, cost={self.cost:.6g}, "
                f"iterations={self.iterations}, constraint_violation={self.constraint_violation:.3g}, "
                f"T={self.tau.shape[0]}, time={self.timings.get('total', float('nan')):.3g} s)")

    @property
    def initial_state(self):
        """(q0, v0) of the optimised trajectory."""
        return np.array(self.q[0]), np.array(self.v[0])
