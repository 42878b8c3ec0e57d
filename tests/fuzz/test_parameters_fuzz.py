"""set_parameters, World(gravity=...) and add_particles with hostile arrays (see test_world_fuzz.py)."""

from fuzz_groups import FAST_PASSES, FAST_RANDOM_CALLS, check_report, systematic_calls


def test_model_changes_keep_their_promises_for_hostile_arguments(fast_reports):
    check_report(fast_reports["parameters"], FAST_PASSES * systematic_calls("parameters") + FAST_RANDOM_CALLS)
