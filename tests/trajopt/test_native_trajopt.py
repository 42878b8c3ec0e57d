"""The C++ cost terms and iLQR (trajopt/cost_terms.hpp, ilqr_solver.hpp) against their Python definitions
(costs.py's ``add``, ilqr.py's _solve_python) and central differences, and MPC's replans built once."""

import numpy as np
import pytest
from rdsupport import tree_world
from test_trajopt_costs import check_gradients, random_trajectory
from trajopt_scenes import cartpole_world, free_body_world, resting_ball_world

import rigidiff as rd
from rigidiff.trajopt.costs import CostDerivatives


def python_costs(prob, Q, V, TAU, derivatives=True, hessians=True):
    """The terms' own Python definitions, summed."""
    acc = CostDerivatives(prob.T, prob.nv, hessians)
    for term in prob._costs:
        term.add(acc, Q, V, TAU, derivatives)
    return acc


def zero_cost(Q, V, TAU):
    return 0.0, None, None, None


def tree_problem(T=4, seed=0):
    """Every built-in term on a tree of every joint type (a free root, so non-additive differences)."""
    world = tree_world(seed=3)
    Q, V, TAU = random_trajectory(world, T, seed)
    rng = np.random.default_rng(seed + 10)
    prob = rd.trajopt.Problem(world, T, Q[0])
    W = rng.normal(size=(world.nv, world.nv))
    prob.add_state_cost(q_target=world.random_configuration(rng), v_target=rng.normal(size=world.nv),
                        q_weight=W @ W.T, v_weight=rng.uniform(0.5, 2, world.nv))
    prob.add_state_cost(q_target=np.stack([world.random_configuration(rng) for _ in range(T + 1)]), q_weight=2.0,
                        final_only=True)
    prob.add_control_cost(W @ W.T + np.eye(world.nv), tau_target=rng.normal(size=(T, world.nv)))
    last = world.nbodies - 1
    prob.add_body_target(last, position=(0.3, -0.2, 0.5), weight=[[2.0, 0.3, 0], [0.3, 1.0, 0], [0, 0, 3.0]],
                         time="all", point=(0.1, 0, -0.2))
    prob.add_body_target(1, orientation=rd.Transform(rpy=(0.3, -0.5, 1.0)).quaternion, orientation_weight=[1, 2, 3],
                         time=[0, 2, -1])
    return prob, Q, V, TAU


@pytest.mark.parametrize("seed", [0, 1])
def test_cpp_cost_terms_equal_their_python_definitions(seed):
    prob, Q, V, TAU = tree_problem(seed=seed)
    assert prob._native_core() is not None
    ours = prob.costs(Q, V, TAU, hessians=True)
    ref = python_costs(prob, Q, V, TAU)
    assert ours.value == pytest.approx(ref.value, rel=1e-12)
    for name in ("gq", "gv", "gtau", "hxx", "huu"):
        a, b = getattr(ours, name), getattr(ref, name)
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10 * np.abs(b).max(), err_msg=name)
    value_only = prob.costs(Q, V, TAU, derivatives=False)
    assert value_only.value == pytest.approx(ref.value, rel=1e-12)


def test_cpp_cost_gradients_against_central_differences():
    prob, Q, V, TAU = tree_problem(T=2, seed=2)
    assert prob._native_core() is not None
    check_gradients(prob, Q, V, TAU)


def test_a_python_cost_keeps_the_problem_in_python_and_changes_rebuild_the_cpp_terms():
    world = free_body_world()
    Q, V, TAU = random_trajectory(world, 3, 4)
    prob = rd.trajopt.Problem(world, 3, Q[0])
    prob.add_control_cost(1.0)
    first = prob._native_core()
    assert first is not None and prob._native_core() is first  # made once
    prob.add_state_cost(v_target=np.zeros(world.nv))
    assert prob._native_core() is not first
    assert prob.costs(Q, V, TAU).value == pytest.approx(0.5 * np.sum(TAU**2) + 0.5 * np.sum(V**2))
    prob.add_cost(zero_cost)
    assert prob._native_core() is None
    assert prob.costs(Q, V, TAU).value == pytest.approx(0.5 * np.sum(TAU**2) + 0.5 * np.sum(V**2))


def assert_same_result(a, b, tol):
    np.testing.assert_allclose(a.tau, b.tau, atol=tol)
    np.testing.assert_allclose(a.q, b.q, atol=tol)
    np.testing.assert_allclose(a.v, b.v, atol=tol)
    np.testing.assert_allclose(a.cost_history, b.cost_history, rtol=tol)
    assert (a.iterations, a.converged, a.message) == (b.iterations, b.converged, b.message)
    assert (a.feedback is None) == (b.feedback is None)
    if a.feedback is not None:
        np.testing.assert_allclose(a.feedback, b.feedback, atol=tol * max(1.0, np.abs(b.feedback).max()))


def swing_problem(python: bool):
    world = cartpole_world(dt=0.05)
    prob = rd.trajopt.Problem(world, 30, q0=[0.0, np.pi])
    prob.add_state_cost(q_target=[0.0, 0.0], v_target=[0.0, 0.0], q_weight=[1.0, 50.0], v_weight=5.0, final_only=True)
    prob.add_control_cost(1e-3)
    prob.set_control_bounds(-BOUND, BOUND)
    prob.set_actuated(["slider"])
    if python:
        prob.add_cost(zero_cost)
    return prob


BOUND = 8.0  # tight enough that the box QP holds some steps' torques at a bound


def test_cpp_ilqr_equals_the_python_ilqr_with_bounds_and_actuation():
    ours = swing_problem(False).solve(method="ilqr", max_iters=15, verbose=False)
    ref = swing_problem(True).solve(method="ilqr", max_iters=15, verbose=False)
    assert ours.iterations >= 5 and ours.cost < 0.5 * ours.cost_history[0]
    assert np.sum(np.abs(ours.tau[:, 0]) == BOUND) >= 3 and not np.any(ours.tau[:, 1])
    assert_same_result(ours, ref, 1e-9)
    assert ours.timings["dynamics"] > 0


def test_cpp_ilqr_equals_the_python_ilqr_through_contact():
    def problem(python):
        world = resting_ball_world()
        prob = rd.trajopt.Problem(world, 20, q0=[0.6])
        prob.add_state_cost(q_target=[0.9], v_target=[0.0], final_only=True, q_weight=100.0)
        prob.add_control_cost(1e-3)
        prob.set_initial_guess([1.0])
        if python:
            prob.add_cost(zero_cost)
        return prob

    ours = problem(False).solve(method="ilqr", max_iters=8, verbose=False)
    ref = problem(True).solve(method="ilqr", max_iters=8, verbose=False)
    assert ours.cost < ours.cost_history[0]
    assert_same_result(ours, ref, 1e-8)


def test_a_diverging_first_guess_is_refused():
    world = cartpole_world()
    prob = rd.trajopt.Problem(world, 5, q0=[0.0, 0.1])
    prob.add_control_cost(1.0)
    prob.set_initial_guess([1e308, 0.0])
    with pytest.raises(RuntimeError, match="initial guess failed"):
        prob.solve(method="ilqr", verbose=False)


def balance_setup(prob):
    prob.add_state_cost(q_target=[0.0, 0.0], v_target=[0.0, 0.0], q_weight=[1.0, 10.0], v_weight=0.1)
    prob.add_control_cost(1e-3)
    prob.set_control_bounds(-20, 20)
    prob.set_actuated(["slider"])


def python_balance_setup(prob):
    balance_setup(prob)
    prob.add_cost(zero_cost)


def closed_loop(mpc, steps=40):
    plant = cartpole_world(dt=0.02)
    q, v, taus = np.array([0.0, 0.3]), np.zeros(2), []
    for i in range(steps):
        tau = mpc(q, v)
        taus.append(tau)
        push = np.zeros((plant.nbodies, 6))
        push[plant.body_index("pole"), 0] = 3.0 if i == 10 else 0.0
        q, v = plant.step(q, v, tau, f_ext=push)
    return np.array(taus)


@pytest.mark.parametrize("replan_every", [1, 2])
def test_mpc_built_once_replans_as_the_previous_implementation(replan_every):
    def mpc(setup, rebuild):
        return rd.mpc.MPC(cartpole_world(dt=0.02), horizon=20, setup=setup, iterations=1,
                          replan_every=replan_every, rebuild=rebuild)

    once = mpc(balance_setup, False)
    ours = closed_loop(once)
    rebuilt = closed_loop(mpc(balance_setup, True))
    python = closed_loop(mpc(python_balance_setup, True))  # the Python iLQR and costs of before
    np.testing.assert_allclose(ours, python, atol=1e-9)
    np.testing.assert_allclose(rebuilt, python, atol=1e-9)
    assert np.abs(ours).max() > 1.0
    assert len(once.replan_times) == 40 // replan_every


def test_mpc_built_once_calls_setup_once_and_rebuilt_at_every_replan():
    calls = []

    def counting(prob):
        calls.append(prob)
        balance_setup(prob)

    for rebuild, expected in ((False, 1), (True, 5)):
        calls.clear()
        mpc = rd.mpc.MPC(cartpole_world(dt=0.02), horizon=10, setup=counting, iterations=1, rebuild=rebuild)
        for _ in range(5):
            mpc([0.0, 0.1], [0.0, 0.0])
        assert len(calls) == expected and len(mpc.replan_times) == 5
        assert np.allclose(calls[-1].q0, [0.0, 0.1])


def test_mpc_rebuild_must_be_a_bool():
    with pytest.raises(TypeError, match="rebuild"):
        rd.mpc.MPC(cartpole_world(), 5, setup=balance_setup, rebuild="no")
