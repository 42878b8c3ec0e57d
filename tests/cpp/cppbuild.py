"""Builds small C++ programs against the core's sources, for the tests in tests/cpp.

Needs g++ and Eigen's headers (cmeel-eigen, EIGEN3_INCLUDE_DIR or /usr/include/eigen3); `require()`
skips the calling test when either is missing.
"""

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CPP_SRC = ROOT / "cpp" / "src"


def eigen_include():
    """Directory holding Eigen/Core, or None."""
    for p in sys.path:
        cand = Path(p) / "cmeel.prefix" / "include" / "eigen3"
        if (cand / "Eigen" / "Core").is_file():
            return cand
    for cand in (os.environ.get("EIGEN3_INCLUDE_DIR"), "/usr/include/eigen3"):
        if cand and (Path(cand) / "Eigen" / "Core").is_file():
            return Path(cand)
    return None


def require():
    """Eigen's include directory; skips the test without g++ or Eigen."""
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    eigen = eigen_include()
    if eigen is None:
        pytest.skip("Eigen headers (cmeel-eigen) not found")
    return eigen


def core_sources(*relative):
    """The core's .cpp files named relative to cpp/src, or all of them but the bindings."""
    if relative:
        return [CPP_SRC / r for r in relative]
    return [p for p in sorted(CPP_SRC.rglob("*.cpp")) if p.parent.name != "bind"]


def build(sources, exe, flags=("-O0", "-DNDEBUG"), link_flags=()):
    """Compiles `sources` in parallel (-std=c++17, the core's include path) next to `exe`, links them
    into `exe` and returns its path. Fails the test with the compiler's message on an error."""
    exe = Path(exe)
    cflags = ["-std=c++17", *flags, f"-I{ROOT / 'cpp' / 'include'}", f"-I{require()}"]

    def compile_one(i_src):
        i, src = i_src
        obj = exe.parent / f"{exe.name}_{i}_{Path(src).stem}.o"
        res = subprocess.run(["g++", *cflags, "-c", str(src), "-o", str(obj)], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr[-3000:]
        return str(obj)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        objects = list(pool.map(compile_one, enumerate(sources)))
    link = subprocess.run(["g++", *objects, "-o", str(exe), *link_flags], capture_output=True, text=True)
    assert link.returncode == 0, link.stderr[-3000:]
    return exe
