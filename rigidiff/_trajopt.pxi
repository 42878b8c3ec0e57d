# iLQR's backward pass (cpp/include/rigidiff/trajopt/riccati.hpp), for rigidiff.trajopt.ilqr, and the
# whole solver with the cost terms in C++ (trajopt/ilqr_solver.hpp), for problems without Python costs.
from rigidiff._cpp.api cimport IlqrSolver as _IlqrSolver
from rigidiff._cpp.api cimport IlqrStep as _IlqrStep


cdef cnp.ndarray _c3(object x, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c, str name):
    cdef cnp.ndarray arr = _f64(x, name, f"({a}, {b}, {c})")
    if (cnp.PyArray_NDIM(arr) != 3 or cnp.PyArray_DIM(arr, 0) != a or cnp.PyArray_DIM(arr, 1) != b
            or cnp.PyArray_DIM(arr, 2) != c):
        raise ValueError(f"{name} must have shape ({a}, {b}, {c}), got {np.shape(x)}")
    return arr


def _riccati_backward(A, B, lx, lxx, lu, luu, lo, hi, k0, double mu):
    """(k (T, nu), K (T, nu, nx), dV (2,)) of iLQR's backward pass, or None when a regularised Q_uu is not
    positive definite. A (T, nx, nx), B (T, nx, nu), lx (T+1, nx), lxx (T+1, nx, nx), lu (T, nu),
    luu (T, nu, nu); lo, hi (T, nu) bounds of k or None; k0 (T, nu) the box QP's start."""
    cdef cnp.ndarray Bm = _f64(B, "B", "(T, nx, nu)")
    if cnp.PyArray_NDIM(Bm) != 3:
        raise ValueError(f"B must be (T, nx, nu), got shape {np.shape(B)}")
    cdef int T = <int>cnp.PyArray_DIM(Bm, 0)
    cdef int nx = <int>cnp.PyArray_DIM(Bm, 1)
    cdef int nu = <int>cnp.PyArray_DIM(Bm, 2)
    cdef cnp.ndarray Am = _c3(A, T, nx, nx, "A")
    cdef cnp.ndarray lxm = _mat(lx, T + 1, nx, "lx")
    cdef cnp.ndarray lxxm = _c3(lxx, T + 1, nx, nx, "lxx")
    cdef cnp.ndarray lum = _mat(lu, T, nu, "lu")
    cdef cnp.ndarray luum = _c3(luu, T, nu, nu, "luu")
    cdef cnp.ndarray k = np.array(_mat(k0, T, nu, "k0"), dtype=np.float64, copy=True)
    cdef cnp.ndarray K = np.empty((T, nu, nx))
    cdef cnp.ndarray dV = np.zeros(2)
    cdef cnp.ndarray lom
    cdef cnp.ndarray him
    cdef const double* plo = NULL
    cdef const double* phi = NULL
    if lo is not None:
        lom = _f64(np.broadcast_to(lo, (T, nu)), "lo", "(T, nu)")
        him = _f64(np.broadcast_to(hi, (T, nu)), "hi", "(T, nu)")
        plo = <double*>cnp.PyArray_DATA(lom)
        phi = <double*>cnp.PyArray_DATA(him)
    ok = api.riccatiBackward(T, nx, nu, <double*>cnp.PyArray_DATA(Am), <double*>cnp.PyArray_DATA(Bm), _ptr(lxm),
                             <double*>cnp.PyArray_DATA(lxxm), _ptr(lum), <double*>cnp.PyArray_DATA(luum), plo, phi,
                             mu, _ptr(k), <double*>cnp.PyArray_DATA(K), _ptr(dV))
    return (k, K, dV) if ok else None


cdef cnp.ndarray _knots(object knots):
    return np.ascontiguousarray(knots, dtype=np.intc)


cdef cnp.ndarray _copied(const vector[double]& x, tuple shape):
    cdef cnp.ndarray out = np.empty(shape)
    if x.size():
        memcpy(cnp.PyArray_DATA(out), &x[0], x.size() * sizeof(double))
    return out


cdef class IlqrCore:
    """A problem's cost terms and iLQR in C++, made once (Problem._native); arguments come checked by Problem.

    IlqrCore(T, nq, nv, S (nv, nu), lo, hi (T, nu)); add the terms with add_state, add_control, add_body;
    ``costs`` evaluates them; ``start`` then ``iterate`` run iLQR (trajopt/ilqr_solver.hpp).
    """
    cdef unique_ptr[_IlqrSolver] _s
    cdef readonly int T, nq, nv, nu

    def __cinit__(self, int T, int nq, int nv, S, lo, hi):
        shape = np.shape(S)
        if len(shape) != 2 or shape[1] < 1:
            raise ValueError(f"S must be an (nv, nu) array with nu >= 1, got shape {shape}")
        cdef cnp.ndarray Sm = _mat(S, nv, shape[1], "S")
        self.T, self.nq, self.nv, self.nu = T, nq, nv, <int>shape[1]
        cdef cnp.ndarray lom = _mat(lo, T, self.nu, "lo")
        cdef cnp.ndarray him = _mat(hi, T, self.nu, "hi")
        self._s.reset(new _IlqrSolver(T, nq, nv, _ptr(Sm), self.nu, _ptr(lom), _ptr(him)))

    def add_state(self, knots, q_target, v_target, Wq, Wv):
        cdef cnp.ndarray k = _knots(knots)
        cdef cnp.ndarray qt = None if q_target is None else _mat(q_target, self.T + 1, self.nq, "q_target")
        cdef cnp.ndarray vt = None if v_target is None else _mat(v_target, self.T + 1, self.nv, "v_target")
        cdef cnp.ndarray wq = _mat(Wq, self.nv, self.nv, "Wq")
        cdef cnp.ndarray wv = _mat(Wv, self.nv, self.nv, "Wv")
        self._s.get().costs.addState(<int*>cnp.PyArray_DATA(k), <int>len(k), <double*>NULL if qt is None else _ptr(qt),
                                     <double*>NULL if vt is None else _ptr(vt), _ptr(wq), _ptr(wv))

    def add_control(self, target, W):
        cdef cnp.ndarray t = _mat(target, self.T, self.nv, "tau_target")
        cdef cnp.ndarray w = _mat(W, self.nv, self.nv, "W")
        self._s.get().costs.addControl(_ptr(t), _ptr(w))

    def add_body(self, int f, knots, point, position, W, R, Wr):
        cdef cnp.ndarray k = _knots(knots)
        cdef cnp.ndarray pt = _vec(point, 3, "point")
        cdef cnp.ndarray pos = None if position is None else _vec(position, 3, "position")
        cdef cnp.ndarray w = _mat(W, 3, 3, "W")
        cdef cnp.ndarray rot = None if R is None else _mat(R, 3, 3, "R")
        cdef cnp.ndarray wr = _mat(Wr, 3, 3, "Wr")
        self._s.get().costs.addBody(f, <int*>cnp.PyArray_DATA(k), <int>len(k), _ptr(pt),
                                    <double*>NULL if pos is None else _ptr(pos), _ptr(w), <double*>NULL if rot is None else _ptr(rot),
                                    _ptr(wr))

    def costs(self, WorldCore world, Q, V, TAU, bint derivatives, bint hessians):
        """(value, gq, gv, gtau, hxx, huu) at the trajectory; the arrays None where not asked for."""
        world._ensure()
        cdef int T = self.T, nv = self.nv
        cdef cnp.ndarray Qm = _mat(Q, T + 1, self.nq, "Q")
        cdef cnp.ndarray Vm = _mat(V, T + 1, nv, "V")
        cdef cnp.ndarray Um = _mat(TAU, T, nv, "TAU")
        cdef cnp.ndarray gq = None, gv = None, gtau = None, hxx = None, huu = None
        if derivatives:
            gq, gv, gtau = _empty2(T + 1, nv), _empty2(T + 1, nv), _empty2(T, nv)
        if derivatives and hessians:
            hxx, huu = _empty3(T + 1, 2 * nv, 2 * nv), _empty3(T, nv, nv)
        value = self._s.get().costs.evaluate(world._wm.get().model, world._wd.get().data, _ptr(Qm), _ptr(Vm), _ptr(Um),
                                             <double*>NULL if gq is None else _ptr(gq), <double*>NULL if gv is None else _ptr(gv),
                                             <double*>NULL if gtau is None else _ptr(gtau), <double*>NULL if hxx is None else _ptr(hxx),
                                             <double*>NULL if huu is None else _ptr(huu))
        return value, gq, gv, gtau, hxx, huu

    def start(self, WorldCore world, q0, v0, guess, double mu):
        """Rolls the guess (T, nv) out from (q0, v0) with its step Jacobians; False if it diverged."""
        world._ensure()
        cdef cnp.ndarray q = _vec(q0, self.nq, "q0")
        cdef cnp.ndarray v = _vec(v0, self.nv, "v0")
        cdef cnp.ndarray g = _mat(guess, self.T, self.nv, "tau")
        return self._s.get().start(deref(world._wm), deref(world._wd), _ptr(q), _ptr(v), _ptr(g), mu)

    @property
    def threads(self):
        """Threads that differentiate the knots (checked by the caller; the same results whatever the count)."""
        return self._s.get().threads()

    @threads.setter
    def threads(self, int threads):
        self._s.get().setThreads(threads)

    def iterate(self, WorldCore world, double tol):
        """One iteration: 0 accepted, 1 accepted and converged (tol), 2 no decrease (a minimum), 3 failed."""
        world._ensure()
        return <int>self._s.get().iterate(deref(world._wm), deref(world._wd), tol)

    @property
    def cost(self):
        return self._s.get().cost()

    @property
    def dynamics_seconds(self):
        return self._s.get().dynamicsSeconds()

    def trajectory(self):
        """Copies of the plan: Q (T+1, nq), V (T+1, nv), U (T, nu)."""
        cdef _IlqrSolver* s = self._s.get()
        return (_copied(s.Q(), (self.T + 1, self.nq)), _copied(s.V(), (self.T + 1, self.nv)),
                _copied(s.U(), (self.T, self.nu)))

    def gains(self):
        """K (T, nu, 2nv) of the last accepted step, or None."""
        if not self._s.get().hasGains():
            return None
        return _copied(self._s.get().K(), (self.T, self.nu, 2 * self.nv))
