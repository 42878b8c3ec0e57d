"""The narrow phase's shortcuts give the same contacts to the bit as the plain computations they replace.

A hull against a plane keeps the same vertices as placing every vertex would: shapePlane's shortcut for
vertices clearly above the margin (cpp/src/collision/shape_plane.cpp) never drops one that counts, even far
from the origin with a vertex within an ulp or two of the margin. Faces are ordered as std::sort orders
their angle keys. Each test compiles a program of tests/cpp against the core, which prints its mismatches
and "ok".
"""

import subprocess

from cppbuild import ROOT, build_against_core, core_sources, require


def test_hull_on_plane_keeps_the_vertices_of_an_unfiltered_pass(tmp_path):
    require()
    exe = build_against_core([ROOT / "tests" / "cpp" / "shape_plane_check.cpp"], tmp_path / "shape_plane_check",
                             core=core_sources(), link_flags=("-pthread",))
    run = subprocess.run([str(exe), "20000"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().endswith("ok"), run.stdout


def test_order_around_sorts_as_std_sort(tmp_path):
    """manifold::orderAround sorts faces of up to 16 points by insertion on the stack and larger ones with
    std::sort: both give std::sort's order, ties included (tests/cpp/order_around_check.cpp)."""
    require()
    exe = build_against_core([ROOT / "tests" / "cpp" / "order_around_check.cpp"], tmp_path / "order_around_check",
                             core=core_sources(), link_flags=("-pthread",))
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().endswith("ok"), run.stdout
