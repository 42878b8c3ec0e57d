"""Two processes making the same fuzz calls get bit-identical outcomes: the digest of every result and
every exception type of the world group's fast run is the same in a second, fresh process, and the same
calls made twice in one process (whatever ran before them) give the same outcomes."""

from fuzz_groups import FAST_PASSES, FAST_RANDOM_CALLS
from isolated import run_fuzz


def test_a_fresh_process_makes_the_same_calls_with_the_same_outcomes(fast_reports):
    again = run_fuzz("world", "--systematic", "--passes", str(FAST_PASSES), "--calls", str(FAST_RANDOM_CALLS),
                     "--seed", "0")["world"]
    first = fast_reports["world"]
    assert again["calls"] == first["calls"]
    assert again["outcomes"] == first["outcomes"]
    assert again["digests"] == first["digests"]


def test_the_same_calls_twice_in_one_process_give_the_same_outcomes(fast_reports):
    for group, report in fast_reports.items():
        assert report["digests"]["pass 1"] == report["digests"]["pass 2"], group
