# ContactWorldCore: the collision model and the constraint solve of a compiled world (the C++ members
# live in WorldCore, whose step, rollout and batch switch to the constrained step when needed).
# rigidiff.World subclasses it; rigidiff/contacts.py holds the documented Python side.


cdef class ContactWorldCore(GradientWorldCore):
    """WorldCore with contacts, joint limits and joint friction (see rigidiff.World)."""

    # ---- building (used by World._compile through contacts.ContactMethods)
    def _core_add_geometry(self, int type_code, params, vertices, int frame, int skeleton, placement,
                           double friction, double restitution, unsigned int group, unsigned int mask, str name,
                           mesh=None):
        """Attach a shape (type code, 4 parameters, (n, 3) vertices) to a frame; returns its index.
        mesh: for a triangle mesh (type 7, vertices: its convex hull), (points (n, 3), faces (m, 3),
        prism thickness)."""
        self._check_idle()
        cdef cnp.ndarray P = _vec(params, 4, "shape parameters")
        cdef cnp.ndarray V = _mat(vertices, -1, 3, "mesh vertices")
        cdef cnp.ndarray M = _vec(placement, 12, "placement")
        cdef cnp.ndarray MP = _mat(np.zeros((0, 3)) if mesh is None else mesh[0], -1, 3, "mesh points")
        cdef cnp.ndarray[int, ndim=2] MF = np.ascontiguousarray(
            np.zeros((1, 3)) if mesh is None else mesh[1], dtype=np.intc).reshape(-1, 3)
        cdef double thickness = 0.0 if mesh is None else float(mesh[2])
        cdef int nfaces = 0 if mesh is None else <int>MF.shape[0]
        return api.addGeometry(self._wm.get().cmodel, self._wm.get().model, type_code, _ptr(P), _ptr(V),
                               <int>cnp.PyArray_DIM(V, 0), frame, skeleton, _ptr(M), friction, restitution, group,
                               mask, name.encode(), _ptr(MP), <int>cnp.PyArray_DIM(MP, 0), &MF[0, 0], nfaces,
                               thickness)

    def _core_set_geometry_coefficients(self, int g, double friction, double restitution):
        self._check_idle()
        api.setGeometryCoefficients(self._wm.get().cmodel, g, friction, restitution)

    def _core_set_self_collision(self, int skeleton, bint enabled):
        self._check_idle()
        api.setSelfCollision(self._wm.get().cmodel, skeleton, enabled)

    def _core_set_contact_options(self, int friction_directions, int friction_combine, int restitution_combine,
                                  double restitution_threshold, double erp, double penetration_allowance,
                                  double max_correction_velocity, bint joint_limits, bint joint_friction,
                                  double tolerance, bint bounce_correction, bint warm_start, bint speculative,
                                  double rest_depth, double margin, double max_penetration):
        """Every contact setting into the world's options (codes as in contacts.COMBINE)."""
        self._check_idle()
        cdef double old_depth = self._wm.get().options.max_penetration
        api.setContactOptions(self._wm.get().options, self._wm.get().cmodel, friction_directions, friction_combine,
                              restitution_combine, restitution_threshold, erp, penetration_allowance,
                              max_correction_velocity, joint_limits, joint_friction, tolerance, bounce_correction,
                              warm_start, speculative, rest_depth, margin, max_penetration)
        if max_penetration != old_depth:  # a new threshold may warn again
            self._depth_warned = False
        if self._ready:
            api.refreshWorld(deref(self._wm))

    def _core_contact_options(self):
        """(flags (8,) int, values (8,) float) of the contact settings, in the order of api.hpp's
        readContactOptions."""
        cdef cnp.ndarray[int, ndim=1] flags = np.empty(8, dtype=np.intc)
        cdef cnp.ndarray values = _empty1(8)
        api.readContactOptions(self._wm.get().options, &flags[0], _ptr(values))
        return flags, values

    def _core_finalize_contacts(self):
        self._check_idle()
        api.refreshWorld(deref(self._wm))
        self._wd.get().resetCollision(deref(self._wm))  # sized for the geometries now added

    def _core_is_constrained(self):
        return bool(self._wm.get().constrained())

    # ---- the warm-start cache (World.warm_start / set_warm_start / clear_warm_start)
    def _core_warm_start(self):
        """(row keys (n,) int64, row classes (n,) int32, row impulses (n,) or None, end state (nq + nv,) or
        None): the rows, classes and impulses of the last single constrained step, and the (q, v) a step
        must start at to use them."""
        self._ensure()
        cdef int n = api.warmStartSize(self._wd.get().contact)
        cdef cnp.ndarray[cnp.int64_t, ndim=1] keys = np.zeros(max(n, 1), dtype=np.int64)
        cdef cnp.ndarray[int, ndim=1] classes = np.zeros(max(n, 1), dtype=np.intc)
        cdef cnp.ndarray impulses = np.zeros(max(n, 1))
        cdef int n_impulses = 0
        if n > 0:
            n_impulses = api.readWarmStart(self._wd.get().contact, <int64_t*>&keys[0], &classes[0], _ptr(impulses))
        cdef cnp.ndarray end = None
        if self._wd.get().warm_known:
            end = _empty1(self._nq + self._nv)
            memcpy(_ptr(end), self._wd.get().warm_end.data(), (self._nq + self._nv) * sizeof(double))
        return keys[:n], classes[:n], (impulses[:n] if n_impulses == n and n > 0 else None), end

    def _core_set_warm_start(self, keys, classes, impulses, end):
        """Replaces the cache (arguments as _core_warm_start returns them; World checks that they belong to
        this world's model)."""
        self._ensure()
        cdef cnp.ndarray[cnp.int64_t, ndim=1] K = np.ascontiguousarray(keys, dtype=np.int64).reshape(-1)
        cdef cnp.ndarray[int, ndim=1] C = np.ascontiguousarray(classes, dtype=np.intc).reshape(-1)
        cdef int n = <int>K.shape[0]
        if C.shape[0] != n:
            raise ValueError(f"the warm start has {n} row keys but {C.shape[0]} classes")
        cdef cnp.ndarray X = None if impulses is None else _vec(impulses, n, "warm start impulses")
        cdef cnp.ndarray E = None if end is None else _vec(end, self._nq + self._nv, "warm start state")
        if not self._wm.get().constrained() and n > 0:
            raise ValueError("this world has no constraints, so its warm start holds no rows")
        if n > 0:
            api.writeWarmStart(self._wd.get().contact, <int64_t*>&K[0], &C[0],
                               <const double*>NULL if X is None else <const double*>_ptr(X), n)
        else:
            api.clearWarmStart(self._wd.get().contact)
        if E is None:
            self._wd.get().forgetEndState()
        else:
            self._wd.get().endAt(self._wm.get().model, _ptr(E), _ptr(E) + self._nq)

    def _core_clear_warm_start(self):
        """Empties the cache: the next constrained step solves cold."""
        if self._wd:  # else not compiled yet: nothing is cached
            self._wd.get().forgetEndState()
            api.clearWarmStart(self._wd.get().contact)

    # ---- queries
    def _core_collide(self, q):
        """Contacts at q: points (n, 3), normals (n, 3), distances (n,), geometries a, b and types (n,)."""
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef int n = api.computeContacts(self._wm.get().model, self._wd.get().data, self._wm.get().cmodel,
                                         self._wd.get().collision, _ptr(Q))
        out = _contact_arrays(n)
        cdef cnp.ndarray pts = out[0], nrm = out[1], dist = out[2]
        cdef cnp.ndarray[int, ndim=1] ga = out[3], gb = out[4], types = out[5]
        if n > 0:
            api.readContacts(self._wd.get().collision, _ptr(pts), _ptr(nrm), _ptr(dist), &ga[0], &gb[0], &types[0])
        return out

    def _core_last_record(self):
        """The last constrained step's contacts, impulses and rows copied out in two flat buffers:
        (n contacts, m rows, doubles, ints); _unpack_record turns them into arrays. Two allocations
        instead of thirteen: step_jacobians copies this per step."""
        self._ensure()
        cdef int n = api.lastContactCount(self._wd.get().contact)
        cdef int m = api.lastRowCount(self._wd.get().contact)
        cdef cnp.ndarray D = _empty1(11 * n)
        cdef cnp.ndarray[int, ndim=1] I = np.empty(4 * n + 3 * m + 2, dtype=np.intc)
        cdef double* d = _ptr(D)
        cdef int* i = &I[0]
        if n > 0:
            api.readLastContacts(self._wd.get().contact, d, d + 3 * n, d + 6 * n, i, i + n, i + 2 * n)
        api.readLastImpulses(self._wd.get().contact, d + 7 * n, d + 8 * n, i + 3 * n, i + 4 * n + 3 * m)
        if m > 0:
            api.readLastRows(self._wd.get().contact, i + 4 * n, i + 4 * n + m, i + 4 * n + 2 * m)
        return n, m, D, I

    def _core_last_lcp(self):
        """The boxed LCP of the last step: A (m, m), b, lo, hi, x (m,) and findex (m,), or None."""
        self._ensure()
        cdef int m = api.lastRowCount(self._wd.get().contact)
        cdef cnp.ndarray A = np.zeros((m, m))
        cdef cnp.ndarray b = np.zeros(m)
        cdef cnp.ndarray lo = np.zeros(m)
        cdef cnp.ndarray hi = np.zeros(m)
        cdef cnp.ndarray x = np.zeros(m)
        cdef cnp.ndarray[int, ndim=1] findex = np.full(max(m, 1), -1, dtype=np.intc)
        api.readLastLcp(self._wm.get().model, self._wd.get().contact, _ptr(A), _ptr(b), _ptr(lo), _ptr(hi), _ptr(x), &findex[0])
        return A, b, lo, hi, x, findex[:m]

    def _core_constraint_rows(self, q, v, tau, f_ext=None):
        """Number of constraint rows (contacts, limits, joint friction) a step from (q, v, tau) solves."""
        self._ensure()
        if not self._wm.get().constrained():
            return 0
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray T = _vec(tau, self._nv, "tau")
        cdef list keep = []
        cdef double* fx = self._fext_ptr(f_ext, keep)
        cdef cnp.ndarray qn = _empty1(self._nq)
        cdef cnp.ndarray vn = _empty1(self._nv)
        api.worldStep(deref(self._wm), deref(self._wd), _ptr(Q), _ptr(V), _ptr(T), fx, _ptr(qn), _ptr(vn))
        return api.lastRowCount(self._wd.get().contact)


cdef tuple _contact_arrays(int n):
    return (_empty2(n, 3), _empty2(n, 3), _empty1(n), np.zeros(max(n, 1), dtype=np.intc)[:n],
            np.zeros(max(n, 1), dtype=np.intc)[:n], np.zeros(max(n, 1), dtype=np.intc)[:n])
