"""Every array that enters C++ is read by value: a byte-swapped ('>f8'), strided, negative-stride,
unaligned, Fortran-ordered or read-only array gives exactly the result of the same values as a native,
C-contiguous float64 array."""

import numpy as np
import pytest
from rdsupport import boxed_arm_world

import rigidiff as rd


def _world():
    """A free base with a ball-jointed arm above the ground (contacts), and a revolute pendulum."""
    return boxed_arm_world("layout")


_W = _world()
NQ, NV = _W.nq, _W.nv
Q = _W.random_configuration(3)
Q[2] = 0.1  # a corner of the box reaches into the ground: the steps solve contacts
V = np.linspace(-0.5, 0.4, NV)
TAU = np.linspace(0.3, -0.2, NV)
TAUS = np.outer(np.linspace(1.0, 0.5, 4), TAU)
QS = np.stack([Q, _W.integrate(Q, 0.01 * V), _W.integrate(Q, -0.02 * V)])
VS = np.stack([V, 0.5 * V, -V])


def _same_values(x, how):
    """x (float64) laid out as ``how``, with the same values."""
    x = np.asarray(x, dtype=np.float64)
    if how == "big-endian":
        return x.astype(">f8")
    if how == "negative-stride":
        return np.flip(np.flip(x).copy())
    if how == "strided":
        wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],))
        wide[..., ::2] = x
        return wide[..., ::2]
    if how == "unaligned":
        buf = np.zeros(x.size * 8 + 1, dtype=np.uint8)
        out = np.frombuffer(buf.data, dtype=np.float64, count=x.size, offset=1).reshape(x.shape)
        out[...] = x
        return out
    if how == "fortran":
        return np.asfortranarray(x)
    if how == "read-only":
        out = x.copy()
        out.flags.writeable = False
        return out
    raise AssertionError(how)


LAYOUTS = ["big-endian", "negative-stride", "strided", "unaligned", "fortran", "read-only"]

# name -> (function of a fresh world and the arguments, the arguments)
CALLS = {
    "step": (lambda w, *a: w.step(*a), (Q, V, TAU)),
    "rollout": (lambda w, *a: w.rollout(*a), (Q, V, TAUS)),
    "step_batch": (lambda w, *a: w.step_batch(*a, threads=1), (QS, VS, np.tile(TAU, (3, 1)))),
    "step_jacobians": (lambda w, *a: (lambda j: (j.q_next, j.v_next, j.A, j.B))(w.step_jacobians(*a)), (Q, V, TAU)),
    "step_vjp": (lambda w, *a: w.step_vjp(*a).tau, (Q, V, TAU, V, TAU)),
    "forward_dynamics": (lambda w, *a: w.forward_dynamics(*a), (Q, V, TAU)),
    "inverse_dynamics": (lambda w, *a: w.inverse_dynamics(*a), (Q, V, TAU)),
    "mass_matrix": (lambda w, *a: w.mass_matrix(*a), (Q,)),
    "integrate": (lambda w, *a: w.integrate(*a), (Q, V)),
    "difference": (lambda w, *a: w.difference(*a), (Q, QS[1])),
    "normalize": (lambda w, *a: w.normalize(*a), (Q,)),
    "body_poses": (lambda w, *a: w.body_poses(*a), (Q,)),
    "body_jacobian": (lambda w, *a: w.body_jacobian(*a, "hand"), (Q,)),
    "kinetic_energy": (lambda w, *a: w.kinetic_energy(*a), (Q, V)),
    "collide": (lambda w, *a: w.collide(*a).distances, (Q,)),
}


def _flatten(result):
    if isinstance(result, (tuple, list)):
        return [x for r in result for x in _flatten(r)]
    return [np.asarray(result)]


def _assert_identical(actual, expected):
    a, e = _flatten(actual), _flatten(expected)
    assert len(a) == len(e)
    for x, y in zip(a, e):
        assert x.shape == y.shape
        assert np.array_equal(x, y), f"max difference {np.max(np.abs(x - y))}"


@pytest.mark.parametrize("how", LAYOUTS)
@pytest.mark.parametrize("name", sorted(CALLS))
def test_world_functions_read_every_layout_by_value(name, how):
    f, args = CALLS[name]
    expected = f(_world(), *args)
    for i in range(len(args)):
        changed = list(args)
        changed[i] = _same_values(args[i], how)
        _assert_identical(f(_world(), *changed), expected)
    _assert_identical(f(_world(), *[_same_values(a, how) for a in args]), expected)


def test_the_cartpole_of_the_report():
    w = rd.World()
    w.add_skeleton(rd.models.load("cartpole"))
    q = np.array([0.1, 0.3])
    assert np.array_equal(w.step(q.astype(">f8"), [0.2, -0.1], [0.5, 0])[0], w.step(q, [0.2, -0.1], [0.5, 0])[0])


@pytest.mark.parametrize("how", LAYOUTS)
def test_boxed_lcp_reads_every_layout_by_value(how):
    A = np.array([[2.0, 0.5, 0.2], [0.5, 1.5, 0.1], [0.2, 0.1, 1.0]])
    b = np.array([-1.0, 0.3, -0.4])
    lo = np.array([0.0, -0.5, -0.5])
    hi = np.array([np.inf, 0.5, 0.5])
    findex = [-1, 0, 0]
    expected = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex, jacobian=True)
    args = [A, b, lo, hi]
    for i in range(4):
        changed = list(args)
        changed[i] = _same_values(args[i], how)
        got = rd.lcp.solve_boxed_lcp(*changed, findex, jacobian=True)
        _assert_identical((got.x, got.w, got.dx_db), (expected.x, expected.w, expected.dx_db))
        assert got.classes == expected.classes
    grads = rd.lcp.boxed_lcp_vjp(*[_same_values(a, how) for a in args], _same_values(b, how), findex)
    _assert_identical(grads, rd.lcp.boxed_lcp_vjp(*args, b, findex))


def test_byte_swapped_integer_indices_are_read_by_value():
    A = np.array([[2.0, 0.5, 0.2], [0.5, 1.5, 0.1], [0.2, 0.1, 1.0]])
    b, lo, hi = np.array([-1.0, 0.3, -0.4]), np.array([0.0, -0.5, -0.5]), np.array([np.inf, 0.5, 0.5])
    findex = np.array([-1, 0, 0])
    expected = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex)
    got = rd.lcp.solve_boxed_lcp(A, b, lo, hi, findex.astype(">i8"))
    assert np.array_equal(got.x, expected.x)
