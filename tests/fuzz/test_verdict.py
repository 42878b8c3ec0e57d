"""The checks of verdict.py catch each broken promise: a byte-swapped array read as raw bytes, an imaginary
part dropped, a silent NaN, an error that does not name the argument, another library's exception."""

import numpy as np

import verdict
from hostile import EITHER, SAME, VALUES, Arg, variants

X = np.array([0.1, 0.3, -0.2])


def _check(fn, var, name="x"):
    reference = verdict.call(fn, {name: var.reference}) if var.reference is not None else None
    return verdict.check(var.expect, verdict.call(fn, {name: var.value}), reference, [name])


def _by_label(label):
    return next(v for v in variants(Arg("x", X)) if v.label == label)


def test_a_function_that_reads_raw_bytes_is_caught():
    def raw(x):  # reads the buffer as native doubles whatever its byte order
        arr = np.asarray(x)
        return np.frombuffer(np.ascontiguousarray(arr).tobytes(), dtype=np.float64) * 2.0

    problem = _check(raw, _by_label(">f8 / <f8 swapped"))
    assert problem is not None and "differs from the float64 call" in problem
    assert _check(lambda x: np.asarray(x, dtype=np.float64) * 2.0, _by_label(">f8 / <f8 swapped")) is None


def test_dropping_an_imaginary_part_is_caught():
    problem = _check(lambda x: np.real(np.asarray(x)).astype(np.float64), _by_label("complex"))
    assert problem.startswith("accepted an invalid x")


def test_an_error_must_be_a_value_or_type_error_naming_the_argument():
    def refuse(message, kind=ValueError):
        def f(x):
            raise kind(message)
        return f

    var = _by_label("complex")
    assert _check(refuse("x must be a real-valued array"), var) is None
    assert "does not name x" in _check(refuse("the array must be real"), var)
    assert "does not name x" in _check(refuse("xs must be real"), var)  # another argument's name
    assert "instead of a ValueError/TypeError" in _check(refuse("x is bad", KeyError), var)


def test_a_silent_nan_or_a_foreign_runtime_error_is_caught():
    var = next(v for v in variants(Arg("x", X)) if v.expect == VALUES and "nan" in v.label)
    assert _check(lambda x: np.asarray(x) * 2.0, var) == "returned non-finite values without an error"

    class ForeignError(RuntimeError):
        pass

    def foreign(x):
        raise ForeignError("QH6214 qhull input error")

    assert "instead of a ValueError/TypeError" in _check(foreign, var)

    def diverged(x):
        raise RuntimeError("the step diverged")

    assert _check(diverged, var) is None


def test_either_accepts_the_same_result_or_a_clean_refusal():
    var = _by_label("object")
    assert var.expect == EITHER
    assert _check(lambda x: np.asarray(x, dtype=np.float64) + 1.0, var) is None
    assert _check(lambda x: np.asarray(x, dtype=np.float64) + 2.0 if np.asarray(x).dtype == object
                  else np.asarray(x) + 1.0, var) is not None

    def refuse(x):
        if np.asarray(x).dtype == object:
            raise ValueError("x must be real-valued, got dtype object")
        return np.asarray(x)

    assert _check(refuse, var) is None


def test_same_demands_the_same_exception_type():
    var = _by_label("float32")
    assert var.expect == SAME

    def refuses_float32(x):
        if np.asarray(x).dtype == np.float32:
            raise ValueError("x is refused")
        return np.asarray(x)

    assert "but the float64 call returned" in _check(refuses_float32, var)
