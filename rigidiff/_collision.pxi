# Collision queries of the C++ core (collision/), for rigidiff.collision.


def _shape_distance(int type_a, params_a, verts_a, pose_a, int type_b, params_b, verts_b, pose_b, mesh_a=None,
                    mesh_b=None):
    """(10,) distance, point_a, point_b, normal of two shapes (codes and parameters of api.hpp); mesh_a,
    mesh_b: for a triangle mesh (type 7, vertices: its convex hull), (points (n, 3), faces (m, 3), prism
    thickness)."""
    cdef cnp.ndarray Pa = _vec(params_a, 4, "shape parameters")
    cdef cnp.ndarray Pb = _vec(params_b, 4, "shape parameters")
    cdef cnp.ndarray Va = _mat(verts_a, -1, 3, "mesh vertices")
    cdef cnp.ndarray Vb = _mat(verts_b, -1, 3, "mesh vertices")
    cdef cnp.ndarray Ma = _vec(pose_a, 12, "pose_a")
    cdef cnp.ndarray Mb = _vec(pose_b, 12, "pose_b")
    cdef cnp.ndarray MPa = _mat(np.zeros((0, 3)) if mesh_a is None else mesh_a[0], -1, 3, "mesh points")
    cdef cnp.ndarray MPb = _mat(np.zeros((0, 3)) if mesh_b is None else mesh_b[0], -1, 3, "mesh points")
    cdef cnp.ndarray[int, ndim=2] MFa = np.ascontiguousarray(
        np.zeros((1, 3)) if mesh_a is None else mesh_a[1], dtype=np.intc).reshape(-1, 3)
    cdef cnp.ndarray[int, ndim=2] MFb = np.ascontiguousarray(
        np.zeros((1, 3)) if mesh_b is None else mesh_b[1], dtype=np.intc).reshape(-1, 3)
    cdef cnp.ndarray out = _empty1(10)
    api.shapeDistance(type_a, _ptr(Pa), _ptr(Va), <int>cnp.PyArray_DIM(Va, 0), _ptr(MPa),
                      <int>cnp.PyArray_DIM(MPa, 0), &MFa[0, 0], 0 if mesh_a is None else <int>MFa.shape[0],
                      0.0 if mesh_a is None else float(mesh_a[2]), _ptr(Ma), type_b, _ptr(Pb), _ptr(Vb),
                      <int>cnp.PyArray_DIM(Vb, 0), _ptr(MPb), <int>cnp.PyArray_DIM(MPb, 0), &MFb[0, 0],
                      0 if mesh_b is None else <int>MFb.shape[0], 0.0 if mesh_b is None else float(mesh_b[2]),
                      _ptr(Mb), _ptr(out))
    return out


def _primitive_distances(int primitive, int type_code, points, eps_x, int order):
    """(value (n,), gradient (n, 3K) or None, hessian (n, 3K, 3K) or None) of n configurations of a
    squared-distance primitive (codes of api_distance.hpp); points is (n, 3K), eps_x (n,) or None."""
    cdef int K = api.primitivePointCount(primitive)
    cdef cnp.ndarray P = _mat(points, -1, 3 * K, "points")
    cdef int n = <int>cnp.PyArray_DIM(P, 0)
    cdef cnp.ndarray E = _vec(eps_x if eps_x is not None else np.zeros(n), n, "eps_x")
    cdef cnp.ndarray value = _empty1(n)
    cdef cnp.ndarray gradient = _empty2(n, 3 * K) if order >= 1 else _empty2(0, 0)
    cdef cnp.ndarray hessian = _empty3(n, 3 * K, 3 * K) if order >= 2 else _empty3(0, 0, 0)
    cdef const double* pp = _ptr(P)
    cdef const double* ep = _ptr(E)
    cdef double* vp = _ptr(value)
    cdef double* gp = _ptr(gradient)
    cdef double* hp = _ptr(hessian)
    with nogil:
        api.primitiveDistances(primitive, type_code, n, pp, ep, order, vp, gp, hp)
    return value, (gradient if order >= 1 else None), (hessian if order >= 2 else None)


def _primitive_distance_types(int primitive, points):
    """(n,) int32 distance type codes of n point-edge, point-triangle or edge-edge configurations."""
    cdef int K = api.primitivePointCount(primitive)
    cdef cnp.ndarray P = _mat(points, -1, 3 * K, "points")
    cdef int n = <int>cnp.PyArray_DIM(P, 0)
    cdef cnp.ndarray types = np.empty(n, dtype=np.int32)
    cdef const double* pp = _ptr(P)
    cdef int* tp = <int*>cnp.PyArray_DATA(types)
    with nogil:
        api.primitiveDistanceTypes(primitive, n, pp, tp)
    return types


def _box_self_pairs(lo, hi):
    """(k, 2) int64 pairs (i, j), i < j, sorted, of the closed boxes [lo[i], hi[i]] ((n, 3) each) that overlap or
    touch, from the core's box tree (rigidiff.mesh_checks' candidates for crossing faces)."""
    cdef cnp.ndarray L = _mat(lo, -1, 3, "lo")
    cdef cnp.ndarray H = _mat(hi, cnp.PyArray_DIM(L, 0), 3, "hi", " (as lo)")
    cdef int n = <int>cnp.PyArray_DIM(L, 0)
    cdef const double* pl = _ptr(L)
    cdef const double* ph = _ptr(H)
    cdef vector[int] out
    with nogil:
        api.boxSelfPairs(pl, ph, n, out)
    return _int64_pairs(out)


cdef cnp.ndarray _int64_pairs(const vector[int]& flat):
    """(k, 2) int64 array of the flat index pairs (i0, j0, i1, j1, ...) the core returns."""
    cdef cnp.ndarray pairs = np.empty(flat.size(), dtype=np.int64)
    cdef long long* qp = <long long*>cnp.PyArray_DATA(pairs)
    cdef size_t i
    for i in range(flat.size()):
        qp[i] = flat[i]
    return pairs.reshape(-1, 2)
