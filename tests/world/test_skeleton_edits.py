"""A body or shape added to a skeleton that is already in a world reaches the world's model at its next use
(it was silently ignored until world.rebuild(): the new body had no coordinates and no name)."""

import numpy as np

import rigidiff as rd


def _box_inertia():
    return rd.Inertia.from_shape(rd.Box((0.1, 0.1, 0.1)), mass=1.0)


def test_a_body_added_after_add_skeleton_gets_its_coordinates():
    world, arm = rd.World(), rd.Skeleton("arm")
    arm.add_body("upper", joint=rd.RevoluteJoint("shoulder", axis=(0, 1, 0)), inertia=_box_inertia())
    world.add_skeleton(arm)
    assert world.nq == 1
    arm.add_body("lower", parent="upper", joint=rd.RevoluteJoint("elbow", axis=(0, 1, 0)),
                 joint_origin=rd.Transform((0.0, 0.0, -0.5)), inertia=_box_inertia())
    assert world.nq == 2 and "lower" in world.body_names
    q, v = world.step(np.array([0.3, 0.0]), np.zeros(2), np.zeros(2))
    assert v[1] != 0.0  # the new link swings under gravity


def test_a_shape_added_after_add_skeleton_collides():
    world = rd.World()
    ground = world.add_ground()
    sk = rd.Skeleton("ball")
    ball = sk.add_body("ball", joint=rd.FreeJoint("free"), inertia=_box_inertia())
    world.add_skeleton(sk)
    q = world.neutral_configuration()
    q[2] = 0.05
    assert len(world.collide(q)) == 0  # no shape yet
    ball.add_shape(rd.Sphere(0.1))
    assert len(world.collide(q)) == 1  # the new sphere reaches 5 cm into the ground
    ground.add_body("wall").add_shape(rd.Box((0.1, 1.0, 1.0)), origin=rd.Transform((0.1, 0.0, 0.5)))
    assert len(world.collide(q)) == 2  # so does a wall added to the ground later


def test_a_skeleton_in_two_worlds_updates_both_and_a_copy_neither():
    sk = rd.Skeleton("chain")
    sk.add_body("a", joint=rd.RevoluteJoint("j0", axis=(1, 0, 0)), inertia=_box_inertia())
    w1, w2 = rd.World(), rd.World()
    w1.add_skeleton(sk)
    w2.add_skeleton(sk)
    twin = w1._copy()  # built from copies of the skeletons
    sk.add_body("b", parent="a", joint=rd.RevoluteJoint("j1", axis=(1, 0, 0)), inertia=_box_inertia())
    assert (w1.nq, w2.nq, twin.nq) == (2, 2, 1)
