"""Worlds hold compiled state: pickling and copying them raise a TypeError that names the world and says what
to do instead (the default protocols raised Cython's 'no default __reduce__ due to non-trivial __cinit__')."""

import copy
import pickle

import pytest

import rigidiff as rd


@pytest.mark.parametrize("solver, name", [("lcp", "World"), ("barrier", "BarrierWorld"),
                                          ("projective", "ProjectiveWorld")])
@pytest.mark.parametrize("operation, verb", [(pickle.dumps, "pickled"), (copy.copy, "copied"),
                                             (copy.deepcopy, "copied")])
def test_a_world_refuses_pickling_and_copying_with_advice(solver, name, operation, verb):
    world = rd.World(solver=solver)
    with pytest.raises(TypeError, match=f"a {name} cannot be {verb}.*build the world again"):
        operation(world)


def test_the_lcp_world_points_to_its_batch_methods():
    world = rd.World()
    world.add_ground()
    with pytest.raises(TypeError, match="step_batch"):
        pickle.dumps(world)
    sk = rd.models.load("cartpole")  # what a world is built from still pickles
    assert pickle.loads(pickle.dumps(sk)).name == sk.name
