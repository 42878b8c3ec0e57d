"""setup.py's object folder: objects are reused across pip's isolated builds only when nothing they
depend on changed (a file of the checkout by modification time, anything outside it by the folder's name)."""

import os
import runpy
import shutil
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def setup_py():
    """setup.py's functions, loaded without running setup()."""
    return runpy.run_path(str(ROOT / "setup.py"), run_name="rigidiff_setup")


def write(path, text, mtime):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))
    return path


def test_an_object_is_up_to_date_until_a_file_of_the_checkout_it_read_changes(setup_py, tmp_path):
    up_to_date = setup_py["up_to_date"]
    checkout, elsewhere = tmp_path / "checkout", tmp_path / "build-env"
    up_to_date.__globals__["ROOT"] = checkout.resolve()
    src = write(checkout / "cpp" / "src" / "a.cpp", '#include "a.hpp"\n', 1000)
    header = write(checkout / "cpp" / "include" / "a.hpp", "", 1000)
    eigen = write(elsewhere / "Eigen" / "Core", "", 1000)
    obj = write(checkout / "build" / "objects-x" / "a.o", "", 2000)
    assert not up_to_date(str(obj.with_suffix(".missing")), str(src))
    write(Path(f"{obj}.d"), f"{obj}: {src} \\\n {header} {eigen}\n", 2000)
    assert up_to_date(str(obj), str(src))

    # a header outside the checkout (a new isolated build environment): newer, or gone, changes nothing
    os.utime(eigen, (3000, 3000))
    assert up_to_date(str(obj), str(src))
    shutil.rmtree(elsewhere)
    assert up_to_date(str(obj), str(src))

    # the checkout's header or source edited, or the header gone: compile again
    os.utime(header, (3000, 3000))
    assert not up_to_date(str(obj), str(src))
    os.utime(header, (1000, 1000))
    os.utime(src, (3000, 3000))
    assert not up_to_date(str(obj), str(src))
    os.utime(src, (1000, 1000))
    assert up_to_date(str(obj), str(src))
    header.unlink()
    assert not up_to_date(str(obj), str(src))


def test_the_object_folder_is_named_by_compiler_flags_and_versions(setup_py, monkeypatch):
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    object_dir = setup_py["object_dir"]
    monkeypatch.setitem(sys.modules, "Cython", types.SimpleNamespace(__version__="3.0.0"))
    first = object_dir("g++", ["-O3"])
    assert first.parent == ROOT / "build" and first.name.startswith("objects-")
    assert object_dir("g++", ["-O3"]) == first
    assert object_dir("g++", ["-O0"]) != first
    monkeypatch.setitem(sys.modules, "Cython", types.SimpleNamespace(__version__="3.1.0"))
    assert object_dir("g++", ["-O3"]) != first
    monkeypatch.setitem(sys.modules, "Cython", types.SimpleNamespace(__version__="3.0.0"))
    import numpy

    monkeypatch.setattr(numpy, "__version__", numpy.__version__ + ".other")
    assert object_dir("g++", ["-O3"]) != first


def test_cython_output_is_reused_until_a_cython_file_of_the_package_changes(setup_py, tmp_path):
    cython_up_to_date = setup_py["cython_up_to_date"]
    cython_up_to_date.__globals__["ROOT"] = tmp_path
    write(tmp_path / "rigidiff" / "_core.pyx", "", 1000)
    pxd = write(tmp_path / "rigidiff" / "_cpp" / "model.pxd", "", 1000)
    exts = [types.SimpleNamespace(sources=["rigidiff/_core.pyx", "cpp/src/a.cpp"])]
    build_dir = "build/cython/3.0.0-numpy2.0.0"
    assert not cython_up_to_date(build_dir, exts)  # never generated
    generated = write(tmp_path / build_dir / "rigidiff" / "_core.cpp", "", 2000)
    assert setup_py["generated_source"](build_dir, "rigidiff/_core.pyx") == str(generated.relative_to(tmp_path))
    assert cython_up_to_date(build_dir, exts)
    os.utime(pxd, (3000, 3000))  # a declaration edited
    assert not cython_up_to_date(build_dir, exts)
