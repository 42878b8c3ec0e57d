"""rd.trajopt.Problem's initial state, bounds and initial guess with hostile arrays (see test_world_fuzz.py).
Bounds and guesses broadcast (a scalar, (n,) or (T, n)); unbounded entries are infinite by design."""

from fuzz_groups import FAST_PASSES, FAST_RANDOM_CALLS, check_report, systematic_calls


def test_trajectory_problems_keep_their_promises_for_hostile_arguments(fast_reports):
    check_report(fast_reports["trajopt"], FAST_PASSES * systematic_calls("trajopt") + FAST_RANDOM_CALLS)
