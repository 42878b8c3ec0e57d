"""The checks a fuzz group's test makes of its report (run_fuzz.py): no broken promise, every variant
called, and both outcomes seen (a run in which everything raised, or nothing did, tests nothing)."""

from __future__ import annotations

from hostile import variants
from isolated import describe_failures
from targets import targets

# the default test run (tests/fuzz/conftest.py): two systematic passes (the second must give the outcomes
# of the first) and random compositions per group
FAST_PASSES = 2
FAST_RANDOM_CALLS = 40


def systematic_calls(group: str) -> int:
    return sum(len(variants(arg)) for target in targets(group) for arg in target.args)


def check_report(report: dict, calls: int):
    assert not report["failures"], describe_failures(report)
    assert report["calls"] == calls
    outcomes = report["outcomes"]
    assert outcomes.get("returned", 0) > 0 and outcomes.get("raised ValueError", 0) > 0, outcomes
