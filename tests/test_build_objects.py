"""setup.py's object folder: objects are reused across pip's isolated builds only when nothing they
depend on changed (a file of the checkout by modification time, anything outside it by the folder's name)."""

import os
import re
import runpy
import shutil
import sys
import time
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


def test_the_unity_build_compiles_every_source_of_the_core_exactly_once(setup_py):
    unity_units = setup_py["unity_units"]
    sources = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "cpp" / "src").rglob("*.cpp"))
    units = unity_units(sources)
    included = [src for files in units.values() for src in files]
    assert sorted(included) == sources and len(set(included)) == len(included)
    assert 6 <= len(units) <= 12 + len(setup_py["UNITY_ALONE"])
    for unit, files in units.items():
        assert Path(unit).parent == Path("build") / "unity"
        if any(src in setup_py["UNITY_ALONE"] for src in files):
            assert len(files) == 1  # a file whose names clash shares its unit with no other
        domains = {Path(src).parent for src in files}
        # the small folders share "misc" (cut like any group: misc_1, misc_2, ... when it outgrows a unit)
        assert len(domains) == 1 or re.fullmatch(r"misc(_\d+)?", Path(unit).stem)
    # two jobs stay busy: no unit holds much more than its share of the code
    size = {unit: sum((ROOT / src).stat().st_size for src in files) for unit, files in units.items()}
    assert max(size.values()) < 2.5 * sum(size.values()) / len(size)


def test_units_cut_a_folder_into_runs_of_about_equal_size(setup_py, tmp_path):
    setup_py["unity_units"].__globals__["ROOT"] = tmp_path
    for name, size in [("a", 100), ("b", 100), ("c", 300), ("d", 100), ("e", 200)]:
        write(tmp_path / "cpp" / "src" / "big" / f"{name}.cpp", "x" * size, 1000)
    write(tmp_path / "cpp" / "src" / "small" / "f.cpp", "x" * 50, 1000)
    write(tmp_path / "cpp" / "src" / "tiny" / "g.cpp", "x" * 50, 1000)
    sources = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "cpp" / "src").rglob("*.cpp"))
    units = setup_py["unity_units"](sources, units=3)
    # 900 bytes in 3 units of about 300: the folders under 150 bytes share one
    assert units == {"build/unity/big_1.cpp": ["cpp/src/big/a.cpp", "cpp/src/big/b.cpp"],
                     "build/unity/big_2.cpp": ["cpp/src/big/c.cpp"],
                     "build/unity/big_3.cpp": ["cpp/src/big/d.cpp", "cpp/src/big/e.cpp"],
                     "build/unity/misc.cpp": ["cpp/src/small/f.cpp", "cpp/src/tiny/g.cpp"]}
    # more units asked for than there are sources: one source each
    assert sorted(len(files) for files in setup_py["unity_units"](sources, units=100).values()) == [1] * 7


def test_a_unit_compiles_again_only_when_one_of_its_sources_or_headers_changes(setup_py, tmp_path, monkeypatch):
    """Real compiles of generated units: their dependency files list the sources they include."""
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    import subprocess

    setup_py["up_to_date"].__globals__["ROOT"] = tmp_path.resolve()
    monkeypatch.chdir(tmp_path)  # the build compiles in the checkout: dependency files name files from there
    write(tmp_path / "cpp" / "include" / "shared.hpp", "#pragma once\ninline int one() { return 1; }\n", 1000)
    for folder in ("a", "b"):
        for name in ("x", "y"):
            write(tmp_path / "cpp" / "src" / folder / f"{name}.cpp",
                  f'#include "shared.hpp"\nint {folder}{name}() {{ return one(); }}\n', 1000)
    sources = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "cpp" / "src").rglob("*.cpp"))
    units = setup_py["unity_units"](sources, units=2)
    assert sorted(units) == ["build/unity/a.cpp", "build/unity/b.cpp"]
    paths = setup_py["write_units"](units)
    objects = {}
    for unit in paths:
        obj = tmp_path / "objects" / Path(unit).with_suffix(".o").name
        obj.parent.mkdir(exist_ok=True)
        subprocess.run(["g++", "-std=c++17", "-c", unit, "-o", str(obj), "-I", "cpp/include", "-MMD", "-MF",
                        f"{obj}.d"], check=True)
        objects[unit] = obj
    later = time.time() + 100  # the units were written now
    for unit, obj in objects.items():
        os.utime(obj, (later, later))
        assert setup_py["up_to_date"](str(obj), str(tmp_path / unit))

    # writing the same units again keeps their dates: nothing to compile
    before = {unit: (tmp_path / unit).stat().st_mtime for unit in units}
    setup_py["write_units"](units)
    assert {unit: (tmp_path / unit).stat().st_mtime for unit in units} == before

    os.utime(tmp_path / "cpp" / "src" / "b" / "y.cpp", (later + 100, later + 100))  # a source: its unit only
    stale = [u for u, obj in objects.items() if not setup_py["up_to_date"](str(obj), str(tmp_path / u))]
    assert stale == ["build/unity/b.cpp"]
    os.utime(tmp_path / "cpp" / "include" / "shared.hpp", (later + 100, later + 100))  # a header: both units
    assert not any(setup_py["up_to_date"](str(obj), str(tmp_path / u)) for u, obj in objects.items())

    # a unit of an earlier grouping is removed
    write(tmp_path / "build" / "unity" / "old.cpp", "", 1000)
    setup_py["write_units"](units)
    assert sorted(p.name for p in (tmp_path / "build" / "unity").glob("*.cpp")) == ["a.cpp", "b.cpp"]
