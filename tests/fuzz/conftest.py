"""One child process runs the fast fuzz run of every group but torch (startup is most of its cost); each
test file of tests/fuzz checks its group's report."""

import pytest
from fuzz_groups import FAST_PASSES, FAST_RANDOM_CALLS
from isolated import run_fuzz
from targets import FAST_GROUPS


@pytest.fixture(scope="session")
def fast_reports():
    return run_fuzz(*FAST_GROUPS, "--systematic", "--passes", str(FAST_PASSES), "--calls", str(FAST_RANDOM_CALLS),
                    "--seed", "0")
