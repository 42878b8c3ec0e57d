# Feature-contact derivatives of the C++ core (collision/feature_derivatives.hpp), for tests only.


def _feature_derivatives(int kind_a, p_a, d_a, double margin_a, pose_a, int kind_b, p_b, d_b, double margin_b,
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
    cdef double* ppa = _ptr(Pa)
    cdef double* pda = _ptr(Da)
    cdef double* pma = _ptr(Ma)
    cdef double* ppb = _ptr(Pb)
    cdef double* pdb = _ptr(Db)
    cdef double* pmb = _ptr(Mb)
    cdef double* pn0 = _ptr(N0)
    cdef double* psp = _ptr(Sp)
    cdef double* psn = _ptr(Sn)
    cdef double* pv = _ptr(value)
    cdef double* pdp = _ptr(dpoint)
    cdef double* pdn = _ptr(dnormal)
    cdef double* pdd = _ptr(ddistance)
    with nogil:
        api.featureDerivatives(kind_a, ppa, pda, margin_a, radius_a, angle_a, pma, kind_b, ppb, pdb, margin_b, pmb,
                               pn0, psp, psn, pv, pdp, pdn, pdd)
    return value[:3], value[3:6], float(value[6]), dpoint, dnormal, ddistance
