"""Open-loop muscle control of a projective world: activations given by a schedule with a few parameters, the
distance a body's centre of mass travels (with, optionally, its rise), and its gradient with respect to the
parameters by the adjoint."""

from __future__ import annotations

import numpy as np

from rigidiff._validate import as_array

__all__ = ["OpenLoopControl"]


class OpenLoopControl:
    """Rollouts of a projective world whose muscles follow an open-loop schedule, and the gradient of the
    distance a body travels with respect to the schedule's parameters.

    Args:
        world: an rd.ProjectiveWorld with muscles; rollouts start at its stored state (world.q, world.v) when
            the control is made.
        body: the name of the deformable body whose centre of mass (weighted by its vertex masses) is followed.
        schedule: a function (x, times) -> (activations (T, muscles), derivatives (len(x), T, muscles)) giving
            every step's activations (in the order of world.muscle_names) at the times (T,) of the steps' starts
            and their derivatives with respect to the parameters x.
        steps: the rollout's number of steps (>= 1).
        direction: (3,) the direction along which the travel is measured (normalised); x if omitted.
        height_weight: a weight on the centre of mass's rise along z over the rollout, added to the travel (so
            that a gait which keeps the body up scores higher; DiffPD's cow uses 0.3); 0 by default.

    Example::

        control = rd.OpenLoopControl(world, "torus", wave, steps=60)
        best = control.maximise(x0, bounds=[(0.0, 0.5), (-2.0, 2.0)], iterations=10)
        best["x"], best["travel"]
    """

    def __init__(self, world, body: str, schedule, steps: int, direction=(1.0, 0.0, 0.0), height_weight: float = 0.0):
        from rigidiff.deformable.world import ProjectiveWorld

        if not isinstance(world, ProjectiveWorld):
            raise TypeError(f"world must be an rd.ProjectiveWorld, got {type(world).__name__}")
        if not callable(schedule):
            raise TypeError(f"schedule must be a function (x, times) -> (activations, derivatives), got "
                            f"{type(schedule).__name__}")
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
            raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
        d = as_array(direction, (3,), "direction")
        if not np.linalg.norm(d) > 0.0:
            raise ValueError("direction must be non-zero")
        height_weight = as_array(height_weight, (), "height_weight")
        self.world, self.body, self.schedule = world, body, schedule
        self.slice = world.layout(body).q  # UnknownNameError for an unknown body
        self.direction = d / np.linalg.norm(d)
        self.height_weight = float(height_weight)
        # the travel is (centre at the end - at the start) . weights
        self.weights = self.direction + np.array([0.0, 0.0, self.height_weight])
        self.times = np.arange(int(steps)) * world.dt
        self.forces = np.zeros((int(steps), world.nv))
        self.mass = world.masses(body)
        self.q0, self.v0 = world.q, world.v
        self.start = self.centre(self.q0)

    def centre(self, q) -> np.ndarray:
        """(3,) the body's centre of mass at q."""
        return self.mass @ self.world.positions(q, self.body) / self.mass.sum()

    def activations(self, x) -> tuple:
        """The schedule's activations (T, muscles) and derivatives (len(x), T, muscles) at x, their shapes
        checked."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 1:
            raise ValueError(f"x must be a 1-D array of parameters, got shape {x.shape}")
        acts, dacts = self.schedule(x, self.times)
        shape = (len(self.times), len(self.world.muscle_names))
        acts, dacts = np.asarray(acts, dtype=np.float64), np.asarray(dacts, dtype=np.float64)
        if acts.shape != shape or dacts.shape != (len(x), *shape):
            raise ValueError(f"schedule must return activations of shape {shape} and derivatives of shape "
                             f"{(len(x), *shape)}, got {acts.shape} and {dacts.shape}")
        return acts, dacts

    def rollout(self, x) -> tuple:
        """Q (T+1, nq) and V (T+1, nv) of the rollout under the schedule at x."""
        return self.world.rollout(self.q0, self.v0, self.forces, self.activations(x)[0])

    def travel(self, x) -> float:
        """The distance the body's centre of mass travels along direction over the rollout at x (plus
        height_weight times its rise along z)."""
        Q, _ = self.rollout(x)
        return float((self.centre(Q[-1]) - self.start) @ self.weights)

    def travel_and_gradient(self, x) -> tuple:
        """(travel, its gradient (len(x),) with respect to x, Q): rollout_backward's gradient with respect to
        every step's activations, chained through the schedule's derivatives."""
        acts, dacts = self.activations(x)
        Q, V = self.world.rollout(self.q0, self.v0, self.forces, acts)
        dL_dQ, dL_dV = np.zeros_like(V), np.zeros_like(V)  # q's cotangents in the tangent (nv), as rollout_backward's
        # the centre is a mass-weighted mean of the body's vertices
        dL_dQ[-1, self.slice] = np.outer(self.mass / self.mass.sum(), self.weights).ravel()
        g = self.world.rollout_backward(Q, V, self.forces, dL_dQ, dL_dV, acts)
        travel = float((self.centre(Q[-1]) - self.start) @ self.weights)
        return travel, np.einsum("tk,ptk->p", g.activation, dacts), Q

    def check_gradient(self, x, direction, h: float = 1e-4, gradient=None) -> tuple:
        """(the adjoint's derivative of the travel at x along direction, a central difference of two rollouts
        at x +- h direction): the gradient's check against finite differences. gradient: the adjoint's gradient
        at x if already known (e.g. maximise's gradient_start), computed if None."""
        x, direction = np.asarray(x, dtype=np.float64), np.asarray(direction, dtype=np.float64)
        gradient = self.travel_and_gradient(x)[1] if gradient is None else np.asarray(gradient, dtype=np.float64)
        slope = float(gradient @ direction)
        return slope, (self.travel(x + h * direction) - self.travel(x - h * direction)) / (2.0 * h)

    def maximise(self, x0, bounds=None, iterations: int = 10) -> dict:
        """Maximise the travel from x0 by scipy's L-BFGS-B (bounds: a (low, high) pair per parameter, or None)
        within iterations iterations. Returns a dict: x and travel (the farthest of the evaluated parameters),
        travels (per evaluation, the first at x0), and the first guess's travel_start, gradient_start and
        Q_start, and Q (the rollout at x)."""
        from scipy.optimize import minimize

        x0 = np.asarray(x0, dtype=np.float64)
        evaluated = []

        def objective(x):
            travel, gradient, Q = self.travel_and_gradient(x)
            evaluated.append((travel, x.copy(), gradient, Q))
            return -travel, -gradient

        minimize(objective, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                 options={"maxiter": int(iterations)})
        best = max(evaluated, key=lambda e: e[0])
        travel0, _, gradient0, Q0 = evaluated[0]
        return {"x": best[1], "travel": best[0], "Q": best[3], "travels": [e[0] for e in evaluated],
                "travel_start": travel0, "gradient_start": gradient0, "Q_start": Q0}
