"""World(integrator="implicit"): backward Euler in the velocity for contact-free worlds. The step solves its
implicit equation, its exact Jacobians against finite differences, its reverse mode against J^T g, batches
against loops, its first-order dissipation on the double pendulum, stability where the semi-implicit step
blows up (stiff springs on talos, a fast spinning chain at a large dt), and the errors for what it refuses."""

import numpy as np
import pytest
from rdsupport import (STEP_JACOBIAN_NAMES, TREE, assert_close, build_skeleton,
                       check_parameter_jacobians_against_finite_differences,
                       check_rollout_backward_equals_chained_jacobians,
                       check_step_jacobians_against_finite_differences, check_step_vjp_is_the_transposed_jacobian,
                       check_trajectory_kernels_and_ilqr, robot_world, with_passive_terms, world_of)

import rigidiff as rd
from rigidiff.testing import finite_difference_jacobians

def implicit_world(world):
    world.integrator = "implicit"
    world.contact_options(joint_limits=False, joint_friction=False)
    assert not world._core_is_constrained()
    return world


def pendulum(dt=1e-3, integrator="implicit"):
    """The shipped double pendulum, limits off. Returns (world, q0, v0)."""
    world = rd.World(dt=dt, integrator=integrator)
    world.add_skeleton(rd.models.load("double_pendulum"))
    world.contact_options(joint_limits=False)
    return world, np.array([1.2, -0.7]), np.array([0.5, 1.0])


def energy(world, q, v):
    return world.kinetic_energy(q, v) + world.potential_energy(q)


def random_tree_world():
    return implicit_world(with_passive_terms(world_of(build_skeleton(TREE, 3), dt=1e-2), 3))


@pytest.fixture(params=["panda", "solo12", "random tree"])
def any_world(request, robots_dir):
    if request.param == "random tree":
        return random_tree_world()
    return implicit_world(robot_world(robots_dir, request.param))


def random_state(world, seed=4, speed=0.5):
    rng = np.random.default_rng(seed)
    q = world.random_configuration(rng)
    v, tau = speed * rng.normal(size=(2, world.nv))
    return q, v, tau


def test_the_step_solves_backward_euler_in_the_velocity():
    world = with_passive_terms(world_of(rd.models.load("double_pendulum"), dt=0.02), 2)
    world = implicit_world(world)
    q, v, tau = np.array([0.4, -1.1]), np.array([3.0, -5.0]), np.array([0.7, -0.2])
    qn, vn = world.step(q, v, tau)
    dt = world.dt
    np.testing.assert_allclose(qn, q + dt * vn, rtol=0, atol=1e-14)  # revolute joints: integrate adds
    damping, stiffness, rest = (np.concatenate([world.joint(n).joint.__getattribute__(a) for n in world.joint_names])
                                for a in ("damping", "stiffness", "rest_position"))
    residual = (world.inverse_dynamics(q, vn, (vn - v) / dt) + damping * vn + stiffness * (q - rest + dt * vn) - tau)
    assert np.abs(residual).max() < 1e-11
    semi = world._copy()
    semi.integrator = "semi_implicit"
    assert np.abs(semi.step(q, v, tau)[1] - vn).max() > 1e-3  # the Coriolis forces at the new velocity


def test_without_velocity_dependent_forces_it_is_the_default_step():
    """One hinge (no Coriolis force): F is linear in w and both steps solve the same equation, with damping,
    springs, armature and the effort clip handled alike."""
    sk = rd.Skeleton("hinge")
    sk.add_body("link", joint=rd.RevoluteJoint("j", axis=(0.0, 1.0, 0.0)),
                inertia=rd.Inertia(1.5, [0.2, 0.0, 0.1], np.diag([0.02, 0.03, 0.01])))
    world = with_passive_terms(world_of(sk, dt=0.02), 4)
    world.joint("j").joint.effort_limit[:] = 0.5
    world.rebuild()
    world = implicit_world(world)
    semi = world._copy()
    semi.integrator = "semi_implicit"
    for tau in (0.3, 2.0):  # inside and beyond the effort limit
        args = (np.array([0.7]), np.array([-3.0]), np.array([tau]))
        for a, b in zip(world.step(*args), semi.step(*args)):
            assert_close(a, b, rtol=1e-14, floor=1.0)
        Ji, Js = world.step_jacobians(*args), semi.step_jacobians(*args)
        for name in STEP_JACOBIAN_NAMES:
            assert_close(getattr(Ji, name), getattr(Js, name), rtol=1e-13, floor=1.0, what=name)


def test_step_jacobians_match_finite_differences(any_world):
    world = any_world
    q, v, tau = random_state(world, speed=2.0)
    J = check_step_jacobians_against_finite_differences(world, q, v, tau)
    semi = world._copy()
    semi.integrator = "semi_implicit"
    assert np.abs(semi.step_jacobians(q, v, tau).dv_dv - J.dv_dv).max() > 1e-6  # not the Euler step's


def test_step_vjp_is_the_transposed_jacobian(any_world):
    check_step_vjp_is_the_transposed_jacobian(any_world, *random_state(any_world, seed=7, speed=2.0), rtol=1e-10)


def test_parameter_cotangents_match_finite_differences():
    world = random_tree_world()
    q, v, tau = random_state(world, seed=5, speed=2.0)
    rng = np.random.default_rng(6)
    gq, gv = rng.normal(size=(2, world.nv))
    g = world.step_vjp(q, v, tau, gq, gv, wrt="all")
    fd = finite_difference_jacobians(world, q, v, tau, parameters="all", method="ridders")
    assert g.parameter_names == fd.parameter_names
    expected = fd.dq_dp.T @ gq + fd.dv_dp.T @ gv
    assert np.abs(expected).max() > 1e-3
    assert_close(g.parameters, expected, rtol=2e-6, floor=1.0, what="parameters")


def test_parameter_jacobians_match_finite_differences(any_world):
    world = any_world
    q, v, tau = random_state(world, seed=5, speed=2.0)
    J = check_parameter_jacobians_against_finite_differences(world, q, v, tau)
    rng = np.random.default_rng(4)
    gq, gv = rng.normal(size=(2, world.nv))
    g = world.step_vjp(q, v, tau, gq, gv, wrt="all")
    assert_close(g.parameters, J.dq_dp.T @ gq + J.dv_dp.T @ gv, rtol=1e-10, floor=1.0, what="vjp parameters")


def test_rollout_backward_equals_chained_jacobians(any_world):
    q0, v0, _ = random_state(any_world, seed=11)
    check_rollout_backward_equals_chained_jacobians(any_world, q0, v0, rtol=1e-9)


def test_rollout_parameter_cotangents_equal_the_step_vjps():
    world = random_tree_world()
    q0, v0, _ = random_state(world, seed=3)
    rng = np.random.default_rng(8)
    T = 3
    taus = 0.3 * rng.normal(size=(T, world.nv))
    traj = world.rollout(q0, v0, taus, record=True)
    GQ, GV = rng.normal(size=(2, T + 1, world.nv))
    g = traj.backward(GQ, GV, wrt="all")
    cq, cv, gp = GQ[T].copy(), GV[T].copy(), 0.0
    for t in range(T - 1, -1, -1):
        s = world.step_vjp(traj.q[t], traj.v[t], taus[t], cq, cv, wrt="all")
        gp = gp + s.parameters
        cq, cv = GQ[t] + s.q, GV[t] + s.v
    assert_close(g.parameters, gp, rtol=1e-10, floor=1.0, what="parameters")
    assert_close(g.q, cq, rtol=1e-10, floor=1.0, what="q0")


def test_batches_and_rollout_equal_loops_of_steps(robots_dir):
    world = implicit_world(robot_world(robots_dir, "solo12"))
    rng = np.random.default_rng(0)
    Q = np.array([world.random_configuration(rng) for _ in range(4)])
    V, T = rng.normal(size=(2, 4, world.nv))
    Qn, Vn = world.step_batch(Q, V, T, threads=2)
    Jb = world.step_jacobians_batch(Q, V, T, threads=2)
    for s in range(4):
        qn, vn = world.step(Q[s], V[s], T[s])
        np.testing.assert_array_equal(Qn[s], qn)
        np.testing.assert_array_equal(Vn[s], vn)
        J = world.step_jacobians(Q[s], V[s], T[s])
        for name in STEP_JACOBIAN_NAMES:
            np.testing.assert_array_equal(getattr(Jb, name)[s], getattr(J, name))
    taus = 0.2 * rng.normal(size=(5, world.nv))
    Qr, Vr = world.rollout(Q[0], V[0], taus)
    q, v = Q[0], V[0]
    for t in range(5):
        q, v = world.step(q, v, taus[t])
        np.testing.assert_array_equal(Qr[t + 1], q)
        np.testing.assert_array_equal(Vr[t + 1], v)
    Qb, Vb = world.rollout_batch(Q[:2], V[:2], taus, threads=2)
    np.testing.assert_array_equal(Qb[0], Qr)
    np.testing.assert_array_equal(Vb[0], Vr)


def energies(dt, integrator, seconds):
    world, q0, v0 = pendulum(dt, integrator)
    Q, V = world.rollout(q0, v0, np.zeros((int(round(seconds / dt)), 2)))
    return np.array([energy(world, q, v) for q, v in zip(Q, V)])


def test_energy_dissipates_monotonically_at_first_order():
    """The position update (gravity at the start configuration) makes the energy oscillate within a swing, as
    the semi-implicit step's; averaged over each second it decreases monotonically (the semi-implicit step,
    with its Coriolis forces explicit, gains energy instead), and the loss halves with dt."""
    losses = []
    for dt in (4e-3, 2e-3, 1e-3):
        E = energies(dt, "implicit", 5.0)
        per = int(round(1.0 / dt))
        means = E[: 5 * per].reshape(5, per).mean(axis=1)
        assert np.all(np.diff(means) < 0), means
        losses.append(E[0] - E[per])
    assert losses[-1] > 1e-3 * abs(E[0])
    for coarse, fine in zip(losses, losses[1:]):
        assert 1.8 < coarse / fine < 2.2, losses  # first order
    semi = energies(1e-3, "semi_implicit", 1.0)
    assert semi[-1] - semi[0] > 0.5 * losses[-1]


def test_stiff_springs_on_talos_stay_bounded(robots_dir):
    world = robot_world(robots_dir, "talos")
    for name in world.joint_names:
        j = world.joint(name).joint
        if name != "root_joint":
            j.stiffness[:] = 1e4
            j.damping[:] = 10.0
    world.rebuild()
    world = implicit_world(world)
    rng = np.random.default_rng(2)
    q0 = world.integrate(world.neutral_configuration(), 0.3 * rng.normal(size=world.nv))
    v0 = 2.0 * rng.normal(size=world.nv)
    Q, V = world.rollout(q0, v0, np.zeros((1000, world.nv)))  # 1 s at dt = 1 ms, falling freely
    assert np.all(np.isfinite(V)) and np.abs(V).max() < 1e3
    joints = slice(6, None)
    assert np.abs(V[-1, joints]).max() < 0.1 * np.abs(V[0, joints]).max()  # the springs' motion dies out
    assert np.abs(world.difference(world.neutral_configuration(), Q[-1])[joints]).max() < 0.05  # at rest
    semi = world._copy()
    semi.integrator = "semi_implicit"  # stable too: its damping and springs are implicit already
    Qs, Vs = semi.rollout(q0, v0, np.zeros((1000, world.nv)))
    assert np.all(np.isfinite(Vs)) and np.abs(Vs).max() < 1e3
    assert np.abs(Vs[-1, joints]).max() < 0.1 * np.abs(Vs[0, joints]).max()


def spinning_top(integrator, dt):
    """A rotor on a ball joint at the end of a hinged arm, spinning fast about a mix of its axes (its
    gyroscopic term stays explicit in the semi-implicit step under both gyroscopic settings: the ball joint
    has a moving parent). Returns (world, q0, v0)."""
    sk = rd.Skeleton("top")
    sk.add_body("arm", joint=rd.RevoluteJoint("hinge", axis=(0.0, 0.0, 1.0)),
                inertia=rd.Inertia(1.0, [0.2, 0.0, 0.0], np.diag([1e-2, 1e-2, 1e-2])))
    sk.add_body("rotor", joint=rd.BallJoint("ball"), parent="arm", joint_origin=rd.Transform(translation=(0.4, 0, 0)),
                inertia=rd.Inertia(0.5, [0.0, 0.0, 0.0], np.diag([1e-3, 2e-3, 3e-3])))
    world = rd.World(dt=dt, gravity=(0.0, 0.0, 0.0), integrator=integrator)
    world.add_skeleton(sk)
    world.contact_options(joint_limits=False)
    return world, world.neutral_configuration(), np.array([0.5, 2.0, 30.0, 3.0])


def test_a_fast_spinning_rotor_blows_up_semi_implicit_but_not_implicit():
    semi, q0, v0 = spinning_top("semi_implicit", 0.01)
    with pytest.raises(RuntimeError, match="the step diverged"):
        semi.rollout(q0, v0, np.zeros((200, 4)))
    implicit, _, _ = spinning_top("implicit", 0.01)
    Q, V = implicit.rollout(q0, v0, np.zeros((200, 4)))
    E = np.array([implicit.kinetic_energy(q, v) for q, v in zip(Q, V)])
    assert np.all(np.isfinite(V)) and np.all(np.diff(E) <= 1e-12 * E[0]) and E[-1] < 0.5 * E[0]
    fine, _, _ = spinning_top("semi_implicit", 1e-3)  # stable at a smaller dt, where the two agree better
    Qf, Vf = fine.rollout(q0, v0, np.zeros((10, 4)))
    assert np.all(np.isfinite(Vf))


def test_a_step_without_a_solution_raises_with_the_state():
    """A light chain spun fast with its links folded, at a large dt: the velocity-implicit equation (quadratic in
    the new velocity) has no real root there; Newton's method stops and names the state."""
    sk = rd.Skeleton("spinner")
    parent = None
    for i in range(3):
        body = sk.add_body(f"l{i}", joint=rd.RevoluteJoint(f"j{i}", axis=(0.0, 0.0, 1.0)), parent=parent,
                           joint_origin=rd.Transform(translation=(0.0 if i == 0 else 0.3, 0.0, 0.0)),
                           inertia=rd.Inertia(0.2, [0.15, 0.0, 0.0], np.diag([1e-3, 2e-3, 2e-3])))
        parent = body.name
    world = rd.World(dt=0.05, gravity=(0.0, 0.0, 0.0), integrator="implicit")
    world.add_skeleton(sk)
    world.contact_options(joint_limits=False)
    q, v = np.array([0.0, 1.4, -1.9]), np.array([40.0, -25.0, 30.0])
    with pytest.raises(RuntimeError, match=r"Newton iteration stalled.*dt = 0.05.*q = \[.*1.4.*v = \[.*40"):
        world.step(q, v, np.zeros(3))
    world.dt = 1e-3
    assert np.all(np.isfinite(world.step(q, v, np.zeros(3))[1]))  # a smaller dt has one


def test_worlds_that_need_constraints_are_refused_with_the_reason():
    ball = rd.World(dt=1e-3, integrator="implicit")
    sk = rd.Skeleton("b")
    body = sk.add_body("ball", joint=rd.FreeJoint("f"), inertia=rd.Inertia.from_shape(rd.Sphere(0.1), mass=1.0))
    body.add_shape(rd.Sphere(0.1))
    ball.add_skeleton(sk)
    ball.add_ground()
    q, v = np.r_[0, 0, 0.5, 0, 0, 0, 1.0], np.zeros(6)
    for call in (lambda: ball.step(q, v, np.zeros(6)), lambda: ball.rollout(q, v, np.zeros((3, 6))),
                 lambda: ball.step_jacobians(q, v, np.zeros(6)),
                 lambda: ball.step_vjp(q, v, np.zeros(6), np.ones(6), np.ones(6))):
        with pytest.raises(ValueError, match="integrator='implicit' is for smooth.*shapes that may touch"):
            call()
    limited = rd.World(integrator="implicit")
    limited.add_skeleton(rd.models.load("double_pendulum"))
    limited.contact_options(joint_limits=True)
    with pytest.raises(ValueError, match="integrator='implicit'.*joint limits"):
        limited.step(np.zeros(2), np.zeros(2), np.zeros(2))
    with pytest.raises(ValueError, match="integrator must be one of .*'implicit'"):
        rd.World(integrator="backward_euler")


def test_a_free_body_keeps_its_linear_momentum_and_ignores_the_gyroscopic_option():
    worlds = []
    for gyroscopic in ("implicit", "explicit"):
        world = rd.World(dt=0.01, gravity=(0.0, 0.0, 0.0), integrator="implicit", gyroscopic=gyroscopic)
        sk = rd.Skeleton("box")
        sk.add_body("box", joint=rd.FreeJoint("f"), inertia=rd.Inertia.from_shape(rd.Box([0.1, 0.3, 0.5]), mass=2.0))
        world.add_skeleton(sk)
        worlds.append(world)
    q0 = np.r_[0.1, 0.2, 0.3, 0.0, 0.0, np.sin(0.2), np.cos(0.2)]
    v0 = np.array([1.0, -0.5, 0.3, 2.0, 5.0, -3.0])
    Q, V = worlds[0].rollout(q0, v0, np.zeros((100, 6)))
    Q2, V2 = worlds[1].rollout(q0, v0, np.zeros((100, 6)))
    np.testing.assert_array_equal(Q, Q2)
    np.testing.assert_array_equal(V, V2)

    def space_velocity(q, v):
        return worlds[0].body_pose(q, "box")[:3, :3] @ v[:3]

    assert_close(space_velocity(Q[-1], V[-1]), space_velocity(Q[0], V[0]), rtol=1e-12, floor=1.0)
    E = [worlds[0].kinetic_energy(q, v) for q, v in zip(Q, V)]
    assert np.all(np.diff(E) <= 1e-12) and E[-1] < E[0]  # the spin's energy dissipates, never grows


def test_switching_back_restores_the_semi_implicit_gyroscopic_update():
    def box_world(integrator):
        world = rd.World(dt=0.01, gravity=(0.0, 0.0, 0.0), integrator=integrator)
        sk = rd.Skeleton("box")
        sk.add_body("box", joint=rd.FreeJoint("f"), inertia=rd.Inertia.from_shape(rd.Box([0.1, 0.3, 0.5]), mass=2.0))
        world.add_skeleton(sk)
        return world

    q0, v0 = np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], np.array([0.3, 0.0, 0.1, 2.0, 5.0, -3.0])
    world, semi = box_world("implicit"), box_world("semi_implicit")
    assert world.gyroscopic == "implicit"
    stepped = world.step(q0, v0, np.zeros(6))
    assert np.abs(stepped[1] - semi.step(q0, v0, np.zeros(6))[1]).max() > 1e-4
    world.integrator = "semi_implicit"
    for a, b in zip(world.step(q0, v0, np.zeros(6)), semi.step(q0, v0, np.zeros(6))):
        np.testing.assert_array_equal(a, b)
    world.integrator = "implicit"
    world.rebuild()  # a recompiled model keeps the choice
    for a, b in zip(world.step(q0, v0, np.zeros(6)), stepped):
        np.testing.assert_array_equal(a, b)


def test_trajectory_kernels_step_with_it_and_ilqr_reaches_a_target():
    check_trajectory_kernels_and_ilqr(random_tree_world(), "implicit")


def test_jacobians_and_vjp_with_wrenches_and_a_saturated_torque():
    world = with_passive_terms(world_of(build_skeleton(TREE, 1), dt=1e-2), 1)
    arm = world.joint("arm_joint")
    arm.joint.effort_limit[:] = 0.2
    world.rebuild()
    world = implicit_world(world)
    rng = np.random.default_rng(1)
    q = world.random_configuration(rng)
    v, tau = 2.0 * rng.normal(size=(2, world.nv))
    tau[arm.v_index] = 1.0  # beyond the limit: clipped, so it does not act
    f_ext = {b: rng.normal(size=6) for b in ["tip", "weld", "base", "head"]}
    J = world.step_jacobians(q, v, tau, f_ext=f_ext)
    qn, _ = world.step(q, v, tau, f_ext=f_ext)
    h, n = 1e-6, world.nv
    for name, arg in (("q", 0), ("v", 1), ("tau", 2)):
        dq, dv = np.zeros((n, n)), np.zeros((n, n))
        for k in range(n):
            e = np.zeros(n)
            e[k] = h
            if arg == 0:
                plus, minus = [world.integrate(q, e), v, tau], [world.integrate(q, -e), v, tau]
            else:
                plus, minus = [q, v.copy(), tau.copy()], [q, v.copy(), tau.copy()]
                plus[arg] = plus[arg] + e
                minus[arg] = minus[arg] - e
            (qp, vp), (qm, vm) = world.step(*plus, f_ext=f_ext), world.step(*minus, f_ext=f_ext)
            dq[:, k], dv[:, k] = world.difference(qm, qp) / (2 * h), (vp - vm) / (2 * h)
        assert_close(getattr(J, f"dq_d{name}"), dq, rtol=1e-6, floor=1.0, what=f"dq_d{name}")
        assert_close(getattr(J, f"dv_d{name}"), dv, rtol=1e-6, floor=1.0, what=f"dv_d{name}")
    assert not J.dv_dtau[:, arm.v_index].any() and np.abs(J.dv_dtau).max() > 1e-3
    g = check_step_vjp_is_the_transposed_jacobian(world, q, v, tau, rtol=1e-10, f_ext=f_ext)
    assert g.tau[arm.v_index] == 0.0
    semi = world._copy()
    semi.integrator = "semi_implicit"
    assert np.abs(semi.step(q, v, tau, f_ext=f_ext)[0] - qn).max() > 1e-6
