"""Checks shared by the complementarity contact's tests (test_projective_complementarity*.py); importable because
pytest puts each test's folder on sys.path."""

import numpy as np
import pytest


def difference(function, x, d, eps=1e-5):
    """The central difference of function at x along d."""
    return (function(x + eps * d) - function(x - eps * d)) / (2 * eps)


def check_landing_rollout(world, T=6):
    """Rolls out T steps of a block landing on a horizontal face at z = 0 and sliding on it, checks that it never
    goes below 1 nm under it and that rollout_backward's gradient of a random loss of the last positions along a
    horizontal change of v0 matches a central difference; returns (the gradients, loss(v0))."""
    q0 = world.q
    v0 = np.tile([0.5, 0.2, -0.2], world.nv // 3)
    forces = np.zeros((T, world.nv))
    rng = np.random.default_rng(2)
    a = rng.standard_normal(world.nq)

    def loss(v_start=v0):
        Q, _ = world.rollout(q0, v_start, forces)
        return a @ Q[-1]

    Q, V = world.rollout(q0, v0, forces)
    assert (Q[1:].reshape(T, -1, 3)[:, :, 2] >= -1e-9).all()
    dQ, dV = np.zeros_like(Q), np.zeros_like(V)
    dQ[-1] = a
    g = world.rollout_backward(Q, V, forces, dQ, dV)
    d = rng.standard_normal(world.nv)
    d.reshape(-1, 3)[:, 2] = 0.0  # horizontal: the landing step stays the same
    assert g.v @ d == pytest.approx(difference(loss, v0, d), rel=1e-6)
    return g, loss
