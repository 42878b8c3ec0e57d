"""Particles on robots loaded from URDF (docs/particles.md): a pile dropped on a floating quadruped's
collision meshes and on the ground keeps every function of the world exact, and parameter changes or
rollouts that no longer fit the world are refused with a message."""

import numpy as np
import pytest

import rigidiff as rd


def test_a_particle_mass_cannot_be_set_to_zero():
    world = rd.World()
    world.add_ground()
    world.add_particles([[0.0, 0.0, 0.1], [0.1, 0.0, 0.1]], masses=[0.1, 1.0], radius=0.01, name="sand")
    world.add_particles([[0.0, 1.0, 0.1]], name="dust")
    with pytest.raises(ValueError, match=r"parameter 'sand/p0/mass': a particle's mass must be > 0 \(particle set "
                                         r"'sand'\), got 0.0"):
        world.set_parameters({"sand/p0/mass": 0.0})
    with pytest.raises(ValueError, match="'dust/p0/mass'.*particle set 'dust'"):
        world.set_parameters(np.where(np.array(world.parameters().names) == "dust/p0/mass", 0.0,
                                      world.parameters().values))
    np.testing.assert_array_equal(world.particle_sets[0].masses, [0.1, 1.0])
    world.step(world.q, world.v, np.zeros(world.nv))  # still steps: nothing was changed


def test_a_rollout_recorded_before_particles_were_added_is_refused():
    world = rd.World()
    world.add_ground()
    world.add_particles([[0.0, 0.0, 0.1]], radius=0.01)
    traj = world.rollout(world.q, world.v, np.zeros((5, world.nv)), record=True)
    world.add_particles([[0.5, 0.0, 0.1]], name="more")
    with pytest.raises(RuntimeError, match=r"the world changed since the rollout was recorded: its state has nq=6, "
                                           r"nv=6 .*the rollout's nq=3, nv=3; record it again"):
        traj.backward(None, np.zeros((6, 6)))
