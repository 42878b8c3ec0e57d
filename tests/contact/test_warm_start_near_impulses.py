"""A quadruped collapsed on its base and legs rests on more contact rows than it has dofs: the clamping
system has many solutions, and its minimum-norm one pushes some foot into the ground. The warm start then
takes the solution nearest the previous step's impulses; the steps at rest are answered by the warm start
(not by pivoting at every step) and move the robot exactly as the cold solve does."""

import numpy as np
import pytest

import rigidiff as rd


def collapsed_quadruped(seed, joint_limits):
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.8)
    world.add_skeleton(rd.models.load("quadruped", floating_base=True))
    world.contact_options(joint_limits=joint_limits)
    q = world.random_configuration(np.random.default_rng(seed))
    q[:7] = [0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0]
    v, tau = np.zeros(world.nv), np.zeros(world.nv)
    Q, V = world.rollout(q, v, np.zeros((1500, world.nv)))
    return world, Q[-1], V[-1], tau


@pytest.mark.parametrize("seed,joint_limits,atol", [(2, False, 1e-9), (1, True, 1e-6)])
def test_a_collapsed_quadruped_at_rest_is_warm_started_and_steps_as_the_cold_solve(seed, joint_limits, atol):
    """Seed 2 rests with every friction row sticking: the warm answer moves the robot exactly as the cold
    one. Seed 1 with joint limits (28 rows on 18 dofs) keeps friction rows at their bounds, where the
    solutions share the load differently: the two agree within the solver's tolerance."""
    world, q, v, tau = collapsed_quadruped(seed, joint_limits)
    cold = world._copy()
    cold.contact_options(warm_start=False)  # every step solves cold
    q, v = world.step(q, v, tau)  # the chain: the next steps continue this one
    assert len(world.last_contacts().row_classes) > world.nv  # more rows than dofs
    for _ in range(20):
        q_next, v_next = world.step(q, v, tau)
        assert world.last_contacts().solver == "warm_start"
        q_cold, v_cold = cold.step(q, v, tau)
        assert cold.last_contacts().solver != "warm_start"
        np.testing.assert_allclose(v_next, v_cold, atol=atol)
        np.testing.assert_allclose(q_next, q_cold, atol=1e-3 * atol)
        q, v = q_next, v_next
