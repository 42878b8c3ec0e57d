# Contact solver core: the boxed LCP with friction (cpp/include/rigidiff/contact/boxed_lcp.hpp).
# rigidiff.lcp gives the documented, user-facing wrapper.


cdef cnp.ndarray _ivec(object x, Py_ssize_t n, str name, str why=""):
    """x as an int32 (n,) array; only integer values are accepted."""
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an integer array of shape ({n},): {exc}") from None
    if arr.dtype.kind not in "biu":
        raise ValueError(f"{name} must be an integer array of shape ({n},), got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},){why}, got {arr.shape}")
    if n and (arr.min() < -2**31 or arr.max() >= 2**31):
        raise ValueError(f"{name} has values out of the int32 range")
    return np.ascontiguousarray(arr, dtype=np.int32)


def _solve_boxed_lcp(A, b, lo, hi, findex=None, warm=None, double tolerance=1e-6, bint jacobian=False, g=None):
    """Solves w = A x + b, lo <= x <= hi (friction rows scaled by x[findex]) with complementarity.

    Returns (x, w, classes (int32), status (int32: solver, friction dropped, success, standardised),
    dx_db or None, grad_b or None, grad_A or None). See rigidiff.lcp.solve_boxed_lcp.
    """
    cdef cnp.ndarray B = _convert(b, "b", "(n,)")
    if cnp.PyArray_NDIM(B) != 1:
        raise ValueError(f"b must have shape (n,), got {np.shape(B)}")
    cdef Py_ssize_t n = cnp.PyArray_DIM(B, 0)
    cdef str why = " (n is the length of b)"
    cdef cnp.ndarray Am = _mat(A, n, n, "A", why)
    cdef cnp.ndarray L = _vec(lo, n, "lo", why)
    cdef cnp.ndarray H = _vec(hi, n, "hi", why)
    cdef cnp.ndarray F = None if findex is None else _ivec(findex, n, "findex", why)
    cdef cnp.ndarray W0 = None if warm is None else _ivec(warm, n, "warm_start", why)
    cdef cnp.ndarray G = None if g is None else _vec(g, n, "g", why)
    cdef cnp.ndarray x = _empty1(n)
    cdef cnp.ndarray w = _empty1(n)
    cdef cnp.ndarray classes = np.empty(n, dtype=np.int32)
    cdef cnp.ndarray status = np.zeros(4, dtype=np.int32)
    cdef cnp.ndarray dx_db = _empty2(n, n) if jacobian else None
    cdef cnp.ndarray grad_b = _empty1(n) if G is not None else None
    cdef cnp.ndarray grad_A = _empty2(n, n) if G is not None else None
    cdef const int* fp = NULL
    cdef const int* wp = NULL
    cdef const double* gp = NULL
    cdef double* jp = NULL
    cdef double* gbp = NULL
    cdef double* gap = NULL
    if F is not None:
        fp = <const int*>cnp.PyArray_DATA(F)
    if W0 is not None:
        wp = <const int*>cnp.PyArray_DATA(W0)
    if dx_db is not None:
        jp = _ptr(dx_db)
    if G is not None:
        gp = _ptr(G)
        gbp = _ptr(grad_b)
        gap = _ptr(grad_A)
    cdef int nn = <int>n
    cdef const double* ap = _ptr(Am)
    cdef const double* bp = _ptr(B)
    cdef const double* lp = _ptr(L)
    cdef const double* hp = _ptr(H)
    cdef double* xp = _ptr(x)
    cdef double* vp = _ptr(w)
    cdef int* cp = <int*>cnp.PyArray_DATA(classes)
    cdef int* sp = <int*>cnp.PyArray_DATA(status)
    with nogil:
        api.solveBoxedLcp(nn, ap, bp, lp, hp, fp, wp, tolerance, xp, vp, cp, sp, jp, gp, gbp, gap)
    return x, w, classes, status, dx_db, grad_b, grad_A
