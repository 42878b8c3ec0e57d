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
