"""Hostile variants of one argument: other dtypes, byte orders, strides, read-only buffers, wrong shapes and
non-finite or huge values, each with the outcome the public API owes it.

An argument is described by an ``Arg``: a float64 (or integer) reference value and the shapes it accepts.
``variants(arg)`` lists every variant class once (the fast run); ``random_variant(arg, rng)`` composes a
dtype, a layout and a value change at random (the long run). Each ``Variant`` says what is expected:

- SAME: the same numbers in another dtype or memory layout. Every accepted dtype converts to float64
  exactly (bool, integers up to 2**53, float16, float32), so the call must return bit for bit what it
  returns for ``np.asarray(value, dtype=np.float64)`` (or raise the same exception type).
- REJECT: not a valid value for the argument (complex, strings, None, a shape it does not accept): a
  ValueError or TypeError whose message names the argument.
- EITHER: object arrays, which a function may accept (then as SAME) or refuse (then as REJECT).
- VALUES: NaN, inf or a huge entry in a native float64 array: a ValueError/TypeError naming the
  argument, a RuntimeError (a failed computation), or finite results; never a crash or a silent NaN.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

SAME, REJECT, EITHER, VALUES = "same", "reject", "either", "values"

# entries written into an otherwise valid array (kind "value")
HOSTILE_NUMBERS = (np.nan, np.inf, -np.inf, 1e300, -1e300, 1e20, -1e20, 5e-324, -0.0)


@dataclass(frozen=True)
class Arg:
    """One array (or scalar) argument.

    name: the argument's name as the error message must spell it.
    value: a valid reference value (float64, or int64 when ``integer``).
    shapes: the accepted shapes; -1 matches any length on that axis.
    integer: an index array (its float variants may be accepted or refused).
    required: None is not a valid value.
    aliases: other words an error may use to name the argument (``set_parameters`` names the parameter).
    kinds: the variant kinds that apply (an argument that reaches rigidiff through another library, as a
        trimesh's vertices do, is only varied in its values and shape).
    """

    name: str
    value: np.ndarray
    shapes: tuple = ()
    integer: bool = False
    required: bool = True
    aliases: tuple = ()
    kinds: tuple = ("dtype", "shape", "value", "layout")

    def __post_init__(self):
        value = np.asarray(self.value, dtype=np.int64 if self.integer else np.float64)
        object.__setattr__(self, "value", value)
        if not self.shapes:
            object.__setattr__(self, "shapes", (value.shape,))

    @property
    def scalar(self) -> bool:
        return self.value.ndim == 0

    @property
    def names(self) -> tuple:
        return (self.name,) + self.aliases

    def accepts_shape(self, shape) -> bool:
        return any(len(s) == len(shape) and all(a in (-1, b) for a, b in zip(s, shape)) for s in self.shapes)


@dataclass(frozen=True)
class Variant:
    kind: str  # "dtype", "byte order", "stride", "read-only", "shape", "value" or a combination "a+b"
    label: str
    value: object
    expect: str
    reference: object = field(default=None, compare=False)  # the float64 native value for SAME / EITHER


def _native(value, arg):
    """The native, C-contiguous float64 array (int64 for an index argument) with the values of ``value``: the
    arguments of the reference call."""
    arr = np.array(value, dtype=np.int64 if arg.integer else np.float64, order="C")  # keeps 0-d
    return arr.item() if arr.ndim == 0 else arr  # a scalar argument's reference is a Python number


def _same(kind, label, value, arg):
    return Variant(kind, label, value, SAME if arg.accepts_shape(np.shape(value)) else REJECT, _native(value, arg))


# ------------------------------------------------------------------------------------------- layouts
def byte_swapped(x):
    return x.astype(x.dtype.newbyteorder(">" if x.dtype.byteorder in "=<|" else "<"))


def strided(x):
    if x.ndim == 0:
        return x.copy()
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), dtype=x.dtype)
    wide[..., ::2] = x
    return wide[..., ::2]


def negative_stride(x):
    return np.flip(np.flip(x).copy())


def unaligned(x):
    buf = np.zeros(x.size * x.itemsize + 1, dtype=np.uint8)
    out = np.frombuffer(buf.data, dtype=x.dtype, count=x.size, offset=1).reshape(x.shape)
    out[...] = x
    return out


def read_only(x):
    out = x.copy()
    out.flags.writeable = False
    return out


LAYOUTS = {
    "byte order": {">f8 / <f8 swapped": byte_swapped},
    "stride": {"every other element": strided, "negative strides": negative_stride, "unaligned": unaligned,
               "Fortran order": np.asfortranarray},
    "read-only": {"read-only": read_only},
}


# ------------------------------------------------------------------------------------------- dtypes
def _dtype_variants(arg):
    with np.errstate(over="ignore", invalid="ignore"):  # an inf bound has no integer; the clip sees to it
        return _dtypes_of(arg)


def _dtypes_of(arg):
    x = arg.value
    # a scalar argument is varied as numpy scalars (np.float32(0.5)); a bool is a number only for arrays
    typed = (lambda a: a[()]) if arg.scalar else (lambda a: a)
    out = []
    for dt in (np.float32, np.float16):
        out.append(_same("dtype", np.dtype(dt).name, typed(x.astype(dt)), arg))
    for dt in (np.int64, np.int32, np.uint8):
        ints = np.clip(np.round(x), np.iinfo(dt).min, np.iinfo(dt).max).astype(dt)
        out.append(_same("dtype", np.dtype(dt).name, typed(ints), arg))
    boolean = _same("dtype", "bool", typed(x != 0), arg)
    out.append(Variant("dtype", "bool", boolean.value, EITHER, boolean.reference) if arg.scalar else boolean)
    if not arg.scalar:
        out.append(_same("dtype", "list", x.tolist(), arg))
    if arg.integer:  # an index array given as floats: integral values, which a function may take or refuse
        out.append(Variant("dtype", "float64 indices", x.astype(np.float64), EITHER, x.copy()))
    obj = x.astype(object)
    out.append(Variant("dtype", "object", obj, EITHER, _native(x, arg)))
    out.append(Variant("dtype", "complex", x.astype(np.complex128) + 1j, REJECT))
    out.append(Variant("dtype", "string", x.astype(str), REJECT))
    out.append(Variant("dtype", "datetime", np.zeros(x.shape, dtype="datetime64[s]"), REJECT))
    if arg.required:
        out.append(Variant("dtype", "None", None, REJECT))
    return out


# ------------------------------------------------------------------------------------------- shapes
def _shape_variants(arg):
    x = arg.value
    if arg.scalar:
        return [Variant("shape", "0-d array", x.copy(), EITHER, x.item()),
                _same("shape", "one-element list", [x.item()], arg),
                _same("shape", "empty", np.zeros(0), arg)]
    out = [_same("shape", "0-d", np.asarray(x.flat[0] if x.size else 0, dtype=x.dtype), arg),
           _same("shape", "extra leading axis", x[None], arg),
           _same("shape", "extra trailing axis", x[..., None], arg),
           _same("shape", "empty", np.zeros((0,) * max(x.ndim, 1), dtype=x.dtype), arg)]
    for axis in range(x.ndim):
        longer = np.concatenate([x, np.take(x, [0] if x.shape[axis] else [], axis=axis)], axis=axis)
        if x.shape[axis]:
            out.append(_same("shape", f"axis {axis} one longer", longer, arg))
            out.append(_same("shape", f"axis {axis} one shorter", np.take(x, range(x.shape[axis] - 1), axis=axis),
                             arg))
    return out


# ------------------------------------------------------------------------------------------- values
def with_entry(x, index, number):
    out = np.array(x, dtype=np.float64)
    if out.size:
        out.flat[index % out.size] = number
    return out


def _value_variants(arg):
    if arg.integer:
        return [Variant("value", "index -2**62", np.full_like(arg.value, -2**62), EITHER,
                        np.full_like(arg.value, -2**62))]
    plain = (lambda a: a.item()) if arg.scalar else (lambda a: a)
    out = [Variant("value", f"{n!r} at [0]", plain(with_entry(arg.value, 0, n)), VALUES) for n in HOSTILE_NUMBERS]
    if not arg.scalar:
        out.append(Variant("value", "all zero", np.zeros_like(arg.value), VALUES))
    return out


def variants(arg: Arg) -> list[Variant]:
    """Every variant class of ``arg`` once: the fast, systematic run."""
    out = []
    if "dtype" in arg.kinds:
        out += _dtype_variants(arg)
    if "shape" in arg.kinds:
        out += _shape_variants(arg)
    if "value" in arg.kinds:
        out += _value_variants(arg)
    if "layout" in arg.kinds and not arg.scalar:
        for kind, fns in LAYOUTS.items():
            for label, fn in fns.items():
                out.append(_same(kind, label, fn(arg.value), arg))
    return out


def random_variant(arg: Arg, draw) -> Variant:
    """One composed variant: a value change, then a dtype, then a layout, each drawn by ``draw(list)``
    (hypothesis' ``st.sampled_from`` or a random choice), within the kinds that apply to ``arg``."""
    with np.errstate(over="ignore", invalid="ignore"):  # float32 of 1e300 is inf, as meant
        return _compose(arg, draw)


def _compose(arg: Arg, draw) -> Variant:
    x = arg.value
    kinds, expect = [], SAME
    value_kinds = ["none", "none"] + (["hostile number", "huge scale"] if "value" in arg.kinds else []) + (
        ["shape"] if "shape" in arg.kinds else [])
    value_kind = draw(value_kinds)
    if value_kind == "hostile number" and not arg.integer:
        x = with_entry(x, draw(list(range(max(x.size, 1)))), draw(list(HOSTILE_NUMBERS)))
        kinds.append("value")
    elif value_kind == "huge scale" and not arg.integer:
        x = x * draw([1e10, 1e100, 1e200, -1e300, 1e-300])
        kinds.append("value")
    elif value_kind == "shape":
        shaped = draw(_shape_variants(arg))
        x, expect = np.asarray(shaped.value), shaped.expect
        kinds.append("shape")
    dtypes = ["float64", "float64", "float32", "int64", "bool"] + ([] if x.ndim == 0 else ["list", "object"])
    dtype = draw(dtypes + ["complex"]) if "dtype" in arg.kinds else "float64"
    if dtype == "int64" and not (arg.integer or np.all(np.isfinite(x))):
        dtype = "float64"  # NaN and inf have no integer
    if dtype == "complex":
        return Variant("+".join(kinds + ["dtype"]), "complex", x.astype(np.complex128) + 1j, REJECT)
    if dtype == "list":
        value = x.tolist()
    elif dtype == "object":
        value = x.astype(object)
    elif dtype == "int64":
        value = x if arg.integer else np.clip(np.round(x), -2.0**62, 2.0**62).astype(np.int64)
    elif dtype == "float32":
        value = x.astype(np.float32)
    elif dtype == "bool":
        value = x != 0
    else:
        value = x
    if dtype != "float64":
        kinds.append("dtype")
    if isinstance(value, np.ndarray) and value.ndim and value.dtype != object and "layout" in arg.kinds:
        layout = draw(["native"] + [(k, lbl) for k, fns in LAYOUTS.items() for lbl in fns])
        if layout != "native":
            value = LAYOUTS[layout[0]][layout[1]](value)
            kinds.append(layout[0])
    if isinstance(value, np.ndarray) and value.ndim == 0 and arg.scalar and expect == SAME:
        value = value[()] if dtype != "float64" else value.item()  # numpy scalar, or a Python float
    if expect == SAME and (dtype == "object" or (dtype == "bool" and arg.scalar)):
        expect = EITHER
    label = "+".join(kinds) or "native"
    return Variant(label, f"{label} {dtype}", value, expect, _native(value, arg))
