# Collision queries of the C++ core (collision/), for rigidiff.collision.


def _shape_distance(int type_a, params_a, verts_a, pose_a, int type_b, params_b, verts_b, pose_b):
    """(10,) distance, point_a, point_b, normal of two shapes (codes and parameters of api.hpp)."""
    cdef cnp.ndarray Pa = _vec(params_a, 4, "shape parameters")
    cdef cnp.ndarray Pb = _vec(params_b, 4, "shape parameters")
    cdef cnp.ndarray Va = _mat(verts_a, -1, 3, "mesh vertices")
    cdef cnp.ndarray Vb = _mat(verts_b, -1, 3, "mesh vertices")
    cdef cnp.ndarray Ma = _vec(pose_a, 12, "pose_a")
    cdef cnp.ndarray Mb = _vec(pose_b, 12, "pose_b")
    cdef cnp.ndarray out = _empty1(10)
    api.shapeDistance(type_a, _ptr(Pa), _ptr(Va), <int>cnp.PyArray_DIM(Va, 0), _ptr(Ma), type_b, _ptr(Pb), _ptr(Vb),
                      <int>cnp.PyArray_DIM(Vb, 0), _ptr(Mb), _ptr(out))
    return out
