"""Argument checks shared by the Python layer: every error names the argument and the expected shape."""

from __future__ import annotations

import numbers
import os

import numpy as np


def real_array(x, name: str, shape: str = "") -> np.ndarray:
    """``x`` as a float64 array, converting only real numbers (bool, integer, float), as the compiled
    bindings do: complex values (whose imaginary part would be dropped), strings, times and object arrays
    raise ValueError naming ``name`` instead of being converted."""
    what = f"a real-valued array of shape {shape}" if shape else "real-valued"
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be {what}: {exc}") from None
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be {what}, got dtype {arr.dtype}")
    return arr.astype(np.float64, copy=False)


def as_array(x, shape: tuple, name: str, *, finite: bool = True) -> np.ndarray:
    """Return ``x`` as a float64 array of ``shape`` or raise ValueError naming ``name``.

    A ``-1`` entry in ``shape`` matches any length on that axis.
    """
    if type(x) is np.ndarray and x.dtype == np.float64 and x.shape == shape:  # the common case, without formatting
        if finite and not np.isfinite(x).all():
            raise ValueError(f"{name} must be finite, got {x}")
        return x
    arr = real_array(x, name, _fmt(shape))
    if arr.ndim != len(shape) or any(s != -1 and s != n for s, n in zip(shape, arr.shape)):
        raise ValueError(f"{name} must have shape {_fmt(shape)}, got {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr}")
    return arr


def as_scalar(x, name: str, *, minimum=None, strict: bool = False, allow_none: bool = False):
    """Return ``x`` as a finite float, optionally bounded below (``strict``: strictly above ``minimum``)."""
    if x is None and allow_none:
        return None
    if isinstance(x, bool) or not isinstance(x, (numbers.Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a real number, got {x!r}")
    v = float(x)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    if minimum is not None and (v < minimum or (strict and v == minimum)):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {minimum}, got {v}")
    return v


def as_bool(x, name: str) -> bool:
    """Return ``x`` as a bool or raise TypeError naming ``name``: a flag given as "no", 0.5 or None would
    otherwise be read by its truthiness."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    raise TypeError(f"{name} must be True or False, got {x!r}")


def as_name(x, what: str) -> str:
    """Return ``x`` if it is a non-empty string, else raise ValueError naming ``what``."""
    if not isinstance(x, str) or not x:
        raise ValueError(f"{what} must be a non-empty string, got {x!r}")
    return x


#: the largest size or coordinate (m) a collision shape may have: contact distances square lengths, and past
#: about 1e154 m the squares overflow double precision and contacts vanish without a word; 1e12 m leaves
#: every product of the narrow phase far inside the range
MAX_COLLISION_LENGTH = 1e12

#: environment variable that sets the thread count meant by threads=None (every core when unset)
THREADS_VARIABLE = "RIGIDIFF_THREADS"


def as_threads(threads) -> int:
    """The thread count of a batch call or a projective world: an integer in [1, 4096] (ValueError naming
    ``threads``), or None: the RIGIDIFF_THREADS environment variable when set (processes run side by side,
    such as test workers, then do not each start a thread per core), otherwise every core."""
    if threads is None:
        text = os.environ.get(THREADS_VARIABLE, "").strip()
        if not text:
            return os.cpu_count() or 1
        try:
            count = int(text)
        except ValueError:
            count = 0
        if not 1 <= count <= 4096:
            raise ValueError(f"the {THREADS_VARIABLE} environment variable must be an integer in [1, 4096] (or "
                             f"unset: every core), got {text!r}")
        return count
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or not 1 <= threads <= 4096:
        raise ValueError(f"threads must be an integer in [1, 4096] (or None: every core), got {threads!r}")
    return int(threads)


def _fmt(shape: tuple) -> str:
    return "(" + ", ".join("N" if s == -1 else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
