# iLQR's backward pass (cpp/include/rigidiff/trajopt/riccati.hpp), for rigidiff.trajopt.ilqr.


cdef cnp.ndarray _c3(object x, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c, str name):
    cdef cnp.ndarray arr = _f64(x, name, f"({a}, {b}, {c})")
    if (cnp.PyArray_NDIM(arr) != 3 or cnp.PyArray_DIM(arr, 0) != a or cnp.PyArray_DIM(arr, 1) != b
            or cnp.PyArray_DIM(arr, 2) != c):
        raise ValueError(f"{name} must have shape ({a}, {b}, {c}), got {np.shape(x)}")
    return arr


def _riccati_backward(A, B, lx, lxx, lu, luu, lo, hi, k0, double mu):
    """(k (T, nu), K (T, nu, nx), dV (2,)) of iLQR's backward pass, or None when a regularised Q_uu is not
    positive definite. A (T, nx, nx), B (T, nx, nu), lx (T+1, nx), lxx (T+1, nx, nx), lu (T, nu),
    luu (T, nu, nu); lo, hi (T, nu) bounds of k or None; k0 (T, nu) the box QP's start."""
    cdef cnp.ndarray Bm = _f64(B, "B", "(T, nx, nu)")
    if cnp.PyArray_NDIM(Bm) != 3:
        raise ValueError(f"B must be (T, nx, nu), got shape {np.shape(B)}")
    cdef int T = <int>cnp.PyArray_DIM(Bm, 0)
    cdef int nx = <int>cnp.PyArray_DIM(Bm, 1)
    cdef int nu = <int>cnp.PyArray_DIM(Bm, 2)
    cdef cnp.ndarray Am = _c3(A, T, nx, nx, "A")
    cdef cnp.ndarray lxm = _mat(lx, T + 1, nx, "lx")
    cdef cnp.ndarray lxxm = _c3(lxx, T + 1, nx, nx, "lxx")
    cdef cnp.ndarray lum = _mat(lu, T, nu, "lu")
    cdef cnp.ndarray luum = _c3(luu, T, nu, nu, "luu")
    cdef cnp.ndarray k = np.array(_mat(k0, T, nu, "k0"), dtype=np.float64, copy=True)
    cdef cnp.ndarray K = np.empty((T, nu, nx))
    cdef cnp.ndarray dV = np.zeros(2)
    cdef cnp.ndarray lom
    cdef cnp.ndarray him
    cdef const double* plo = NULL
    cdef const double* phi = NULL
    if lo is not None:
        lom = _f64(np.broadcast_to(lo, (T, nu)), "lo", "(T, nu)")
        him = _f64(np.broadcast_to(hi, (T, nu)), "hi", "(T, nu)")
        plo = <double*>cnp.PyArray_DATA(lom)
        phi = <double*>cnp.PyArray_DATA(him)
    ok = api.riccatiBackward(T, nx, nu, <double*>cnp.PyArray_DATA(Am), <double*>cnp.PyArray_DATA(Bm), _ptr(lxm),
                             <double*>cnp.PyArray_DATA(lxxm), _ptr(lum), <double*>cnp.PyArray_DATA(luum), plo, phi,
                             mu, _ptr(k), <double*>cnp.PyArray_DATA(K), _ptr(dV))
    return (k, K, dV) if ok else None
