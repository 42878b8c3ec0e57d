"""Every World function that takes arrays (step, rollout, step_batch, step_jacobians, step_vjp, the dynamics,
kinematics and their derivatives, integrate, difference, collide, ...) called with every hostile variant of
each argument (hostile.py) in a child process: the float64 answer bit for bit, or a ValueError/TypeError
naming the argument, never a crash, a silent NaN or a wrong result."""

from fuzz_groups import FAST_PASSES, FAST_RANDOM_CALLS, check_report, systematic_calls


def test_world_functions_keep_their_promises_for_hostile_arguments(fast_reports):
    check_report(fast_reports["world"], FAST_PASSES * systematic_calls("world") + FAST_RANDOM_CALLS)
