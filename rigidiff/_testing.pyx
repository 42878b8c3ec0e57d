# cython: language_level=3
# distutils: language = c++
"""rigidiff._testing: a separate extension holding the bindings only tests use, to check internals of the
C++ core (the feature-contact derivatives of collision/feature_derivatives.hpp, the dense products of
linalg/dense_product.hpp) against references. Not part of rigidiff's API: no rigidiff module imports it."""

from rigidiff._cpp cimport api

include "_arrays.pxi"


def feature_derivatives(int kind_a, p_a, d_a, double margin_a, pose_a, int kind_b, p_b, d_b, double margin_b,
                        pose_b, fallback, double radius_a=0.0, double angle_a=0.0, side_p=(0.0, 0.0, 0.0),
                        side_n=(1.0, 0.0, 0.0)):
    """Value and derivatives of a feature contact under world twists (v_a, w_a, v_b, w_b) of A and B.

    Features: kind code (0 point, 1 segment, 2 face, 3 circle: A only, with radius_a and angle_a, 4 edge
    cut: against a face, which carries the side plane (side_p, side_n) that cuts it), p (3,), d (3,) and
    margin; poses (12,): rotation row-major, then translation; fallback (3,) unit normal from B to A.
    Returns (point (3,), normal (3,), distance, dpoint (3, 12), dnormal (3, 12), ddistance (12,)).
    """
    cdef cnp.ndarray Pa = _vec(p_a, 3, "p_a")
    cdef cnp.ndarray Da = _vec(d_a, 3, "d_a")
    cdef cnp.ndarray Ma = _vec(pose_a, 12, "pose_a")
    cdef cnp.ndarray Pb = _vec(p_b, 3, "p_b")
    cdef cnp.ndarray Db = _vec(d_b, 3, "d_b")
    cdef cnp.ndarray Mb = _vec(pose_b, 12, "pose_b")
    cdef cnp.ndarray N0 = _vec(fallback, 3, "fallback")
    cdef cnp.ndarray Sp = _vec(side_p, 3, "side_p")
    cdef cnp.ndarray Sn = _vec(side_n, 3, "side_n")
    cdef cnp.ndarray value = _empty1(7)
    cdef cnp.ndarray dpoint = _empty2(3, 12)
    cdef cnp.ndarray dnormal = _empty2(3, 12)
    cdef cnp.ndarray ddistance = _empty1(12)
    api.featureDerivatives(kind_a, _ptr(Pa), _ptr(Da), margin_a, radius_a, angle_a, _ptr(Ma), kind_b, _ptr(Pb),
                           _ptr(Db), margin_b, _ptr(Mb), _ptr(N0), _ptr(Sp), _ptr(Sn), _ptr(value), _ptr(dpoint),
                           _ptr(dnormal), _ptr(ddistance))
    return value[:3], value[3:6], float(value[6]), dpoint, dnormal, ddistance


def dense_product(A, B, C=None, bint transposed_a=False):
    """A @ B (A.T @ B with transposed_a), plus C when given, computed by the core's dense product."""
    cdef cnp.ndarray a = np.asfortranarray(A, dtype=float)
    cdef cnp.ndarray b = np.asfortranarray(B, dtype=float)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError("A and B must be 2-D")
    cdef int m = a.shape[1] if transposed_a else a.shape[0]
    cdef int k = a.shape[0] if transposed_a else a.shape[1]
    cdef int n = b.shape[1]
    if b.shape[0] != k:
        raise ValueError(f"A and B do not chain: {A.shape} and {B.shape}")
    cdef cnp.ndarray c = np.zeros((m, n), order="F") if C is None else np.array(C, dtype=float, order="F")
    if c.ndim != 2 or c.shape[0] != m or c.shape[1] != n:
        raise ValueError(f"C must be ({m}, {n})")
    api.linalgDenseProduct(m, k, n, <const double*>cnp.PyArray_DATA(a), <const double*>cnp.PyArray_DATA(b),
                           <double*>cnp.PyArray_DATA(c), C is not None, transposed_a)
    return c
