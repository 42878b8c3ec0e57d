"""The hand-differentiated squared-distance forms (cpp/src/collision/distance/closed_forms.hpp), which the
primitives and the barrier solver use, agree with the same forms differentiated by dual numbers (formJet) to
1e-12 relative, on random configurations and near-degenerate ones (nearly parallel edges, a point near an
edge, tiny triangles, coordinates far from the origin).

Compiles and runs tests/cpp/distance_closed_forms_check.cpp (header-only: no core objects needed), which
prints the worst error of each form and configuration family.
"""

import subprocess

from cppbuild import ROOT, build, require


def test_closed_forms_match_the_dual_number_forms(tmp_path):
    require()
    exe = build([ROOT / "tests" / "cpp" / "distance_closed_forms_check.cpp"], tmp_path / "distance_closed_forms_check",
                flags=("-O1",))
    run = subprocess.run([str(exe), "1e-12", "4000"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().endswith("ok"), run.stdout
