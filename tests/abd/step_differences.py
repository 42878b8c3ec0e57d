"""Central differences of a barrier world's step, shared by the step-derivative tests of tests/abd."""

import numpy as np

NAMES = ("dq_dq", "dq_dv", "dq_dtau", "dv_dq", "dv_dv", "dv_dtau")


def central_jacobians(world, q, v, tau, eps):
    """The six Jacobians of world.step (named as StepJacobians') by central differences with steps eps =
    (for q, for v, for tau)."""
    n = q.size
    cols = {name: np.zeros((n, n)) for name in NAMES}
    for which, name_q, name_v in ((0, "dq_dq", "dv_dq"), (1, "dq_dv", "dv_dv"), (2, "dq_dtau", "dv_dtau")):
        for j in range(n):
            args_p, args_m = [q.copy(), v.copy(), tau.copy()], [q.copy(), v.copy(), tau.copy()]
            args_p[which][j] += eps[which]
            args_m[which][j] -= eps[which]
            qp, vp = world.step(*args_p)
            qm, vm = world.step(*args_m)
            cols[name_q][:, j] = (qp - qm) / (2 * eps[which])
            cols[name_v][:, j] = (vp - vm) / (2 * eps[which])
    return cols


def relative_error(analytic, fd):
    """The largest difference between a derivative and its central differences, relative to the derivative's
    largest entry (which must be non-zero, and the two not identical: a check that cannot fail is no check)."""
    scale = np.abs(analytic).max()
    assert scale > 0.0 and not np.array_equal(analytic, fd)
    return np.abs(analytic - fd).max() / scale


def assert_vjp_is_transposed_jacobians(world, q, v, tau, a, b, atol):
    """world.step_vjp with the cotangents a (of q_next) and b (of v_next) equals the transposed step Jacobians times
    them (to rtol 1e-9 and atol times each gradient's largest entry); returns the step Jacobians."""
    J = world.step_jacobians(q, v, tau)
    g = world.step_vjp(q, v, tau, a, b)
    np.testing.assert_allclose(g.q, J.dq_dq.T @ a + J.dv_dq.T @ b, rtol=1e-9, atol=atol * np.abs(g.q).max())
    np.testing.assert_allclose(g.v, J.dq_dv.T @ a + J.dv_dv.T @ b, rtol=1e-9, atol=atol * np.abs(g.v).max())
    np.testing.assert_allclose(g.tau, J.dq_dtau.T @ a + J.dv_dtau.T @ b, rtol=1e-9, atol=atol * np.abs(g.tau).max())
    np.testing.assert_array_equal(g.q_next, J.q_next)
    return J
