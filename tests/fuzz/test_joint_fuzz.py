"""The joint constructors (axes, normals, limits, passive coefficients, rest positions) with hostile
arrays and scalars (see test_world_fuzz.py). Their unlimited defaults are infinite by design; NaN never is."""

from fuzz_groups import FAST_PASSES, FAST_RANDOM_CALLS, check_report, systematic_calls


def test_joint_constructors_keep_their_promises_for_hostile_arguments(fast_reports):
    check_report(fast_reports["joints"], FAST_PASSES * systematic_calls("joints") + FAST_RANDOM_CALLS)
