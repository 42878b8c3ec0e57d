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


def assert_step_jacobians(J, fd, bound=1e-6):
    """Each of J's six Jacobians within bound of its central differences fd (relative_error)."""
    for name in NAMES:
        err = relative_error(getattr(J, name), fd[name])
        assert err < bound, f"{name}: relative error {err:.2e}"


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


def assert_rollout_backward_is_chained_jacobians(world, q, v, taus, a, b):
    """A recorded rollout's backward pass from the cotangents a (of the last q) and b (of the last v) equals the chain
    of the transposed step Jacobians along it, torques included (to rtol 1e-8 and atol 1e-10 times each largest
    entry)."""
    T = len(taus)
    traj = world.rollout(q, v, taus, record=True)
    dL_dQ, dL_dV = np.zeros((T + 1, world.nv)), np.zeros((T + 1, world.nv))
    dL_dQ[-1], dL_dV[-1] = a, b
    back = traj.backward(dL_dQ, dL_dV)
    gq, gv, gtaus = a, b, []
    for t in reversed(range(T)):
        J = world.step_jacobians(traj.q[t], traj.v[t], taus[t])
        gtaus.append(J.dq_dtau.T @ gq + J.dv_dtau.T @ gv)
        gq, gv = J.dq_dq.T @ gq + J.dv_dq.T @ gv, J.dq_dv.T @ gq + J.dv_dv.T @ gv
    np.testing.assert_allclose(back.q, gq, rtol=1e-8, atol=1e-10 * np.abs(gq).max())
    np.testing.assert_allclose(back.v, gv, rtol=1e-8, atol=1e-10 * np.abs(gv).max())
    np.testing.assert_allclose(back.tau, np.array(gtaus[::-1]), rtol=1e-8, atol=1e-10 * np.abs(gtaus).max())


def assert_parameter_vjp_is_transposed_jacobians(world, q, v, tau, a, b):
    """world.step_vjp(wrt="all")'s parameter gradient equals the transposed parameter Jacobians times the cotangents a
    and b (to rtol 1e-9 and atol 1e-9 times its largest entry)."""
    Jp = world.step_jacobians(q, v, tau, wrt="all")
    g = world.step_vjp(q, v, tau, a, b, wrt="all")
    np.testing.assert_allclose(g.parameters, Jp.dq_dp.T @ a + Jp.dv_dp.T @ b, rtol=1e-9,
                               atol=1e-9 * np.abs(g.parameters).max())


# central-difference steps of the parameters relative to their value, by field (the name's last part); a link's
# rotational inertia moves the step by little (1e-4 of it is near the Newton tolerance's noise)
RELATIVE_STEPS = {"density": 1e-4, "stiffness": 1e-4, "friction": 3e-5, "dhat": 1e-5, "mass": 1e-4, "damping": 1e-4,
                  "armature": 1e-4, "gravity": 1e-4, "com": 1e-4, "inertia": 3e-3}
# a parameter at 0 (a centre of mass on a joint axis, a product of inertia, a gravity component, an unsprung joint)
# has no scale of its own, and a small one (a damping of 0.003) moves the step by little: every step moves the state
# by at least zero_move (1e-8 by default: at a Newton tolerance of 1e-12 the noise stays below 1e-6 relative), by
# the derivative's largest entry (one the step does not feel takes 1e-4)


def _field(name):
    field = name.rsplit("/", 1)[-1]
    for prefix in ("com", "inertia", "gravity", "damping", "stiffness", "armature"):
        if field.startswith(prefix):
            return prefix
    return field


def central_parameter_jacobians(world, q, v, tau, J, names, change=lambda q_minus, q_plus: q_plus - q_minus,
                                zero_move=1e-8):
    """{name: (dq_dp column, dv_dp column)} of world.step by central differences, each parameter moved by
    set_parameters (and put back), Richardson-extrapolated from steps h and h / 2; change(q_minus, q_plus) measures
    q's change (the tangent's with floating bases). J (step_jacobians with the names among its parameters) bounds
    the steps below (zero_move, above). A parameter within its step of its lower bound (a damping,
    stiffness or armature of 0) takes the one-sided difference of the same order, (-3 f(p) + 4 f(p + h)
    - f(p + 2 h)) / 2h, extrapolated alike."""
    p = world.parameters()
    out = {}

    def at(name, value):
        world.set_parameters({name: value})
        return world.step(q, v, tau)

    for name in names:
        value = p[name]
        scale = np.abs(J.dq_dp[:, J.parameter_names.index(name)]).max()
        h = max(RELATIVE_STEPS[_field(name)] * abs(value), zero_move / scale if scale > 0.0 else 1e-4)
        central = value - h >= p.lower[p.index(name)]
        d = []
        for step in (h, h / 2):
            if central:
                (qp, vp), (qm, vm) = at(name, value + step), at(name, value - step)
                d.append((change(qm, qp) / (2 * step), (vp - vm) / (2 * step)))
            else:
                (q0, v0), (q1, v1), (q2, v2) = at(name, value), at(name, value + step), at(name, value + 2 * step)
                d.append(((4 * change(q0, q1) - change(q0, q2)) / (2 * step), (-3 * v0 + 4 * v1 - v2) / (2 * step)))
        # the leading error term falls by 4 from h to h / 2
        out[name] = tuple((4 * fine - coarse) / 3 for coarse, fine in zip(*d))
        world.set_parameters({name: value})
    return out


def assert_felt_parameter_jacobians(world, q, v, tau, must_feel=(), change=lambda q_minus, q_plus: q_plus - q_minus):
    """The step's Jacobians in every parameter it feels (a non-zero dq_dp column), must_feel among them, within 1e-6
    of their central differences (central_parameter_jacobians, change as there)."""
    J = world.step_jacobians(q, v, tau, wrt="all")
    felt = [n for n in J.parameter_names if np.abs(J.dq_dp[:, J.parameter_names.index(n)]).max() > 0.0]
    assert set(must_feel) <= set(felt), set(must_feel) - set(felt)
    assert_parameter_jacobians(J, central_parameter_jacobians(world, q, v, tau, J, felt, change=change))


def assert_parameter_jacobians(J, fd, bound=1e-6):
    """Each column of J.dq_dp and J.dv_dp within bound of its central differences fd (central_parameter_jacobians),
    relative to the column's largest entry; returns the largest error."""
    worst = 0.0
    for name, (fd_q, fd_v) in fd.items():
        col = J.parameter_names.index(name)
        for analytic, diff in ((J.dq_dp[:, col], fd_q), (J.dv_dp[:, col], fd_v)):
            err = relative_error(analytic, diff)
            assert err < bound, f"{name}: relative error {err:.2e}"
            worst = max(worst, err)
    return worst
