"""Reverse mode through contact: step_vjp equals J^T g of step_jacobians, and a recorded rollout's
backward pass equals the chained one-step Jacobians and finite differences of the whole rollout."""

import numpy as np
import pytest
from rdsupport import sliding_box_world


@pytest.mark.parametrize("speed", [0.0, 1.0])
def test_step_vjp_is_the_transposed_jacobian_through_contact(speed):
    world, q, v = sliding_box_world()
    v = v * speed
    tau = np.array([0.3, -0.2, 0.0, 0.0, 0.0, 0.01])
    rng = np.random.default_rng(3)
    gq, gv = rng.normal(size=6), rng.normal(size=6)
    jac = world.step_jacobians(q, v, tau, wrt="all")
    assert "clamping" in jac.contacts.row_classes
    g = world.step_vjp(q, v, tau, gq, gv, wrt="all")
    np.testing.assert_allclose(g.q, jac.dq_dq.T @ gq + jac.dv_dq.T @ gv, atol=1e-12)
    np.testing.assert_allclose(g.v, jac.dq_dv.T @ gq + jac.dv_dv.T @ gv, atol=1e-12)
    np.testing.assert_allclose(g.tau, jac.dq_dtau.T @ gq + jac.dv_dtau.T @ gv, atol=1e-12)
    np.testing.assert_allclose(g.parameters, jac.dq_dp.T @ gq + jac.dv_dp.T @ gv, atol=1e-12)
    np.testing.assert_allclose(g.q_next, jac.q_next)


def test_rollout_backward_chains_the_step_jacobians_through_contact():
    world, q0, v0 = sliding_box_world()
    T = 30
    taus = np.tile([0.3, -0.2, 0.0, 0.0, 0.0, 0.01], (T, 1))
    traj = world.rollout(q0, v0, taus, record=True)
    assert len(traj.constrained_steps) == T
    rng = np.random.default_rng(0)
    GQ, GV = rng.normal(size=(T + 1, 6)), rng.normal(size=(T + 1, 6))
    grads = traj.backward(GQ, GV, wrt="inertia")
    cq, cv = GQ[T].copy(), GV[T].copy()
    gtaus = np.zeros((T, 6))
    gp = 0.0
    for t in reversed(range(T)):
        jac = world.step_jacobians(traj.q[t], traj.v[t], taus[t], wrt="inertia")
        gtaus[t] = jac.dq_dtau.T @ cq + jac.dv_dtau.T @ cv
        gp = gp + jac.dq_dp.T @ cq + jac.dv_dp.T @ cv
        cq, cv = GQ[t] + jac.dq_dq.T @ cq + jac.dv_dq.T @ cv, GV[t] + jac.dq_dv.T @ cq + jac.dv_dv.T @ cv
    np.testing.assert_allclose(grads.tau, gtaus, atol=1e-9)
    np.testing.assert_allclose(grads.q, cq, atol=1e-9)
    np.testing.assert_allclose(grads.v, cv, atol=1e-9)
    np.testing.assert_allclose(grads.parameters, gp, atol=1e-9)


def test_rollout_backward_matches_finite_differences_of_a_sliding_box():
    """A box sliding and turning on the ground for 50 steps (the contact mode never changes): the
    gradient of its final position and heading with respect to v0 and the torques."""
    world, q0, v0 = sliding_box_world()
    T = 50
    taus = np.tile([0.3, -0.2, 0.0, 0.0, 0.0, 0.01], (T, 1))
    w = np.array([1.0, -0.5, 0.0, 0.0, 0.0, 2.0])

    def loss(v0_, taus_):
        Q, _ = world.rollout(q0, v0_, taus_)
        return w @ world.difference(q0, Q[-1])

    traj = world.rollout(q0, v0, taus, record=True)
    GQ = np.zeros((T + 1, 6))
    GQ[T] = world.difference_jacobians(q0, traj.q[-1])[1].T @ w
    grads = traj.backward(GQ)
    eps = 1e-6
    fd_v = [(loss(v0 + eps * e, taus) - loss(v0 - eps * e, taus)) / (2 * eps) for e in np.eye(6)]
    np.testing.assert_allclose(grads.v, fd_v, atol=1e-7)
    for t in (0, 25, 49):
        for k in (0, 1, 5):
            d = np.zeros((T, 6))
            d[t, k] = eps
            fd = (loss(v0, taus + d) - loss(v0, taus - d)) / (2 * eps)
            assert abs(grads.tau[t, k] - fd) < 1e-7


def test_without_warm_start_a_step_and_its_jacobians_do_not_depend_on_history():
    """A sliding, turning box slowing down on four corners meets states where the friction LCP has more
    than one solution: the warm-started step keeps its predecessor's and a cold one may not. Without
    the warm start the step and its Jacobians are the same whatever came before."""
    world, q, v = sliding_box_world(mu=0.8)
    cold, _, _ = sliding_box_world(mu=0.8)
    cold.contact_options(warm_start=False)
    tau = np.zeros(6)
    for _ in range(400):
        qn, vn = world.step(q, v, tau)
        warm_classes = world.last_contacts().row_classes
        cold.step(q, v, tau)
        if cold.last_contacts().row_classes != warm_classes:
            break
        q, v = qn, vn
    else:
        pytest.fail("no state where the warm start changes the contact mode")
    world.contact_options(warm_start=False)
    first = world.step_jacobians(q, v, tau)  # after the whole slide
    again = sliding_box_world(mu=0.8)[0]
    again.contact_options(warm_start=False)
    second = again.step_jacobians(q, v, tau)  # in a new world
    assert second.contacts.row_classes == first.contacts.row_classes == cold.last_contacts().row_classes
    np.testing.assert_array_equal(second.v_next, first.v_next)
    np.testing.assert_array_equal(second.contacts.friction_impulses, first.contacts.friction_impulses)
    np.testing.assert_array_equal(second.dv_dq, first.dv_dq)
    np.testing.assert_array_equal(second.dq_dv, first.dq_dv)
