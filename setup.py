"""Build of the extension rigidiff._core (Cython 3 + C++17 + Eigen from the cmeel-eigen wheel), and of
rigidiff._testing, the bindings only tests use, linked from the same C++ objects.

Environment switches: RIGIDIFF_EIGEN_INCLUDE / EIGEN3_INCLUDE_DIR (Eigen headers), RIGIDIFF_BUILD_JOBS
(parallel C++ compile jobs, default: CPU count), RIGIDIFF_DEBUG=1 (-O0 -g, asserts on),
RIGIDIFF_NATIVE=1 (-march=native; off by default so the build runs on any x86-64 / aarch64 machine),
RIGIDIFF_UNITY=0 (one compile per C++ source instead of the unity build, see unity_units).
"""

import hashlib
import json
import os
import platform
import site
import subprocess
import sys
import sysconfig
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent.resolve()


def find_eigen() -> str:
    """Eigen's include folder: env override, then cmeel.prefix on any site path, then the system."""
    tried = []
    for var in ("RIGIDIFF_EIGEN_INCLUDE", "EIGEN3_INCLUDE_DIR"):
        if os.environ.get(var):
            tried.append(os.environ[var])
    paths = list(sys.path) + [sysconfig.get_paths()[k] for k in ("purelib", "platlib")]
    try:
        paths += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # some virtualenv versions lack getsitepackages
        pass
    tried += [str(Path(p) / "cmeel.prefix" / "include" / "eigen3") for p in paths if p]
    tried += ["/usr/include/eigen3", "/usr/local/include/eigen3"]
    for cand in tried:
        if (Path(cand) / "Eigen" / "Core").is_file():
            return cand
    raise RuntimeError(
        "rigidiff needs Eigen's headers; none found. Install them with `pip install cmeel-eigen` or set "
        "EIGEN3_INCLUDE_DIR. Paths tried:\n  " + "\n  ".join(dict.fromkeys(tried))
    )


def eigen_version(include: str) -> str:
    text = (Path(include) / "Eigen" / "src" / "Core" / "util" / "Macros.h").read_text()
    parts = []
    for key in ("EIGEN_WORLD_VERSION", "EIGEN_MAJOR_VERSION", "EIGEN_MINOR_VERSION"):
        line = next(ln for ln in text.splitlines() if ln.startswith(f"#define {key}"))
        parts.append(line.split()[-1])
    return ".".join(parts)


def compile_flags() -> list:
    if os.environ.get("RIGIDIFF_DEBUG") == "1":
        flags = ["-std=c++17", "-O0", "-g", "-UNDEBUG"]
    else:
        flags = ["-std=c++17", "-O3", "-g0", "-DNDEBUG", "-DEIGEN_NO_DEBUG"]
    flags += ["-fvisibility=hidden", "-DEIGEN_MPL2_ONLY", "-Wno-unused-function"]
    if os.environ.get("RIGIDIFF_NATIVE") == "1":
        flags.append("-march=native")
    return flags


class ParallelBuildExt(build_ext):
    """build_ext that compiles the C++ sources of the extensions in parallel, one progress line per file on
    stderr, into a build directory of the checkout that outlives pip's isolated build environments (see
    object_dir), and skips up-to-date objects."""

    def build_extensions(self):
        jobs = int(os.environ.get("RIGIDIFF_BUILD_JOBS", os.cpu_count() or 1))
        compiler = self.compiler
        # GCC caps inlining in a unit past 10000 instructions (large-unit-insns), which a unity unit is and a
        # single source is not: without this, small inline functions of the headers (SE3::actInv in rnea,
        # ...) stay calls and the dynamics run up to 20 % slower
        gcc = "Free Software Foundation" in compiler_version(compiler.compiler_so[0])
        unit_params = ["--param", "large-unit-insns=1000000"] if gcc and unity_enabled() else []
        # GCC collects its garbage each time its heap grows past max(this, 1.x its size after the last
        # collection); the default (RAM/8, at most 128 MB) makes it collect often in units that reach 2 GB:
        # 1 GB saves 7-13 % of the compile time for 10 % more peak memory (measured on the world units)
        gc_params = ["--param", "ggc-min-heapsize=1048576"] if gcc else []

        def unit_flags(src):
            return unit_params if Path(os.path.abspath(src)).parent == ROOT / UNITY_DIR else []

        original = compiler.compile
        flags = self.extensions[0].extra_compile_args + gc_params + unit_params
        self.build_temp = str(object_dir(compiler.compiler_so[0], flags))
        record_objects(self.build_temp, compiler.compiler_so[0], flags)
        # always link (seconds): a .so linked from another folder's objects (another numpy, Python, ...) is
        # never kept because its sources or objects are older than it
        self.force = compiler.force = True

        def parallel_compile(sources, output_dir=None, macros=None, include_dirs=None, debug=0, extra_preargs=None,
                             extra_postargs=None, depends=None):
            macros, objects, extra, pp_opts, build = compiler._setup_compile(
                output_dir, macros, include_dirs, sources, depends, extra_postargs)
            cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)
            # longest first: the large files do not start last while the other job idles
            stale = sorted((obj for obj in objects if not up_to_date(obj, build[obj][0])),
                           key=lambda obj: -compile_cost(build[obj][0]))
            where = os.path.relpath(self.build_temp, ROOT)
            if not stale:
                log(f"all {len(objects)} C++ files up to date in {where}")
            elif len(stale) == len(objects):
                log(f"compiling {len(stale)} C++ files into {where} ({max(1, jobs)} jobs)")
            else:
                log(f"compiling {len(stale)} of {len(objects)} C++ files ({max(1, jobs)} jobs; the other "
                    f"{len(objects) - len(stale)} are up to date in {where})")
            done = iter(range(1, len(stale) + 1))

            def one(obj):
                src, ext = build[obj]
                start = time.monotonic()
                # -MMD: the compiler writes the list of included files next to the object (see up_to_date)
                deps = ["-MMD", "-MF", obj + ".d"] if ext in (".cpp", ".cc") else []
                compiler._compile(obj, src, ext, cc_args, list(extra) + gc_params + unit_flags(src) + deps, pp_opts)
                log(f"[{next(done)}/{len(stale)}] {os.path.relpath(src, ROOT)} ({time.monotonic() - start:.0f} s)")

            with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
                list(pool.map(one, stale))
            return objects

        compiler.compile = parallel_compile
        try:
            # the sources of every extension in one pool, so that no job waits while another extension's
            # last file compiles; build_extension then finds these objects up to date and only links
            first = self.extensions[0]
            def settings(e):
                return e.define_macros, e.undef_macros, e.include_dirs, e.extra_compile_args

            same = [e for e in self.extensions if settings(e) == settings(first)]
            sources = list(dict.fromkeys(s for e in same for s in e.sources))
            macros = first.define_macros + [(name,) for name in first.undef_macros]
            parallel_compile(sources, self.build_temp, macros, first.include_dirs, self.debug,
                             extra_postargs=first.extra_compile_args, depends=first.depends)
            super().build_extensions()
        finally:
            compiler.compile = original


def log(message: str) -> None:
    """One progress line on stderr (pip shows it with -v)."""
    print(f"rigidiff: {message}", file=sys.stderr, flush=True)


def compiler_version(compiler: str) -> str:
    """`compiler --version`, or the compiler's name when it cannot say."""
    try:
        return subprocess.run([compiler, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return compiler


def object_dir(compiler: str, flags: list) -> Path:
    """build/objects-<key> in the checkout: pip builds in the checkout but installs Eigen, numpy and Cython
    in a new temporary environment each time, so the objects live in a folder named by everything outside
    the checkout they depend on (compiler, flags, Python, numpy, Cython, Eigen, C library versions), and
    `up_to_date` only compares them with the files of the checkout."""
    import Cython
    import numpy

    key = "\n".join([compiler_version(compiler), *flags, sys.version, sysconfig.get_config_var("EXT_SUFFIX") or "",
                     numpy.__version__, Cython.__version__, eigen_version(find_eigen()), " ".join(platform.libc_ver())])
    return ROOT / "build" / f"objects-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


OBJECTS_RECORD = "objects.json"


def record_objects(folder: str, compiler: str, flags: list) -> None:
    """Writes what the objects of `folder` were compiled with (compiler, its version, Eigen's version, flags),
    so that the C++ tests (tests/cpp/cppbuild.py) can link their programs against the package's own objects
    instead of compiling the core again."""
    record = {"compiler": compiler, "version": compiler_version(compiler), "eigen": eigen_version(find_eigen()),
              "flags": flags}
    path = Path(folder) / OBJECTS_RECORD
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, indent=1)
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)


HEADERS_MTIME = max((p.stat().st_mtime for p in (ROOT / "cpp" / "include").rglob("*.hpp")), default=0.0)


def up_to_date(obj: str, src: str) -> bool:
    """Whether `obj` is newer than its source and the checkout's headers it included when it was built (from
    the compiler's dependency file; every project header counts when there is none). Headers outside the
    checkout (Eigen, numpy, Python, the C++ library) are covered by the name of the object folder."""
    if not os.path.exists(obj):
        return False
    dep_file = obj + ".d"
    if not os.path.exists(dep_file):
        return os.path.getmtime(obj) >= max(os.path.getmtime(src), HEADERS_MTIME)
    text = open(dep_file).read().replace("\\\n", " ")
    deps = text.split(":", 1)[1].split() if ":" in text else []
    newest = os.path.getmtime(src)
    for dep in deps:
        path = Path(os.path.abspath(dep))  # relative names are relative to the folder the compiler ran in
        if ROOT not in path.resolve().parents:
            continue
        try:
            newest = max(newest, path.stat().st_mtime)
        except OSError:  # a header of the checkout that no longer exists: rebuild
            return False
    return os.path.getmtime(obj) >= newest


# Sources a unity build compiles on their own, {source: why}: a name of their anonymous namespace that
# another source of their folder also defines, or code that runs measurably slower when compiled inside a
# large unit (GCC lays out and inlines ABA's sweeps differently there: talos' aba and step were 5 % slower,
# bench_dynamics.py).
UNITY_ALONE = {
    "cpp/src/algorithm/jacobian.cpp": "toFrame, as in cpp/src/algorithm/kinematics_derivatives.cpp",
    "cpp/src/algorithm/aba.cpp": "speed: the articulated-body algorithm, the step's hot path",
    "cpp/src/world/barrier_contacts.cpp": "compile time: its pair kernels (fixed-size eigen-solvers) made the "
                                          "barrier unit the build's long pole (83 s of a 197 s build)",
}
UNITY_UNITS = 8  # about: enough for 2 jobs to stay busy to the end, few enough to parse Eigen rarely
UNITY_DIR = Path("build") / "unity"


def unity_enabled() -> bool:
    return os.environ.get("RIGIDIFF_UNITY", "1") != "0"


def unity_units(sources: list, units: int = UNITY_UNITS, folder: Path = UNITY_DIR) -> dict:
    """The unity build: {generated unit (path relative to the checkout): [the C++ sources it includes]}.

    Each source of cpp/src is compiled once, as part of one unit, so that the Eigen headers are parsed and
    their templates instantiated and optimized once per unit instead of once per file. A unit holds
    consecutive files (by name) of one folder of cpp/src; folders smaller than half a unit share one; each
    group is cut into units of about equal size (bytes of source), `units` in all (or one per source when
    there are fewer). Sources named in UNITY_ALONE are a unit of their own. `sources` and the units are paths
    relative to the checkout; the units are named in `folder`."""
    total = sum(source_size(s) for s in sources) or 1
    target = total / max(1, units)
    by_domain = {}
    for src in sorted(sources):
        if src not in UNITY_ALONE:
            by_domain.setdefault(str(Path(src).parent.relative_to("cpp/src")), []).append(src)
    groups, small = {}, []
    for domain, files in by_domain.items():
        if sum(source_size(f) for f in files) < target / 2:
            small += files
        else:
            groups[domain.replace("/", "_")] = files
    if small:
        groups["misc"] = small
    result = {}
    for name, files in sorted(groups.items()):
        size = sum(source_size(f) for f in files)
        chunks = split_evenly(files, max(1, round(size / target)))
        for i, chunk in enumerate(chunks):
            result[str(folder / (f"{name}_{i + 1}.cpp" if len(chunks) > 1 else f"{name}.cpp"))] = chunk
    for src in sorted(s for s in sources if s in UNITY_ALONE):
        result[str(folder / (str(Path(src).with_suffix("")).replace("/", "_")[len("cpp_src_"):] + ".cpp"))] = [src]
    return result


def source_size(src: str) -> int:
    return (ROOT / src).stat().st_size


def split_evenly(files: list, count: int) -> list:
    """`files` cut in `count` runs of consecutive files whose sizes add up to about the same."""
    count = min(count, len(files))
    total = sum(source_size(f) for f in files)
    chunks, current, done = [], [], 0
    for i, f in enumerate(files):
        # close the run when this file would take it further past its share than stopping short of it, or
        # when the files left are just enough for one run each
        share = total * (len(chunks) + 1) / count
        past = done + source_size(f) - share > share - done
        if current and len(chunks) < count - 1 and (past or len(files) - i == count - len(chunks) - 1):
            chunks.append(current)
            current = []
        current.append(f)
        done += source_size(f)
    chunks.append(current)
    return chunks


def write_units(units: dict, folder: Path = UNITY_DIR) -> list:
    """Writes the units of `unity_units` (a file only when its text changes, so that its object stays up to
    date) and removes the units of an earlier grouping from `folder`; returns their paths."""
    folder = ROOT / folder
    folder.mkdir(parents=True, exist_ok=True)
    for unit, files in units.items():
        path = ROOT / unit
        text = "// Generated by setup.py (unity build, RIGIDIFF_UNITY=0 turns it off): one translation unit for\n"
        text += "// the sources below.\n" + "".join(
            f'#include "{os.path.relpath(ROOT / f, path.parent)}"\n' for f in files)
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
    keep = {(ROOT / unit).resolve() for unit in units}
    for old in folder.glob("*.cpp"):
        if old.resolve() not in keep:
            old.unlink()
    return list(units)


def compile_cost(src: str) -> int:
    """Bytes of C++ a compile of `src` reads from the checkout (its own, or a unit's sources'): the order
    the parallel build starts files in."""
    path = Path(src) if os.path.isabs(src) else ROOT / src
    if path.parent == ROOT / UNITY_DIR:
        included = [ln.split('"')[1] for ln in path.read_text().splitlines() if ln.startswith("#include")]
        return sum((path.parent / f).stat().st_size for f in included)
    return path.stat().st_size


def extensions():
    import Cython
    import numpy
    from Cython.Build import cythonize

    eigen = find_eigen()
    print(f"rigidiff: Eigen {eigen_version(eigen)} from {eigen}")
    cpp = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "cpp" / "src").rglob("*.cpp"))
    if unity_enabled():
        cpp = write_units(unity_units(cpp))
        print(f"rigidiff: unity build, {len(cpp)} C++ units (RIGIDIFF_UNITY=0: one compile per source)")
    flags = compile_flags()
    ext = Extension(
        "rigidiff._core",
        sources=["rigidiff/_core.pyx"] + cpp,
        include_dirs=["cpp/include", eigen, numpy.get_include()],
        language="c++",
        # headers and Cython includes: touching one triggers a rebuild (objects are still reused when newer)
        depends=sorted(str(p.relative_to(ROOT)) for p in (ROOT / "cpp" / "include").rglob("*.hpp"))
        + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "rigidiff").rglob("*.px[di]")),
        extra_compile_args=flags,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION"),
                       ("RIGIDIFF_EIGEN_VERSION", f'"{eigen_version(eigen)}"'),
                       ("RIGIDIFF_COMPILE_FLAGS", '"' + " ".join(flags) + '"'),
                       ("RIGIDIFF_CYTHON_VERSION", f'"{Cython.__version__}"'),
                       ("RIGIDIFF_NUMPY_BUILD_VERSION", f'"{numpy.__version__}"')],
    )
    # the bindings only tests use, in an extension of their own (linked from the same objects: the build
    # compiles each C++ source once)
    testing = Extension(
        "rigidiff._testing",
        sources=["rigidiff/_testing.pyx"] + cpp,
        include_dirs=ext.include_dirs,
        language="c++",
        depends=ext.depends,
        extra_compile_args=flags,
        define_macros=ext.define_macros,
    )
    debug = os.environ.get("RIGIDIFF_DEBUG") == "1"
    # the generated C++ depends on the project's Cython files and, outside the checkout, on Cython's version,
    # numpy's .pxd and the directives: a folder per Cython, numpy and directive set
    build_dir = f"build/cython/{Cython.__version__}-numpy{numpy.__version__}" + ("-debug" if debug else "")
    if cython_up_to_date(build_dir, [ext, testing]):
        # cythonize would translate again because pip's new environment holds Cython's and numpy's .pxd
        # files with new dates, and the new C++ file would be compiled again
        for e in (ext, testing):
            e.sources = [generated_source(build_dir, s) if s.endswith(".pyx") else s for s in e.sources]
        return [ext, testing]
    return cythonize(
        [ext, testing],
        build_dir=build_dir,
        compiler_directives={
            "language_level": 3,
            "boundscheck": debug,
            "wraparound": False,
            "cdivision": True,
            "embedsignature": True,
            "binding": True,
        },
    )


def generated_source(build_dir: str, pyx: str) -> str:
    """The C++ file cythonize writes for `pyx` into `build_dir`."""
    return os.path.join(build_dir, str(Path(pyx).with_suffix(".cpp")))


def cython_up_to_date(build_dir: str, exts: list) -> bool:
    """Whether the C++ files generated from the extensions' .pyx files exist in `build_dir` and are newer
    than every Cython file of the package (.pyx, .pxd, .pxi)."""
    newest = max(p.stat().st_mtime for p in (ROOT / "rigidiff").rglob("*.px[dix]"))
    generated = [ROOT / generated_source(build_dir, s) for e in exts for s in e.sources if s.endswith(".pyx")]
    return all(g.is_file() and g.stat().st_mtime >= newest for g in generated)


if __name__ == "__main__":  # pip's build backend runs this file as __main__; tests import its functions
    setup(ext_modules=extensions(), cmdclass={"build_ext": ParallelBuildExt})
