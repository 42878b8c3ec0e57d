"""The solvers of rd.trajopt converge, agree with each other and respect bounds."""

import itertools

import numpy as np
import pytest
from trajopt_scenes import cartpole_world, resting_ball_world, resting_height, slider_box, swing_up

import rigidiff as rd
from rigidiff.trajopt import box_qp


@pytest.fixture(scope="module")
def swing_up_solutions():
    world = cartpole_world()
    sols = {}
    sols["ilqr"] = swing_up(world).solve("ilqr", max_iters=300, tol=1e-10, verbose=False)
    sols["multiple_shooting"] = swing_up(world).solve("multiple_shooting", max_iters=400, tol=1e-10,
                                                      verbose=False, shot_length=5)
    sols["shooting"] = swing_up(world).solve("shooting", max_iters=2000, tol=1e-12, verbose=False)
    return sols


@pytest.mark.parametrize("method", ["ilqr", "multiple_shooting", "shooting"])
def test_cartpole_swings_up(swing_up_solutions, method):
    res = swing_up_solutions[method]
    assert res.q.shape == (61, 2) and res.v.shape == (61, 2) and res.tau.shape == (60, 2)
    assert np.abs(res.q[-1]).max() < 0.02, res.q[-1]     # upright over the start
    assert np.abs(res.v[-1]).max() < 0.05, res.v[-1]     # at rest
    assert res.cost_history[0] > 10 * res.cost and res.cost < 0.5
    assert np.all(np.abs(res.tau[:, 0]) <= 20 + 1e-9) and not np.any(res.tau[:, 1])  # bounds, unactuated hinge
    # the trajectory is a rollout of the torques (multiple shooting: up to its defects)
    world = cartpole_world()
    Q, V = world.rollout(res.q[0], res.v[0], res.tau)
    np.testing.assert_allclose(Q, res.q, atol=max(1e-9, 10 * res.constraint_violation))


def test_ilqr_and_multiple_shooting_agree(swing_up_solutions):
    a, b = swing_up_solutions["ilqr"], swing_up_solutions["multiple_shooting"]
    assert a.converged and b.converged, (a.message, b.message)
    assert b.constraint_violation < 1e-8
    assert abs(a.cost - b.cost) < 1e-4 * b.cost
    np.testing.assert_allclose(a.tau, b.tau, atol=0.05 * np.abs(b.tau).max())
    np.testing.assert_allclose(a.q, b.q, atol=1e-2)
    assert swing_up_solutions["shooting"].cost < 1.01 * b.cost
    assert a.feedback.shape == (60, 1, 4) and b.feedback is None


def test_box_qp_matches_enumerated_active_sets():
    rng = np.random.default_rng(0)
    for _ in range(30):
        n = 3
        M = rng.normal(size=(n, n))
        H = M @ M.T + 0.1 * np.eye(n)
        g = rng.normal(size=n) * 3
        lo, hi = -rng.uniform(0.1, 1, n), rng.uniform(0.1, 1, n)
        x, free = box_qp(H, g, lo, hi)
        best = np.inf
        for pattern in itertools.product((0, 1, 2), repeat=n):  # free, at lower, at upper
            y = np.array([0.0, lo[i], hi[i]][0] if p == 0 else (lo[i] if p == 1 else hi[i])
                         for i, p in enumerate(pattern)) if False else np.zeros(n)
            fixed = np.array(pattern) > 0
            y[np.array(pattern) == 1] = lo[np.array(pattern) == 1]
            y[np.array(pattern) == 2] = hi[np.array(pattern) == 2]
            if (~fixed).any():
                F = ~fixed
                y[F] = np.linalg.solve(H[np.ix_(F, F)], -(g[F] + H[np.ix_(F, fixed)] @ y[fixed]))
            if np.all(y >= lo - 1e-12) and np.all(y <= hi + 1e-12):
                best = min(best, 0.5 * y @ H @ y + g @ y)
        assert 0.5 * x @ H @ x + g @ x <= best + 1e-10
        assert np.all(x >= lo) and np.all(x <= hi)
        np.testing.assert_array_equal(free, (x > lo) & (x < hi) | ~(((x <= lo) & (H @ x + g > 0)) |
                                                                    ((x >= hi) & (H @ x + g < 0))))


def _mass_problem(world, T, force, target):
    prob = rd.trajopt.Problem(world, T, [0.0])
    prob.add_state_cost(q_target=[target], q_weight=1.0, final_only=True)
    prob.set_control_bounds(force, force)  # the force is known: only the mass is free
    prob.optimize_parameters(["box/mass"], lower=0.1, upper=100.0)
    return prob


@pytest.mark.parametrize("method", ["shooting", "multiple_shooting"])
def test_parameters_are_optimised_and_the_world_restored(method):
    # semi-implicit Euler from rest under a constant force: x_T = dt^2 F T (T + 1) / (2 m)
    dt, T, F, target = 0.1, 12, 0.1, 0.078
    world = slider_box(mass=0.5, dt=dt)
    options = {"shot_length": 3} if method == "multiple_shooting" else {}
    res = _mass_problem(world, T, F, target).solve(method, max_iters=200, tol=1e-14, verbose=False, **options)
    m_true = dt**2 * F * T * (T + 1) / (2 * target)
    assert abs(res.parameters["box/mass"] - m_true) < 1e-6 * m_true, res
    assert abs(res.q[-1, 0] - target) < 1e-7
    assert world.parameters()["box/mass"] == 0.5


@pytest.mark.parametrize("method", ["shooting", "multiple_shooting"])
def test_initial_velocity_is_optimised(method):
    dt, T = 0.1, 10
    world = slider_box(dt=dt)
    prob = rd.trajopt.Problem(world, T, [0.0], [0.0])
    prob.add_state_cost(q_target=[2.0], final_only=True)
    prob.set_control_bounds(0.0, 0.0)
    prob.optimize_initial_state(q=False, v=True)
    options = {"shot_length": 4} if method == "multiple_shooting" else {}
    res = prob.solve(method, max_iters=100, tol=1e-14, verbose=False, **options)
    assert abs(res.v[0, 0] - 2.0 / (T * dt)) < 1e-6 and abs(res.q[0, 0]) == 0.0


def test_multiple_shooting_keeps_state_bounds(swing_up_solutions):
    free = swing_up_solutions["multiple_shooting"]
    assert np.abs(free.q[:, 0]).max() > 0.9  # without bounds the cart travels further
    prob = swing_up(cartpole_world())
    prob.set_state_bounds(q_lower=[-0.5, -np.inf], q_upper=[0.5, np.inf], v_lower=-6.0, v_upper=6.0)
    res = prob.solve("multiple_shooting", max_iters=400, verbose=False, shot_length=1)
    assert res.converged, res.message
    assert np.abs(res.q[:, 0]).max() <= 0.5 + 1e-6 and np.abs(res.v).max() <= 6.0 + 1e-6
    assert np.abs(res.q[-1]).max() < 0.05 and res.cost > free.cost


def test_saddle_point_escape_lifts_the_ball_only_with_exploration():
    # Nimble's BALL_ON_FIXED_GROUND_TRAJECTORY: 0.1 kg ball resting on the ground, force within +-10 N,
    # 50 steps of 0.01 s, the loss asks for a final height of 5 m
    world = resting_ball_world()
    z0 = resting_height(world)
    results = {}
    for explore in (True, False):
        prob = rd.trajopt.Problem(world, 50, [z0], explore_contact_modes=explore)
        prob.add_state_cost(q_target=[5.0], final_only=True)
        prob.set_control_bounds(-10, 10)
        results[explore] = prob.solve("adam", max_iters=400, learning_rate=0.5, verbose=False)
    lifted, stuck = results[True], results[False]
    assert abs(lifted.q[-1, 0] - 5.0) < 1e-3, lifted
    assert stuck.q[-1, 0] == pytest.approx(z0, abs=1e-9) and stuck.iterations == 1
    assert "gradient vanished" in stuck.message


def test_arm_reaches_a_target_with_ilqr():
    world = rd.World(dt=0.01)
    world.add_skeleton(rd.models.load("arm7"))
    q0 = np.array([0.0, -0.4, 0.0, -2.0, 0.0, 1.6, 0.8])  # bent, within the joint limits
    hand = "hand"
    start = world.body_pose(q0, hand)[:3, 3]
    goal = start + np.array([0.1, -0.15, 0.1])
    prob = rd.trajopt.Problem(world, 40, q0)
    prob.add_body_target(hand, position=goal, weight=1000.0)
    prob.add_state_cost(v_target=np.zeros(world.nv), v_weight=1.0, final_only=True)
    prob.add_control_cost(1e-4, tau_target=world.gravity_forces(q0))
    res = prob.solve("ilqr", max_iters=100, verbose=False)
    assert np.linalg.norm(world.body_pose(res.q[-1], hand)[:3, 3] - goal) < 5e-3


def test_a_horizon_beyond_the_memory_is_refused_before_allocating(monkeypatch):
    # it used to allocate three (T, nv) arrays up front and hang the machine
    world = cartpole_world()
    with pytest.raises(ValueError, match=r"horizon=1000000000000 needs .* GiB.*shorter horizon"):
        rd.trajopt.Problem(world, 10**12, [0, 0])  # 88 TiB: more than any machine has
    monkeypatch.setattr(rd.trajopt.problem, "_available_memory", lambda: 16 * 2**30)
    with pytest.raises(ValueError, match=r"horizon=1000000000 needs at least 89.4 GiB.* of the 16 GiB"):
        rd.trajopt.Problem(world, 10**9, [0, 0])
    assert rd.trajopt.Problem(world, 10**4, [0, 0]).T == 10**4


def test_bad_problems_are_refused_with_a_reason():
    world = cartpole_world()
    with pytest.raises(ValueError, match="horizon"):
        rd.trajopt.Problem(world, 0, [0, 0])
    with pytest.raises(ValueError, match="q0"):
        rd.trajopt.Problem(world, 5, [0, 0, 0])
    prob = rd.trajopt.Problem(world, 5, [0, 0])
    with pytest.raises(ValueError, match="no cost"):
        prob.solve(verbose=False)
    prob.add_control_cost(1.0)
    with pytest.raises(ValueError, match="method"):
        prob.solve("newton", verbose=False)
    with pytest.raises(ValueError, match="max_iters"):
        prob.solve("ilqr", max_iters=-1, verbose=False)
    with pytest.raises(ValueError, match="shot_length"):
        prob.solve("multiple_shooting", shot_length=0, verbose=False)
    with pytest.raises(TypeError, match="no option 'shot_length'"):
        prob.solve("ilqr", shot_length=3, verbose=False)
    with pytest.raises(ValueError, match="lower must be <= upper"):
        prob.set_control_bounds(1.0, -1.0)
    with pytest.raises(ValueError, match="broadcast"):
        prob.set_control_bounds(np.zeros(3), 1.0)
    with pytest.raises(ValueError, match="actuated"):
        prob.set_actuated([7])
    with pytest.raises(IndexError):
        prob.set_actuated(["no_such_joint"])
    with pytest.raises(ValueError, match="did you mean"):
        prob.optimize_parameters(["cart/mas"])
    prob.set_state_bounds(q_lower=[-1, -np.inf])
    for method in ("shooting", "ilqr", "adam"):
        with pytest.raises(ValueError, match="state bounds"):
            prob.solve(method, verbose=False)
    prob = rd.trajopt.Problem(world, 5, [0, 0]).add_control_cost(1.0).optimize_parameters(["cart/mass"])
    with pytest.raises(ValueError, match="iLQR optimises the torques only"):
        prob.solve("ilqr", verbose=False)


def test_more_bad_input_is_refused_with_a_reason():
    world = cartpole_world()
    with pytest.raises(ValueError, match="rigidiff.World"):
        rd.trajopt.Problem(None, 5, [0, 0])
    empty = rd.World()
    empty.add_ground()
    with pytest.raises((ValueError, RuntimeError), match="degrees of freedom|skeleton"):
        rd.trajopt.Problem(empty, 5, [])
    prob = rd.trajopt.Problem(world, 5, [0, 0]).add_control_cost(1.0)
    for bad, match in [(dict(learning_rate=float("nan")), "learning_rate"), (dict(learning_rate=0.0), "learning_rate"),
                       (dict(betas=(1.0, 0.9)), "betas"), (dict(betas="ab"), "betas"), (dict(betas=(0.9,)), "betas")]:
        with pytest.raises(ValueError, match=match):
            prob.solve("adam", verbose=False, **bad)
    with pytest.raises(ValueError, match="\\+inf"):
        prob.set_control_bounds(np.inf, np.inf)
    with pytest.raises(ValueError, match="finite"):
        prob.set_initial_guess(np.full((5, 2), np.inf))
    with pytest.raises(ValueError, match="'pole/mass' has lower bound 2 > upper bound 1"):
        prob.optimize_parameters(["pole/mass"], lower=[2.0], upper=[1.0])
    with pytest.raises(ValueError, match="physical range"):
        prob.optimize_parameters(["pole/mass"], lower=[-5.0], upper=[-1.0])
    with pytest.raises(ValueError, match="learning_rate"):
        rd.mpc.MPC(world, 10, lambda p: None, method="adam", learning_rate=-1.0)
    with pytest.raises(ValueError, match="first_iterations"):
        rd.mpc.MPC(world, 10, lambda p: None, first_iterations=-3)
    with pytest.raises(ValueError, match="rigidiff.World"):
        rd.mpc.MPC(None, 10, lambda p: None)
    world.add_skeleton(rd.models.load("double_pendulum"))
    with pytest.raises(RuntimeError, match="the world changed since this Problem was made"):
        prob.solve("ilqr", verbose=False)


@pytest.mark.parametrize("method", ["shooting", "multiple_shooting", "ilqr", "adam"])
def test_torques_fixed_by_their_bounds_give_the_first_guess(method):
    world = cartpole_world()
    prob = rd.trajopt.Problem(world, 8, [0.0, 0.3]).add_state_cost(q_target=[0.0, 0.0])
    prob.set_control_bounds(0.5, 0.5)
    res = prob.solve(method, verbose=False)
    np.testing.assert_array_equal(res.tau, 0.5)
    Q, _ = world.rollout([0.0, 0.3], np.zeros(2), np.full((8, 2), 0.5))
    np.testing.assert_allclose(res.q, Q, atol=1e-12)


def test_verbose_solves_report_progress_and_quiet_ones_do_not(capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_tqdm(name, *args, **kwargs):  # the plain-text fallback, whether or not tqdm is installed
        if name.startswith("tqdm"):
            raise ImportError("tqdm hidden by the test")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    world = slider_box(dt=0.1)
    prob = rd.trajopt.Problem(world, 10, [0.0]).add_state_cost(q_target=[1.0], final_only=True)
    prob.add_control_cost(1e-3)
    for method in ("ilqr", "shooting", "multiple_shooting"):
        prob.solve(method, verbose=True)
        err = capsys.readouterr().err
        assert f"trajopt {method}: iteration 1, cost" in err and f"trajopt {method}: " in err.splitlines()[-1]
        prob.solve(method, verbose=False)
        assert capsys.readouterr().err == ""
