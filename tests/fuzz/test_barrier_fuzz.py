"""The barrier world's functions that take arrays (step, step_jacobians, step_vjp, rollout, surfaces,
body_pose, add_affine_body) called with every hostile variant of each argument in a child process: the
float64 answer bit for bit, or a ValueError/TypeError naming the argument (an intersecting start names q), or
a RuntimeError for a step that cannot be taken; never a crash or a silent NaN."""

from fuzz_groups import FAST_PASSES, FAST_RANDOM_CALLS, check_report, systematic_calls


def test_barrier_world_functions_keep_their_promises_for_hostile_arguments(fast_reports):
    check_report(fast_reports["barrier"], FAST_PASSES * systematic_calls("barrier") + FAST_RANDOM_CALLS)
