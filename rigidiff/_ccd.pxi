# Continuous collision queries of the C++ core (collision/ccd/), for rigidiff.ccd.


def _primitive_ccd(int pair, points, double min_distance, double t_max, double conservative_rescaling,
                   int max_iterations):
    """(hit (n,) bool, toi (n,), exhausted (n,) bool) of n configurations of a CCD pair (codes of
    api_ccd.hpp); points is (n, 6K): the K start points, then the K end points."""
    cdef int K = api.ccdPointCount(pair)
    cdef cnp.ndarray P = _mat(points, -1, 6 * K, "points")
    cdef int n = <int>cnp.PyArray_DIM(P, 0)
    cdef cnp.ndarray hit = np.empty(n, dtype=np.uint8)
    cdef cnp.ndarray exhausted = np.empty(n, dtype=np.uint8)
    cdef cnp.ndarray toi = _empty1(n)
    cdef const double* pp = _ptr(P)
    cdef unsigned char* hp = <unsigned char*>cnp.PyArray_DATA(hit)
    cdef unsigned char* ep = <unsigned char*>cnp.PyArray_DATA(exhausted)
    cdef double* tp = _ptr(toi)
    with nogil:
        api.primitiveCcd(pair, n, pp, min_distance, t_max, conservative_rescaling, max_iterations, hp, tp, ep)
    return hit.view(np.bool_), toi, exhausted.view(np.bool_)


def _swept_pairs(start_a, end_a, int ka, start_b, end_b, int kb, double min_distance):
    """(m, 2) int64 candidate pairs of the swept-box broad phase; start_a and end_a are (na * ka, 3)
    points, start_b and end_b (nb * kb, 3)."""
    cdef cnp.ndarray Sa = _mat(start_a, -1, 3, "start_a")
    cdef cnp.ndarray Ea = _mat(end_a, cnp.PyArray_DIM(Sa, 0), 3, "end_a", " (as start_a)")
    cdef cnp.ndarray Sb = _mat(start_b, -1, 3, "start_b")
    cdef cnp.ndarray Eb = _mat(end_b, cnp.PyArray_DIM(Sb, 0), 3, "end_b", " (as start_b)")
    cdef int na = <int>(cnp.PyArray_DIM(Sa, 0) // ka)
    cdef int nb = <int>(cnp.PyArray_DIM(Sb, 0) // kb)
    cdef const double* sa = _ptr(Sa)
    cdef const double* ea = _ptr(Ea)
    cdef const double* sb = _ptr(Sb)
    cdef const double* eb = _ptr(Eb)
    cdef vector[int] out
    with nogil:
        api.ccdSweptPairs(sa, ea, na, ka, sb, eb, nb, kb, min_distance, out)
    return _int64_pairs(out)
