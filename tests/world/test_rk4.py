"""World(integrator="rk4"): the classical Runge-Kutta step of forward_dynamics for contact-free worlds.
Its accuracy on the shipped double pendulum (energy, a fine-step reference, fourth-order convergence),
its exact Jacobians against finite differences of the step, its reverse mode against J^T g, the errors
for worlds it cannot step, and the default semi-implicit step left as it was."""

import numpy as np
import pytest
from rdsupport import (TREE, assert_close, build_skeleton, check_parameter_jacobians_against_finite_differences,
                       check_rollout_backward_equals_chained_jacobians,
                       check_step_jacobians_against_finite_differences, check_step_vjp_is_the_transposed_jacobian,
                       check_trajectory_kernels_and_ilqr, fd_tangent, robot_world, with_passive_terms, world_of)

import rigidiff as rd

def pendulum(dt=1e-3, integrator="rk4"):
    """The shipped double pendulum (no damping, no friction; its +-2 pi limits off, as by default: RK4 has
    no constraint rows). Returns (world, q0, v0)."""
    world = rd.World(dt=dt, integrator=integrator)
    world.add_skeleton(rd.models.load("double_pendulum"))
    world.contact_options(joint_limits=False)
    return world, np.array([1.2, -0.7]), np.array([0.5, 1.0])


def energy(world, q, v):
    return world.kinetic_energy(q, v) + world.potential_energy(q)


def end_state(dt, seconds=1.0):
    world, q0, v0 = pendulum(dt)
    n = int(round(seconds / dt))
    Q, V = world.rollout(q0, v0, np.zeros((n, world.nv)))
    return Q[-1], V[-1]


def rk4_world(world):
    world.integrator = "rk4"
    world.contact_options(joint_limits=False, joint_friction=False)
    assert not world._core_is_constrained()
    return world


def test_default_integrator_is_semi_implicit_and_unchanged():
    semi, q0, v0 = pendulum(integrator="semi_implicit")
    default = rd.World()
    default.add_skeleton(rd.models.load("double_pendulum"))
    default.contact_options(joint_limits=False)
    assert default.integrator == "semi_implicit" and semi.integrator == "semi_implicit"
    taus = np.full((50, 2), 0.3)
    Qs, Vs = semi.rollout(q0, v0, taus)
    Qd, Vd = default.rollout(q0, v0, taus)
    np.testing.assert_array_equal(Qs, Qd)
    np.testing.assert_array_equal(Vs, Vd)
    rk4, _, _ = pendulum()
    Qr, _ = rk4.rollout(q0, v0, taus)
    assert np.abs(Qr - Qs).max() > 1e-6  # the option changes the step


def test_energy_kept_over_ten_seconds():
    world, q0, v0 = pendulum()
    Q, V = world.rollout(q0, v0, np.zeros((10_000, 2)))
    e0, e1 = energy(world, Q[0], V[0]), energy(world, Q[-1], V[-1])
    assert abs(e1 - e0) < 1e-6 * abs(e0)
    semi, _, _ = pendulum(integrator="semi_implicit")
    Qs, Vs = semi.rollout(q0, v0, np.zeros((10_000, 2)))
    assert abs(energy(semi, Qs[-1], Vs[-1]) - e0) > 1e-3 * abs(e0)  # what the option is for


@pytest.mark.slow
def test_energy_kept_over_a_hundred_seconds():
    world, q0, v0 = pendulum()
    Q, V = world.rollout(q0, v0, np.zeros((100_000, 2)))
    e0, e1 = energy(world, Q[0], V[0]), energy(world, Q[-1], V[-1])
    assert abs(e1 - e0) < 1e-6 * abs(e0)


def test_matches_a_fine_step_reference_and_converges_at_fourth_order():
    q_ref, v_ref = end_state(1e-5)
    errors = []
    for dt in (4e-3, 2e-3, 1e-3):
        q, v = end_state(dt)
        errors.append(max(np.abs(q - q_ref).max(), np.abs(v - v_ref).max()))
    assert errors[-1] < 1e-8
    for coarse, fine in zip(errors, errors[1:]):
        assert 12.0 < coarse / fine < 20.0, errors


def test_torques_held_over_the_step_and_batch_equals_step():
    world, q0, v0 = pendulum(dt=1e-2)
    rng = np.random.default_rng(0)
    Q = np.array([q0 + 0.1 * rng.normal(size=2) for _ in range(5)])
    V, T = rng.normal(size=(2, 5, 2))
    Qn, Vn = world.step_batch(Q, V, T)
    for s in range(5):
        qn, vn = world.step(Q[s], V[s], T[s])
        np.testing.assert_array_equal(Qn[s], qn)
        np.testing.assert_array_equal(Vn[s], vn)
    # one step by hand: the four stages of forward_dynamics (revolute joints: integrate adds)
    q, v, tau, h = Q[0], V[0], T[0], world.dt
    k1q, k1v = v, world.forward_dynamics(q, v, tau)
    k2q, k2v = v + h / 2 * k1v, world.forward_dynamics(q + h / 2 * k1q, v + h / 2 * k1v, tau)
    k3q, k3v = v + h / 2 * k2v, world.forward_dynamics(q + h / 2 * k2q, v + h / 2 * k2v, tau)
    k4q, k4v = v + h * k3v, world.forward_dynamics(q + h * k3q, v + h * k3v, tau)
    assert_close(Qn[0], q + h / 6 * (k1q + 2 * k2q + 2 * k3q + k4q), rtol=1e-13, floor=1.0)
    assert_close(Vn[0], v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v), rtol=1e-13, floor=1.0)


def random_tree_world():
    return rk4_world(with_passive_terms(world_of(build_skeleton(TREE, 3), dt=1e-2), 3))


@pytest.fixture(params=["panda", "solo12", "random tree"])
def any_world(request, robots_dir):
    if request.param == "random tree":
        return random_tree_world()
    return rk4_world(robot_world(robots_dir, request.param))


def random_state(world, seed=4):
    rng = np.random.default_rng(seed)
    q = world.random_configuration(rng)
    v, tau = 0.5 * rng.normal(size=(2, world.nv))
    return q, v, tau


def test_step_jacobians_match_finite_differences(any_world):
    world = any_world
    q, v, tau = random_state(world)
    J = check_step_jacobians_against_finite_differences(world, q, v, tau)
    semi = world._copy()
    semi.integrator = "semi_implicit"
    assert np.abs(semi.step_jacobians(q, v, tau).dv_dq - J.dv_dq).max() > 1e-6  # not the Euler step's


def test_step_vjp_is_the_transposed_jacobian(any_world):
    check_step_vjp_is_the_transposed_jacobian(any_world, *random_state(any_world, seed=7), rtol=1e-12)


def test_rollout_backward_equals_chained_jacobians(any_world):
    q0, v0, _ = random_state(any_world, seed=11)
    check_rollout_backward_equals_chained_jacobians(any_world, q0, v0, rtol=1e-10)


def test_jacobians_with_wrenches_and_a_saturated_torque():
    world = with_passive_terms(world_of(build_skeleton(TREE, 1), dt=1e-2), 1)
    arm = world.joint("arm_joint")
    arm.joint.effort_limit[:] = 0.2
    world.rebuild()
    world = rk4_world(world)
    rng = np.random.default_rng(1)
    q = world.random_configuration(rng)
    v, tau = rng.normal(size=(2, world.nv))
    tau[arm.v_index] = 1.0  # beyond the limit: clipped, so it does not act
    f_ext = {b: rng.normal(size=6) for b in ["tip", "weld", "base", "head"]}
    J = world.step_jacobians(q, v, tau, f_ext=f_ext)
    qn, vn = world.step(q, v, tau, f_ext=f_ext)
    assert_close(J.dv_dq, fd_tangent(world, lambda x: world.step(x, v, tau, f_ext=f_ext)[1], q), rtol=1e-6,
                 floor=1.0, what="dv_dq")
    assert_close(J.dq_dq, fd_tangent(world, lambda x: world.difference(qn, world.step(x, v, tau, f_ext=f_ext)[0]), q),
                 rtol=1e-6, floor=1.0, what="dq_dq")
    h, n = 1e-6, world.nv
    for name, arg in (("v", 1), ("tau", 2)):
        dq, dv = np.zeros((n, n)), np.zeros((n, n))
        for k in range(n):
            plus, minus = [q, v.copy(), tau.copy()], [q, v.copy(), tau.copy()]
            plus[arg][k] += h
            minus[arg][k] -= h
            (qp, vp), (qm, vm) = world.step(*plus, f_ext=f_ext), world.step(*minus, f_ext=f_ext)
            dq[:, k], dv[:, k] = world.difference(qm, qp) / (2 * h), (vp - vm) / (2 * h)
        assert_close(getattr(J, f"dq_d{name}"), dq, rtol=1e-6, floor=1.0, what=f"dq_d{name}")
        assert_close(getattr(J, f"dv_d{name}"), dv, rtol=1e-6, floor=1.0, what=f"dv_d{name}")
    assert not J.dv_dtau[:, arm.v_index].any() and np.abs(J.dv_dtau).max() > 1e-3
    g = check_step_vjp_is_the_transposed_jacobian(world, q, v, tau, rtol=1e-12, f_ext=f_ext)
    assert g.tau[arm.v_index] == 0.0


def _ball_over_ground_rk4(integrator="rk4"):
    """A ball on a free joint above the ground: its step needs contact rows."""
    world = rd.World(dt=1e-3, integrator=integrator)
    sk = rd.Skeleton("b")
    body = sk.add_body("ball", joint=rd.FreeJoint("f"), inertia=rd.Inertia.from_shape(rd.Sphere(0.1), mass=1.0))
    body.add_shape(rd.Sphere(0.1))
    world.add_skeleton(sk)
    world.add_ground()
    return world


def test_worlds_that_need_constraints_are_refused_with_the_reason():
    ball = _ball_over_ground_rk4()
    q, v = np.r_[0, 0, 0.5, 0, 0, 0, 1.0], np.zeros(6)
    with pytest.raises(ValueError, match="contact-free.*shapes that may touch"):
        ball.step(q, v, np.zeros(6))
    with pytest.raises(ValueError, match="shapes that may touch"):
        ball.rollout(q, v, np.zeros((3, 6)))
    with pytest.raises(ValueError, match="shapes that may touch"):
        ball.step_jacobians(q, v, np.zeros(6))
    limited = rd.World(integrator="rk4")
    limited.add_skeleton(rd.models.load("double_pendulum"))
    limited.step(np.zeros(2), np.zeros(2), np.zeros(2))  # limits are off by default
    limited.contact_options(joint_limits=True)
    with pytest.raises(ValueError, match="joint limits"):
        limited.step(np.zeros(2), np.zeros(2), np.zeros(2))
    limited.contact_options(joint_limits=False)
    limited.step(np.zeros(2), np.zeros(2), np.zeros(2))  # fine without them
    limited.contact_options(joint_friction=True)
    limited.joint(limited.joint_names[0]).joint.friction[:] = 0.1
    limited.rebuild()
    with pytest.raises(ValueError, match="joint friction"):
        limited.step(np.zeros(2), np.zeros(2), np.zeros(2))
    limited.integrator = "semi_implicit"
    limited.contact_options(joint_limits=True)
    limited.step(np.zeros(2), np.zeros(2), np.zeros(2))  # the default step solves them


@pytest.mark.parametrize("integrator", ["rk4", "implicit"])
def test_every_stepping_call_refuses_a_world_that_needs_constraints(integrator):
    """The refusal is made once, where every call chooses its step: no call slips through to a step
    without its constraints."""
    world = _ball_over_ground_rk4(integrator)
    q, v, tau = np.r_[0, 0, 0.5, 0, 0, 0, 1.0], np.zeros(6), np.zeros(6)
    calls = {
        "step_vjp": lambda: world.step_vjp(q, v, tau, np.ones(6), np.ones(6)),
        "step_jacobians wrt": lambda: world.step_jacobians(q, v, tau, wrt="all"),
        "step_batch": lambda: world.step_batch(q[None], v[None], tau[None]),
        "rollout_batch": lambda: world.rollout_batch(q[None], v[None], np.zeros((2, 6))),
        "step_jacobians_batch": lambda: world.step_jacobians_batch(q[None], v[None], tau[None]),
        "rollout record": lambda: world.rollout(q, v, np.zeros((2, 6)), record=True),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match=f"integrator='{integrator}' is for .*contact-free.*shapes that may touch"):
            call()
    world.integrator = "semi_implicit"
    for name, call in calls.items():
        call()  # the same calls step with the constraints


def test_parameter_jacobians_match_finite_differences(any_world):
    world = any_world
    q, v, tau = random_state(world, seed=5)
    J = check_parameter_jacobians_against_finite_differences(world, q, v, tau)


def test_parameter_vjp_and_rollout_backward_equal_the_jacobians(robots_dir):
    for world in (random_tree_world(), rk4_world(robot_world(robots_dir, "panda"))):
        q, v, tau = random_state(world, seed=9)
        rng = np.random.default_rng(4)
        gq, gv = rng.normal(size=(2, world.nv))
        J = world.step_jacobians(q, v, tau, wrt="all")
        g = world.step_vjp(q, v, tau, gq, gv, wrt="all")
        assert g.parameter_names == J.parameter_names
        assert_close(g.parameters, J.dq_dp.T @ gq + J.dv_dp.T @ gv, rtol=1e-10, floor=1.0, what="parameters")
        T = 3
        taus = 0.3 * rng.normal(size=(T, world.nv))
        traj = world.rollout(q, v, taus, record=True)
        GQ, GV = rng.normal(size=(2, T + 1, world.nv))
        gr = traj.backward(GQ, GV, wrt="all")
        cq, cv, gp = GQ[T].copy(), GV[T].copy(), 0.0
        for t in range(T - 1, -1, -1):
            Jt = world.step_jacobians(traj.q[t], traj.v[t], taus[t], wrt="all")
            gp = gp + Jt.dq_dp.T @ cq + Jt.dv_dp.T @ cv
            cq, cv = GQ[t] + Jt.dq_dq.T @ cq + Jt.dv_dq.T @ cv, GV[t] + Jt.dq_dv.T @ cq + Jt.dv_dv.T @ cv
        assert_close(gr.parameters, gp, rtol=1e-10, floor=1.0, what="rollout parameters")
        assert_close(gr.q, cq, rtol=1e-10, floor=1.0, what="rollout q0")


def test_bad_integrator_names_are_refused():
    with pytest.raises(ValueError, match="integrator must be one of"):
        rd.World(integrator="rk45")
    with pytest.raises(ValueError, match="integrator must be one of"):
        rd.World().integrator = None


def test_copy_keeps_the_integrator():
    world, q0, v0 = pendulum()
    twin = world._copy()
    assert twin.integrator == "rk4"
    np.testing.assert_array_equal(twin.step(q0, v0, np.ones(2))[0], world.step(q0, v0, np.ones(2))[0])


def test_trajectory_kernels_step_with_rk4_and_ilqr_reaches_a_target():
    check_trajectory_kernels_and_ilqr(random_tree_world(), "rk4")
