# cython: language_level=3
# distutils: language = c++
"""rigidiff._testing: a separate extension holding the bindings only tests use, to check internals of the
C++ core (the feature-contact derivatives of collision/feature_derivatives.hpp, the dense products of
linalg/dense_product.hpp, the box tree of collision/bvh.hpp) against references. Not part of rigidiff's
API: no rigidiff module imports it."""

from libc.string cimport memcpy
from libcpp.vector cimport vector

from rigidiff._cpp cimport api
from rigidiff._cpp.api cimport MeshTree  # "cdef api.X" reads as Cython's api keyword
from rigidiff._cpp.projective cimport projectiveHullDistances, projectiveSvd3, projectiveVolumeProjection

include "_arrays.pxi"


def _feature_pair(p_a, d_a, pose_a, p_b, d_b, pose_b, fallback, side_p, side_n):
    """The arrays of a feature pair's arguments, each checked for its length."""
    return (_vec(p_a, 3, "p_a"), _vec(d_a, 3, "d_a"), _vec(pose_a, 12, "pose_a"), _vec(p_b, 3, "p_b"),
            _vec(d_b, 3, "d_b"), _vec(pose_b, 12, "pose_b"), _vec(fallback, 3, "fallback"), _vec(side_p, 3, "side_p"),
            _vec(side_n, 3, "side_n"))


def feature_derivatives(int kind_a, p_a, d_a, double margin_a, pose_a, int kind_b, p_b, d_b, double margin_b,
                        pose_b, fallback, double radius_a=0.0, double angle_a=0.0, side_p=(0.0, 0.0, 0.0),
                        side_n=(1.0, 0.0, 0.0)):
    """Value and derivatives of a feature contact under world twists (v_a, w_a, v_b, w_b) of A and B.

    Features: kind code (0 point, 1 segment, 2 face, 3 circle: A only, with radius_a and angle_a, 4 edge
    cut: against a face, which carries the side plane (side_p, side_n) that cuts it), p (3,), d (3,) and
    margin; poses (12,): rotation row-major, then translation; fallback (3,) unit normal from B to A.
    Returns (point (3,), normal (3,), distance, dpoint (3, 12), dnormal (3, 12), ddistance (12,)).
    """
    cdef cnp.ndarray Pa, Da, Ma, Pb, Db, Mb, N0, Sp, Sn
    Pa, Da, Ma, Pb, Db, Mb, N0, Sp, Sn = _feature_pair(p_a, d_a, pose_a, p_b, d_b, pose_b, fallback, side_p, side_n)
    cdef cnp.ndarray value = _empty1(7)
    cdef cnp.ndarray dpoint = _empty2(3, 12)
    cdef cnp.ndarray dnormal = _empty2(3, 12)
    cdef cnp.ndarray ddistance = _empty1(12)
    api.featureDerivatives(kind_a, _ptr(Pa), _ptr(Da), margin_a, radius_a, angle_a, _ptr(Ma), kind_b, _ptr(Pb),
                           _ptr(Db), margin_b, _ptr(Mb), _ptr(N0), _ptr(Sp), _ptr(Sn), _ptr(value), _ptr(dpoint),
                           _ptr(dnormal), _ptr(ddistance))
    return value[:3], value[3:6], float(value[6]), dpoint, dnormal, ddistance



def feature_point_derivatives(int kind_a, p_a, d_a, double margin_a, pose_a, int kind_b, p_b, d_b,
                              double margin_b, pose_b, fallback, double radius_a=0.0, double angle_a=0.0,
                              side_p=(0.0, 0.0, 0.0), side_n=(1.0, 0.0, 0.0)):
    """Value and derivatives of a feature contact with respect to the world points of both features'
    stencils (arguments as feature_derivatives).

    Returns (point (3,), normal (3,), distance, points_a (na, 3), points_b (nb, 3), dpoint (3, 3 (na + nb)),
    dnormal (3, 3 (na + nb)), ddistance (3 (na + nb),)); column 3 k + i is coordinate i of point k, A's
    points first.
    """
    cdef cnp.ndarray Pa, Da, Ma, Pb, Db, Mb, N0, Sp, Sn
    Pa, Da, Ma, Pb, Db, Mb, N0, Sp, Sn = _feature_pair(p_a, d_a, pose_a, p_b, d_b, pose_b, fallback, side_p, side_n)
    cdef cnp.ndarray value = _empty1(7)
    cdef int counts[2]
    cdef cnp.ndarray points = _empty1(36)
    cdef cnp.ndarray dpoint = _empty1(108)
    cdef cnp.ndarray dnormal = _empty1(108)
    cdef cnp.ndarray ddistance = _empty1(36)
    api.featurePointDerivatives(kind_a, _ptr(Pa), _ptr(Da), margin_a, radius_a, angle_a, _ptr(Ma), kind_b,
                                _ptr(Pb), _ptr(Db), margin_b, _ptr(Mb), _ptr(N0), _ptr(Sp), _ptr(Sn), _ptr(value),
                                counts, _ptr(points), _ptr(dpoint), _ptr(dnormal), _ptr(ddistance))
    na, nb = counts[0], counts[1]
    cols = 3 * (na + nb)
    return (value[:3], value[3:6], float(value[6]), points[:3 * na].reshape(na, 3).copy(),
            points[3 * na:3 * (na + nb)].reshape(nb, 3).copy(), dpoint[:3 * cols].reshape(3, cols).copy(),
            dnormal[:3 * cols].reshape(3, cols).copy(), ddistance[:cols].copy())


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


cdef tuple _factor_lcp(J, K, block_start, b, lo, hi, findex):
    """J, K as float64 arrays of one 2-D shape (n, dim), and b, lo, hi as (n,) vectors; ValueError for shapes
    that do not fit (findex: n entries, block_start: at least one)."""
    cdef cnp.ndarray j = np.ascontiguousarray(J, dtype=float)
    cdef cnp.ndarray k = np.ascontiguousarray(K, dtype=float)
    if j.ndim != 2 or k.ndim != 2 or j.shape[0] != k.shape[0] or j.shape[1] != k.shape[1]:
        raise ValueError("J and K must be 2-D of one shape")
    cdef int n = j.shape[0]
    if np.shape(findex) != (n,) or np.size(block_start) < 1:
        raise ValueError("findex must have n entries and block_start at least one")
    return j, k, _vec(b, n, "b"), _vec(lo, n, "lo"), _vec(hi, n, "hi")


def boxed_lcp_from_factors(J, K, block_start, b, lo, hi, findex, warm=None, int iterative_size=1024,
                           double sweeps_work=2e7):
    """The boxed LCP with A = J K^T solved from its factors (A formed only if a stage needs its columns):
    x, w, classes, (solver, A formed, success, standardised), dx_db. iterative_size and sweeps_work are
    BoxedLcpOptions' iterativeClampingSize and sweepsFirstWork (their defaults here too)."""
    j, k, bv, lv, hv = _factor_lcp(J, K, block_start, b, lo, hi, findex)
    cdef int n = j.shape[0]
    cdef int dim = j.shape[1]
    cdef int[::1] bs = np.ascontiguousarray(block_start, dtype=np.intc)
    cdef int[::1] fv = np.ascontiguousarray(findex, dtype=np.intc)
    cdef int[::1] wv
    cdef const int* wp = NULL
    if warm is not None:
        wv = np.ascontiguousarray(warm, dtype=np.intc)
        if wv.shape[0] != n:
            raise ValueError(f"warm must have {n} classes")
        wp = &wv[0]
    cdef cnp.ndarray x = _empty1(n)
    cdef cnp.ndarray w = _empty1(n)
    cdef int[::1] classes = np.zeros(n, dtype=np.intc)
    cdef int[::1] status = np.zeros(4, dtype=np.intc)
    cdef cnp.ndarray dx_db = _empty2(n, n)
    api.solveBoxedLcpFromFactors(n, dim, _ptr(j), _ptr(k), bs.shape[0] - 1, &bs[0], _ptr(bv), _ptr(lv), _ptr(hv),
                                 &fv[0], wp, iterative_size, sweeps_work, _ptr(x), _ptr(w), &classes[0],
                                 &status[0], _ptr(dx_db))
    return x, w, np.asarray(classes), np.asarray(status), dx_db


def projected_cg_from_factors(J, K, block_start, b, lo, hi, findex, x0):
    """Projected conjugate gradients alone on the boxed LCP with A = J K^T (as boxed_lcp_from_factors), from the
    impulses x0 with the default budget: x, w, whether the answer is valid, and the products with A spent."""
    j, k, bv, lv, hv = _factor_lcp(J, K, block_start, b, lo, hi, findex)
    cdef int n = j.shape[0]
    cdef int[::1] bs = np.ascontiguousarray(block_start, dtype=np.intc)
    cdef int[::1] fv = np.ascontiguousarray(findex, dtype=np.intc)
    cdef cnp.ndarray x = np.array(_vec(x0, n, "x0"), dtype=float)
    cdef cnp.ndarray w = _empty1(n)
    cdef int valid = 0
    cdef int products = api.projectedCgFromFactors(n, j.shape[1], _ptr(j), _ptr(k), bs.shape[0] - 1, &bs[0],
                                                   _ptr(bv), _ptr(lv), _ptr(hv), &fv[0], _ptr(x), _ptr(w), &valid)
    return x, w, bool(valid), products


cdef cnp.ndarray _points(verts, Py_ssize_t n, str name, str why=""):
    """verts as a finite float64 (n, 3) array (any number of rows for n < 0)."""
    cdef cnp.ndarray v = _mat(verts, n, 3, name, why)
    if not np.isfinite(v).all():
        raise ValueError(f"{name} holds a non-finite value (NaN or inf)")
    return v


cdef tuple _mesh(verts, tris, str vname, str tname):
    """verts as a finite float64 (N, 3) array and tris as C ints (M, 3) indexing it."""
    cdef cnp.ndarray v = _points(verts, -1, vname)
    t = np.asarray(tris)
    if t.size == 0 and t.ndim < 2:
        t = t.reshape(0, 3)
    if t.dtype.kind not in "iu" and t.size > 0:
        raise TypeError(f"{tname} must hold integer vertex indices, got dtype {t.dtype}")
    if t.ndim != 2 or t.shape[1] != 3:
        raise ValueError(f"{tname} must have shape (M, 3), got {t.shape}")
    if t.size > 0 and (t.min() < 0 or t.max() >= v.shape[0]):
        raise ValueError(f"{tname} has a vertex index out of range [0, {v.shape[0]})")
    return v, np.ascontiguousarray(t, dtype=np.intc)


cdef cnp.ndarray _pose(pose, str name):
    cdef cnp.ndarray p = _vec(pose, 12, name)
    if not np.isfinite(p).all():
        raise ValueError(f"{name} holds a non-finite value (NaN or inf)")
    R = p[:9].reshape(3, 3)
    if not np.allclose(R.T @ R, np.eye(3), atol=1e-6) or np.linalg.det(R) <= 0.0:
        raise ValueError(f"{name}: its first 9 numbers (row-major) are not a rotation matrix")
    return p


cdef cnp.ndarray _ints(const vector[int]& v, int columns):
    """A copy of v as an (len / columns, columns) int array (one column: a flat one)."""
    cdef cnp.ndarray out = np.empty(v.size(), dtype=np.intc)
    if v.size() > 0:
        memcpy(cnp.PyArray_DATA(out), v.data(), v.size() * sizeof(int))
    return out if columns == 1 else out.reshape(-1, columns)


cdef class BvhMesh:
    """The box tree over a triangle mesh's faces (verts (N, 3), tris (M, 3)), each face box grown by inflate.

    Queries return sorted int arrays: pairs as (K, 2), faces as (K,).
    """
    cdef MeshTree* tree
    cdef readonly int nverts

    def __cinit__(self, verts, tris, double inflate=0.0):
        v, t = _mesh(verts, tris, "verts", "tris")
        self.nverts = v.shape[0]
        self.tree = new MeshTree(_ptr(v), v.shape[0], <int*>cnp.PyArray_DATA(t), t.shape[0], inflate)

    def __dealloc__(self):
        del self.tree

    def refit(self, verts, double inflate=0.0):
        """New vertex positions (N, 3) for the same faces: the boxes are refitted, the tree kept."""
        cdef cnp.ndarray v = _points(verts, self.nverts, "verts", " (the mesh's vertex count)")
        self.tree.refit(_ptr(v), v.shape[0], inflate)

    def pairs(self, BvhMesh other, pose, other_pose, double margin=0.0):
        """Pairs (i of this mesh, j of other) whose face boxes overlap, each mesh placed by its pose (12,)."""
        cdef cnp.ndarray pa = _pose(pose, "pose")
        cdef cnp.ndarray pb = _pose(other_pose, "other_pose")
        cdef vector[int] out
        self.tree.pairs(other.tree[0], _ptr(pa), _ptr(pb), margin, out)
        return _ints(out, 2)

    def self_pairs(self, double margin=0.0):
        """Pairs (i, j), i < j, of faces sharing no vertex index whose boxes overlap once grown by margin."""
        cdef vector[int] out
        self.tree.selfPairs(margin, out)
        return _ints(out, 2)

    def box_query(self, lo, hi, double margin=0.0):
        """The faces whose boxes overlap the box [lo, hi] grown by margin."""
        cdef cnp.ndarray l = _vec(lo, 3, "lo")
        cdef cnp.ndarray h = _vec(hi, 3, "hi")
        cdef vector[int] out
        self.tree.boxQuery(_ptr(l), _ptr(h), margin, out)
        return _ints(out, 1)

    def halfspace_query(self, normal, double offset, double margin=0.0):
        """The faces whose boxes reach {x : normal . x <= offset + margin}."""
        cdef cnp.ndarray n = _vec(normal, 3, "normal")
        cdef vector[int] out
        self.tree.halfspaceQuery(_ptr(n), offset, margin, out)
        return _ints(out, 1)

    def shape(self):
        """(node count, depth, largest leaf) of the tree."""
        cdef int out[3]
        self.tree.shape(out)
        return out[0], out[1], out[2]


def bvh_mesh_pairs(verts_a, tris_a, pose_a, verts_b, tris_b, pose_b, double margin=0.0):
    """Pairs (i, j) of a triangle i of mesh A and j of mesh B whose boxes overlap, from the box trees.

    Each mesh is verts (N, 3) and tris (M, 3) in its own frame, placed in the world by its pose (12,):
    rotation row-major, then translation. The boxes are the triangles' axis-aligned boxes in their own
    mesh frames; A's is grown by margin, B's is placed in A's frame as an oriented box, and the test is
    exact for those two boxes. Returns a sorted (K, 2) int array.
    """
    _pose(pose_a, "pose_a")
    _pose(pose_b, "pose_b")
    a = _named_mesh(verts_a, tris_a, "_a")
    return a.pairs(_named_mesh(verts_b, tris_b, "_b"), pose_a, pose_b, margin)


def bvh_self_pairs(verts, tris, double margin=0.0):
    """Pairs (i, j), i < j, of triangles sharing no vertex index whose boxes overlap once grown by margin.

    verts (N, 3), tris (M, 3). Returns a sorted (K, 2) int array.
    """
    return BvhMesh(verts, tris).self_pairs(margin)


def bvh_refit_pairs(verts_build, verts_refit, tris, double inflate=0.0, double margin=0.0):
    """bvh_self_pairs of verts_refit from a tree built on verts_build and refitted on verts_refit.

    Both vertex sets (N, 3) share tris (M, 3); every triangle box is grown by inflate at the build and at
    the refit. Returns a sorted (K, 2) int array.
    """
    tree = _named_mesh(verts_build, tris, "_build", inflate)
    tree.refit(_points(verts_refit, tree.nverts, "verts_refit", " (the rows of verts_build)"), inflate)
    return tree.self_pairs(margin)


def bvh_box_query(verts, tris, lo, hi, double margin=0.0):
    """The triangles whose boxes overlap the box [lo, hi] grown by margin, as a sorted int array."""
    return BvhMesh(verts, tris).box_query(lo, hi, margin)


def bvh_halfspace_query(verts, tris, normal, double offset, double margin=0.0):
    """The triangles whose boxes reach {x : normal . x <= offset + margin}, as a sorted int array."""
    return BvhMesh(verts, tris).halfspace_query(normal, offset, margin)


def bvh_tree_shape(verts, tris):
    """(node count, depth, largest leaf) of the box tree over the triangles."""
    return BvhMesh(verts, tris).shape()


cdef BvhMesh _named_mesh(verts, tris, str suffix, double inflate=0.0):
    """BvhMesh(verts, tris) whose errors name the arguments verts<suffix> and tris<suffix>."""
    _mesh(verts, tris, "verts" + suffix, "tris" + suffix)
    return BvhMesh(verts, tris, inflate)


def parallel_chunk_visits(int n, int bad=-1):
    """How often the barrier world's two-thread chunks (world/parallel_chunks.hpp) visit each of n elements
    (an int array); ValueError from element bad when bad >= 0, raised on either thread."""
    cdef cnp.ndarray visits = np.zeros(max(n, 0), dtype=np.intc)
    api.parallelChunkVisits(n, bad, <int*>cnp.PyArray_DATA(visits))
    return visits



def svd3(F):
    """The deformable solver's rotation-variant SVD of a 3 x 3 F: (U, sigma, V) with F = U diag(sigma) V^T,
    det U = det V = 1, sigma decreasing in magnitude order with the sign of det F on the last."""
    cdef cnp.ndarray f = np.ascontiguousarray(F, dtype=float)
    if f.ndim != 2 or f.shape[0] != 3 or f.shape[1] != 3:
        raise ValueError("F must be 3 x 3")
    cdef cnp.ndarray U = _empty2(3, 3)
    cdef cnp.ndarray V = _empty2(3, 3)
    cdef cnp.ndarray sigma = _empty1(3)
    projectiveSvd3(_ptr(f), _ptr(U), _ptr(sigma), _ptr(V))
    return U, sigma, V


def volume_projection(sigma):
    """The volume energy's projection of singular values sigma (3,) onto the sheet prod s = 1 (the KKT point of
    min |s - sigma|^2 / 2 there): (s (3,), ds/dsigma (3, 3))."""
    cdef cnp.ndarray sg = np.ascontiguousarray(sigma, dtype=float)
    if sg.ndim != 1 or sg.shape[0] != 3:
        raise ValueError("sigma must have shape (3,)")
    cdef cnp.ndarray s = _empty1(3)
    cdef cnp.ndarray J = _empty2(3, 3)
    projectiveVolumeProjection(_ptr(sg), _ptr(s), _ptr(J))
    return s, J


def hull_distances(vertices, triangles, points, double reach=float("inf")):
    """The signed distances (n,), normals (n, 3) and field Hessians (n, 3, 3) of points (n, 3) to the convex hull
    shape of a projective world's mesh links (deformable/pd_hull.hpp), built from (vertices, outward triangles);
    a distance of at least reach may be a lower bound with zero normal and Hessian."""
    cdef cnp.ndarray V = np.ascontiguousarray(vertices, dtype=np.float64).reshape(-1, 3)
    cdef cnp.ndarray T = np.ascontiguousarray(triangles, dtype=np.intc).reshape(-1, 3)
    cdef cnp.ndarray P = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    cdef int n = P.shape[0]
    cdef cnp.ndarray d = _empty1(n)
    cdef cnp.ndarray normals = _empty2(n, 3)
    cdef cnp.ndarray curvatures = np.empty((n, 3, 3))
    projectiveHullDistances(_ptr(V), V.shape[0], <const int*>cnp.PyArray_DATA(T), T.shape[0], _ptr(P), n, reach,
                            _ptr(d), _ptr(normals), _ptr(curvatures))
    return d, normals, curvatures
