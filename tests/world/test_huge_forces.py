"""Forces far beyond any physical scale (1e150 to 1e300 N) on a box resting on the ground: the contacts are
still found (the speculative reach is capped at the longest collision length, 1e12 m, where past about
1e154 m it overflowed the narrow phase and lost every contact: the box fell through the ground) and
solved, so the ground pushes back with the whole impulse and the box keeps no more velocity than the
round-off of its free velocity."""

import numpy as np
import pytest

import rigidiff as rd


def box_on_ground():
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.5)
    sk = rd.Skeleton("box")
    shape = rd.Box((0.2, 0.2, 0.2))
    sk.add_body("box", joint=rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(shape, mass=1.0)).add_shape(shape)
    world.add_skeleton(sk)
    q = world.neutral_configuration()
    q[2] = 0.1
    return world, q


@pytest.mark.parametrize("force", [1e10, 1e150, 1e200, 1e300])
def test_the_ground_holds_a_box_pushed_down_by_any_finite_force(force):
    world, q = box_on_ground()
    tau = np.zeros(world.nv)
    tau[2] = -force
    q1, v1 = world.step(q, np.zeros(world.nv), tau)
    contacts = world.last_contacts()
    assert contacts.solver != "none"
    assert len(contacts.distances) == 4
    pushed = force * world.dt + 9.81 * world.dt  # the impulse into the ground over the step, weight included
    assert contacts.normal_impulses.sum() == pytest.approx(pushed, rel=1e-9)
    assert np.all(np.isfinite(q1)) and np.all(np.isfinite(v1))
    # what remains of the velocity is the round-off of cancelling the free velocity, force * dt / m
    assert np.abs(v1).max() <= 1e-12 * force * world.dt
