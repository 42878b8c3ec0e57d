# GradientWorldCore: the parameter Jacobians and the reverse mode of a compiled world (step VJPs, rollout
# backward passes, kinematic derivatives, gradient maps between coordinates and the tangent space). Its
# C++ members live in WorldCore; rigidiff.World's GradientMethods (world_gradients.py) documents them.


cdef class GradientWorldCore(WorldCore):
    """WorldCore with parameter Jacobians and the reverse mode (see rigidiff.World)."""

    def _core_set_body_inertia(self, int b, inertia):
        """Replaces the inertia of body part b (in its joint frame) and recomputes its joint's."""
        self._check_idle()
        self._ensure()
        cdef cnp.ndarray I = _vec(inertia, 10, "inertia")
        api.setBodyPartInertia(deref(self._wm), b, _ptr(I))

    def _core_joint_inertia_parameters(self):
        self._ensure()
        cdef cnp.ndarray out = _empty1(10 * (self._wm.get().model.njoints - 1))
        api.jointInertiaParameters(self._wm.get().model, _ptr(out))
        return out

    def _core_regressor(self, q, v, a):
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray A = _vec(a, self._nv, "a")
        cdef cnp.ndarray out = _empty2(self._nv, 10 * (self._wm.get().model.njoints - 1))
        api.inverseDynamicsRegressor(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(V), _ptr(A), _ptr(out))
        return out

    def _core_param_count(self, int groups):
        """Parameter columns of the groups: the model's (bits 1..16), then per geometry its friction (32)
        and restitution (64)."""
        self._ensure()
        return api.worldParameterCount(deref(self._wm), groups)

    def _core_step_param_jacobians(self, q, v, tau, int groups, f_ext=None):
        """(q_next, v_next, jac as in _core_step_jacobians, pjac (2, nv, np)) for the parameter groups."""
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray T = _vec(tau, self._nv, "tau")
        cdef list keep = []
        cdef double* fx = self._fext_ptr(f_ext, keep)
        cdef int npar = self._core_param_count(groups)
        cdef cnp.ndarray qn = _empty1(self._nq)
        cdef cnp.ndarray vn = _empty1(self._nv)
        cdef cnp.ndarray jac = _empty3(6, self._nv, self._nv)
        cdef cnp.ndarray pjac = _empty3(2, self._nv, npar)
        api.worldStepJacobians(deref(self._wm), deref(self._wd), _ptr(Q), _ptr(V), _ptr(T), fx, groups, _ptr(qn),
                               _ptr(vn), _ptr(jac), _ptr(pjac))
        return qn, vn, jac, pjac

    def _core_step_vjp(self, q, v, tau, gq, gv, int groups, f_ext=None, bint explore=False):
        """(q_next, v_next, g_state (2 nv), g_tau (nv), g_params) for tangent cotangents gq, gv."""
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray T = _vec(tau, self._nv, "tau")
        cdef list keep = []
        cdef double* fx = self._fext_ptr(f_ext, keep)
        cdef cnp.ndarray GQ = _vec(gq, self._nv, "dL_dq_next")
        cdef cnp.ndarray GV = _vec(gv, self._nv, "dL_dv_next")
        cdef int npar = self._core_param_count(groups)
        cdef cnp.ndarray qn = _empty1(self._nq)
        cdef cnp.ndarray vn = _empty1(self._nv)
        cdef cnp.ndarray gs = _empty1(2 * self._nv)
        cdef cnp.ndarray gt = _empty1(self._nv)
        cdef cnp.ndarray gp = np.zeros(npar)
        api.worldStepVJP(deref(self._wm), deref(self._wd), _ptr(Q), _ptr(V), _ptr(T), fx, _ptr(GQ), _ptr(GV), groups,
                         explore, _ptr(qn), _ptr(vn), _ptr(gs), _ptr(gt), _ptr(gp))
        return qn, vn, gs, gt, gp

    def _core_rollout_backward(self, Qs, Vs, taus, GQ, GV, int groups, bint explore=False, rows=None, modes=None):
        """(g_taus (T, nv), g_state (2 nv), g_params) of a recorded rollout; GQ in the tangent space.
        rows and modes: the row counts and (keys, classes, impulses) the rollout recorded (impulses may be
        left out), or None to rerun it."""
        self._ensure()
        cdef unsigned long generation = self._generation
        cdef cnp.ndarray T = _mat(taus, -1, self._nv, "taus")
        cdef int n = <int>cnp.PyArray_DIM(T, 0)
        cdef cnp.ndarray Q = _mat(Qs, n + 1, self._nq, "Q")
        cdef cnp.ndarray V = _mat(Vs, n + 1, self._nv, "V")
        cdef cnp.ndarray G1 = _mat(GQ, n + 1, self._nv, "dL_dQ")
        cdef cnp.ndarray G2 = _mat(GV, n + 1, self._nv, "dL_dV")
        cdef int npar = self._core_param_count(groups)
        cdef cnp.ndarray gtaus = _empty2(n, self._nv)
        cdef cnp.ndarray gs = _empty1(2 * self._nv)
        cdef cnp.ndarray gp = np.zeros(npar)
        cdef double* pQ = _ptr(Q)
        cdef double* pV = _ptr(V)
        cdef double* pT = _ptr(T)
        cdef double* p1 = _ptr(G1)
        cdef double* p2 = _ptr(G2)
        cdef double* pgt = _ptr(gtaus)
        cdef double* pgs = _ptr(gs)
        cdef double* pgp = _ptr(gp)
        cdef cnp.ndarray R, K, C, X
        cdef const int* prows = NULL
        cdef const int64_t* pkeys = NULL
        cdef const int* pclasses = NULL
        cdef const double* pimpulses = NULL
        if self._wm.get().constrained() and rows is not None and modes is not None:
            R = np.ascontiguousarray(rows, dtype=np.intc)
            K = np.ascontiguousarray(modes[0], dtype=np.int64)
            C = np.ascontiguousarray(modes[1], dtype=np.intc)
            X = np.ascontiguousarray(modes[2], dtype=np.float64) if len(modes) > 2 else None
            if (R.shape[0] != n or K.shape[0] != C.shape[0] or K.shape[0] != int(R.sum())
                    or (X is not None and X.shape[0] != K.shape[0])):
                raise ValueError("the recorded contact modes do not match the rollout's steps")
            if K.shape[0] == 0:  # no rows at all: non-null pointers still say "recorded"
                K, C = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.intc)
                X = None if X is None else np.zeros(1)
            if X is not None:
                if not np.isfinite(X).all():
                    raise ValueError("the recorded contact impulses must be finite")
                pimpulses = <const double*>cnp.PyArray_DATA(X)
            prows = <const int*>cnp.PyArray_DATA(R)
            pkeys = <const int64_t*>cnp.PyArray_DATA(K)
            pclasses = <const int*>cnp.PyArray_DATA(C)
        api.stepKind(deref(self._wm))  # raises before the GIL is released
        self._enter_nogil(generation)
        try:
            with nogil:
                api.worldRolloutBackward(deref(self._wm), pQ, pV, pT, n, p1, p2, groups, explore, pgt, pgs, pgp, prows,
                                         pkeys, pclasses, pimpulses)
        finally:
            self._busy -= 1
        return gtaus, gs, gp

    def _core_body_velocity_derivatives(self, q, v, int f, bint local):
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray dq = _empty2(6, self._nv)
        cdef cnp.ndarray dv = _empty2(6, self._nv)
        api.frameVelocityDerivatives(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(V), f, local, _ptr(dq),
                                     _ptr(dv))
        return dq, dv

    def _core_body_acceleration_derivatives(self, q, v, a, int f, bint local):
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray A = _vec(a, self._nv, "a")
        cdef cnp.ndarray dq = _empty2(6, self._nv)
        cdef cnp.ndarray dv = _empty2(6, self._nv)
        cdef cnp.ndarray da = _empty2(6, self._nv)
        api.frameAccelerationDerivatives(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(V), _ptr(A), f, local,
                                         _ptr(dq), _ptr(dv), _ptr(da))
        return dq, dv, da

    def _core_com_velocity_derivatives(self, q, v):
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray out = _empty2(3, self._nv)
        api.centerOfMassVelocityDerivatives(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(V), _ptr(out))
        return out

    def _core_tangent_gradients(self, Qs, G):
        """(N, nv) tangent gradients from (N, nq) coordinate gradients at the rows of Qs (N, nq)."""
        self._ensure()
        cdef cnp.ndarray Q = _mat(Qs, -1, self._nq, "q")
        cdef int n = <int>cnp.PyArray_DIM(Q, 0)
        cdef cnp.ndarray Gc = _mat(G, n, self._nq, "gradient")
        cdef cnp.ndarray out = _empty2(n, self._nv)
        api.tangentGradients(self._wm.get().model, _ptr(Q), _ptr(Gc), n, _ptr(out))
        return out

    def _core_coordinate_gradients(self, Qs, G):
        """(N, nq) coordinate gradients from (N, nv) tangent gradients at the rows of Qs (N, nq)."""
        self._ensure()
        cdef cnp.ndarray Q = _mat(Qs, -1, self._nq, "q")
        cdef int n = <int>cnp.PyArray_DIM(Q, 0)
        cdef cnp.ndarray Gt = _mat(G, n, self._nv, "gradient")
        cdef cnp.ndarray out = _empty2(n, self._nq)
        api.coordinateGradients(self._wm.get().model, _ptr(Q), _ptr(Gt), n, _ptr(out))
        return out
