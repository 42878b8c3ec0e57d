"""Build and runtime configuration report."""

from __future__ import annotations

import platform
import sys


def show_config(file=None) -> dict:
    """Print (and return) the versions of rigidiff and its build: Eigen, Cython, numpy, compile flags, and the
    kernel of the derivatives' dense products on this CPU. file: a text stream with a write method (stdout if
    None)."""
    import numpy

    if file is not None and not callable(getattr(file, "write", None)):
        raise TypeError(f"file must be a text stream with a write method (or None for stdout), got {file!r}")

    from rigidiff import _core
    from rigidiff._version import __version__

    info = {
        "rigidiff": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "numpy": f"{numpy.__version__} (built against {_core.NUMPY_BUILD_VERSION})",
        "eigen": _core.EIGEN_VERSION,
        "cython": _core.CYTHON_VERSION,
        "compile_flags": _core.COMPILE_FLAGS,
        "dense_kernel": "avx2+fma (chosen at run time)" if _core._dense_product_uses_avx2() else "eigen",
        "extension": _core.__file__,
    }
    width = max(map(len, info))
    for key, value in info.items():
        print(f"{key:<{width}} : {value}", file=file or sys.stdout)
    return info
