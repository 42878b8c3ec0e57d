"""Analytic Jacobians of one step against central finite differences of the step itself (q perturbed
and measured on the manifold) and against Pinocchio's ABA derivatives and dIntegrate."""

import numpy as np
import pytest
from rdsupport import ROBOTS, TREE, assert_close, build_skeleton, load_urdf_quiet, to_pin_q, world_of

import rigidiff as rd
from rigidiff.testing import finite_difference_jacobians


def fd_step_jacobians(world, q, v, tau, h=1e-6):
    """Central differences of world.step: returns {name: (nv, nv)} like StepJacobians."""
    n = world.nv
    out = {k: np.zeros((n, n)) for k in ("dq_dq", "dq_dv", "dq_dtau", "dv_dq", "dv_dv", "dv_dtau")}
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        cases = {
            "q": (world.step(world.integrate(q, e), v, tau), world.step(world.integrate(q, -e), v, tau)),
            "v": (world.step(q, v + e, tau), world.step(q, v - e, tau)),
            "tau": (world.step(q, v, tau + e), world.step(q, v, tau - e)),
        }
        for wrt, ((qp, vp), (qm, vm)) in cases.items():
            out[f"dq_d{wrt}"][:, k] = world.difference(qm, qp) / (2 * h)
            out[f"dv_d{wrt}"][:, k] = (vp - vm) / (2 * h)
    return out


def check_against_fd(world, q, v, tau, rtol=1e-6):
    J = world.step_jacobians(q, v, tau)
    qn, vn = world.step(q, v, tau)
    np.testing.assert_array_equal(J.q_next, qn)
    np.testing.assert_array_equal(J.v_next, vn)
    fd = fd_step_jacobians(world, q, v, tau)
    for name, expected in fd.items():
        analytic = getattr(J, name)
        assert not np.array_equal(analytic, expected), name
        assert_close(analytic, expected, rtol=rtol, floor=1.0, what=name)
    return J


@pytest.mark.parametrize("seed,dt", [(0, 1e-3), (1, 1e-2), (2, 5e-3)])
def test_step_jacobians_match_finite_differences_with_passive_terms(seed, dt):
    sk = build_skeleton(TREE, seed)
    for body in sk.bodies:
        body.joint.damping[:] = 0.4
        body.joint.stiffness[:] = 3.0
        body.joint.armature[:] = 0.02
    world = world_of(sk, dt=dt)
    rng = np.random.default_rng(seed)
    q = world.random_configuration(rng)
    v, tau = rng.normal(size=(2, world.nv))
    J = check_against_fd(world, q, v, tau)
    for name in ("dv_dq", "dv_dv", "dv_dtau", "dq_dq"):
        assert np.abs(getattr(J, name)).max() > 1e-4, name


@pytest.mark.parametrize("robot", [r for r in ROBOTS if r[0] in ("panda", "solo12")], ids=lambda r: r[0])
def test_step_jacobians_on_real_robots(robot, robots_dir):
    name, rel, floating = robot
    world = world_of(load_urdf_quiet(robots_dir / rel, floating, package_dirs=[robots_dir]))
    rng = np.random.default_rng(4)
    q = world.random_configuration(rng)
    v, tau = 0.5 * rng.normal(size=(2, world.nv))
    check_against_fd(world, q, v, tau)


def test_stacked_A_and_B():
    world = world_of(build_skeleton(TREE, 3))
    rng = np.random.default_rng(1)
    q = world.random_configuration(rng)
    v, tau = rng.normal(size=(2, world.nv))
    J = world.step_jacobians(q, v, tau)
    n = world.nv
    assert J.A.shape == (2 * n, 2 * n) and J.B.shape == (2 * n, n)
    np.testing.assert_array_equal(J.A[n:, :n], J.dv_dq)
    np.testing.assert_array_equal(J.A[:n, n:], J.dq_dv)
    np.testing.assert_array_equal(J.B[n:], J.dv_dtau)


def test_clipped_torques_have_zero_gradient():
    sk = rd.Skeleton("p")
    sk.add_body("link", joint=rd.RevoluteJoint("hinge", axis=(0, 1, 0), effort_limit=1.0),
                inertia=rd.Inertia(1.0, com=(0, 0, -0.5), rotational_inertia=np.eye(3) * 0.01))
    world = world_of(sk)
    inside = world.step_jacobians(np.array([0.3]), np.array([0.1]), np.array([0.5]))
    outside = world.step_jacobians(np.array([0.3]), np.array([0.1]), np.array([5.0]))
    assert inside.dv_dtau[0, 0] > 0
    assert outside.dv_dtau[0, 0] == 0.0 and outside.dq_dtau[0, 0] == 0.0


def test_a_joint_with_a_zero_effort_limit_has_no_torque_gradient():
    """effort_limit 0 clips every torque to zero (an unactuated joint): its torque has no effect at tau = 0
    either, where the clip's kink would otherwise pick the inside's gradient."""
    sk = rd.Skeleton("p")
    link = sk.add_body("link", joint=rd.RevoluteJoint("hinge", axis=(0, 1, 0), effort_limit=0.0),
                       inertia=rd.Inertia(1.0, com=(0, 0, -0.5), rotational_inertia=np.eye(3) * 0.01))
    sk.add_body("tip", parent=link, joint=rd.RevoluteJoint("elbow", axis=(0, 1, 0)),
                joint_origin=rd.Transform((0, 0, -1.0)),
                inertia=rd.Inertia(1.0, com=(0, 0, -0.5), rotational_inertia=np.eye(3) * 0.01))
    world = world_of(sk)
    q, v, tau = np.array([0.3, -0.2]), np.array([0.1, 0.2]), np.zeros(2)
    J = world.step_jacobians(q, v, tau)
    fd = finite_difference_jacobians(world, q, v, tau)
    np.testing.assert_array_equal(J.dv_dtau[:, 0], 0.0)
    np.testing.assert_array_equal(J.dq_dtau[:, 0], 0.0)
    assert np.abs(J.dv_dtau[:, 1]).min() > 1e-3  # the other joint is actuated (dt M^-1)
    np.testing.assert_allclose(J.dv_dtau, fd.dv_dtau, atol=1e-8)
    g = world.step_vjp(q, v, tau, np.ones(2), np.ones(2))
    assert g.tau[0] == 0.0 and g.tau[1] != 0.0


def test_without_passive_terms_agrees_with_pinocchio(robots_dir):
    pin = pytest.importorskip("pinocchio")
    name, rel, floating = next(r for r in ROBOTS if r[0] == "solo12")
    path = robots_dir / rel
    world = world_of(load_urdf_quiet(path, floating, package_dirs=[robots_dir]), dt=2e-3)
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    pd = pm.createData()
    rng = np.random.default_rng(6)
    q = world.random_configuration(rng)
    v, tau = rng.normal(size=(2, world.nv))
    dt = world.dt
    J = world.step_jacobians(q, v, tau)
    pin.computeABADerivatives(pm, pd, to_pin_q(world, q), v, tau)
    # the base is a free joint (dofs 0:6), which the step moves on R^3 x SO(3) (docs/conventions.md): the
    # step velocity v~ = v + dt a + dt (w x u, 0), then q' = (p + dt R u~, R exp(dt w~)) and
    # v' = (E^T u~, w~), E = exp(dt w~)
    u, w = v[:3], v[3:6]
    S = np.zeros((world.nv, world.nv))
    S[:3, :3], S[:3, 3:6] = dt * pin.skew(w), -dt * pin.skew(u)
    dvs_dq, dvs_dv = dt * pd.ddq_dq, np.eye(world.nv) + dt * pd.ddq_dv + S
    E = pin.exp3(dt * J.v_next[3:6])
    u_step = E @ J.v_next[:3]
    T = np.eye(world.nv)
    T[:3, :3], T[:3, 3:6] = E.T, dt * pin.skew(J.v_next[:3]) @ pin.Jexp3(dt * J.v_next[3:6])
    assert_close(J.dv_dq, T @ dvs_dq, rtol=1e-8, floor=1.0)
    assert_close(J.dv_dv, T @ dvs_dv, rtol=1e-8, floor=1.0)
    A0, A1 = np.eye(world.nv), np.eye(world.nv)  # the joints other than the base add
    A0[:3, :3], A0[:3, 3:6], A0[3:6, 3:6] = E.T, -E.T @ pin.skew(dt * u_step), E.T
    A1[:3, :3], A1[3:6, 3:6] = E.T, pin.Jexp3(dt * J.v_next[3:6])
    assert_close(J.dq_dq, A0 + dt * A1 @ dvs_dq, rtol=1e-8, floor=1.0)
    assert_close(J.dq_dv, dt * A1 @ dvs_dv, rtol=1e-8, floor=1.0)
