"""Run fuzz calls in a child process, so that a crash (a segfault, an abort) fails the test that started it
instead of killing pytest, and names the call that was running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import rigidiff

HERE = Path(__file__).resolve().parent
WORKER = HERE / "run_fuzz.py"
# the child imports the rigidiff this process imported (a source checkout or an installed package)
PACKAGE_ROOT = Path(rigidiff.__file__).resolve().parents[1]


class ChildFailed(AssertionError):
    """The child process crashed or exited with an error."""


def run_child(argv: list[str], timeout: float = 1800) -> subprocess.CompletedProcess:
    """``python -X faulthandler argv...`` with rigidiff, tests/fuzz and tests importable; raises ChildFailed when the
    child is killed by a signal or exits with a non-zero status, with the end of its stderr (the label of
    the last call started, and faulthandler's traceback)."""
    env = dict(os.environ)
    paths = [str(PACKAGE_ROOT), str(HERE), str(HERE.parent)]  # rigidiff, tests/fuzz, tests (rdsupport)
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [env.get("PYTHONPATH")] if p])
    with tempfile.TemporaryDirectory() as cwd:  # hypothesis keeps a cache in .hypothesis/ of the working folder
        proc = subprocess.run([sys.executable, "-X", "faulthandler", *argv], capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=cwd)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.splitlines()[-25:])
        if proc.returncode < 0:
            raise ChildFailed(f"the fuzz process crashed ({signal.Signals(-proc.returncode).name}); its last "
                              f"lines:\n{tail}")
        raise ChildFailed(f"the fuzz process exited with status {proc.returncode}; its last lines:\n{tail}")
    return proc


def run_fuzz(*args: str, timeout: float = 1800) -> dict:
    """The report (run_fuzz.py) of a fuzz run in a child process."""
    proc = run_child([str(WORKER), *args], timeout=timeout)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def describe_failures(report: dict, limit: int = 12) -> str:
    lines = [f"{len(report['failures'])} broken promises in {report['calls']} calls:"]
    for f in report["failures"][:limit]:
        lines.append(f"- {f['function']} [{f['variant']}]: {f['problem']}\n    arguments: {f['arguments']}")
    return "\n".join(lines)
