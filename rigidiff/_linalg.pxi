# Dense products of the derivative code (linalg/dense_product.hpp), for the tests and show_config.


def _dense_product(A, B, C=None, bint transposed_a=False):
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


def _dense_product_uses_avx2():
    """Whether the core's dense products run their AVX2/FMA kernel on this CPU."""
    return bool(api.linalgUsesAvx2())
