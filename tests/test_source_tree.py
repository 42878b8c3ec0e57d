"""Python started in a source checkout whose extension is not built says so in one line."""

import shutil
import subprocess
import sys
from pathlib import Path

import rigidiff as rd


def test_import_in_an_unbuilt_source_tree_explains_itself(tmp_path):
    """A copy of the package's Python files without the compiled _core, imported from its parent folder
    as Python does in a fresh clone: the error says what to do, not 'partially initialized module'."""
    package = Path(rd.__file__).resolve().parent
    copy = tmp_path / "rigidiff"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("_core*.so", "_core*.pyd", "__pycache__"))
    assert not list(copy.glob("_core*.so"))
    proc = subprocess.run([sys.executable, "-c", "import rigidiff"], cwd=tmp_path, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: rigidiff is not built in this source tree")
    assert last.endswith("pip install . (or pip install -e .) and run from elsewhere")
    assert "circular import" not in proc.stderr
    # the same copy with the extension back imports
    for so in package.glob("_core*.so"):
        shutil.copy(so, copy / so.name)
    ok = subprocess.run([sys.executable, "-c", "import rigidiff; print(rigidiff.World)"], cwd=tmp_path,
                        capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stderr
