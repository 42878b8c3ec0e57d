"""Batches on threads: step_batch, rollout_batch and step_jacobians_batch give, bit for bit, the single
calls' results whatever the thread count, and refuse bad thread counts and shapes."""

import numpy as np
import pytest

import rigidiff as rd

THREADS = (1, 2, 3, 5)
JACOBIANS = ("q_next", "v_next", "dq_dq", "dq_dv", "dq_dtau", "dv_dq", "dv_dv", "dv_dtau")


def quadruped(seed=0, n=24):
    """The quadruped over the ground at n unrelated states: no foot, some or all of them touching."""
    world = rd.World()
    world.add_skeleton(rd.models.load("quadruped"))
    world.add_ground()
    world.contact_options(max_penetration=1.0)  # random legs reach deep into the ground: no warning
    rng = np.random.default_rng(seed)
    Q = np.array([world.random_configuration(rng) for _ in range(n)])
    Q[:, :7] = world.neutral_configuration()[:7]
    Q[:, 2] = rng.uniform(0.1, 0.5, n)
    V = 0.5 * rng.normal(size=(n, world.nv))
    TAU = 5.0 * rng.normal(size=(n, world.nv))
    TAU[:, :6] = 0.0
    return world, Q, V, TAU


def box_pile(n=13):
    """Boxes dropped onto each other in one column and a row beside it: several bodies per island."""
    world = rd.World()
    world.add_ground(friction=0.6)
    q = []
    for i in range(n):
        sk = rd.Skeleton(f"box{i}")
        shape = rd.Box((0.2, 0.2, 0.2))
        sk.add_body(f"box{i}", joint=rd.FreeJoint(f"free{i}"),
                    inertia=rd.Inertia.from_shape(shape, mass=1.0)).add_shape(shape, friction=0.6)
        world.add_skeleton(sk)
        x, z = (0.0, 0.1 + 0.201 * i) if i < n // 2 else (0.25 * (i - n // 2 + 1), 0.1)
        q += [x, 0.0, z, 0.0, 0.0, 0.0, 1.0]
    q, v = np.array(q), np.zeros(world.nv)
    Q, V = world.rollout(q, v, np.zeros((150, world.nv)))
    rng = np.random.default_rng(3)
    pick = rng.choice(np.arange(20, 151), size=10, replace=False)
    return world, Q[pick], V[pick] + 0.01 * rng.normal(size=(10, world.nv)), np.zeros((10, world.nv))


def arm(integrator="semi_implicit", n=17, seed=1):
    """arm7 without contacts (plain or RK4 step) at n random states."""
    world = rd.World(integrator=integrator)
    world.add_skeleton(rd.models.load("arm7"))
    rng = np.random.default_rng(seed)
    Q = np.array([world.random_configuration(rng) for _ in range(n)])
    return world, Q, rng.normal(size=(n, world.nv)), 3.0 * rng.normal(size=(n, world.nv))


SCENES = {"quadruped": quadruped, "box_pile": box_pile, "arm": arm, "arm_rk4": lambda: arm("rk4")}


@pytest.fixture(scope="module", params=list(SCENES))
def scene(request):
    return SCENES[request.param]()


def test_step_batch_is_the_same_for_every_thread_count_and_equals_a_loop_of_step(scene):
    world, Q, V, TAU = scene
    loop = [world.step(Q[i], V[i], TAU[i]) for i in range(len(Q))]
    for threads in THREADS:
        Qn, Vn = world.step_batch(Q, V, TAU, threads=threads)
        for i, (q, v) in enumerate(loop):
            assert np.array_equal(Qn[i], q) and np.array_equal(Vn[i], v), f"threads={threads}, row {i}"


def test_rollout_batch_is_the_same_for_every_thread_count_and_equals_a_loop_of_rollout(scene):
    world, Q, V, TAU = scene
    T = 12
    taus = np.stack([np.tile(tau, (T, 1)) * np.linspace(1.0, 0.5, T)[:, None] for tau in TAU])
    loop = [world.rollout(Q[i], V[i], taus[i]) for i in range(len(Q))]
    for threads in THREADS:
        QB, VB = world.rollout_batch(Q, V, taus, threads=threads)
        assert QB.shape == (len(Q), T + 1, world.nq) and VB.shape == (len(Q), T + 1, world.nv)
        for i, (Qi, Vi) in enumerate(loop):
            assert np.array_equal(QB[i], Qi) and np.array_equal(VB[i], Vi), f"threads={threads}, rollout {i}"


def test_rollout_batch_with_shared_torques_equals_the_torques_repeated():
    world, Q, V, TAU = quadruped(n=6)
    taus = np.tile(TAU[0], (8, 1))
    shared = world.rollout_batch(Q, V, taus, threads=2)
    repeated = world.rollout_batch(Q, V, np.broadcast_to(taus, (6, 8, world.nv)), threads=3)
    assert np.array_equal(shared[0], repeated[0]) and np.array_equal(shared[1], repeated[1])
    assert np.array_equal(shared[0][:, 0], Q) and np.array_equal(shared[1][:, 0], V)


def test_step_jacobians_batch_is_the_same_for_every_thread_count_and_equals_a_loop(scene):
    world, Q, V, TAU = scene
    loop = []
    for i in range(len(Q)):
        world.clear_warm_start()  # the batch solves every row cold
        loop.append(world.step_jacobians(Q[i], V[i], TAU[i]))
    nv = world.nv
    for threads in THREADS:
        batch = world.step_jacobians_batch(Q, V, TAU, threads=threads)
        assert batch.A.shape == (len(Q), 2 * nv, 2 * nv) and batch.B.shape == (len(Q), 2 * nv, nv)
        assert batch.contacts is None
        for i, single in enumerate(loop):
            for name in JACOBIANS:
                assert np.array_equal(getattr(batch, name)[i], getattr(single, name)), \
                    f"threads={threads}, row {i}, {name}"
            assert np.array_equal(batch.A[i], single.A) and np.array_equal(batch.B[i], single.B)


def test_step_jacobians_batch_against_finite_differences():
    # the rows are the single calls' (above), which tests/world/test_step_jacobians.py checks in depth;
    # this checks the batch's layout: the torque and velocity columns of each row against its own step
    world, Q, V, TAU = arm(n=3)
    batch = world.step_jacobians_batch(Q, V, TAU, threads=2)
    h = 1e-6
    for i in range(3):
        for k in range(world.nv):
            e = np.zeros(world.nv)
            e[k] = h
            qp, vp = world.step(Q[i], V[i], TAU[i] + e)
            qm, vm = world.step(Q[i], V[i], TAU[i] - e)
            np.testing.assert_allclose(batch.dv_dtau[i][:, k], (vp - vm) / (2 * h), rtol=1e-5, atol=1e-7)
            qp, vp = world.step(Q[i], V[i] + e, TAU[i])
            qm, vm = world.step(Q[i], V[i] - e, TAU[i])
            np.testing.assert_allclose(batch.dv_dv[i][:, k], (vp - vm) / (2 * h), rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(batch.dq_dv[i][:, k], world.difference(qm, qp) / (2 * h), rtol=1e-5,
                                       atol=1e-7)


def test_empty_batches():
    world, Q, V, TAU = arm(n=2)
    Qn, Vn = world.step_batch(Q[:0], V[:0], TAU[:0])
    assert Qn.shape == (0, world.nq) and Vn.shape == (0, world.nv)
    QB, VB = world.rollout_batch(Q[:0], V[:0], np.zeros((0, 5, world.nv)))
    assert QB.shape == (0, 6, world.nq) and VB.shape == (0, 6, world.nv)
    QB, VB = world.rollout_batch(Q, V, np.zeros((0, world.nv)), threads=2)  # no steps: the initial states
    assert np.array_equal(QB[:, 0], Q) and QB.shape == (2, 1, world.nq)
    assert world.step_jacobians_batch(Q[:0], V[:0], TAU[:0]).dq_dq.shape == (0, world.nv, world.nv)


@pytest.mark.parametrize("threads", [0, -1, 4097, 1.5, True, "2", np.float64(2.0)])
def test_bad_thread_counts_are_refused(threads):
    world, Q, V, TAU = arm(n=2)
    calls = (lambda: world.step_batch(Q, V, TAU, threads=threads),
             lambda: world.rollout_batch(Q, V, TAU[:, None], threads=threads),
             lambda: world.step_jacobians_batch(Q, V, TAU, threads=threads))
    for call in calls:
        with pytest.raises(ValueError, match="threads"):
            call()


def test_numpy_integer_thread_counts_are_accepted():
    world, Q, V, TAU = arm(n=2)
    Qn, _ = world.step_batch(Q, V, TAU, threads=np.int64(2))
    assert np.array_equal(Qn, world.step_batch(Q, V, TAU, threads=1)[0])


def test_wrong_shapes_name_the_argument():
    world, Q, V, TAU = arm(n=4)
    nq, nv = world.nq, world.nv
    with pytest.raises(ValueError, match="qs"):
        world.step_jacobians_batch(Q[:, :-1], V, TAU)
    with pytest.raises(ValueError, match="vs"):
        world.step_jacobians_batch(Q, V[:3], TAU)
    with pytest.raises(ValueError, match="taus"):
        world.step_jacobians_batch(Q, V, TAU[:, :-1])
    with pytest.raises(ValueError, match="q0s"):
        world.rollout_batch(Q[0], V, np.zeros((5, nv)))
    with pytest.raises(ValueError, match="v0s"):
        world.rollout_batch(Q, np.zeros((4, nv + 1)), np.zeros((5, nv)))
    for taus in (np.zeros((3, 5, nv)), np.zeros((4, 5, nv + 1)), np.zeros((5, nq + 1)), np.zeros(nv),
                 np.zeros((1, 4, 5, nv))):
        with pytest.raises(ValueError, match="taus"):
            world.rollout_batch(Q, V, taus)


def test_non_finite_rows_are_refused_naming_the_first_one():
    world, Q, V, TAU = quadruped(n=8)
    V = V.copy()
    V[3, 0] = V[6, 1] = np.nan
    with pytest.raises(ValueError, match=r"V\[3\]"):
        world.step_jacobians_batch(Q, V, TAU, threads=3)
    with pytest.raises(ValueError, match=r"V\[3\]"):
        world.rollout_batch(Q, V, np.zeros((4, world.nv)), threads=3)
    taus = np.zeros((8, 4, world.nv))
    taus[5, 2, 0] = np.inf
    with pytest.raises(ValueError, match="taus"):
        world.rollout_batch(Q, np.zeros_like(V), taus, threads=2)


def test_rk4_batches_refuse_a_world_with_contacts():
    world, Q, V, TAU = quadruped(n=2)
    world.integrator = "rk4"
    with pytest.raises(ValueError, match="rk4"):
        world.rollout_batch(Q, V, np.zeros((3, world.nv)))
    with pytest.raises(ValueError, match="rk4"):
        world.step_jacobians_batch(Q, V, TAU)


def test_a_failing_item_is_named_the_same_whatever_the_thread_count():
    world, Q, V, TAU = quadruped(n=9)
    V = np.zeros_like(V)
    V[4] = V[7] = 1e200  # finite, but the step diverges
    for threads in THREADS:
        for call in (lambda: world.step_batch(Q, V, TAU, threads=threads),
                     lambda: world.step_jacobians_batch(Q, V, TAU, threads=threads),
                     lambda: world.rollout_batch(Q, V, TAU[:, None], threads=threads)):
            with pytest.raises(RuntimeError, match=r"^batch item 4: the step diverged"):
                call()
    Qn, _ = world.step_batch(Q[:4], V[:4], TAU[:4], threads=2)  # the world still steps
    assert np.isfinite(Qn).all()
