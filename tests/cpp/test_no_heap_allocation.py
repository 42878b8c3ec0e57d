"""No algorithm of the C++ core allocates on the heap once its Data exists (docs/architecture.md, Model and Data).

Compiles a test program of tests/cpp, with malloc wrapped and counted, and links it with the package's own
objects of the core when they are up to date (else with the core's sources compiled at -O0); the program
reports "0 of" the calls it counted allocating.
"""

import subprocess

from cppbuild import ROOT, build_against_core, core_sources, require


def _assert_program_does_not_allocate(tmp_path, program, sources, link_flags=()):
    require()
    # -O0 for what is compiled here: allocation is a matter of semantics, not of optimisation, and -O0
    # compiles fastest
    exe = build_against_core([ROOT / "tests" / "cpp" / f"{program}.cpp"], tmp_path / program, core=sources,
                             link_flags=link_flags)
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 of" in run.stdout


def test_algorithms_do_not_allocate(tmp_path):
    _assert_program_does_not_allocate(tmp_path, "no_heap_allocation", core_sources(), link_flags=("-pthread",))


def test_feature_derivatives_do_not_allocate(tmp_path):
    _assert_program_does_not_allocate(tmp_path, "feature_derivatives_no_heap",
                                      core_sources("collision/feature.cpp", "collision/feature_stencil.cpp",
                                                   "collision/feature_derivatives.cpp"))


def test_distance_primitives_do_not_allocate(tmp_path):
    names = ("point_point", "point_line", "point_edge", "point_plane", "point_triangle", "line_line", "edge_edge",
             "edge_edge_mollifier")
    _assert_program_does_not_allocate(tmp_path, "distance_no_heap",
                                      core_sources(*(f"collision/distance/{name}.cpp" for name in names)))


def test_box_tree_queries_do_not_allocate(tmp_path):
    _assert_program_does_not_allocate(tmp_path, "bvh_no_heap",
                                      core_sources("collision/bvh.cpp", "collision/bvh_pairs.cpp", "collision/pair_sort.cpp"))


def test_ccd_queries_do_not_allocate(tmp_path):
    distances = ("point_point", "point_edge", "point_triangle", "edge_edge")
    ccd = ("options", "point_point", "point_edge", "point_triangle", "edge_edge")
    _assert_program_does_not_allocate(tmp_path, "ccd_no_heap",
                                      core_sources(*(f"collision/distance/{name}.cpp" for name in distances),
                                                   *(f"collision/ccd/{name}.cpp" for name in ccd)))


def test_resting_narrow_phase_does_not_allocate(tmp_path):
    _assert_program_does_not_allocate(tmp_path, "narrowphase_no_heap", core_sources(), link_flags=("-pthread",))
