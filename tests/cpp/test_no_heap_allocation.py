"""No algorithm of the C++ core allocates on the heap once its Data exists (docs/architecture.md, Model and Data).

Compiles tests/cpp/no_heap_allocation.cpp against the core's sources, with malloc wrapped and counted.
"""

import subprocess

from cppbuild import ROOT, build, core_sources, require


def test_algorithms_do_not_allocate(tmp_path):
    require()
    sources = [*core_sources(), ROOT / "tests" / "cpp" / "no_heap_allocation.cpp"]
    # -O0: allocation is a matter of semantics, not of optimisation, and -O0 compiles fastest
    exe = build(sources, tmp_path / "no_heap_allocation", flags=("-O0", "-DNDEBUG"), link_flags=("-pthread",))
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 of" in run.stdout


def test_feature_derivatives_do_not_allocate(tmp_path):
    require()
    sources = [*core_sources("collision/feature.cpp", "collision/feature_derivatives.cpp"),
               ROOT / "tests" / "cpp" / "feature_derivatives_no_heap.cpp"]
    exe = build(sources, tmp_path / "feature_derivatives_no_heap", flags=("-O0", "-DNDEBUG"))
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 of" in run.stdout


def test_box_tree_queries_do_not_allocate(tmp_path):
    require()
    sources = [*core_sources("collision/bvh.cpp", "collision/bvh_pairs.cpp"),
               ROOT / "tests" / "cpp" / "bvh_no_heap.cpp"]
    exe = build(sources, tmp_path / "bvh_no_heap", flags=("-O0", "-DNDEBUG"))
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 of" in run.stdout
