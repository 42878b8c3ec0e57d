"""A crash in the child process that runs the fuzz calls fails the test that started it, naming the
signal and showing the last call started; it does not take pytest down."""

import pytest

from isolated import ChildFailed, run_child


def test_a_segfault_in_the_child_is_reported_as_a_crash():
    code = "import sys; sys.stderr.write('step: q dtype: float32\\n'); import faulthandler; faulthandler._sigsegv()"
    with pytest.raises(ChildFailed, match="crashed \\(SIGSEGV\\)") as info:
        run_child(["-c", code])
    assert "step: q dtype: float32" in str(info.value)


def test_an_abort_and_an_error_exit_are_reported():
    with pytest.raises(ChildFailed, match="SIGABRT"):
        run_child(["-c", "import os; os.abort()"])
    with pytest.raises(ChildFailed, match="exited with status 3"):
        run_child(["-c", "raise SystemExit(3)"])


def test_the_child_imports_the_rigidiff_under_test():
    import rigidiff

    out = run_child(["-c", "import rigidiff; print(rigidiff.__file__)"]).stdout.strip()
    assert out == rigidiff.__file__
