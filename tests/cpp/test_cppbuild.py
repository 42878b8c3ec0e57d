"""The object cache of cppbuild.build: a second build reuses the objects, an edited header or source or
other flags compile again, so a cached object never stands for code that changed."""

import subprocess
from pathlib import Path

import cppbuild
import pytest
from cppbuild import OBJECT_CACHE, ROOT, build, core_sources, require, unity_sources


def run(exe):
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=30).stdout.strip()


def test_objects_are_reused_until_a_source_a_header_or_the_flags_change(tmp_path):
    require()
    src_dir, cache = tmp_path / "with space", tmp_path / "cache"
    src_dir.mkdir()
    header, main, other = src_dir / "value.hpp", src_dir / "main.cpp", src_dir / "other.cpp"
    header.write_text("#pragma once\nconstexpr int kValue = 1;\n")
    main.write_text('#include <cstdio>\n#include "value.hpp"\nint other();\n'
                    'int main() { std::printf("%d %d\\n", kValue, other()); }\n')
    other.write_text("int other() { return 10; }\n")

    assert run(build([main, other], tmp_path / "a", cache=cache)) == "1 10"
    objects = {p.name: p.stat().st_mtime_ns for p in cache.glob("*.o")}
    assert len(objects) == 2

    # nothing changed: the same objects, not rewritten
    assert run(build([main, other], tmp_path / "b", cache=cache)) == "1 10"
    assert {p.name: p.stat().st_mtime_ns for p in cache.glob("*.o")} == objects

    # a header changed: main.cpp's object is compiled again and replaces the old one, other.cpp's is kept
    header.write_text("#pragma once\nconstexpr int kValue = 2;\n")
    assert run(build([main, other], tmp_path / "c", cache=cache)) == "2 10"
    after_header = {p.name: p.stat().st_mtime_ns for p in cache.glob("*.o")}
    assert len(after_header) == 2
    assert len(set(after_header) & set(objects)) == 1
    kept = (set(after_header) & set(objects)).pop()
    assert kept.startswith("other-") and after_header[kept] == objects[kept]

    # a source changed
    other.write_text("int other() { return 20; }\n")
    assert run(build([main, other], tmp_path / "d", cache=cache)) == "2 20"

    # other flags: objects of their own, next to the first ones
    assert run(build([main, other], tmp_path / "e", flags=("-O1",), cache=cache)) == "2 20"
    assert len(list(cache.glob("*.o"))) == 4


def test_the_core_sources_are_compiled_in_units_that_include_each_once(monkeypatch):
    sources = core_sources("collision/bvh.cpp", "collision/bvh_pairs.cpp", "spatial/explog.cpp")
    other = ROOT / "tests" / "cpp" / "bvh_no_heap.cpp"
    compiled = unity_sources([*sources, other])
    assert compiled[-1] == other
    included = []
    for unit in compiled[:-1]:
        assert OBJECT_CACHE / "unity" in unit.parents
        text = unit.read_text()
        included += [(unit.parent / line.split('"')[1]).resolve() for line in text.splitlines()
                     if line.startswith("#include")]
    assert sorted(included) == sorted(sources)
    monkeypatch.setenv("RIGIDIFF_UNITY", "0")
    assert unity_sources([*sources, other]) == [*sources, other]


def _package_objects_or_skip():
    require()
    objects, flags = cppbuild.package_core_objects()
    if objects is None:
        pytest.skip("the package's objects of the core are not in build/ (installed from a wheel, or stale)")
    return objects, flags


def test_the_package_objects_cover_each_core_source_once():
    objects, flags = _package_objects_or_skip()
    assert "-O3" in flags or "-O0" in flags
    covered = []
    for obj in map(Path, objects):
        unit = ROOT / "build" / "unity" / f"{obj.stem}.cpp"
        if obj.parent.name == "unity" and unit.is_file():
            covered += [(unit.parent / line.split('"')[1]).resolve() for line in unit.read_text().splitlines()
                        if line.startswith("#include")]
        else:
            covered.append(ROOT / Path(*obj.with_suffix(".cpp").parts[obj.parts.index("cpp"):]))
    assert sorted(covered) == sorted(p.resolve() for p in core_sources())


def test_package_objects_of_another_eigen_or_stale_are_not_used(monkeypatch):
    _package_objects_or_skip()
    real = cppbuild.setup_functions()
    monkeypatch.setattr(cppbuild, "setup_functions", lambda: {**real, "eigen_version": lambda include: "0.0.0"})
    assert cppbuild.package_core_objects() == (None, None)

    def stale_algorithm_unit(obj, src):  # as after an edit of a source of cpp/src/algorithm
        return "algorithm" not in Path(src).name and real["up_to_date"](obj, src)

    monkeypatch.setattr(cppbuild, "setup_functions", lambda: {**real, "up_to_date": stale_algorithm_unit})
    assert cppbuild.package_core_objects() == (None, None)
