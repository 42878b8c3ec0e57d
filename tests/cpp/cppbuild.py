"""Builds small C++ programs against the core's sources, for the tests in tests/cpp.

Needs g++ and Eigen's headers (cmeel-eigen, EIGEN3_INCLUDE_DIR or /usr/include/eigen3); `require()`
skips the calling test when either is missing.

Compiled objects are kept in build/cpp-tests of the checkout, one per (source file, compile command,
compiler version), and reused while the text of the source and of every header it included is unchanged:
a second run links without compiling, an edited source or header is compiled again. The core's sources
are compiled in the units of setup.py's unity build (RIGIDIFF_UNITY=0: one by one), as the package is.
"""

import functools
import hashlib
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CPP_SRC = ROOT / "cpp" / "src"
OBJECT_CACHE = ROOT / "build" / "cpp-tests"
UNIT_BYTES = 20000  # the least source a unit holds: a unit per file would parse Eigen as often as before


def eigen_include():
    """Directory holding Eigen/Core, or None."""
    for p in sys.path:
        cand = Path(p) / "cmeel.prefix" / "include" / "eigen3"
        if (cand / "Eigen" / "Core").is_file():
            return cand
    for cand in (os.environ.get("EIGEN3_INCLUDE_DIR"), "/usr/include/eigen3"):
        if cand and (Path(cand) / "Eigen" / "Core").is_file():
            return Path(cand)
    return None


def require():
    """Eigen's include directory; skips the test without g++ or Eigen."""
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    eigen = eigen_include()
    if eigen is None:
        pytest.skip("Eigen headers (cmeel-eigen) not found")
    return eigen


def core_sources(*relative):
    """The core's .cpp files named relative to cpp/src, or all of them but the bindings."""
    if relative:
        return [CPP_SRC / r for r in relative]
    return [p for p in sorted(CPP_SRC.rglob("*.cpp")) if p.parent.name != "bind"]


@functools.lru_cache(maxsize=None)
def compiler_version():
    """`g++ --version` and the target triple: objects of another compiler are never reused."""
    version = subprocess.run(["g++", "--version"], capture_output=True, text=True, check=True).stdout
    target = subprocess.run(["g++", "-dumpmachine"], capture_output=True, text=True, check=True).stdout
    return version + target


_DIGESTS = {}


def file_digest(path):
    """SHA-256 of a file's bytes ("missing" when it does not exist), read again only when its size or
    modification time changed."""
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _DIGESTS:
        _DIGESTS[key] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return _DIGESTS[key]


def inputs_digest(src, headers):
    """One digest of the text of a source and of the headers it includes."""
    h = hashlib.sha256()
    for path in [str(src), *sorted(headers)]:
        h.update(f"{path}\0{file_digest(path)}\0".encode())
    return h.hexdigest()[:24]


def dependency_file_headers(dep_file):
    """The files a compilation read, from the dependency file `g++ -MD` wrote, but the source itself."""
    text = Path(dep_file).read_text().replace("\\\n", " ")
    prerequisites = text.split(": ", 1)[1] if ": " in text else ""
    # make's syntax: whitespace separates file names, a space inside one is written "\ "
    files = [f.replace("\\ ", " ") for f in re.split(r"(?<!\\)\s+", prerequisites.strip()) if f]
    return files[1:]  # the first prerequisite is the source


def compile_cached(src, cflags, cache):
    """Path of the object of `src` compiled with `cflags`: from `cache` when the source and every header it
    included when that object was built have the same text, else compiled now and stored for next time."""
    slot = hashlib.sha256("\0".join([compiler_version(), str(src), *cflags]).encode()).hexdigest()[:24]
    name = f"{Path(src).stem}-{slot}"
    manifest = cache / f"{name}.json"
    try:
        cached = cache / f"{name}-{inputs_digest(src, json.loads(manifest.read_text())['headers'])}.o"
        if cached.is_file():
            return cached
    except (OSError, ValueError, KeyError):
        pass  # never built, or an unreadable manifest: compile
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f"{name}.{os.getpid()}.{threading.get_ident()}.tmp"
    res = subprocess.run(["g++", *cflags, "-MD", "-MF", f"{tmp}.d", "-c", str(src), "-o", str(tmp)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-3000:]
    headers = dependency_file_headers(f"{tmp}.d")
    os.unlink(f"{tmp}.d")
    obj = cache / f"{name}-{inputs_digest(src, headers)}.o"
    for stale in cache.glob(f"{name}-*.o"):  # the object of an older text of these files
        stale.unlink(missing_ok=True)
    os.replace(tmp, obj)
    Path(f"{tmp}.json").write_text(json.dumps({"source": str(src), "flags": list(cflags), "headers": headers}))
    os.replace(f"{tmp}.json", manifest)
    return obj


@functools.lru_cache(maxsize=None)
def setup_functions():
    """setup.py's functions, loaded without running setup()."""
    return runpy.run_path(str(ROOT / "setup.py"), run_name="rigidiff_setup")


def unity_sources(sources):
    """`sources` with the core's files (those of cpp/src) replaced by units of setup.py's unity build, written
    in build/cpp-tests/unity/<digest of the set of files>; unchanged when RIGIDIFF_UNITY=0."""
    core = [Path(s) for s in sources if CPP_SRC in Path(s).resolve().parents]
    if os.environ.get("RIGIDIFF_UNITY", "1") == "0" or len(core) < 2:
        return list(sources)
    setup = setup_functions()
    names = sorted(str(p.resolve().relative_to(ROOT)) for p in core)
    size = sum((ROOT / n).stat().st_size for n in names)
    count = max(1, min(setup["UNITY_UNITS"], round(size / UNIT_BYTES)))
    digest = hashlib.sha256("\0".join(names).encode()).hexdigest()[:12]
    folder = (OBJECT_CACHE / "unity" / digest).relative_to(ROOT)
    units = setup["write_units"](setup["unity_units"](names, count, folder), folder)
    return [ROOT / unit for unit in units] + [s for s in sources if Path(s) not in core]


def package_core_objects():
    """The objects setup.py compiled of the core's sources (bind/ left out) for the package, and the flags it
    compiled them with, when they stand for the checkout's sources as they are: compiled by the same compiler
    against the same Eigen as the tests would, each up to date with every file of the checkout it read, and
    every core source in exactly one of them. ``(None, None)`` otherwise: never built here, built by another
    compiler or Eigen, or stale after an edit, in which case the tests compile the core themselves."""
    setup = setup_functions()
    core = {p.resolve() for p in core_sources()}
    here = os.getcwd()
    os.chdir(ROOT)  # the dependency files name the checkout's files relative to it, as the compiler saw them
    try:
        return _fresh_package_objects(setup, core)
    finally:
        os.chdir(here)


def _fresh_package_objects(setup, core):
    for folder in sorted((ROOT / "build").glob("objects-*")):
        try:
            record = json.loads((folder / setup["OBJECTS_RECORD"]).read_text())
            version = subprocess.run([record["compiler"], "--version"], capture_output=True, text=True).stdout
            if version != record["version"] or record["eigen"] != setup["eigen_version"](str(require())):
                continue
        except (OSError, ValueError, KeyError):
            continue
        objects, covered = [], set()
        # a unity unit's object (setup.py writes the units to build/unity), else a source's own (RIGIDIFF_UNITY=0)
        for unit in sorted((ROOT / setup["UNITY_DIR"]).glob("*.cpp")):
            included = {(unit.parent / line.split('"')[1]).resolve() for line in unit.read_text().splitlines()
                        if line.startswith("#include")}
            obj = folder / unit.relative_to(ROOT).with_suffix(".o")
            if included and included <= core and not included & covered and setup["up_to_date"](str(obj), str(unit)):
                objects.append(str(obj))
                covered |= included
        for src in sorted(core - covered):
            obj = folder / src.relative_to(ROOT).with_suffix(".o")
            if setup["up_to_date"](str(obj), str(src)):
                objects.append(str(obj))
                covered.add(src)
        if covered == core:
            return objects, record["flags"]
    return None, None


def build_against_core(programs, exe, core=None, flags=("-O0", "-DNDEBUG"), link_flags=()):
    """Compiles the test's own sources `programs` and links them with the core: with all the package's objects
    (bind/ left out) when `package_core_objects` finds them up to date (the code the package runs, and no
    compile of the core), else by `build` with `core` (the core's sources the programs need; default: all)
    compiled here at `flags`. With the package's objects the programs take its -D/-U flags (NDEBUG,
    EIGEN_NO_DEBUG, ...) instead of those of `flags`, so that every inline function has one meaning."""
    objects, package_flags = package_core_objects()
    if objects is None:
        return build([*(core or core_sources()), *programs], exe, flags=flags, link_flags=link_flags)
    flags = [f for f in flags if not f.startswith(("-D", "-U"))]
    macros = [f for f in package_flags if f.startswith(("-D", "-U"))]
    cflags = ["-std=c++17", *flags, *macros, f"-I{ROOT / 'cpp' / 'include'}", f"-I{require()}"]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        compiled = [str(o) for o in pool.map(lambda src: compile_cached(src, cflags, OBJECT_CACHE), programs)]
    link = subprocess.run(["g++", *compiled, *objects, "-o", str(exe), "-pthread", *link_flags],
                          capture_output=True, text=True)
    assert link.returncode == 0, link.stderr[-3000:]
    return Path(exe)


def build(sources, exe, flags=("-O0", "-DNDEBUG"), link_flags=(), cache=OBJECT_CACHE):
    """Compiles `sources` in parallel (-std=c++17, the core's include path; objects reused from `cache`
    when their inputs did not change; the core's in unity units), links them into `exe` and returns its
    path. Fails the test with the compiler's message on an error."""
    exe = Path(exe)
    cflags = ["-std=c++17", *flags, f"-I{ROOT / 'cpp' / 'include'}", f"-I{require()}"]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        compiled = pool.map(lambda src: compile_cached(src, cflags, Path(cache)), unity_sources(sources))
        objects = [str(o) for o in compiled]
    link = subprocess.run(["g++", *objects, "-o", str(exe), *link_flags], capture_output=True, text=True)
    assert link.returncode == 0, link.stderr[-3000:]
    return exe
