"""The barrier pairs' PSD projection in the space without the common translation
(cpp/src/world/translation_invariant_psd.hpp: a 9 x 9 eigen-decomposition for four points) is the same
matrix as the direct 12 x 12 projection with clamped eigenvalues, to round-off, on barrier-like pair
Hessians of every distance form (indefinite) and random indefinite ones.

Compiles and runs tests/cpp/translation_psd_check.cpp (header-only), which prints the worst errors.
"""

import subprocess

from cppbuild import ROOT, build, require


def test_reduced_projection_equals_the_direct_one(tmp_path):
    require()
    exe = build([ROOT / "tests" / "cpp" / "translation_psd_check.cpp"], tmp_path / "translation_psd_check",
                flags=("-O1", "-DNDEBUG"))
    run = subprocess.run([str(exe), "1e-12", "3000"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().endswith("ok"), run.stdout
