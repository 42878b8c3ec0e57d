"""The step Jacobians of a whole trajectory in one C++ call, as the stacked A and B of every step."""

from __future__ import annotations

import numpy as np

from .._validate import as_threads

__all__ = ["trajectory_jacobians"]


def trajectory_jacobians(world, Q, V, TAU, threads: int | None = None):
    """A (T, 2nv, 2nv) and B (T, 2nv, nv) of the steps (Q[t], V[t], TAU[t]), t < T = len(TAU), with the
    conventions of ``world.step_jacobians`` (through contacts with their modes held). A step continues the
    contact warm start of the one before only if it starts at that step's end state, as consecutive
    ``step_jacobians`` calls do. On ``threads`` C++ threads (None: the RIGIDIFF_THREADS environment
    variable, else every core), with the same results, bit for bit, whatever their count."""
    nv = world.nv
    jac = world._core_trajectory_jacobians(Q, V, TAU, as_threads(threads)).transpose(0, 1, 3, 2)  # column-major
    T = len(jac)
    A = np.empty((T, 2 * nv, 2 * nv))
    A[:, :nv, :nv], A[:, :nv, nv:], A[:, nv:, :nv], A[:, nv:, nv:] = jac[:, 0], jac[:, 1], jac[:, 3], jac[:, 4]
    B = np.concatenate([jac[:, 2], jac[:, 5]], axis=1)
    return A, B
