"""rd.lcp.solve_boxed_lcp and rd.lcp.boxed_lcp_vjp with hostile A, b, bounds, findex and g (see
test_world_fuzz.py)."""

from fuzz_groups import FAST_PASSES, FAST_RANDOM_CALLS, check_report, systematic_calls


def test_boxed_lcp_keeps_its_promises_for_hostile_arguments(fast_reports):
    check_report(fast_reports["lcp"], FAST_PASSES * systematic_calls("lcp") + FAST_RANDOM_CALLS)
