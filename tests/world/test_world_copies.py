"""Worlds and copies. An lcp World pickles and copies: the copy is compiled again from copies of its skeletons
and particle sets with the same settings, contact options, state, time and warm start, and steps bit for bit
as the original. Barrier and projective worlds refuse with a TypeError that names the world and says what to
do instead (the default protocols raised Cython's 'no default __reduce__ due to non-trivial __cinit__')."""

import copy
import pickle

import numpy as np
import pytest

import rigidiff as rd


@pytest.mark.parametrize("solver, name", [("barrier", "BarrierWorld"), ("projective", "ProjectiveWorld")])
@pytest.mark.parametrize("operation, verb", [(pickle.dumps, "pickled"), (copy.copy, "copied"),
                                             (copy.deepcopy, "copied")])
def test_a_barrier_or_projective_world_refuses_with_advice(solver, name, operation, verb):
    world = rd.World(solver=solver)
    with pytest.raises(TypeError, match=f"a {name} cannot be {verb}.*build the world again"):
        operation(world)


def _quadruped_and_particles():
    world = rd.World(dt=2e-3, gravity=(0.0, 0.5, -9.0), gyroscopic="explicit")
    world.add_skeleton(rd.models.load("quadruped"))
    world.add_ground(friction=0.7)
    world.add_particles(np.array([[0.6, 0.0, 0.05], [0.6, 0.1, 0.05]]), radius=0.05, masses=0.2)
    world.contact_options(max_penetration=0.5)
    q = world.neutral_configuration()
    q[2] = 0.33
    return world, q


@pytest.mark.parametrize("operation", [lambda w: pickle.loads(pickle.dumps(w)), copy.copy, copy.deepcopy])
def test_a_copied_world_steps_bit_for_bit_as_the_original(operation):
    world, q = _quadruped_and_particles()
    v, tau = np.zeros(world.nv), np.zeros(world.nv)
    for _ in range(30):  # feet and particles on the ground: the warm start holds their impulses
        q, v = world.step(q, v, tau)
    world.q, world.v, world.time = q, v, 0.06
    twin = operation(world)
    assert twin is not world and twin.nq == world.nq and twin.time == 0.06
    np.testing.assert_array_equal(twin.q, world.q)
    assert twin.contact_options() == world.contact_options()
    np.testing.assert_array_equal(twin.gravity, world.gravity)
    assert (twin.dt, twin.gyroscopic) == (world.dt, "explicit")
    for _ in range(5):  # the warm start came along: the chain continues exactly
        q_a, v_a = world.step(q, v, tau)
        q_b, v_b = twin.step(q, v, tau)
        np.testing.assert_array_equal(q_a, q_b)
        np.testing.assert_array_equal(v_a, v_b)
        assert world.last_contacts().solver == twin.last_contacts().solver == "warm_start"
        q, v = q_a, v_a
    # independent: new parameters in the copy leave the original as it was
    p = twin.parameters().values
    twin.set_parameters(p * 1.1)
    np.testing.assert_array_equal(world.parameters().values, p)
    assert not np.array_equal(twin.parameters().values, p)


def test_an_empty_world_pickles():
    twin = pickle.loads(pickle.dumps(rd.World(dt=5e-3)))
    assert twin.dt == 5e-3
