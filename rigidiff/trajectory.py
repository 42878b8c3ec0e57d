"""A recorded rollout (``world.rollout(q0, v0, taus, record=True)``) and its reverse pass."""

from __future__ import annotations

import numpy as np

__all__ = ["Trajectory"]


class Trajectory:
    """States and torques of a rollout, kept for the reverse pass.

    Attributes:
        q: (T+1, nq) configurations, q[0] = q0. v: (T+1, nv) velocities. tau: (T, nv) torques.
        dt: the time step it was made with.

    Memory is O(T (nq + nv)) and the keys, classes and impulses of each step's constraint rows: the
    reverse pass recomputes each step's internals instead of storing them (in reverse order; a step with
    constraints is re-solved in its recorded contact mode, warm-started as the rollout was, and must
    reproduce the recorded state).
    """

    def __init__(self, world, Q: np.ndarray, V: np.ndarray, taus: np.ndarray, constrained_steps=(), modes=None):
        self._world = world
        # what the world's reverse pass needs of each step beyond the states: (rows per step, (row keys, row
        # classes)) of a constrained rollout of an lcp world, or None (the reverse pass then reruns the rollout
        # to find each step's contact mode); each step's barrier stiffnesses in a barrier world
        self._modes = modes
        #: indices of the steps that solved contact, joint-limit or joint-friction constraints
        self.constrained_steps = list(constrained_steps)
        self.q = Q
        self.v = V
        self.tau = taus
        self.dt = world.dt

    def __len__(self) -> int:
        """Number of steps T."""
        return self.tau.shape[0]

    def backward(self, dL_dQ=None, dL_dV=None, wrt=None, coordinates: bool = False,
                 explore_contact_modes: bool = False):
        """Gradients of a loss L(Q, V) of the whole trajectory, in one C++ call with the GIL released
        (changing the world from another thread meanwhile raises RuntimeError: docs/reliability.md).

        Args:
            dL_dQ: (T+1, nv) cotangents of every recorded q in the tangent space (or (T+1, nq)
                coordinate gradients with coordinates=True); None for zeros.
            dL_dV: (T+1, nv) cotangents of every recorded v; None for zeros.
            wrt: parameters to differentiate with respect to, as in World.step_jacobians.
            coordinates: take dL_dQ and return the q0 gradient in q's coordinates.
            explore_contact_modes: at each step with contacts, also try the contact mode the loss asks
                for, as World.step_vjp does.
        Returns:
            Gradients: q (gradient with respect to q0), v (v0), tau (T, nv), parameters.
        Steps that solved contact, joint-limit or joint-friction constraints (``constrained_steps``) are
        differentiated with their contact mode held fixed, as World.step_jacobians.
        Raises RuntimeError if the world changed since the rollout was recorded (its steps no longer
        reproduce the recorded states, or skeletons or particles were added) or dt was changed.
        """
        if (self._world.nq, self._world.nv) != (self.q.shape[1], self.v.shape[1]):
            raise RuntimeError(f"the world changed since the rollout was recorded: its state has "
                               f"nq={self._world.nq}, nv={self._world.nv} (skeletons or particles added), the "
                               f"rollout's nq={self.q.shape[1]}, nv={self.v.shape[1]}; record it again")
        if self._world.dt != self.dt:
            raise RuntimeError(f"the world's dt changed from {self.dt} to {self._world.dt} since the rollout was "
                               "recorded; record it again")
        return self._world._rollout_backward(self, dL_dQ, dL_dV, wrt, coordinates, explore_contact_modes)

    def __repr__(self) -> str:
        return f"Trajectory(T={len(self)}, nq={self.q.shape[1]}, nv={self.v.shape[1]}, dt={self.dt})"
