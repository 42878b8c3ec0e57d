"""The contact warm start as a value: world.warm_start() takes it, world.set_warm_start(ws) restores it,
world.clear_warm_start() empties it. The scene is a box sliding and turning to rest on four corners with
mu = 0.8 (rdsupport.sliding_box_world): along its slide it reaches states whose friction problem has
several solutions, where the warm-started step keeps its predecessor's contact mode and a cold one
picks another, with velocities about 3e-3 m/s apart."""

import copy
import pickle

import numpy as np
import pytest
from rdsupport import sliding_box_world

import rigidiff as rd

TAU = np.zeros(6)


def degenerate_chain():
    """(world, chain, k): world has just stepped along its own chain of states chain[0..k] (a list of
    (q, v)), and the step from chain[k] solves differently warm and cold."""
    world, q, v = sliding_box_world(mu=0.8)
    cold, _, _ = sliding_box_world(mu=0.8)
    cold.contact_options(warm_start=False)
    chain = [(q, v)]
    for _ in range(400):
        world_before = world.warm_start()
        qn, vn = world.step(q, v, TAU)
        warm_classes = world.last_contacts().row_classes
        cold.step(q, v, TAU)
        if cold.last_contacts().row_classes != warm_classes:
            world.set_warm_start(world_before)  # as if the step from chain[-1] had not been taken yet
            return world, chain, len(chain) - 1
        q, v = qn, vn
        chain.append((q, v))
    pytest.fail("no state where the warm start changes the contact mode")


def unrelated_calls(world, chain):
    """Steps, Jacobians, a rollout and a batch from elsewhere: each changes or bypasses the cache."""
    q, v = chain[0]
    for _ in range(5):
        q, v = world.step(q, v, 2.0 * TAU + 0.1)
    world.step_jacobians(*chain[len(chain) // 2], TAU)
    world.rollout(*chain[1], np.zeros((10, 6)))
    world.step_batch(np.array([chain[2][0]]), np.array([chain[2][1]]), np.array([TAU]), threads=1)


def step_record(world, q, v):
    qn, vn = world.step(q, v, TAU)
    c = world.last_contacts()
    return qn, vn, c.row_classes, c.solver, c.normal_impulses.copy(), c.friction_impulses.copy()


def assert_same_step(a, b):
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert a[2] == b[2] and a[3] == b[3]
    np.testing.assert_array_equal(a[4], b[4])
    np.testing.assert_array_equal(a[5], b[5])


def test_a_restored_warm_start_reproduces_the_step_bit_for_bit():
    world, chain, k = degenerate_chain()
    ws = world.warm_start()
    warm = step_record(world, *chain[k])
    assert warm[3] == "warm_start"
    unrelated_calls(world, chain)
    world.set_warm_start(ws)
    assert_same_step(step_record(world, *chain[k]), warm)
    # and along the chain: every step after a restore equals the step taken right after the warm start
    for j in (1, k // 2, k - 1):
        world.set_warm_start(ws)
        world.step(*chain[j - 1], TAU)  # the step that leaves chain[j]'s warm start
        ws_j = world.warm_start()
        expected = step_record(world, *chain[j])
        unrelated_calls(world, chain)
        world.set_warm_start(ws_j)
        assert_same_step(step_record(world, *chain[j]), expected)


def test_the_warm_start_changes_the_answer_and_restoring_it_brings_it_back():
    world, chain, k = degenerate_chain()
    ws = world.warm_start()
    warm = step_record(world, *chain[k])
    cold_world, _, _ = sliding_box_world(mu=0.8)
    cold = step_record(cold_world, *chain[k])
    assert cold[2] != warm[2]  # another contact mode ...
    assert np.abs(cold[1] - warm[1]).max() > 1e-4  # ... and another velocity (about 3e-3 m/s here)
    unrelated_calls(world, chain)
    assert_same_step(step_record(world, *chain[k]), cold)  # without the cache: cold
    world.set_warm_start(ws)
    assert_same_step(step_record(world, *chain[k]), warm)
    # the Jacobians follow the restored mode too
    world.set_warm_start(ws)
    jac = world.step_jacobians(*chain[k], TAU)
    assert jac.contacts.row_classes == warm[2]
    np.testing.assert_array_equal(jac.v_next, warm[1])


def test_clear_warm_start_makes_the_next_step_cold():
    world, chain, k = degenerate_chain()
    cold_world, _, _ = sliding_box_world(mu=0.8)
    cold = step_record(cold_world, *chain[k])
    world.clear_warm_start()
    after_clear = step_record(world, *chain[k])
    assert after_clear[3] != "warm_start"
    assert_same_step(after_clear, cold)
    empty = rd.World()
    empty.clear_warm_start()  # nothing compiled yet: nothing to clear, no error


def test_taking_a_warm_start_leaves_the_chain_warm():
    world, q, v = sliding_box_world(mu=0.8)
    q, v = world.step(q, v, TAU)
    world.warm_start()
    world.step(q, v, TAU)
    assert world.last_contacts().solver == "warm_start"


def test_a_warm_start_pickles_copies_and_moves_to_a_world_with_the_same_model():
    world, chain, k = degenerate_chain()
    ws = world.warm_start()
    warm = step_record(world, *chain[k])
    for other in (pickle.loads(pickle.dumps(ws)), copy.copy(ws), copy.deepcopy(ws)):
        assert other == ws and other is not ws and len(other) == len(ws) > 0
        unrelated_calls(world, chain)
        world.set_warm_start(other)
        assert_same_step(step_record(world, *chain[k]), warm)
    twin = world._copy()
    twin.set_warm_start(pickle.loads(pickle.dumps(ws)))
    assert_same_step(step_record(twin, *chain[k]), warm)
    fresh, _, _ = sliding_box_world(mu=0.8)  # built the same way
    fresh.set_warm_start(ws)
    assert_same_step(step_record(fresh, *chain[k]), warm)
    assert ws != world.warm_start()  # the world's cache has moved on since
    assert ws != "a warm start"


def test_a_warm_start_is_immutable_and_an_empty_one_is_cold():
    world, chain, k = degenerate_chain()
    ws = world.warm_start()
    with pytest.raises(ValueError):
        ws._keys[0] = 1
    with pytest.raises(ValueError):
        ws._classes[0] = 0
    with pytest.raises(TypeError):
        hash(ws)
    new_world, _, _ = sliding_box_world(mu=0.8)
    empty = new_world.warm_start()
    assert len(empty) == 0 and "no step" in repr(empty)
    world.set_warm_start(empty)
    cold = step_record(sliding_box_world(mu=0.8)[0], *chain[k])
    assert_same_step(step_record(world, *chain[k]), cold)


def test_set_warm_start_rejects_bad_input():
    world, chain, k = degenerate_chain()
    ws = world.warm_start()
    for bad in (None, {"keys": []}, (ws._keys, ws._classes), "ws"):
        with pytest.raises(ValueError, match="expects a rigidiff.WarmStart"):
            world.set_warm_start(bad)
    other, _, _ = sliding_box_world(mu=0.8)
    sk = rd.Skeleton("pendulum")
    sk.add_body("link", joint=rd.RevoluteJoint("hinge", axis=(0, 1, 0)), inertia=rd.Inertia(1.0))
    other.add_skeleton(sk)
    with pytest.raises(ValueError, match="different model"):
        other.set_warm_start(ws)
    with pytest.raises(ValueError, match="different model"):
        world.set_warm_start(other.warm_start())
    pendulum = rd.World()
    pendulum.add_skeleton(copy.deepcopy(sk))
    with pytest.raises(ValueError, match="different model"):
        pendulum.set_warm_start(ws)
    # a forged cache: wrong classes or sizes are refused by the core, the world's cache is unchanged
    forged = rd.WarmStart(ws._keys, np.full(len(ws), 7), ws._state, ws._model)
    with pytest.raises(ValueError, match="class"):
        world.set_warm_start(forged)
    with pytest.raises(ValueError, match="one class per row key"):
        rd.WarmStart(ws._keys, ws._classes[:-1], ws._state, ws._model)
    with pytest.raises(ValueError, match="warm start state"):
        world.set_warm_start(rd.WarmStart(ws._keys, ws._classes, ws._state[:-1], ws._model))
    world.set_warm_start(ws)
    warm = step_record(world, *chain[k])
    assert warm[3] == "warm_start"


def test_gradient_checks_leave_the_warm_start_as_they_found_it():
    """rigidiff.testing restores the cache: its unperturbed step is the warm one the chain would take,
    and the chain continues warm after the check."""
    import rigidiff.testing as rdt

    world, chain, k = degenerate_chain()
    ws = world.warm_start()
    warm = step_record(world, *chain[k])
    world.set_warm_start(ws)
    fd = rdt.finite_difference_jacobians(world, *chain[k], TAU)
    np.testing.assert_array_equal(fd.v_next, warm[1])
    assert world.warm_start() == ws
    rdt.check_jacobians(world, *chain[k], TAU, wrt="tau")
    assert world.warm_start() == ws
    assert_same_step(step_record(world, *chain[k]), warm)
