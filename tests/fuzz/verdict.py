"""What a call owes a variant (hostile.py): the outcome of one call, and the check of an outcome against
the expectation. A check returns None when the outcome is what the API promises, else a sentence saying
what went wrong."""

from __future__ import annotations

import enum
import re
import warnings
from dataclasses import dataclass

import numpy as np
from hostile import EITHER, REJECT, SAME, VALUES

CLEAN_REJECTIONS = (ValueError, TypeError)


@dataclass
class Outcome:
    outputs: list | None = None  # the results flattened to arrays, when the call returned
    error: BaseException | None = None

    def describe(self) -> str:
        if self.error is not None:
            return f"{type(self.error).__name__}: {str(self.error)[:300]}"
        return f"returned {len(self.outputs)} arrays"


def flatten(result) -> list:
    """Every number a call returned, as arrays in a fixed order (tuples, lists, dicts, result objects)."""
    if result is None:
        return []
    if isinstance(result, np.ndarray):
        return [result]
    if isinstance(result, (bool, int, float, complex, np.generic, enum.Enum, str)):
        return [np.asarray(int(result) if isinstance(result, enum.Enum) else result)]
    if isinstance(result, (tuple, list)):
        return [x for r in result for x in flatten(r)]
    if isinstance(result, dict):
        return [x for k in sorted(result) for x in flatten(result[k])]
    if hasattr(result, "__dict__"):
        return flatten(vars(result))
    raise TypeError(f"cannot flatten a {type(result).__name__}")


def call(fn, args: dict) -> Outcome:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a refused value may warn first (ComplexWarning, overflow)
        try:
            return Outcome(outputs=flatten(fn(**args)))
        except Exception as exc:  # judged by the checks below
            return Outcome(error=exc)


def names_one_of(message: str, names) -> bool:
    return any(re.search(rf"(?<![\w.]){re.escape(n)}(?![\w(])", message) for n in names)


def check_rejected(outcome: Outcome, names) -> str | None:
    """A ValueError or TypeError naming one of ``names``."""
    if outcome.error is None:
        return f"accepted an invalid {' or '.join(names)} ({outcome.describe()})"
    if not isinstance(outcome.error, CLEAN_REJECTIONS):
        return f"raised {outcome.describe()} instead of a ValueError/TypeError"
    if not names_one_of(str(outcome.error), names):
        return f"the error does not name {' or '.join(names)}: {outcome.describe()}"
    return None


def check_clean(outcome: Outcome, names, infinite_ok: bool = False) -> str | None:
    """The outcome of native float64 arguments that may hold NaN, inf or huge values: finite results, a
    clean rejection naming the argument, or a RuntimeError with a message (a computation that failed, e.g.
    a diverged step)."""
    if outcome.error is not None:
        # rigidiff's own RuntimeError: a subclass is another library's error escaping (scipy's QhullError)
        if type(outcome.error) is RuntimeError and str(outcome.error):
            return None
        return check_rejected(outcome, names)
    for out in outcome.outputs:
        if out.dtype.kind in "fc" and not np.all(np.isfinite(out) | (infinite_ok & np.isinf(out))):
            return "returned non-finite values without an error"
    return None


def check_same(outcome: Outcome, reference: Outcome) -> str | None:
    """Bit for bit what the native float64 call returned, or an exception of the same type."""
    if reference.error is not None or outcome.error is not None:
        if type(outcome.error) is type(reference.error):
            return None
        return f"{outcome.describe()}, but the float64 call {reference.describe()}"
    if len(outcome.outputs) != len(reference.outputs):
        return f"returned {len(outcome.outputs)} arrays, the float64 call {len(reference.outputs)}"
    for i, (a, b) in enumerate(zip(outcome.outputs, reference.outputs)):
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"output {i} is {a.dtype}{a.shape}, the float64 call's {b.dtype}{b.shape}"
        if not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
            diff = np.max(np.abs(a.astype(float) - b.astype(float))) if a.dtype.kind in "biuf" else "?"
            return f"output {i} differs from the float64 call's (max difference {diff})"
    return None


def check(expect: str, outcome: Outcome, reference: Outcome | None, names, infinite_ok: bool = False) -> str | None:
    if expect == SAME:
        return check_same(outcome, reference)
    if expect == REJECT:
        return check_rejected(outcome, names)
    if expect == EITHER:
        if outcome.error is None or not isinstance(outcome.error, CLEAN_REJECTIONS):
            return check_same(outcome, reference)
        return check_rejected(outcome, names)
    if expect == VALUES:
        return check_clean(outcome, names, infinite_ok)
    raise AssertionError(expect)
