"""iLQR's step Jacobians across the knots on threads (cpp/include/rigidiff/world/knot_team.hpp): solves, MPC
replans and trajectory_jacobians give the same bits whatever the thread count, on solo12 standing on its four
feet (contact warm starts carried from knot to knot) and on the Panda (no contact); the threads did share
the work; bad thread counts are refused by name."""

import warnings

import numpy as np
import pytest
from rdsupport import sliding_box_world
from trajopt_scenes import resting_ball_world, resting_height

import rigidiff as rd
from rigidiff.trajopt.dynamics import trajectory_jacobians
from rigidiff.trajopt.ilqr import solve_ilqr

STANDING = np.array([0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6])
THREADS = (1, 2, 3, 8)


@pytest.fixture(scope="module")
def solo12(robots_dir):
    """solo12 settled on one 16 mm sphere per foot (bench_mpc.py's scene), at 10 ms: (world, q, v, tau)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = rd.load_urdf(robots_dir / "solo_description/robots/solo12.urdf", floating_base=True,
                          package_dirs=[robots_dir])
    for body in sk.bodies:
        body.shapes[:] = [s for s in body.shapes if not s.collide]
    for foot in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"):
        sk.body(foot).add_shape(rd.Sphere(0.016), friction=1.0, visual=False, name=f"{foot}/sole")
    world = rd.World(dt=1e-3)
    world.add_skeleton(sk)
    world.add_ground(friction=1.0)
    q = np.concatenate([[0.0, 0.0, 0.4, 0.0, 0.0, 0.0, 1.0], STANDING])
    while not len(world.collide(q)):
        q[2] -= 1e-3
    q[2] -= world.collide(q).distances.min() + 1e-4
    v = np.zeros(world.nv)
    legs = np.r_[np.zeros(6), np.ones(12)]
    for _ in range(150):
        tau = legs * world.gravity_forces(q)
        tau[6:] += 5.0 * (STANDING - q[7:]) - 0.2 * v[6:]
        q, v = world.step(q, v, tau)
    world.dt = 0.01
    assert len(world.collide(q)) == 4
    return world, q, v, tau


def panda_world(robots_dir, **options):
    """The Panda without geometry at 10 ms, at a bent pose: (world, q, v, gravity torques)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = rd.load_urdf(robots_dir / "panda_description/urdf/panda.urdf", package_dirs=[robots_dir],
                          load_geometry=False)
    world = rd.World(dt=0.01, **options)
    world.add_skeleton(sk)
    q = world.neutral_configuration()
    q[:7] = [0.0, -0.4, 0.0, -2.0, 0.0, 1.6, 0.8]
    return world, q, np.zeros(world.nv), world.gravity_forces(q)


@pytest.fixture(scope="module")
def panda(robots_dir):
    return panda_world(robots_dir)


def stand_setup(world, q0, tau0):
    def setup(prob):
        prob.add_state_cost(q_target=q0, v_target=np.zeros(world.nv), q_weight=1.0, v_weight=1e-2)
        prob.add_control_cost(1e-4, tau_target=tau0)
        prob.set_actuated(list(range(6, world.nv)))
        prob.set_initial_guess(tau0)
    return setup


def reach_setup(world, q0, tau0):
    target = world.body_pose(q0, "panda_hand")[:3, 3] + [0.1, -0.1, 0.1]

    def setup(prob):
        prob.add_body_target("panda_hand", position=target, weight=100.0, time="all")
        prob.add_state_cost(q_target=q0, v_target=np.zeros(world.nv), q_weight=1e-2, v_weight=1e-2)
        prob.add_control_cost(1e-4, tau_target=tau0)
    return setup


def solve(world, q0, v0, setup, threads, T=12, iters=4, guess=None):
    prob = rd.trajopt.Problem(world, T, q0, v0)
    setup(prob)
    if guess is not None:
        prob.set_initial_guess(guess)
    return prob.solve(method="ilqr", max_iters=iters, tol=1e-300, verbose=False, threads=threads)


def assert_identical(a, b):
    for name in ("q", "v", "tau", "feedback"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.cost_history == b.cost_history and a.iterations == b.iterations


@pytest.mark.parametrize("scene", ["solo12", "panda"])
def test_ilqr_solves_are_the_same_bits_on_any_thread_count(scene, request):
    world, q0, v0, tau0 = request.getfixturevalue(scene)
    setup = (stand_setup if scene == "solo12" else reach_setup)(world, q0, tau0)
    # a guess away from the solution: the iterations move the plan, its contacts and their warm starts
    rng = np.random.default_rng(1)
    guess = tau0 + 0.05 * rng.normal(size=(12, world.nv))
    results = {n: solve(world, q0, v0, setup, n, guess=guess) for n in THREADS}
    assert results[1].iterations >= 3 and results[1].cost < 0.9 * results[1].cost_history[0]
    for n in THREADS[1:]:
        assert_identical(results[1], results[n])
    counts = world._core_knot_team_counts()
    assert counts["fallbacks"] == 0 and counts["runs"] > 0


@pytest.mark.parametrize("integrator", ["rk4", "implicit"])
def test_every_integrator_differentiates_its_knots_on_threads_with_the_same_bits(robots_dir, integrator):
    # the helpers' steps end where the stepper's do (else the sequential loop would run again: a fallback)
    world, q0, v0, tau0 = panda_world(robots_dir, integrator=integrator)
    setup = reach_setup(world, q0, tau0)
    results = {n: solve(world, q0, v0, setup, n, T=40, iters=3) for n in (1, 2)}
    assert_identical(results[1], results[2])
    assert world._core_knot_team_counts()["fallbacks"] == 0


def test_the_helpers_differentiate_knots_and_restore_the_contact_warm_starts():
    # a box sliding and turning to rest on four corners (mu 0.8): along the way its friction problem has
    # several solutions, where a warm-started step keeps its predecessor's contact mode and a cold one picks
    # another (tests/world/test_warm_start_cache.py), so each knot needs the sequential loop's warm start
    world, q0, v0 = sliding_box_world(mu=0.8)
    T = 400
    TAU = np.zeros((T, 6))
    Q, V = world.rollout(q0, v0, TAU)
    ref = trajectory_jacobians(world, Q, V, TAU, threads=1)
    cold = world.step_jacobians_batch(Q[:T], V[:T], TAU, threads=1)  # every item solves cold
    assert not np.array_equal(ref[0], cold.A) and not np.array_equal(ref[1][:, 6:], cold.B[:, 6:])
    before = world._core_knot_team_counts() or {"helper_knots": 0}
    for _ in range(50):  # on a busy machine a helper may join late: the stepper then takes the knots
        for n in (2, 3):
            A, B = trajectory_jacobians(world, Q, V, TAU, threads=n)
            assert np.array_equal(A, ref[0]) and np.array_equal(B, ref[1])
        counts = world._core_knot_team_counts()
        if counts["helper_knots"] > before["helper_knots"]:
            break
    assert counts["helper_knots"] > before["helper_knots"] and counts["fallbacks"] == 0
    # and iLQR through the same slide: the rollouts carry the warm starts knot to knot
    results = []
    for n in THREADS:
        prob = rd.trajopt.Problem(world, 150, q0, v0)
        prob.add_state_cost(q_target=q0, v_target=np.zeros(6), q_weight=1.0, v_weight=0.1, final_only=True)
        prob.add_control_cost(1e-2)
        results.append(prob.solve(method="ilqr", max_iters=3, tol=1e-300, verbose=False, threads=n))
    for r in results[1:]:
        assert_identical(results[0], r)


def closed_loop(world, q, v, setup, threads, replans=6):
    mpc = rd.mpc.MPC(world, horizon=10, setup=setup, iterations=1, first_iterations=5, rebuild=False,
                     threads=threads)
    taus, plans = [], []
    for i in range(replans):
        tau = mpc(q, v)
        taus.append(tau)
        plans.append(mpc.plan.copy())
        q, v = world.step(q, v, tau + (0.3 if i == 2 else 0.0))  # a push on every joint
    return np.array(taus), np.array(plans), mpc


@pytest.mark.parametrize("scene", ["solo12", "panda"])
def test_mpc_closed_loops_are_the_same_bits_on_any_thread_count(scene, request):
    world, q0, v0, tau0 = request.getfixturevalue(scene)
    setup = (stand_setup if scene == "solo12" else reach_setup)(world, q0, tau0)
    ref_taus, ref_plans, ref = closed_loop(world, q0, v0, setup, 1)
    assert ref.threads == 1
    for n in (2, 3):
        taus, plans, mpc = closed_loop(world, q0, v0, setup, n)
        assert mpc.threads == n
        assert np.array_equal(taus, ref_taus) and np.array_equal(plans, ref_plans)
        assert np.array_equal(mpc.last_result.feedback, ref.last_result.feedback)
    assert np.abs(np.diff(ref_taus, axis=0)).max() > 1e-6  # the plans did change from replan to replan


def test_a_rollout_that_throws_on_threads_fails_as_on_one():
    world = resting_ball_world()  # a contact step throws when its state is not finite
    for threads in (1, 2):
        prob = rd.trajopt.Problem(world, 6, q0=[resting_height(world)])
        prob.add_control_cost(1.0)
        prob.set_initial_guess([1e308])
        with pytest.raises(RuntimeError, match="initial guess failed"):
            prob.solve(method="ilqr", verbose=False, threads=threads)
    assert world._core_knot_team_counts()["fallbacks"] == 1  # the sequential loop decided, as it does on one


def cartpole():
    world = rd.World(dt=0.05)
    world.add_skeleton(rd.models.load("cartpole"))
    return world


def effort(prob):
    prob.add_control_cost(1.0)


@pytest.mark.parametrize("bad", [0, -2, 1.5, "2", True, 5000])
def test_bad_thread_counts_are_refused_by_name(bad):
    world, setup = cartpole(), effort
    with pytest.raises(ValueError, match="threads"):
        rd.mpc.MPC(world, horizon=5, setup=setup, threads=bad)
    prob = rd.trajopt.Problem(world, 5, q0=[0.0, 0.1])
    setup(prob)
    with pytest.raises(ValueError, match="threads"):
        prob.solve(method="ilqr", verbose=False, threads=bad)
    with pytest.raises(ValueError, match="threads"):
        trajectory_jacobians(world, np.zeros((6, 2)), np.zeros((6, 2)), np.zeros((5, 2)), threads=bad)
    with pytest.raises(ValueError, match="threads"):
        solve_ilqr(prob, 1, 0.0, False, threads=bad)


def test_threads_belong_to_ilqr_and_none_reads_the_environment(monkeypatch):
    world, setup = cartpole(), effort
    with pytest.raises(ValueError, match="threads is an option of method 'ilqr' only"):
        rd.mpc.MPC(world, horizon=5, setup=setup, method="shooting", threads=2)
    prob = rd.trajopt.Problem(world, 5, q0=[0.0, 0.1])
    setup(prob)
    with pytest.raises(TypeError, match="threads"):
        prob.solve(method="shooting", threads=2)
    assert rd.mpc.MPC(world, horizon=5, setup=setup, method="shooting").threads is None
    monkeypatch.setenv("RIGIDIFF_THREADS", "3")
    assert rd.mpc.MPC(world, horizon=5, setup=setup).threads == 3
    monkeypatch.setenv("RIGIDIFF_THREADS", "none")
    with pytest.raises(ValueError, match="RIGIDIFF_THREADS"):
        rd.mpc.MPC(world, horizon=5, setup=setup)
