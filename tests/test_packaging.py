"""Packaging: the runtime dependencies are what rigidiff imports; the test oracles sit in the test extra and
the test-only bindings in an extension of their own."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

import rigidiff

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[1]
ORACLES = ("python-fcl", "pin", "mujoco", "example-robot-data")


def requirement_names(requirements) -> set:
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_test_oracles_are_in_the_test_extra_only():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = requirement_names(project["dependencies"])
    test = requirement_names(project["optional-dependencies"]["test"])
    for oracle in ORACLES:
        assert oracle not in runtime, f"{oracle} is a test oracle: it belongs to the test extra"
        assert oracle in test


def test_every_subpackage_is_installed():
    """pyproject.toml lists its packages by name: a folder of rigidiff/ with an __init__.py that is not
    listed is left out of the wheel, and an installed rigidiff fails to import it."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"rigidiff"} | {"rigidiff." + ".".join(p.parent.relative_to(ROOT / "rigidiff").parts)
                            for p in (ROOT / "rigidiff").rglob("__init__.py") if p.parent != ROOT / "rigidiff"}
    assert found - listed == set(), f"packages missing from pyproject.toml: {sorted(found - listed)}"


def test_every_module_imports_without_the_oracles_or_the_test_bindings():
    """Every rigidiff module imports with python-fcl, Pinocchio and MuJoCo unavailable, and none of them
    imports the test-only extension rigidiff._testing."""
    code = ("import sys, importlib, pkgutil\n"
            "for name in ('fcl', 'pinocchio', 'mujoco', 'example_robot_data', 'rigidiff._testing'):\n"
            "    sys.modules[name] = None\n"
            "import rigidiff\n"
            "for m in pkgutil.walk_packages(rigidiff.__path__, 'rigidiff.'):\n"
            "    if m.name != 'rigidiff._testing':\n"
            "        importlib.import_module(m.name)\n")
    package_parent = str(Path(rigidiff.__file__).resolve().parents[1])
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=package_parent)
    assert run.returncode == 0, run.stderr


def test_the_test_bindings_are_not_in_the_core():
    """The bindings only tests use live in rigidiff._testing, outside the product's rigidiff._core."""
    from rigidiff import _core, _testing

    for name in ("feature_derivatives", "dense_product", "BvhMesh", "bvh_mesh_pairs", "bvh_self_pairs"):
        assert callable(getattr(_testing, name))
        assert name not in dir(_core) and f"_{name}" not in dir(_core)


def test_importing_rigidiff_does_not_import_scipy_or_trimesh():
    """scipy and trimesh are imported where they are used: ``import rigidiff`` stays cheap for a script that
    needs neither (scipy.sparse alone took 0.2 s of the 0.6 s the import took)."""
    code = ("import sys, rigidiff\n"
            "found = sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'trimesh'))\n"
            "assert not found, found\n")
    package_parent = str(Path(rigidiff.__file__).resolve().parents[1])
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=package_parent)
    assert run.returncode == 0, run.stderr
