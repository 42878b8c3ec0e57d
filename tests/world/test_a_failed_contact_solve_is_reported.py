"""An island of contact rows that no solver stage can solve (docs/contact.md, "The constraint solve") gets
zero impulses, and last_contacts().solver says "none" even when other islands of the same step were solved
(it reported the latest stage they needed, so the failure went unseen)."""

import numpy as np

import rigidiff as rd


def wedged_world(with_other_island: bool) -> rd.World:
    """A particle with restitution 1 falling at 1 m/s onto the ground while it touches a fixed lid above it:
    the bounce the ground asks for is one the lid forbids, an infeasible problem."""
    world = rd.World(dt=1e-3)
    world.add_ground(restitution=1.0)
    lid = rd.Skeleton("lid")
    lid.add_body("lid", joint=rd.FixedJoint("weld")).add_shape(
        rd.Box((0.4, 0.4, 0.1)), origin=rd.Transform(translation=(0.0, 0.0, 0.07)))
    world.add_skeleton(lid)
    world.add_particles([[0.0, 0.0, 0.0101]], radius=0.01, restitution=1.0, name="wedged")
    if with_other_island:
        world.add_particles([[1.0, 0.0, 0.01]], radius=0.01, name="resting")  # solved on its own
    return world


def test_an_island_no_stage_solves_is_reported_as_none():
    for with_other_island in (False, True):
        world = wedged_world(with_other_island)
        v = np.zeros(world.nv)
        v[2] = -1.0
        _, v_next = world.step(world.q, v, np.zeros(world.nv))
        contacts = world.last_contacts()
        assert contacts.solver == "none"
        name = "wedged/p0" if with_other_island else "p0"  # qualified only where two sets have a "p0"
        wedged = [i for i, (a, b) in enumerate(zip(contacts.body_a, contacts.body_b)) if name in (a, b)]
        assert len(wedged) == 2 and np.all(contacts.normal_impulses[wedged] == 0.0)
        np.testing.assert_allclose(v_next[2], -1.0 - 9.81e-3)  # it moved without contact forces
        if with_other_island:
            resting = contacts.body_a.index("resting/p0")
            assert contacts.normal_impulses[resting] > 0.0 and v_next[5] == 0.0


def test_a_solved_step_reports_its_stage():
    world = wedged_world(with_other_island=True)
    world.step(world.q, np.zeros(world.nv), np.zeros(world.nv))  # nothing falls: every island is solved
    assert world.last_contacts().solver in ("warm_start", "pivoting")
