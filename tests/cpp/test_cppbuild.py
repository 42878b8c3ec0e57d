"""The object cache of cppbuild.build: a second build reuses the objects, an edited header or source or
other flags compile again, so a cached object never stands for code that changed."""

import subprocess

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
