# The barrier world of the C++ core (world/barrier_world.hpp, bind/api_barrier.hpp), for rigidiff.BarrierWorld.
from rigidiff._cpp.api cimport BarrierWorld as _BarrierWorld


cdef class BarrierWorldCore:
    """Compiled core of a barrier world (see rigidiff.BarrierWorld, which adds names, poses and documentation).
    Calls hold the GIL: one C++ scratch (BarrierWorldData) serves every call."""

    cdef unique_ptr[_BarrierWorld] _bw

    def __cinit__(self, *args, **kwargs):
        self._bw.reset(new _BarrierWorld())

    def _bw_set_dt(self, double dt):
        self._bw.get().setTimeStep(dt)

    def _bw_dt(self):
        return self._bw.get().timeStep()

    def _bw_set_gravity(self, g):
        cdef cnp.ndarray G = _vec(g, 3, "gravity")
        self._bw.get().setGravity(_ptr(G))

    def _bw_gravity(self):
        cdef cnp.ndarray out = _empty1(3)
        self._bw.get().gravity(_ptr(out))
        return out

    def _bw_set_options(self, double dhat, double newton_tolerance, int max_newton_iterations, double friction,
                        double friction_velocity):
        self._bw.get().setOptions(dhat, newton_tolerance, max_newton_iterations, friction, friction_velocity)

    def _bw_options(self):
        cdef cnp.ndarray out = _empty1(5)
        self._bw.get().options(_ptr(out))
        return float(out[0]), float(out[1]), int(out[2]), float(out[3]), float(out[4])

    def _bw_add_body(self, str name, points, faces, double density, double stiffness):
        cdef cnp.ndarray P = _mat(points, -1, 3, "mesh vertices")
        cdef cnp.ndarray F = np.ascontiguousarray(faces, dtype=np.intc)
        if cnp.PyArray_NDIM(F) != 2 or cnp.PyArray_DIM(F, 1) != 3:
            raise ValueError(f"mesh faces must have shape (m, 3), got {np.shape(faces)}")
        return self._bw.get().addAffineBody(name.encode(), _ptr(P), <int>cnp.PyArray_DIM(P, 0), <int*>cnp.PyArray_DATA(F),
                                            <int>cnp.PyArray_DIM(F, 0), density, stiffness)

    def _bw_add_static_body(self, str name, points, faces, double density, double stiffness):
        """A static mesh (any surface: see BarrierWorld::addStaticBody); returns (index, faces kept)."""
        cdef cnp.ndarray P = _mat(points, -1, 3, "mesh vertices")
        cdef cnp.ndarray F = np.ascontiguousarray(faces, dtype=np.intc)
        if cnp.PyArray_NDIM(F) != 2 or cnp.PyArray_DIM(F, 1) != 3:
            raise ValueError(f"mesh faces must have shape (m, 3), got {np.shape(faces)}")
        cdef int k = self._bw.get().addStaticBody(name.encode(), _ptr(P), <int>cnp.PyArray_DIM(P, 0),
                                                 <int*>cnp.PyArray_DATA(F), <int>cnp.PyArray_DIM(F, 0), density,
                                                 stiffness)
        return k, self._bw.get().bodyFaceCount(k)

    def _bw_pop_body(self):
        self._bw.get().popBody()

    def _bw_set_body_parameters(self, int body, double density, double stiffness):
        self._bw.get().setBodyParameters(body, density, stiffness)

    def _bw_set_fixed(self, int body, bint fixed):
        self._bw.get().setFixed(body, fixed)

    def _bw_add_plane(self, normal, double offset):
        cdef cnp.ndarray N = _vec(normal, 3, "normal")
        self._bw.get().addPlane(_ptr(N), offset)

    def _bw_pop_plane(self):
        self._bw.get().popPlane()

    def _bw_plane(self, int i):
        cdef cnp.ndarray out = _empty1(4)
        self._bw.get().plane(i, _ptr(out))
        return out[:3].copy(), float(out[3])

    def _bw_counts(self):
        return self._bw.get().bodyCount(), self._bw.get().planeCount()

    def _bw_nq(self):
        return self._bw.get().nq()

    def _bw_nv(self):
        return self._bw.get().nv()

    def _bw_mass_properties(self, int body):
        cdef cnp.ndarray out = _empty1(14)
        self._bw.get().massProperties(body, _ptr(out))
        return float(out[0]), float(out[1]), out[2:5].copy(), out[5:].reshape(3, 3).copy()

    def _bw_mass_matrix(self, int body):
        cdef cnp.ndarray out = _empty2(12, 12)
        self._bw.get().massMatrix(body, _ptr(out))
        return out

    def _bw_rest_mesh(self, int body):
        cdef int n = self._bw.get().vertexCount(body)
        cdef int m = self._bw.get().faceCount(body)
        cdef cnp.ndarray P = _empty2(n, 3)
        cdef cnp.ndarray F = np.empty((m, 3), dtype=np.intc)
        self._bw.get().restMesh(body, _ptr(P), <int*>cnp.PyArray_DATA(F))
        return P, F.astype(np.int64)

    def _bw_set_skeletons(self, WorldCore compiled):
        """Copies the multibody model of compiled (an lcp World holding the skeletons) into the barrier world."""
        self._bw.get().setSkeletons(deref(compiled._wm).model)

    def _bw_update_skeletons(self, WorldCore compiled):
        """Copies compiled's multibody model (the same joints, new parameters) over the skeletons', keeping their
        link surfaces."""
        self._bw.get().updateSkeletons(deref(compiled._wm).model)

    def _bw_set_joint_limits(self, bint on):
        self._bw.get().setJointLimits(on)

    def _bw_joint_limits(self):
        return self._bw.get().jointLimits()

    def _bw_set_gyroscopic(self, bint implicit):
        self._bw.get().setGyroscopic(implicit)

    def _bw_gyroscopic(self):
        return self._bw.get().gyroscopic()

    def _bw_clear_skeletons(self):
        self._bw.get().clearSkeletons()

    def _bw_add_skeleton_surface(self, str name, int joint, int parent_joint, int group, bint self_collision, points,
                                 faces):
        cdef cnp.ndarray P = _mat(points, -1, 3, "mesh vertices")
        cdef cnp.ndarray F = np.ascontiguousarray(faces, dtype=np.intc)
        if cnp.PyArray_NDIM(F) != 2 or cnp.PyArray_DIM(F, 1) != 3:
            raise ValueError(f"mesh faces must have shape (m, 3), got {np.shape(faces)}")
        return self._bw.get().addSkeletonSurface(name.encode(), joint, parent_joint, group, self_collision, _ptr(P),
                                                 <int>cnp.PyArray_DIM(P, 0), <int*>cnp.PyArray_DATA(F),
                                                 <int>cnp.PyArray_DIM(F, 0))

    def _bw_skeleton_surface_faces(self, int k):
        """(faces kept, closed) of the link surface k: faces without area are left out."""
        return self._bw.get().skeletonSurfaceFaces(k), bool(self._bw.get().skeletonSurfaceClosed(k))

    def _bw_contact_coordinates(self, q, int nv_skeletons):
        """(y (12 per body, then 12 per link surface), Jacobians (surfaces, 12, nv_skeletons)) at the state q."""
        cdef int ns = self._bw.get().skeletonSurfaceCount()
        cdef cnp.ndarray Q = _vec(q, self._bw.get().nq(), "q")
        cdef cnp.ndarray y = _empty1(12 * (self._bw.get().bodyCount() + ns))
        cdef cnp.ndarray jac = _empty3(ns, 12, nv_skeletons)
        self._bw.get().contactCoordinates(_ptr(Q), _ptr(y), _ptr(jac))
        return y, jac

    def _bw_check_state(self, q):
        cdef cnp.ndarray Q = _vec(q, self._bw.get().nq(), "q")
        self._bw.get().checkState(_ptr(Q))

    def _bw_step(self, q, v, tau):
        cdef int n = self._bw.get().nq()
        cdef int nv = self._bw.get().nv()
        cdef cnp.ndarray Q = _vec(q, n, "q")
        cdef cnp.ndarray V = _vec(v, nv, "v")
        cdef cnp.ndarray T = _vec(tau, nv, "tau")
        cdef cnp.ndarray q_out = _empty1(n)
        cdef cnp.ndarray v_out = _empty1(nv)
        self._bw.get().step(_ptr(Q), _ptr(V), _ptr(T), _ptr(q_out), _ptr(v_out))
        return q_out, v_out

    def _bw_parameter_count(self):
        return self._bw.get().parameterCount()

    def _bw_step_jacobians(self, q, v, tau):
        cdef int nq = self._bw.get().nq()
        cdef int n = self._bw.get().nv()
        cdef int np_ = self._bw.get().parameterCount()
        cdef cnp.ndarray Q = _vec(q, nq, "q")
        cdef cnp.ndarray V = _vec(v, n, "v")
        cdef cnp.ndarray T = _vec(tau, n, "tau")
        cdef cnp.ndarray q_out = _empty1(nq)
        cdef cnp.ndarray v_out = _empty1(n)
        cdef cnp.ndarray jac = _empty3(6, n, n)
        cdef cnp.ndarray jac_p = _empty3(2, n, np_)
        self._bw.get().stepJacobians(_ptr(Q), _ptr(V), _ptr(T), _ptr(q_out), _ptr(v_out), _ptr(jac), _ptr(jac_p))
        return q_out, v_out, jac, jac_p

    def _bw_step_vjp(self, q, v, tau, gq_next, gv_next):
        cdef int nq = self._bw.get().nq()
        cdef int n = self._bw.get().nv()
        cdef cnp.ndarray Q = _vec(q, nq, "q")
        cdef cnp.ndarray V = _vec(v, n, "v")
        cdef cnp.ndarray T = _vec(tau, n, "tau")
        cdef cnp.ndarray A = _vec(gq_next, n, "dL_dq_next")
        cdef cnp.ndarray B = _vec(gv_next, n, "dL_dv_next")
        cdef cnp.ndarray q_out = _empty1(nq)
        cdef cnp.ndarray v_out = _empty1(n)
        cdef cnp.ndarray gq = _empty1(n)
        cdef cnp.ndarray gv = _empty1(n)
        cdef cnp.ndarray gt = _empty1(n)
        cdef cnp.ndarray gp = _empty1(self._bw.get().parameterCount())
        self._bw.get().stepVjp(_ptr(Q), _ptr(V), _ptr(T), _ptr(A), _ptr(B), _ptr(q_out), _ptr(v_out), _ptr(gq),
                               _ptr(gv), _ptr(gt), _ptr(gp))
        return q_out, v_out, gq, gv, gt, gp

    def _bw_rollout_backward(self, Q, V, taus, kappas, GQ, GV):
        cdef int nq = self._bw.get().nq()
        cdef int n = self._bw.get().nv()
        cdef cnp.ndarray Ta = _mat(taus, -1, n, "taus")
        cdef int T = <int>cnp.PyArray_DIM(Ta, 0)
        cdef str why = f" (the rollout has {T} steps)"
        cdef cnp.ndarray Qa = _mat(Q, T + 1, nq, "Q", why)
        cdef cnp.ndarray Va = _mat(V, T + 1, n, "V", why)
        cdef cnp.ndarray K = _mat(kappas, T, 2, "kappas", why)
        cdef cnp.ndarray A = _mat(GQ, T + 1, n, "dL_dQ", why)
        cdef cnp.ndarray B = _mat(GV, T + 1, n, "dL_dV", why)
        cdef cnp.ndarray gq = _empty1(n)
        cdef cnp.ndarray gv = _empty1(n)
        cdef cnp.ndarray gt = _empty2(T, n)
        cdef cnp.ndarray gp = _empty1(self._bw.get().parameterCount())
        self._bw.get().rolloutBackward(T, _ptr(Qa), _ptr(Va), _ptr(Ta), _ptr(K), _ptr(A), _ptr(B), _ptr(gq), _ptr(gv),
                                       _ptr(gt), _ptr(gp))
        return gq, gv, gt, gp

    def _bw_stats(self):
        cdef cnp.ndarray out = _empty1(15)
        self._bw.get().stats(_ptr(out))
        return out

    def _bw_incremental_potential(self, q, q_n, v_n, tau, double kappa):
        cdef int n = self._bw.get().nq()
        cdef int nv = self._bw.get().nv()
        cdef cnp.ndarray Q = _vec(q, n, "q")
        cdef cnp.ndarray Qn = _vec(q_n, n, "q_n")
        cdef cnp.ndarray Vn = _vec(v_n, nv, "v_n")
        cdef cnp.ndarray T = _vec(tau, nv, "tau")
        cdef cnp.ndarray grad = np.zeros(nv)
        value = self._bw.get().incrementalPotential(_ptr(Q), _ptr(Qn), _ptr(Vn), _ptr(T), kappa, _ptr(grad))
        return value, grad

    def _bw_friction_potential(self, q, q_n, double kappa):
        cdef int n = self._bw.get().nq()
        cdef cnp.ndarray Q = _vec(q, n, "q")
        cdef cnp.ndarray Qn = _vec(q_n, n, "q_n")
        cdef cnp.ndarray grad = _empty1(self._bw.get().nv())
        value = self._bw.get().frictionPotential(_ptr(Q), _ptr(Qn), kappa, _ptr(grad))
        return value, grad

    def _bw_barrier_potential(self, q):
        cdef int n = self._bw.get().nq()
        cdef cnp.ndarray Q = _vec(q, n, "q")
        cdef cnp.ndarray grad = _empty1(n)
        cdef cnp.ndarray hess = _empty2(n, n)
        value = self._bw.get().barrierPotential(_ptr(Q), _ptr(grad), _ptr(hess))
        return value, grad, hess

    def _bw_collision_free_step(self, q, dq):
        cdef int n = self._bw.get().nq()
        cdef cnp.ndarray Q = _vec(q, n, "q")
        cdef cnp.ndarray D = _vec(dq, n, "dq")
        return self._bw.get().collisionFreeStep(_ptr(Q), _ptr(D))

    def _bw_contact_timings(self, q, dq, int repeat):
        if repeat < 1:
            raise ValueError(f"repeat must be >= 1, got {repeat}")
        cdef int n = self._bw.get().nq()
        cdef cnp.ndarray Q = _vec(q, n, "q")
        cdef cnp.ndarray D = _vec(dq, n, "dq")
        cdef cnp.ndarray out = _empty1(8)
        self._bw.get().contactTimings(_ptr(Q), _ptr(D), repeat, _ptr(out))
        return out


def _barrier_values(s, double dhat):
    """(n, 3): IPC's barrier b(s; dhat^2) and its first two derivatives in s at n squared distances s."""
    cdef cnp.ndarray S = np.ascontiguousarray(np.atleast_1d(s), dtype=np.float64).ravel()
    cdef int n = <int>cnp.PyArray_DIM(S, 0)
    cdef cnp.ndarray out = _empty2(n, 3)
    api.barrierValues(_ptr(S), n, dhat * dhat, _ptr(out))
    return out


def _orthogonality_terms(q, double weight):
    """(E, gradient (12,), Hessian (12, 12)) of the orthogonality energy weight * ||A A^T - I||_F^2."""
    cdef cnp.ndarray Q = _vec(q, 12, "q")
    cdef cnp.ndarray g = _empty1(12)
    cdef cnp.ndarray H = _empty2(12, 12)
    value = api.orthogonalityTerms(_ptr(Q), weight, _ptr(g), _ptr(H))
    return value, g, H


def _barrier_stiffness(double bbox_diagonal, double dhat, double average_mass, double grad_dot, double grad_sq):
    """(kappa, kappa_min, kappa_max): IPC's initial adaptive barrier stiffness (contact/barrier.hpp)."""
    cdef cnp.ndarray out = _empty1(3)
    api.barrierStiffness(bbox_diagonal, dhat, average_mass, grad_dot, grad_sq, _ptr(out))
    return float(out[0]), float(out[1]), float(out[2])
