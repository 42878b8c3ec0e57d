"""A hull against a plane keeps the same vertices, to the bit, as placing every vertex would: shapePlane's
shortcut for vertices clearly above the margin (cpp/src/collision/shape_plane.cpp) never drops one that
counts, even far from the origin with a vertex within an ulp or two of the margin.

Compiles and runs tests/cpp/shape_plane_check.cpp against the core, which prints the mismatches and "ok".
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
