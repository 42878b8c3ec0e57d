"""Build of the extension rigidiff._core (Cython 3 + C++17 + Eigen from the cmeel-eigen wheel), and of
rigidiff._testing, the bindings only tests use, linked from the same C++ objects.

Environment switches: RIGIDIFF_EIGEN_INCLUDE / EIGEN3_INCLUDE_DIR (Eigen headers), RIGIDIFF_BUILD_JOBS
(parallel C++ compile jobs, default: CPU count), RIGIDIFF_DEBUG=1 (-O0 -g, asserts on),
RIGIDIFF_NATIVE=1 (-march=native; off by default so the build runs on any x86-64 / aarch64 machine).
"""

import os
import site
import sys
import sysconfig
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
    """build_ext that compiles the C++ sources of the extensions in parallel and skips up-to-date objects."""

    def build_extensions(self):
        jobs = int(os.environ.get("RIGIDIFF_BUILD_JOBS", os.cpu_count() or 1))
        compiler = self.compiler
        original = compiler.compile

        def parallel_compile(sources, output_dir=None, macros=None, include_dirs=None, debug=0, extra_preargs=None,
                             extra_postargs=None, depends=None):
            macros, objects, extra, pp_opts, build = compiler._setup_compile(
                output_dir, macros, include_dirs, sources, depends, extra_postargs)
            cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)

            def one(obj):
                src, ext = build[obj]
                # incremental: rebuild an object only when its source or a header it includes is newer (the
                # compiler writes the list of included files next to the object, -MMD)
                if os.path.exists(obj) and os.path.getmtime(obj) >= newest_input(obj, src):
                    return
                deps = ["-MMD", "-MF", obj + ".d"] if ext in (".cpp", ".cc") else []
                compiler._compile(obj, src, ext, cc_args, list(extra) + deps, pp_opts)

            with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
                list(pool.map(one, objects))
            return objects

        compiler.compile = parallel_compile
        try:
            super().build_extensions()
        finally:
            compiler.compile = original


HEADERS_MTIME = max((p.stat().st_mtime for p in (ROOT / "cpp" / "include").rglob("*.hpp")), default=0.0)


def newest_input(obj: str, src: str) -> float:
    """Newest modification time of a source and the headers it included when `obj` was last built (from
    the compiler's dependency file); every project header counts when there is no such file."""
    dep_file = obj + ".d"
    if not os.path.exists(dep_file):
        return max(os.path.getmtime(src), HEADERS_MTIME)
    text = open(dep_file).read().replace("\\\n", " ")
    deps = text.split(":", 1)[1].split() if ":" in text else []
    newest = os.path.getmtime(src)
    for dep in deps:
        try:
            newest = max(newest, os.path.getmtime(dep))
        except OSError:  # a header that no longer exists: rebuild
            return float("inf")
    return newest


def extensions():
    import Cython
    import numpy
    from Cython.Build import cythonize

    eigen = find_eigen()
    print(f"rigidiff: Eigen {eigen_version(eigen)} from {eigen}")
    cpp = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "cpp" / "src").rglob("*.cpp"))
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
    return cythonize(
        [ext, testing],
        build_dir="build/cython",
        compiler_directives={
            "language_level": 3,
            "boundscheck": debug,
            "wraparound": False,
            "cdivision": True,
            "embedsignature": True,
            "binding": True,
        },
    )


setup(ext_modules=extensions(), cmdclass={"build_ext": ParallelBuildExt})
