"""The thread team of the projective world's per-element loops (cpp/include/rigidiff/world/thread_team.hpp):
every item of every loop runs once, nested and concurrent loops are refused rather than deadlocked, and teams
are made and destroyed without hanging. Compiles and runs tests/cpp/thread_team_check.cpp (header-only)."""

import subprocess

from cppbuild import ROOT, build, require


def test_thread_team_runs_every_item_once_and_refuses_nested_loops(tmp_path):
    require()
    exe = build([ROOT / "tests" / "cpp" / "thread_team_check.cpp"], tmp_path / "thread_team_check",
                flags=("-O1", "-DNDEBUG"), link_flags=("-pthread",))
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().endswith("ok"), run.stdout
