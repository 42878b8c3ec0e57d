"""An island with more clamped rows than dofs is solved through the factor of its Gram matrix N = G_C^T G_C;
a later step whose clamped rows carry the same bits of G (bodies at rest) reuses that factor instead of
forming and factoring N again. The reuse must change nothing: a copy of the world, which steps with a fresh
workspace and factors anew, must step bit for bit as the world that reuses."""

import copy

import numpy as np
import pytest

import rigidiff as rd


def _stack(n_boxes: int, gap: float) -> tuple:
    """n_boxes cubes of 0.2 m and 1 kg stacked on the ground, `gap` apart: one island of 12 n rows on 6 n dofs."""
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.6)
    q = []
    for i in range(n_boxes):
        shape = rd.Box((0.2, 0.2, 0.2))
        sk = rd.Skeleton(f"box{i}")
        sk.add_body(f"box{i}", joint=rd.FreeJoint(f"free{i}"),
                    inertia=rd.Inertia.from_shape(shape, mass=1.0)).add_shape(shape, friction=0.6)
        world.add_skeleton(sk)
        q += [0.0, 0.0, 0.1 + (0.2 + gap) * i, 0.0, 0.0, 0.0, 1.0]
    return world, np.array(q)


@pytest.mark.parametrize("gap", [0.0, 2e-3])
def test_a_world_that_reuses_its_factor_steps_as_its_copy_that_factors_anew(gap):
    # gap 0: at rest from the start (every step's G the same bits after the first); 2 mm: the boxes land on
    # each other and settle (G changes at every step until they rest)
    world, q = _stack(5, gap)
    v = zero = np.zeros(world.nv)
    for step in range(400):
        if step % 25 == 0:
            twin, (tq, tv) = copy.copy(world), (q.copy(), v.copy())
            for _ in range(3):
                q, v = world.step(q, v, zero)
                tq, tv = twin.step(tq, tv, zero)
                assert np.array_equal(q, tq) and np.array_equal(v, tv), step
                assert np.array_equal(world.last_contacts().normal_impulses, twin.last_contacts().normal_impulses)
        else:
            q, v = world.step(q, v, zero)
    contacts = world.last_contacts()
    assert contacts.solver == "warm_start" and len(contacts.row_classes) > world.nv  # the root's path
    assert np.abs(v).max() < 1e-9  # at rest: the steps above reused the factor


def test_a_collapsed_robot_moved_by_its_joints_steps_as_its_copy():
    # The quadruped collapsed on its base and legs (19 clamped rows on 18 dofs, joint limits on), then moved by
    # small joint torques: its clamped rows stay, their entries of G change from step to step, and a factor kept
    # from the step before must not be reused.
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.8)
    world.add_skeleton(rd.models.load("quadruped", floating_base=True))
    world.contact_options(joint_limits=True)
    q = world.random_configuration(np.random.default_rng(1))
    q[:7] = [0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0]
    v = tau = np.zeros(world.nv)
    for _ in range(1500):
        q, v = world.step(q, v, tau)
    assert np.abs(v).max() < 1e-9 and len(world.last_contacts().row_classes) > world.nv
    for k in range(30):
        tau = np.zeros(world.nv)
        tau[6:] = 0.3 * np.sin(0.05 * k + np.arange(12))
        twin, tq, tv = copy.copy(world), q.copy(), v.copy()
        q, v = world.step(q, v, tau)
        tq, tv = twin.step(tq, tv, tau)
        assert np.array_equal(q, tq) and np.array_equal(v, tv), k
    assert np.abs(v).max() > 1e-3  # it moved
