"""No algorithm of the C++ core allocates on the heap once its Data exists (DESIGN.md §5).

Compiles tests/cpp/no_heap_allocation.cpp against the core's sources, with malloc wrapped and counted.
"""

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _eigen_include():
    for p in sys.path:
        cand = Path(p) / "cmeel.prefix" / "include" / "eigen3"
        if (cand / "Eigen" / "Core").is_file():
            return cand
    for cand in (os.environ.get("EIGEN3_INCLUDE_DIR"), "/usr/include/eigen3"):
        if cand and (Path(cand) / "Eigen" / "Core").is_file():
            return Path(cand)
    return None


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_algorithms_do_not_allocate(tmp_path):
    eigen = _eigen_include()
    if eigen is None:
        pytest.skip("Eigen headers (cmeel-eigen) not found")
    sources = [p for p in sorted((ROOT / "cpp" / "src").rglob("*.cpp")) if p.parent.name != "bind"]
    sources.append(ROOT / "tests" / "cpp" / "no_heap_allocation.cpp")
    # -O0: allocation is a matter of semantics, not of optimisation, and -O0 compiles fastest
    flags = ["-std=c++17", "-O0", "-DNDEBUG", f"-I{ROOT / 'cpp' / 'include'}", f"-I{eigen}"]

    def compile_one(i_src):
        i, src = i_src
        obj = tmp_path / f"{i}_{src.stem}.o"
        res = subprocess.run(["g++", *flags, "-c", str(src), "-o", str(obj)], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr[-3000:]
        return str(obj)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        objects = list(pool.map(compile_one, enumerate(sources)))
    exe = tmp_path / "no_heap_allocation"
    link = subprocess.run(["g++", *objects, "-o", str(exe), "-pthread"], capture_output=True, text=True)
    assert link.returncode == 0, link.stderr[-3000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 of" in run.stdout
