"""Trajectory optimisation on rigidiff's exact gradients.

    prob = rd.trajopt.Problem(world, horizon, q0, v0)
    prob.add_state_cost(q_target=..., final_only=True)
    prob.add_control_cost(1e-3)
    prob.set_control_bounds(-20, 20)
    res = prob.solve(method="multiple_shooting" | "shooting" | "ilqr" | "adam", max_iters=200)

See docs/trajopt.md for the methods, their options and what each is good at.
"""

from .costs import CostDerivatives
from .ilqr import box_qp
from .problem import METHODS, Problem
from .result import Result

__all__ = ["Problem", "Result", "METHODS", "CostDerivatives", "box_qp"]
