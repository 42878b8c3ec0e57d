"""world.warm_start() holds the impulses of the step's rows as well as their classes (docs/contact.md,
"The constraint solve"): the live cache seeds the next solve with both, so a restored one must too, or
the step after set_warm_start differs from the one taken at once (by 6e-10 m/s in a pile of particles)."""

import pickle

import numpy as np
import pytest

import rigidiff as rd


def pile() -> tuple:
    """12 particles of 1 g to 10 kg dropped in a column on the ground, and a state 126 steps later where
    the classes alone seed the solve differently from the classes and impulses."""
    rng = np.random.default_rng(0)
    world = rd.World(dt=2e-3)
    world.add_ground(friction=0.6)
    positions = np.c_[rng.uniform(-0.03, 0.03, (12, 2)), 0.011 + 0.021 * np.arange(12)]
    world.add_particles(positions, masses=10 ** rng.uniform(-3, 1, 12), radius=0.01, friction=rng.uniform(0.2, 0.9, 12))
    Q, V = world.rollout(world.q, world.v, np.zeros((126, world.nv)))
    return world, Q[-1], V[-1]


def test_a_restored_warm_start_solves_the_next_step_as_the_live_one():
    world, q0, v0 = pile()
    tau = np.zeros(world.nv)
    world.clear_warm_start()
    q1, v1 = world.step(q0, v0, tau)
    ws = world.warm_start()
    assert ws._impulses is not None and len(ws._impulses) == len(ws) > 0
    want = world.step(q1, v1, tau)
    world.step(world.q, world.v, tau)  # another step in between
    world.set_warm_start(pickle.loads(pickle.dumps(ws)))
    got = world.step(q1, v1, tau)
    assert np.array_equal(want[0], got[0]) and np.array_equal(want[1], got[1])
    # the impulses matter here: the classes alone give other bits
    world.set_warm_start(rd.WarmStart(ws._keys, ws._classes, ws._state, ws._model))
    classes_only = world.step(q1, v1, tau)
    assert not np.array_equal(want[1], classes_only[1])
    np.testing.assert_allclose(classes_only[1], want[1], rtol=0, atol=1e-8)


def test_warm_starts_compare_their_impulses_and_refuse_bad_ones():
    world, q0, v0 = pile()
    world.step(q0, v0, np.zeros(world.nv))
    ws = world.warm_start()
    assert ws == pickle.loads(pickle.dumps(ws))
    assert ws != rd.WarmStart(ws._keys, ws._classes, ws._state, ws._model, ws._impulses + 1.0)
    with pytest.raises(ValueError, match="one impulse per row key"):
        rd.WarmStart(ws._keys, ws._classes, ws._state, ws._model, ws._impulses[:-1])
    bad = ws._impulses.copy()
    bad[2] = np.nan
    with pytest.raises(ValueError, match=r"warm start impulses\[2\] is not finite"):
        world.set_warm_start(rd.WarmStart(ws._keys, ws._classes, ws._state, ws._model, bad))
