"""The Cython boundary: array lifetimes, repeated create/destroy, threads and the GIL, batch determinism."""

import gc
import os
import threading
import time
import weakref

import numpy as np
import pytest
from rdsupport import hinge_chain, world_of

import rigidiff as rd


def arm_world(n=7, seed=0):
    """A 7-dof chain with hinge axes cycling through x, y, z."""
    return world_of(hinge_chain(n, seed=seed, axis=[np.roll([1.0, 0.0, 0.0], i) for i in range(n)]))


def floating_world():
    sk = rd.Skeleton("floater")
    base = sk.add_body("base", joint=rd.FreeJoint("root"),
                       inertia=rd.Inertia(3.0, (0.1, 0, 0), np.diag([0.1, 0.2, 0.3])))
    sk.add_body("arm", joint=rd.BallJoint("shoulder", damping=0.1), parent=base, joint_origin=rd.Transform((0, 0, 0.3)),
                inertia=rd.Inertia(1.0, (0, 0, -0.2), np.diag([0.01, 0.01, 0.004])))
    return world_of(sk)


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_returned_arrays_outlive_the_world():
    w = arm_world()
    rng = np.random.default_rng(0)
    q, v = w.random_configuration(rng), rng.normal(size=w.nv)
    outputs = {
        "M": w.mass_matrix(q), "Minv": w.mass_matrix_inverse(q), "poses": w.body_poses(q),
        "J": w.body_jacobian(q, "link3"), "dJ": w.body_jacobian_time_variation(q, v, "link3", "local"),
        "V": w.body_velocities(q, v), "com": w.center_of_mass(q), "Jcom": w.center_of_mass_jacobian(q),
        "tau": w.inverse_dynamics(q, v, v), "a": w.forward_dynamics(q, v, v), "q0": w.neutral_configuration(),
        "integrate": w.integrate(q, v), "difference": w.difference(q, w.neutral_configuration()),
    }
    outputs["step_q"], outputs["step_v"] = w.step(q, v, v)
    outputs["Q"], outputs["V_roll"] = w.rollout(q, v, np.zeros((50, w.nv)))
    outputs["Qb"], outputs["Vb"] = w.step_batch(np.tile(q, (8, 1)), np.tile(v, (8, 1)), np.zeros((8, w.nv)))
    copies = {k: np.array(x, copy=True) for k, x in outputs.items()}
    alive = weakref.ref(w)
    del w
    assert alive() is None  # freed at once (no cycle waits for the collector), so its memory is free now
    # churn the allocator so freed memory would be reused and overwritten; each world goes at its del too
    for _ in range(20):
        other = arm_world(seed=3)
        other.rollout(other.neutral_configuration(), np.ones(other.nv), np.zeros((100, other.nv)))
        junk = [np.full(1000, 7.0) for _ in range(50)]
        alive = weakref.ref(other)
        del other, junk
        assert alive() is None
    for k, x in outputs.items():
        np.testing.assert_array_equal(x, copies[k], err_msg=k)
        x += 1.0  # writable and usable
        np.testing.assert_array_equal(x, copies[k] + 1.0, err_msg=k)


def test_results_do_not_alias_inputs_or_each_other():
    w = arm_world()
    q = w.random_configuration(1)
    v = np.ones(w.nv)
    q_before = q.copy()
    M1 = w.mass_matrix(q)
    M2 = w.mass_matrix(q)
    assert not np.shares_memory(M1, M2)
    M1[:] = 0.0
    np.testing.assert_array_equal(w.mass_matrix(q), M2)  # not a view of an internal buffer
    q1, v1 = w.step(q, v, np.zeros(w.nv))
    assert not np.shares_memory(q1, q) and not np.shares_memory(v1, v)
    np.testing.assert_array_equal(q, q_before)  # inputs are never written to
    n = w.normalize(q)
    assert not np.shares_memory(n, q)


def test_repeated_create_and_destroy_does_not_leak():
    def churn(n):
        for i in range(n):
            w = floating_world() if i % 2 else arm_world(n=2, seed=i)
            q = w.neutral_configuration()
            w.step(q, np.zeros(w.nv), np.zeros(w.nv))
            w.mass_matrix(q)
            del w
        gc.collect()

    churn(200)  # warm up the allocator and the caches
    before = _rss_bytes()
    churn(1000)
    grown = _rss_bytes() - before
    assert grown < 1.5 * 2**20, f"resident memory grew by {grown / 2**20:.1f} MiB over 1000 worlds"


def _batch(w, n, seed):
    """n random states: configurations drawn from a pool of 97 random ones, random velocities and torques."""
    rng = np.random.default_rng(seed)
    pool = np.array([w.random_configuration(rng) for _ in range(97)])
    Q = pool[rng.integers(0, len(pool), n)]
    V = rng.normal(size=(n, w.nv))
    TAU = rng.normal(size=(n, w.nv))
    return Q, V, TAU


@pytest.mark.parametrize("make", [arm_world, floating_world], ids=["arm", "floating"])
def test_step_batch_equals_a_python_loop_and_ignores_the_thread_count(make):
    w = make()
    Q, V, TAU = _batch(w, 501, seed=2)
    loop = [w.step(q, v, t) for q, v, t in zip(Q, V, TAU)]
    Qn_loop = np.array([x[0] for x in loop])
    Vn_loop = np.array([x[1] for x in loop])
    for threads in (1, 2, 3, 8, 1000):
        Qn, Vn = w.step_batch(Q, V, TAU, threads=threads)
        np.testing.assert_array_equal(Qn, Qn_loop, err_msg=f"threads={threads}")
        np.testing.assert_array_equal(Vn, Vn_loop, err_msg=f"threads={threads}")
    Qn, Vn = w.step_batch(Q[:0], V[:0], TAU[:0])
    assert Qn.shape == (0, w.nq) and Vn.shape == (0, w.nv)


def test_two_python_threads_run_big_batches_at_once():
    w = arm_world()
    n = 40_000
    batches = [_batch(w, n, seed=s) for s in (10, 11)]
    expected = [w.step_batch(*b, threads=1) for b in batches]
    # a Python loop over step() gives the same (checked on a slice to keep the test short)
    for (Q, V, TAU), (Qn, Vn) in zip(batches, expected):
        for i in range(0, n, 997):
            q1, v1 = w.step(Q[i], V[i], TAU[i])
            np.testing.assert_array_equal(q1, Qn[i])
            np.testing.assert_array_equal(v1, Vn[i])
    results, errors = [None, None], []

    def run(k):
        try:
            out = None
            for _ in range(3):
                out = w.step_batch(*batches[k], threads=2)
            results[k] = out
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a step_batch thread did not finish"
    assert not errors, errors
    for (Qn, Vn), (Qe, Ve) in zip(results, expected):
        np.testing.assert_array_equal(Qn, Qe)
        np.testing.assert_array_equal(Vn, Ve)


def test_concurrent_single_steps_from_two_threads_are_correct():
    """Single-state calls share one Data per world; concurrent callers must still get exact results."""
    w = floating_world()
    Q, V, TAU = _batch(w, 3000, seed=4)
    expected = [w.step(q, v, t) for q, v, t in zip(Q, V, TAU)]
    mismatches = []

    def run(order):
        for i in order:
            q1, v1 = w.step(Q[i], V[i], TAU[i])
            if not (np.array_equal(q1, expected[i][0]) and np.array_equal(v1, expected[i][1])):
                mismatches.append(i)

    threads = [threading.Thread(target=run, args=(r,)) for r in (range(3000), range(2999, -1, -1))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not mismatches


@pytest.mark.parametrize("make", [arm_world, floating_world], ids=["arm", "floating"])
def test_rollout_equals_a_loop_over_step_bit_for_bit(make):
    w = make()
    rng = np.random.default_rng(6)
    q, v = w.random_configuration(rng), rng.normal(size=w.nv)
    taus = rng.normal(size=(400, w.nv))
    Q, V = w.rollout(q, v, taus)
    assert Q.shape == (401, w.nq) and V.shape == (401, w.nv)
    np.testing.assert_array_equal(Q[0], q)
    np.testing.assert_array_equal(V[0], v)
    for t in range(400):
        q, v = w.step(q, v, taus[t])
        np.testing.assert_array_equal(Q[t + 1], q, err_msg=f"step {t}")
        np.testing.assert_array_equal(V[t + 1], v, err_msg=f"step {t}")
    # advance() is the same rollout on the world's own state
    w.q, w.v = Q[0], V[0]
    w.advance(taus[0], n_steps=1)
    np.testing.assert_array_equal(w.q, w.step(Q[0], V[0], taus[0])[0])


def _max_gap_while(fn):
    """Run fn in a thread; return (max gap between iterations of a Python loop here, duration of fn)."""
    started, done = threading.Event(), threading.Event()
    span, errors = [], []

    def work():
        started.set()
        t0 = time.perf_counter()
        try:
            fn()
        except Exception as exc:  # reported by the caller
            errors.append(exc)
        finally:
            span.append(time.perf_counter() - t0)
            done.set()

    th = threading.Thread(target=work)
    th.start()
    started.wait()
    last, gap = time.perf_counter(), 0.0
    deadline = last + 60.0
    while not done.is_set() and last < deadline:
        now = time.perf_counter()
        gap = max(gap, now - last)
        last = now
        sum(range(200))
    th.join(timeout=60.0)
    assert done.is_set(), "the call did not finish within 60 s"
    assert not errors, errors
    return gap, span[0]


def _call_lasting(make_call, seconds, n=10_000, max_n=10_000_000):
    """A call of make_call(n) sized on this machine: n doubles until one call lasts at least `seconds`, so the
    test proves the same thing on a fast idle machine and on a slow loaded one."""
    while True:
        fn = make_call(n)
        t0 = time.perf_counter()
        fn()
        if time.perf_counter() - t0 >= seconds or n >= max_n:
            return fn
        n *= 2


@pytest.mark.parametrize("call", ["rollout", "step_batch"])
def test_long_calls_release_the_gil(call):
    """While a long rollout / batch runs in one thread, Python code keeps running in another: the longest
    pause of a Python loop is a fraction of the call (holding the GIL would stall it for the whole call).
    The call's length is calibrated first, so that the assertion does not depend on the machine's speed."""
    w = arm_world()
    q = w.neutral_configuration()
    if call == "rollout":
        def make_call(n):
            taus = np.zeros((n, w.nv))  # hanging at rest: stable for any length
            return lambda: w.rollout(q, np.zeros(w.nv), taus)
    else:
        def make_call(n):
            Q, V, TAU = _batch(w, n, seed=1)
            return lambda: w.step_batch(Q, V, TAU, threads=1)
    fn = _call_lasting(make_call, seconds=0.3)
    gap, duration = _max_gap_while(fn)
    assert duration > 0.1, "the call is too short to tell"
    assert gap < 0.5 * duration, f"Python stalled {gap:.3f} s during a {duration:.3f} s call"


def test_rebuild_keeps_old_results_valid():
    sk = hinge_chain(3, seed=1)
    w = world_of(sk)
    M = w.mass_matrix(np.zeros(3))
    saved = M.copy()
    sk.add_body("extra", joint=rd.RevoluteJoint("jx", axis=(1, 0, 0)), parent="link2",
                joint_origin=rd.Transform((0, 0, -0.3)), inertia=rd.Inertia(1.0, (0, 0, -0.1), np.diag([0.01] * 3)))
    w.rebuild()
    assert w.nv == 4 and w.mass_matrix(np.zeros(4)).shape == (4, 4)
    np.testing.assert_array_equal(M, saved)


def _all_results(w, q, v, a):
    out = {
        "id": w.inverse_dynamics(q, v, a), "fd": w.forward_dynamics(q, v, a), "M": w.mass_matrix(q),
        "Minv": w.mass_matrix_inverse(q), "b": w.bias_forces(q, v), "g": w.gravity_forces(q), "P": w.body_poses(q),
        "Vw": w.body_velocities(q, v), "Vl": w.body_velocities(q, v, "local"), "Aw": w.body_accelerations(q, v, a),
        "com": w.center_of_mass(q), "Jcom": w.center_of_mass_jacobian(q), "KE": w.kinetic_energy(q, v),
        "U": w.potential_energy(q), "step": np.concatenate(w.step(q, v, a)),
    }
    for i in range(w.nbodies):
        for frame in ("world", "local"):
            out[f"J{i}{frame}"] = w.body_jacobian(q, i, frame)
            out[f"dJ{i}{frame}"] = w.body_jacobian_time_variation(q, v, i, frame)
    return out


def test_results_do_not_depend_on_the_call_history():
    """Single-state calls reuse one Data: nothing from a previous call (external wrenches, kinematics of
    another state, a failed call) may leak into the next."""
    make = floating_world
    rng = np.random.default_rng(8)
    fresh = make()
    q, v, a = fresh.random_configuration(rng), rng.normal(size=fresh.nv), rng.normal(size=fresh.nv)
    expected = _all_results(fresh, q, v, a)
    w = make()
    q2, v2 = w.random_configuration(rng), rng.normal(size=w.nv)
    F = rng.normal(size=(w.nbodies, 6))
    # a history of other states, with wrenches, and calls that fail half-way
    w.inverse_dynamics(q2, v2, v2, F)
    w.forward_dynamics(q2, v2, v2, F)
    w.step(q2, v2, v2, F)
    w.body_jacobian_time_variation(q2, v2, 1, "local")
    with pytest.raises(ValueError):
        w.step(q2, v2, v2, np.full((w.nbodies, 6), np.nan))
    with pytest.raises(ValueError):
        w.forward_dynamics(np.concatenate([q2[:3], 2 * q2[3:7], q2[7:]]), v2, v2)
    got = _all_results(w, q, v, a)
    for k in expected:
        np.testing.assert_array_equal(got[k], expected[k], err_msg=k)
    # wrenches act only in the call that receives them, for every entry point
    assert not np.array_equal(w.forward_dynamics(q, v, a, F), expected["fd"])
    np.testing.assert_array_equal(w.forward_dynamics(q, v, a), expected["fd"])
    assert not np.array_equal(w.step(q, v, a, F)[1], expected["step"][w.nq:])
    np.testing.assert_array_equal(np.concatenate(w.step(q, v, a)), expected["step"])


def test_empty_rollout_and_batch():
    w = floating_world()
    q, v = w.random_configuration(1), np.ones(w.nv)
    Q, V = w.rollout(q, v, np.zeros((0, w.nv)))
    np.testing.assert_array_equal(Q, q[None])
    np.testing.assert_array_equal(V, v[None])
