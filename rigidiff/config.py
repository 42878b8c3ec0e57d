"""Build and runtime configuration report."""

from __future__ import annotations

import platform
import sys


def show_config(file=None) -> dict:
    """Print (and return) the versions of rigidiff and its build: Eigen, Cython, numpy, compile flags."""
    import numpy

    from rigidiff import _core
    from rigidiff._version import __version__

    try:
        import Cython

        cython_version = Cython.__version__
    except ImportError:  # Cython is a build-time dependency only
        cython_version = "not installed (build-time only)"
    info = {
        "rigidiff": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "numpy": numpy.__version__,
        "eigen": _core.EIGEN_VERSION,
        "cython": cython_version,
        "compile_flags": _core.COMPILE_FLAGS,
        "extension": _core.__file__,
    }
    width = max(map(len, info))
    for key, value in info.items():
        print(f"{key:<{width}} : {value}", file=file or sys.stdout)
    return info
