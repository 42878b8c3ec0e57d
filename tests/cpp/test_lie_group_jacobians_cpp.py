"""dIntegrate and dDifference (cpp/src/algorithm/configuration_derivatives.cpp) match central
differences on the configuration manifold for every joint type, rotation angles 0 to pi.

Compiles and runs tests/cpp/configuration_derivatives_check.cpp, which prints the errors.
"""

import subprocess

from cppbuild import ROOT, build, core_sources, require


def test_configuration_derivatives_match_finite_differences(tmp_path):
    require()
    sources = core_sources(
        "algorithm/configuration_derivatives.cpp",
        "algorithm/configuration.cpp",
        "multibody/joint.cpp",
        "multibody/model.cpp",
        "spatial/explog.cpp",
    )
    sources.append(ROOT / "tests" / "cpp" / "configuration_derivatives_check.cpp")
    # -O1 with assertions on: Eigen's size checks guard the per-joint blocks
    exe = build(sources, tmp_path / "configuration_derivatives_check", flags=("-O1",))
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().endswith("ok"), run.stdout
