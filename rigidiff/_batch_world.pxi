# BatchWorldCore: batches of steps, rollouts and step Jacobians of a compiled world on C++ threads with the
# GIL released (bind/api_batch.cpp); each row equals the single call, bit for bit, whatever the thread count.
# rigidiff.World documents them (step_batch, rollout_batch, step_jacobians_batch).


cdef class BatchWorldCore(ContactWorldCore):
    """ContactWorldCore with batches across threads (see rigidiff.World)."""

    def _core_step_batch(self, Qs, Vs, TAUs, int threads):
        self._ensure()
        cdef unsigned long generation = self._generation
        cdef cnp.ndarray Q = _mat(Qs, -1, self._nq, "Q")
        cdef int n = <int>cnp.PyArray_DIM(Q, 0)
        cdef cnp.ndarray V = _mat(Vs, n, self._nv, "V", " (one row per row of Q)")
        cdef cnp.ndarray T = _mat(TAUs, n, self._nv, "TAU", " (one row per row of Q)")
        cdef cnp.ndarray Qn = _empty2(n, self._nq)
        cdef cnp.ndarray Vn = _empty2(n, self._nv)
        cdef double* pq = _ptr(Q)
        cdef double* pv = _ptr(V)
        cdef double* pt = _ptr(T)
        cdef double* pqn = _ptr(Qn)
        cdef double* pvn = _ptr(Vn)
        cdef double dt = self._opts.dt
        cdef bint rk4 = self._rk4()
        cdef bint implicit = self._implicit()
        self._enter_nogil(generation)
        try:
            if implicit:
                with nogil:
                    api.implicitStepBatch(deref(self._model), pq, pv, pt, n, dt, threads, pqn, pvn)
            elif rk4:
                with nogil:
                    api.rk4StepBatch(deref(self._model), pq, pv, pt, n, dt, threads, pqn, pvn)
            elif self._constrained:
                with nogil:
                    api.constrainedStepBatch(deref(self._model), deref(self._cmodel), self._opts.contact, pq, pv, pt,
                                             n, dt, threads, pqn, pvn)
            else:
                with nogil:
                    api.stepBatch(deref(self._model), pq, pv, pt, n, dt, threads, pqn, pvn)
        finally:
            self._busy -= 1
        return Qn, Vn

    def _core_rollout_batch(self, Q0s, V0s, TAUS, int threads):
        """(Q (N, T+1, nq), V (N, T+1, nv)): N rollouts from the rows of Q0s, V0s with torques TAUS, (N, T, nv)
        or (T, nv) shared by all."""
        self._ensure()
        cdef unsigned long generation = self._generation
        cdef cnp.ndarray Q0 = _mat(Q0s, -1, self._nq, "q0s")
        cdef int n = <int>cnp.PyArray_DIM(Q0, 0)
        cdef cnp.ndarray V0 = _mat(V0s, n, self._nv, "v0s")
        cdef cnp.ndarray T = _f64(TAUS, "taus", f"({n}, T, {self._nv}) or (T, {self._nv})")
        cdef bint shared = cnp.PyArray_NDIM(T) == 2
        if not ((shared or (cnp.PyArray_NDIM(T) == 3 and cnp.PyArray_DIM(T, 0) == n))
                and cnp.PyArray_DIM(T, cnp.PyArray_NDIM(T) - 1) == self._nv):
            raise ValueError(f"taus must have shape ({n}, T, {self._nv}) or (T, {self._nv}), got {np.shape(T)}")
        cdef int steps = <int>cnp.PyArray_DIM(T, cnp.PyArray_NDIM(T) - 2)
        cdef cnp.ndarray Q = _empty3(n, steps + 1, self._nq)
        cdef cnp.ndarray V = _empty3(n, steps + 1, self._nv)
        cdef double* pq0 = _ptr(Q0)
        cdef double* pv0 = _ptr(V0)
        cdef double* pt = _ptr(T)
        cdef double* pQ = _ptr(Q)
        cdef double* pV = _ptr(V)
        cdef double dt = self._opts.dt
        cdef int integrator = 1 if self._rk4() else 2 if self._implicit() else 0  # world_options.hpp
        cdef _CollisionModel* cm = self._cmodel.get() if self._constrained else NULL
        cdef _ContactOptions* opts = &self._opts.contact if self._constrained else NULL
        self._enter_nogil(generation)
        try:
            with nogil:
                api.rolloutBatch(deref(self._model), cm, opts, integrator, pq0, pv0, pt, shared, n, steps, dt, threads,
                                 pQ, pV)
        finally:
            self._busy -= 1
        return Q, V

    def _core_step_jacobians_batch(self, Qs, Vs, TAUs, int threads):
        """(q_next (N, nq), v_next (N, nv), jac (N, 6, nv, nv)): each row as _core_step_jacobians, solved cold."""
        self._ensure()
        cdef unsigned long generation = self._generation
        cdef cnp.ndarray Q = _mat(Qs, -1, self._nq, "qs")
        cdef int n = <int>cnp.PyArray_DIM(Q, 0)
        cdef cnp.ndarray V = _mat(Vs, n, self._nv, "vs")
        cdef cnp.ndarray T = _mat(TAUs, n, self._nv, "taus")
        cdef cnp.ndarray Qn = _empty2(n, self._nq)
        cdef cnp.ndarray Vn = _empty2(n, self._nv)
        cdef cnp.ndarray jac = np.empty((n, 6, self._nv, self._nv))
        cdef double* pq = _ptr(Q)
        cdef double* pv = _ptr(V)
        cdef double* pt = _ptr(T)
        cdef double* pqn = _ptr(Qn)
        cdef double* pvn = _ptr(Vn)
        cdef double* pj = _ptr(jac)
        cdef double dt = self._opts.dt
        cdef int integrator = 1 if self._rk4() else 2 if self._implicit() else 0  # world_options.hpp
        cdef _CollisionModel* cm = self._cmodel.get() if self._constrained else NULL
        cdef _ContactOptions* opts = &self._opts.contact if self._constrained else NULL
        self._enter_nogil(generation)
        try:
            with nogil:
                api.stepJacobiansBatch(deref(self._model), cm, opts, integrator, pq, pv, pt, n, dt, threads, pqn, pvn, pj)
        finally:
            self._busy -= 1
        return Qn, Vn, jac
