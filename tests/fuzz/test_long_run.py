"""The long fuzz run (slow, ``pytest -m slow tests/fuzz -s``): three systematic passes over every group and
LONG_RANDOM_CALLS random compositions per group, more than 10,000 calls in one child process, then the
same random calls in a second process. Each promise holds for every call; memory does not grow from pass
to pass; the passes give identical outcomes, and so do the two processes. It prints the figures
docs/reliability.md quotes."""

import importlib.util

import pytest
from fuzz_groups import check_report, systematic_calls
from isolated import run_fuzz
from targets import GROUPS, FAST_GROUPS

# every group; torch when it is installed
LONG_GROUPS = FAST_GROUPS + (("torch",) if importlib.util.find_spec("torch") else ())

PASSES = 3
LONG_RANDOM_CALLS = 1500
SEED = 20261126


def _summary(reports: dict) -> str:
    kinds = ["ValueError", "LinAlgError", "TypeError", "RuntimeError"]  # LinAlgError: box_qp's, a ValueError
    lines = [f"{'group':<14}{'calls':>8}{'returned':>10}" + "".join(f"{k:>14}" for k in kinds)
             + f"{'broken':>8}{'seconds':>9}   resident MB after each pass, at the end"]
    for group, r in reports.items():
        o = r["outcomes"]
        lines.append(f"{group:<14}{r['calls']:>8}{o.get('returned', 0):>10}"
                     + "".join(f"{o.get('raised ' + k, 0):>14}" for k in kinds)
                     + f"{len(r['failures']):>8}{r['seconds']:>9.1f}   {r['rss_mb_after_pass']}, {r['rss_mb_end']}")
    total = sum(r["calls"] for r in reports.values())
    lines.append(f"total calls {total}")
    return "\n".join(lines)


@pytest.mark.slow
def test_long_fuzz_run():
    assert set(LONG_GROUPS) | {"torch"} == set(GROUPS)
    reports = run_fuzz(*LONG_GROUPS, "--systematic", "--passes", str(PASSES), "--calls", str(LONG_RANDOM_CALLS),
                       "--seed", str(SEED))
    print("\n" + _summary(reports))
    for group, report in reports.items():
        check_report(report, PASSES * systematic_calls(group) + LONG_RANDOM_CALLS)
        # a leak grows the memory pass after pass; the first pass warms caches and imports
        growth = report["rss_mb_after_pass"][-1] - report["rss_mb_after_pass"][1]
        assert growth < 5.0, f"{group}: resident memory grew by {growth} MB between systematic passes"
    assert sum(r["calls"] for r in reports.values()) >= 10_000
    again = run_fuzz(*LONG_GROUPS, "--calls", str(LONG_RANDOM_CALLS), "--seed", str(SEED))
    for group in LONG_GROUPS:
        digests = reports[group]["digests"]
        assert len({digests[f"pass {i + 1}"] for i in range(PASSES)}) == 1, f"{group}: passes differ"
        assert again[group]["digests"]["random"] == digests["random"], f"{group}: processes differ"
