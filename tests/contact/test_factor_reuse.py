"""Clamping systems are factored by pivoted Cholesky: an island with more clamped rows than dofs through its
Gram matrix N = G_C^T G_C, a smaller one through A_CC itself. A later step whose system carries the same bits
(bodies at rest: the clamped rows' entries of G, or A_CC) reuses the factor instead of factoring again. The
reuse must change nothing: a copy of the world, which steps with fresh workspaces and factors anew, must step
bit for bit as the world that reuses."""

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


def _dropped_quadruped(seed: int, joint_limits: bool) -> tuple:
    """The shipped quadruped dropped level from 0.5 m (legs at a random pose for seed > 0, neutral for 0) and
    left 1.5 s without torques: the world and its state at rest."""
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.8)
    world.add_skeleton(rd.models.load("quadruped", floating_base=True))
    world.contact_options(joint_limits=joint_limits)
    legs = world.random_configuration(np.random.default_rng(seed))[7:] if seed else world.neutral_configuration()[7:]
    q, v = np.concatenate([[0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0], legs]), np.zeros(world.nv)
    for _ in range(1500):
        q, v = world.step(q, v, np.zeros(world.nv))
    return world, q, v


def _moved_by_its_joints(world, q, v, amplitude: float, rate: float) -> tuple:
    """30 steps under joint torques amplitude sin(rate k + joint), each checked bit for bit against a copy of the
    world taken just before it; returns the state and how many steps the warm start answered."""
    warm = 0
    for k in range(30):
        tau = np.zeros(world.nv)
        tau[6:] = amplitude * np.sin(rate * k + np.arange(world.nv - 6))
        twin, tq, tv = copy.copy(world), q.copy(), v.copy()
        q, v = world.step(q, v, tau)
        tq, tv = twin.step(tq, tv, tau)
        assert np.array_equal(q, tq) and np.array_equal(v, tv), k
        warm += world.last_contacts().solver == "warm_start"
    return q, v, warm


def test_a_collapsed_robot_moved_by_its_joints_steps_as_its_copy():
    # The quadruped collapsed on its base and legs (19 clamped rows on 18 dofs, joint limits on), then moved by
    # small joint torques: its clamped rows stay, their entries of G change from step to step, and a factor kept
    # from the step before must not be reused.
    world, q, v = _dropped_quadruped(1, joint_limits=True)
    assert np.abs(v).max() < 1e-9 and len(world.last_contacts().row_classes) > world.nv
    q, v, _ = _moved_by_its_joints(world, q, v, 0.3, 0.05)
    assert np.abs(v).max() > 1e-3  # it moved


def test_a_standing_robot_moved_by_its_joints_steps_as_its_copy():
    # The quadruped standing on its four feet (12 clamped rows on 18 dofs: A_CC itself is factored), its legs
    # moved by small joint torques while the feet stick: A_CC changes from step to step under the same rows.
    world, q, v = _dropped_quadruped(0, joint_limits=False)
    assert len(world.last_contacts()) == 4
    q, v, warm = _moved_by_its_joints(world, q, v, 0.2, 0.1)
    assert warm >= 20 and len(world.last_contacts()) == 4 and np.abs(v).max() > 1e-3
