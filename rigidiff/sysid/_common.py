"""Shared by the two fits: the RMS of a residual, the identifiability warning, guarded simulation."""

from __future__ import annotations

import warnings

import numpy as np


def rms(r: np.ndarray) -> float:
    return float(np.sqrt(np.mean(r**2)))


def rank_warning(rank: int, n: int) -> str:
    text = (f"only {rank} of the {n} parameters are identifiable from these data: other values fit them "
            "equally well (docs/sysid.md, Limits)")
    warnings.warn(text, UserWarning, stacklevel=4)
    return "; " + text



def guarded(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except RuntimeError as exc:
        raise RuntimeError(f"simulating the recording failed at the current parameter values: {exc}") from exc
