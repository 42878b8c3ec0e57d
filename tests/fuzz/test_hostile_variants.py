"""The generator of hostile variants (hostile.py) makes what it says: a byte-swapped array is byte-swapped,
a strided one is not contiguous, the reference of a SAME variant holds its values in native float64, and a
shape the argument does not accept is expected to be refused."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from hostile import EITHER, LAYOUTS, REJECT, SAME, VALUES, Arg, random_variant, variants

ARRAYS = hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=5),
                    elements=st.floats(-1e6, 1e6))


def _values(x):
    return np.asarray(x, dtype=np.float64)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(ARRAYS)
def test_same_variants_hold_the_values_of_their_reference(x):
    arg = Arg("x", x)
    for var in variants(arg):
        if var.expect == SAME:
            assert isinstance(var.reference, np.ndarray) and var.reference.dtype == np.float64
            assert var.reference.flags.c_contiguous and var.reference.dtype.isnative
            assert np.array_equal(_values(var.value), var.reference), var.label
            assert arg.accepts_shape(np.shape(var.value)), var.label


@settings(max_examples=40, deadline=None, derandomize=True)
@given(ARRAYS)
def test_layouts_are_the_hostile_layouts_they_claim(x):
    swapped = LAYOUTS["byte order"][">f8 / <f8 swapped"](x)
    assert not swapped.dtype.isnative and np.array_equal(swapped, x)
    for label, make in LAYOUTS["stride"].items():
        y = make(x)
        assert np.array_equal(y, x), label
        if label == "negative strides":
            assert all(s < 0 for s in y.strides if s) or x.size == 1
        elif label == "unaligned":
            assert not y.flags.aligned
        elif label == "every other element":
            assert not y.flags.c_contiguous or x.shape[-1] == 1
    assert not LAYOUTS["read-only"]["read-only"](x).flags.writeable


def test_every_variant_kind_is_made_for_an_array():
    kinds = {v.kind for v in variants(Arg("q", np.linspace(0.1, 0.9, 7)))}
    assert kinds == {"dtype", "shape", "value", "byte order", "stride", "read-only"}
    expects = {v.expect for v in variants(Arg("q", np.linspace(0.1, 0.9, 7)))}
    assert expects == {SAME, REJECT, EITHER, VALUES}


def test_shapes_the_argument_does_not_accept_are_expected_to_be_refused():
    arg = Arg("taus", np.ones((3, 4)), shapes=((-1, 4),))
    by_label = {v.label: v.expect for v in variants(arg)}
    assert by_label["axis 0 one longer"] == SAME  # any number of rows
    assert by_label["axis 1 one longer"] == REJECT
    assert by_label["extra leading axis"] == REJECT
    assert by_label["0-d"] == REJECT
    assert by_label["complex"] == REJECT and by_label["string"] == REJECT and by_label["None"] == REJECT


def test_scalar_arguments_are_varied_as_numpy_scalars():
    arg = Arg("radius", 0.25)
    by_label = {v.label: v for v in variants(arg)}
    assert isinstance(by_label["float32"].value, np.float32) and by_label["float32"].reference == 0.25
    assert by_label["0-d array"].expect == EITHER
    assert by_label["one-element list"].expect == REJECT


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.data())
def test_random_compositions_expect_what_their_parts_demand(data):
    arg = Arg("v", np.linspace(-1.0, 1.0, 5))
    var = random_variant(arg, lambda options: data.draw(st.sampled_from(options)))
    value = np.asarray(var.value) if not isinstance(var.value, list) else np.array(var.value)
    if value.dtype.kind == "c":
        assert var.expect == REJECT
    elif var.expect == SAME:
        assert np.array_equal(value.astype(np.float64), var.reference, equal_nan=True)
        assert arg.accepts_shape(value.shape)
