"""States that are merely huge or diverging are reported as such, with the offending value, and never as a
body without mass; a rollout names the step it reached the state at (docs/conventions.md)."""

import numpy as np
import pytest

import rigidiff as rd


def quadruped(dt=1e-3):
    world = rd.World(dt=dt)
    world.add_skeleton(rd.models.load("quadruped", floating_base=True))
    return world


def test_a_base_far_away_is_out_of_range_with_its_coordinate():
    world = quadruped()
    q, zero = world.neutral_configuration(), np.zeros(world.nv)
    q[0] = 1e8
    for call in (lambda: world.step(q, zero, zero), lambda: world.forward_dynamics(q, zero, zero),
                 lambda: world.step_jacobians(q, zero, zero), lambda: world.mass_matrix_inverse(q)):
        with pytest.raises(RuntimeError) as info:
            call()
        message = str(info.value)
        assert message.startswith("the state is out of range: joint 'quadruped/")
        assert "1e+08 m from the world origin (the largest entry of q is q[0] = 1e+08)" in message
        assert "singular" not in message and "no mass" not in message


@pytest.mark.parametrize("case", ["dt = 1000 s", "v = 1e20", "tau = 1e15"])
def test_a_diverging_rollout_names_the_step_and_the_state(case):
    """The first step succeeds from the given state and flings the robot far away; the second cannot be
    taken, and says that the rollout itself reached that state."""
    world = quadruped(dt=1e3 if case == "dt = 1000 s" else 1e-3)
    q, v, taus = world.neutral_configuration(), np.zeros(world.nv), np.zeros((10, world.nv))
    if case == "v = 1e20":
        v[:] = 1e20
    if case == "tau = 1e15":
        taus[:] = 1e15
    with pytest.raises(RuntimeError) as info:
        world.rollout(q, v, taus)
    message = str(info.value)
    assert message.startswith("rollout step 1 of 10 (a state the rollout reached): the state is out of range: ")
    assert "m from the world origin (the largest entry of q is q[" in message and "diverged" in message
    assert "singular" not in message


def test_a_massless_body_near_the_origin_is_still_singular_and_a_first_step_has_no_prefix():
    sk = rd.Skeleton("ghost")
    sk.add_body("arm", joint=rd.RevoluteJoint("j", axis=(0, 0, 1)),
                inertia=rd.Inertia(mass=1.0, rotational_inertia=np.zeros((3, 3))))
    world = rd.World()
    world.add_skeleton(sk)
    with pytest.raises(RuntimeError, match=r"^articulated inertia of joint 'ghost/j' is singular: the bodies"):
        world.rollout(np.zeros(1), np.zeros(1), np.zeros((3, 1)))
