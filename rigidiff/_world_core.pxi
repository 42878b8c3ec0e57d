# WorldCore: the compiled C++ world of a World (a WorldModel and a WorldData) and its hot functional calls
# (batches: _batch_world.pxi). rigidiff.World subclasses it, so world.step(q, v, tau) goes straight into C++.
from cpython.pythread cimport PyThread_get_thread_ident
from cython.operator cimport dereference as deref
from libc.stdint cimport int64_t
from libc.string cimport memcmp, memcpy
from libcpp.memory cimport unique_ptr
from libcpp.vector cimport vector

from rigidiff._cpp cimport api
from rigidiff._cpp.api cimport WorldModel as _WorldModel  # "cdef api.X" reads as Cython's api keyword
from rigidiff._cpp.api cimport KnotTeam as _KnotTeam
from rigidiff._cpp.api cimport WorldData as _WorldData

_BUSY = ("the world is being used by a running rollout in another thread (rollout, a batch or a trajectory's "
         "backward pass, which run without the GIL); it cannot change until that call returns: join that thread "
         "first, or give each thread its own World")
_CHANGING = ("the world is being changed (compiled, or its skeletons, parameters, options, dt or gravity set) in "
             "another thread; wait for that thread (join it) before using the world, or give each thread its own "
             "World")


cdef object _mode_arrays(const vector[int64_t]& keys, const vector[int]& classes, const vector[double]& impulses):
    """The row keys, classes and impulses a constrained rollout recorded, as numpy arrays."""
    cdef cnp.ndarray km = np.empty(keys.size(), dtype=np.int64)
    cdef cnp.ndarray cm = np.empty(classes.size(), dtype=np.intc)
    cdef cnp.ndarray xm = np.empty(impulses.size(), dtype=np.float64)
    cdef int64_t[::1] kv = km
    cdef int[::1] cv = cm
    cdef double[::1] xv = xm
    cdef size_t i
    for i in range(keys.size()):
        kv[i] = keys[i]
    for i in range(classes.size()):
        cv[i] = classes[i]
    for i in range(impulses.size()):
        xv[i] = impulses[i]
    return km, cm, xm


cdef class WorldCore:
    """Compiled core of a World (see rigidiff.World, which adds building, names and documentation).

    Single-state calls share one C++ Data and hold the GIL (they take microseconds, and this keeps
    them thread-safe); rollouts and batches release the GIL and use Data of their own.

    Threads: rollouts, batches and a trajectory's backward pass release the GIL and read the model while
    they run; _busy counts them, and every call that would change the model raises RuntimeError while it
    is non-zero (never a change under a running call). A change (World's methods hold _core_changing()
    around it) belongs to one thread, _changer; calls from other threads raise RuntimeError meanwhile.
    _generation counts changes, so that a GIL-free call whose checks ran before a change refuses to start.

    Contact warm start: a single constrained step (step, step_jacobians, step_vjp, ...) tries the
    previous such step's contact classes first only when it starts bitwise at that step's end state
    (q, v); any other start solves cold. So step(q, v, tau) depends only on its arguments and on
    whether (q, v) continues the last step, never on unrelated calls made before.
    """

    # the C++ world (world/world_model.hpp): the Model, the CollisionModel and the options (dt, gravity, the
    # contact settings, the integrator: their only copy, which World.dt, gravity and contact_options read
    # back and which outlives a rebuild); _wd holds every buffer and the warm-start cache (world_data.hpp)
    cdef unique_ptr[_WorldModel] _wm
    cdef unique_ptr[_WorldData] _wd
    cdef bint _depth_warned  # a contact deeper than options.max_penetration was reported
    cdef int _busy  # calls running without the GIL on this world (see _check_idle)
    cdef unsigned long _changer  # thread id of the thread changing this world (0: none)
    cdef int _change_depth
    cdef unsigned long _generation
    cdef public object _last_rollout_rows
    # with _record_modes set, rollout keeps each step's row keys and classes in _last_rollout_modes
    cdef public bint _record_modes
    cdef public object _last_rollout_modes
    cdef int _nq
    cdef int _nv
    cdef int _nframes
    cdef bint _ready

    def __cinit__(self, *args, **kwargs):
        self._wm.reset(new _WorldModel())
        self._wm.get().reset()
        self._last_rollout_rows = None
        self._record_modes = False
        self._last_rollout_modes = None
        self._depth_warned = False
        self._busy = 0
        self._changer = 0
        self._change_depth = 0
        self._generation = 0
        self._nq = self._nv = self._nframes = 0
        self._ready = False

    # ---- threads
    cdef int _check_other_thread(self) except -1:
        if self._changer != 0 and self._changer != PyThread_get_thread_ident():
            raise RuntimeError(_CHANGING)
        return 0

    cdef int _check_idle(self) except -1:
        """Before a change of the model: RuntimeError if a GIL-free call or another thread's change uses it."""
        if self._busy:
            raise RuntimeError(_BUSY)
        self._check_other_thread()
        self._generation += 1
        return 0

    cdef int _enter_nogil(self, unsigned long generation) except -1:
        """Before a GIL-free call whose arguments were checked at ``generation``; the caller decrements _busy
        in a finally clause."""
        self._check_other_thread()
        if generation != self._generation:
            raise RuntimeError("the world was changed by another thread while this call checked its arguments; "
                               "call again, or give each thread its own World")
        self._busy += 1
        return 0

    def _core_changing(self):
        """Context manager around a change of the world by World's methods: no GIL-free call may run, and no
        other thread may use the world, until it exits (RuntimeError otherwise). Nests."""
        return _Change(self)

    # ---- building (used by World._compile)
    def _core_reset(self):
        self._check_idle()
        self._wd.reset()
        self._wm.get().reset()
        self._ready = False

    def _core_add_joint(self, int parent, int type_code, placement, axes, inertia, str name):
        self._check_idle()
        cdef cnp.ndarray P = _vec(placement, 12, "placement")
        cdef cnp.ndarray A = _vec(axes, 6, "axes")
        cdef cnp.ndarray I = _vec(inertia, 10, "inertia")
        return api.addJoint(self._wm.get().model, parent, type_code, _ptr(P), _ptr(A), _ptr(I), name.encode())

    def _core_set_joint_parameters(self, int j, lower, upper, rest, damping, stiffness, armature, friction,
                                   effort, velocity):
        self._check_idle()
        arrs = [_f64(x, name, "(n,)") for x, name in
                zip((lower, upper, rest, damping, stiffness, armature, friction, effort, velocity),
                    ("lower", "upper", "rest", "damping", "stiffness", "armature", "friction", "effort", "velocity"))]
        api.setJointParameters(self._wm.get().model, j, _ptr(arrs[0]), _ptr(arrs[1]), _ptr(arrs[2]), _ptr(arrs[3]),
                               _ptr(arrs[4]), _ptr(arrs[5]), _ptr(arrs[6]), _ptr(arrs[7]), _ptr(arrs[8]))

    def _core_add_body_part(self, int j, inertia, bint own):
        """Registers a body moving with core joint j (inertia: 10 numbers in the joint frame); returns its
        index. own: the joint's own body (added with the joint); else a welded body, added to the joint."""
        self._check_idle()
        cdef cnp.ndarray I = _vec(inertia, 10, "inertia")
        return api.addBodyPart(deref(self._wm), j, _ptr(I), own)

    def _core_add_state_block(self, str name, int kind, int nq, int nv):
        """Appends the block of the next nq coordinates and nv velocities: a skeleton (kind 0) or a particle
        set (kind 1) called name."""
        self._check_idle()
        return api.addStateBlock(deref(self._wm), name.encode(), kind, nq, nv)

    def _core_state_block(self, str name):
        """(kind, q_begin, nq, v_begin, nv) of the block called name, or None."""
        cdef int out[5]
        if not api.readStateBlock(deref(self._wm), name.encode(), out):
            return None
        return out[0], out[1], out[2], out[3], out[4]

    def _core_add_frame(self, str name, int j, placement):
        self._check_idle()
        cdef cnp.ndarray P = _vec(placement, 12, "placement")
        return api.addFrame(self._wm.get().model, name.encode(), j, _ptr(P))

    def _core_set_gravity(self, g):
        self._check_idle()
        cdef cnp.ndarray G = _vec(g, 3, "gravity")
        api.setGravity(self._wm.get().options, self._wm.get().model, _ptr(G))

    def _core_gravity(self):
        """(3,) gravity, read from the world's options."""
        cdef cnp.ndarray out = _empty1(3)
        api.getGravity(self._wm.get().options, _ptr(out))
        return out

    def _core_finalize(self, int nframes):
        self._check_idle()
        self._nq = self._wm.get().model.nq
        self._nv = self._wm.get().model.nv
        self._nframes = nframes
        self._wd.reset(new _WorldData(deref(self._wm)))
        self._ready = True

    def _core_forget_warm_start(self):
        """The model or the options changed: the next constrained step solves without a warm start."""
        if self._wd:
            self._wd.get().forgetEndState()

    cdef inline int _ensure(self) except -1:
        if self._changer != 0:
            self._check_other_thread()
        if not self._ready:
            self._compile()
        return 0

    def _core_set_integrator(self, int code):
        self._check_idle()
        self._wm.get().options.integrator = code
        api.applyWorldOptions(self._wm.get().options, self._wm.get().model, self._wm.get().cmodel)

    def _core_set_gyroscopic(self, int code):
        self._check_idle()
        self._wm.get().options.gyroscopic = code
        # the semi-implicit step's gyroscopic maps; the implicit step treats the term itself (world_options.hpp)
        api.applyWorldOptions(self._wm.get().options, self._wm.get().model, self._wm.get().cmodel)

    def _core_gyroscopic(self):
        """The gyroscopic code (0 explicit, 1 implicit), read from the world's options."""
        return self._wm.get().options.gyroscopic

    def _core_integrator(self):
        """The integrator code (0 semi-implicit Euler, 1 RK4, 2 implicit), read from the world's options."""
        return self._wm.get().options.integrator

    cdef double* _fext_ptr(self, object f_ext, list keep) except? NULL:
        if f_ext is None:
            return NULL
        cdef unsigned long generation = self._generation
        if isinstance(f_ext, dict):
            f_ext = self._fext_from_dict(f_ext)  # Python code: another thread may change the world meanwhile
            if generation != self._generation:
                raise RuntimeError("the world was changed by another thread while f_ext was read; call again, or "
                                   "give each thread its own World")
        cdef cnp.ndarray F = _mat(f_ext, self._nframes, 6, "f_ext")
        keep.append(F)
        return _ptr(F)

    # ---- dynamics
    def inverse_dynamics(self, q, v, a, f_ext=None):
        """Joint torques tau = M(q) a + C(q, v) v + g(q) - sum_b J_b^T f_b (RNEA).

        Args:
            q: (nq,) configuration; v, a: (nv,) velocity and acceleration.
            f_ext: external wrenches (force, torque) on bodies, in world axes at each body origin: an
                (nbodies, 6) array in body_names order, or a {body name: (6,)} dict.
        Returns:
            (nv,) tau: rigid-body terms with armature (damping and springs act only in step()).
        """
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray A = _vec(a, self._nv, "a")
        cdef list keep = []
        cdef double* fx = self._fext_ptr(f_ext, keep)
        cdef cnp.ndarray out = _empty1(self._nv)
        api.inverseDynamics(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(V), _ptr(A), fx, _ptr(out))
        return out

    def forward_dynamics(self, q, v, tau, f_ext=None):
        """Joint accelerations a = M(q)^-1 (tau - C(q, v) v - g(q) + sum_b J_b^T f_b) (ABA).

        Arguments as in inverse_dynamics; returns (nv,) a. RuntimeError if a moving body has no inertia.
        """
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray T = _vec(tau, self._nv, "tau")
        cdef list keep = []
        cdef double* fx = self._fext_ptr(f_ext, keep)
        cdef cnp.ndarray out = _empty1(self._nv)
        api.forwardDynamics(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(V), _ptr(T), fx, _ptr(out))
        return out

    def mass_matrix(self, q):
        """(nv, nv) joint-space inertia M(q), both triangles, armature on the diagonal (CRBA)."""
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray out = _empty2(self._nv, self._nv)
        api.massMatrix(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(out))
        return out

    def mass_matrix_inverse(self, q):
        """(nv, nv) M(q)^-1, computed in O(nv^2) without forming M."""
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray out = _empty2(self._nv, self._nv)
        api.massMatrixInverse(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(out))
        return out

    def bias_forces(self, q, v):
        """(nv,) C(q, v) v + g(q): Coriolis, centrifugal and gravity terms."""
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray out = _empty1(self._nv)
        api.biasForces(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(V), _ptr(out))
        return out

    # ---- derivatives
    def inverse_dynamics_derivatives(self, q, v, a, f_ext=None):
        """Analytic partial derivatives of inverse_dynamics (Carpentier & Mansard 2018).

        Args:
            q: (nq,), v, a: (nv,); f_ext: body wrenches as in inverse_dynamics (world axes at the body
                origins; they keep their world components while the bodies move).
        Returns:
            (dtau_dq, dtau_dv), each (nv, nv); derivatives with respect to q are in the tangent space
            (q perturbed through integrate). d tau / d a is mass_matrix(q).
        """
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray A = _vec(a, self._nv, "a")
        cdef list keep = []
        cdef double* fx = self._fext_ptr(f_ext, keep)
        cdef cnp.ndarray dq = _empty2(self._nv, self._nv)
        cdef cnp.ndarray dv = _empty2(self._nv, self._nv)
        api.inverseDynamicsDerivatives(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(V), _ptr(A), fx,
                                       _ptr(dq), _ptr(dv))
        return dq, dv

    def forward_dynamics_derivatives(self, q, v, tau, f_ext=None):
        """Analytic partial derivatives of forward_dynamics.

        Args:
            q: (nq,), v, tau: (nv,); f_ext: body wrenches as in inverse_dynamics_derivatives.
        Returns:
            (da_dq, da_dv, da_dtau), each (nv, nv); da_dtau = M(q)^-1; q in the tangent space.
        """
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray T = _vec(tau, self._nv, "tau")
        cdef list keep = []
        cdef double* fx = self._fext_ptr(f_ext, keep)
        cdef cnp.ndarray dq = _empty2(self._nv, self._nv)
        cdef cnp.ndarray dv = _empty2(self._nv, self._nv)
        cdef cnp.ndarray dt = _empty2(self._nv, self._nv)
        api.forwardDynamicsDerivatives(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(V), _ptr(T), fx,
                                       _ptr(dq), _ptr(dv), _ptr(dt))
        return dq, dv, dt

    def integrate_jacobians(self, q, dv):
        """Jacobians of integrate(q, dv): (d_dq, d_ddv), each (nv, nv), in the tangent space
        (Pinocchio's dIntegrate with ARG0 / ARG1)."""
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray D = _vec(dv, self._nv, "dv")
        cdef cnp.ndarray a = _empty2(self._nv, self._nv)
        cdef cnp.ndarray b = _empty2(self._nv, self._nv)
        api.integrateJacobians(self._wm.get().model, _ptr(Q), _ptr(D), _ptr(a), _ptr(b))
        return a, b

    def difference_jacobians(self, q0, q1):
        """Jacobians of difference(q0, q1): (d_dq0, d_dq1), each (nv, nv), in the tangent space
        (Pinocchio's dDifference with ARG0 / ARG1)."""
        self._ensure()
        cdef cnp.ndarray A = _vec(q0, self._nq, "q0")
        cdef cnp.ndarray B = _vec(q1, self._nq, "q1")
        cdef cnp.ndarray a = _empty2(self._nv, self._nv)
        cdef cnp.ndarray b = _empty2(self._nv, self._nv)
        api.differenceJacobians(self._wm.get().model, _ptr(A), _ptr(B), _ptr(a), _ptr(b))
        return a, b

    def _core_step_jacobians(self, q, v, tau, f_ext=None):
        """(q_next, v_next, jac): jac (6, nv, nv) holds dq_dq, dq_dv, dq_dtau, dv_dq, dv_dv, dv_dtau, each transposed."""
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray T = _vec(tau, self._nv, "tau")
        cdef list keep = []
        cdef double* fx = self._fext_ptr(f_ext, keep)
        cdef cnp.ndarray qn = _empty1(self._nq)
        cdef cnp.ndarray vn = _empty1(self._nv)
        cdef cnp.ndarray jac = _empty3(6, self._nv, self._nv)
        api.worldStepJacobians(deref(self._wm), deref(self._wd), _ptr(Q), _ptr(V), _ptr(T), fx, 0, _ptr(qn), _ptr(vn),
                               _ptr(jac), NULL)
        return qn, vn, jac

    # ---- trajectory optimisation kernels (rigidiff.trajopt.ilqr)
    def _core_trajectory_jacobians(self, Qs, Vs, TAUs, int threads=1):
        """(T, 6, nv, nv) step Jacobians (layout of _core_step_jacobians) at the first T states of Qs, Vs, on
        ``threads`` threads (checked by the caller; the same results whatever the count)."""
        self._ensure()
        cdef cnp.ndarray Tau = _mat(TAUs, -1, self._nv, "TAU")
        cdef int n = <int>cnp.PyArray_DIM(Tau, 0)
        cdef cnp.ndarray Q = _mat(Qs, -1, self._nq, "Q")
        cdef cnp.ndarray V = _mat(Vs, -1, self._nv, "V")
        if cnp.PyArray_DIM(Q, 0) < n or cnp.PyArray_DIM(V, 0) < n:
            raise ValueError(f"Q and V need at least {n} rows (one per torque row)")
        cdef cnp.ndarray jac = np.empty((n, 6, self._nv, self._nv))
        api.worldTrajectoryJacobians(deref(self._wm), deref(self._wd), _ptr(Q), _ptr(V), _ptr(Tau), n, _ptr(jac),
                                     threads)
        return jac

    def _core_knot_team_counts(self):
        """The counters of the threads that differentiate a trajectory's knots (world/knot_team.hpp), or None
        before they are made: {"threads", "runs", "fallbacks", "helper_knots", "stepper_knots"}."""
        if not self._wd:
            return None
        cdef const _KnotTeam* team = self._wd.get().madeKnotTeam()
        if team == NULL:
            return None
        return {"threads": team.threads(), "runs": team.runs(), "fallbacks": team.fallbacks(),
                "helper_knots": team.helperKnots(), "stepper_knots": team.stepperKnots()}

    def _core_body_along(self, Qs, int f, bint jacobians):
        """(poses (N, 4, 4), world-aligned Jacobians (N, 6, nv) or None) of body frame f at the rows of Qs."""
        self._ensure()
        cdef cnp.ndarray Q = _mat(Qs, -1, self._nq, "Q")
        cdef int n = <int>cnp.PyArray_DIM(Q, 0)
        cdef cnp.ndarray poses = np.empty((n, 4, 4))
        cdef cnp.ndarray J = np.empty((n, 6, self._nv)) if jacobians else None
        api.frameAlongTrajectory(self._wm.get().model, self._wd.get().data, _ptr(Q), n, f, _ptr(poses),
                                 _ptr(J) if jacobians else NULL)
        return poses, J

    def _core_closed_loop_rollout(self, q0, v0, Qr, Vr, Ur, k, K, double alpha, S, lo, hi):
        """(Q, V, U) of iLQR's closed-loop rollout (api.hpp closedLoopRollout)."""
        self._ensure()
        cdef cnp.ndarray U0 = _f64(Ur, "U", "(T, nu)")  # (T, nu); wraparound is off here
        if cnp.PyArray_NDIM(U0) != 2:
            raise ValueError(f"U must be a (T, nu) array, got shape {np.shape(Ur)}")
        cdef int n = <int>cnp.PyArray_DIM(U0, 0)
        cdef int nu = <int>cnp.PyArray_DIM(U0, 1)
        cdef cnp.ndarray q = _vec(q0, self._nq, "q0")
        cdef cnp.ndarray v = _vec(v0, self._nv, "v0")
        cdef cnp.ndarray Qm = _mat(Qr, n + 1, self._nq, "Q")
        cdef cnp.ndarray Vm = _mat(Vr, n + 1, self._nv, "V")
        cdef cnp.ndarray km = _mat(k, n, nu, "k")
        cdef cnp.ndarray Km = _f64(K, "K", "(T, nu, 2 nv)")
        if (cnp.PyArray_NDIM(Km) != 3 or cnp.PyArray_DIM(Km, 0) != n or cnp.PyArray_DIM(Km, 1) != nu
                or cnp.PyArray_DIM(Km, 2) != 2 * self._nv):
            raise ValueError(f"K must have shape ({n}, {nu}, {2 * self._nv}), got {np.shape(K)}")
        cdef cnp.ndarray Sm = _mat(S, self._nv, nu, "S")
        cdef cnp.ndarray lom = _f64(np.broadcast_to(lo, (n, nu)), "lo", "(T, nu)")
        cdef cnp.ndarray him = _f64(np.broadcast_to(hi, (n, nu)), "hi", "(T, nu)")
        cdef cnp.ndarray Qo = _empty2(n + 1, self._nq)
        cdef cnp.ndarray Vo = _empty2(n + 1, self._nv)
        cdef cnp.ndarray Uo = _empty2(n, nu)
        cdef double* pK = <double*>cnp.PyArray_DATA(Km)
        cdef double* plo = <double*>cnp.PyArray_DATA(lom)
        cdef double* phi = <double*>cnp.PyArray_DATA(him)
        api.worldClosedLoopRollout(deref(self._wm), deref(self._wd), _ptr(q), _ptr(v), _ptr(Qm), _ptr(Vm), _ptr(U0),
                                   _ptr(km), pK, alpha, _ptr(Sm), nu, plo, phi, n, _ptr(Qo), _ptr(Vo), _ptr(Uo))
        return Qo, Vo, Uo

    # ---- kinematics
    def body_poses(self, q):
        """(nbodies, 4, 4) world poses of every body, in body_names order."""
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray out = _empty3(self._nframes, 4, 4)
        api.framePoses(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(out))
        return out

    def _core_body_velocities(self, q, v, bint local):
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray out = _empty2(self._nframes, 6)
        api.frameVelocities(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(V), local, _ptr(out))
        return out

    def _core_body_accelerations(self, q, v, a, bint local):
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray A = _vec(a, self._nv, "a")
        cdef cnp.ndarray out = _empty2(self._nframes, 6)
        api.frameAccelerations(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(V), _ptr(A), local, _ptr(out))
        return out

    def _core_body_jacobian(self, q, int f, bint local):
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray out = _empty2(6, self._nv)
        api.frameJacobian(self._wm.get().model, self._wd.get().data, _ptr(Q), f, local, _ptr(out))
        return out

    def _core_body_jacobian_time_variation(self, q, v, int f, bint local):
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray out = _empty2(6, self._nv)
        api.frameJacobianTimeVariation(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(V), f, local,
                                       _ptr(out))
        return out

    def _core_center_of_mass(self, q, bint jacobian):
        """(com, total mass) or (com, total mass, Jcom)."""
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray com = _empty1(3)
        cdef cnp.ndarray J
        cdef double mass
        if jacobian:
            J = _empty2(3, self._nv)
            mass = api.centerOfMass(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(com), _ptr(J))
            return com, mass, J
        mass = api.centerOfMass(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(com), NULL)
        return com, mass

    def kinetic_energy(self, q, v):
        """0.5 v^T M(q) v (armature included)."""
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        return api.kineticEnergy(self._wm.get().model, self._wd.get().data, _ptr(Q), _ptr(V))

    def potential_energy(self, q):
        """Gravitational potential energy, zero at the world origin (springs excluded)."""
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        return api.potentialEnergy(self._wm.get().model, self._wd.get().data, _ptr(Q))

    def integrate(self, q, dv):
        """q (+) dv on the configuration manifold (quaternions through the exponential map); (nq,)."""
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray D = _vec(dv, self._nv, "dv")
        cdef cnp.ndarray out = _empty1(self._nq)
        api.integrate(self._wm.get().model, _ptr(Q), _ptr(D), _ptr(out))
        return out

    def _core_step_acceleration(self, v, v_next):
        """(N, nv) accelerations of the steps from the rows of v to those of v_next ((N, nv) each, checked by the
        caller): free joints' step 3 and gyroscopic joints' maps inverted (world/free_joint_motion.hpp)."""
        self._ensure()
        cdef cnp.ndarray V = _mat(v, -1, self._nv, "v")
        cdef cnp.ndarray W = _mat(v_next, V.shape[0], self._nv, "v_next")
        cdef Py_ssize_t n = V.shape[0], k
        cdef cnp.ndarray out = _empty2(n, self._nv)
        for k in range(n):
            api.stepAcceleration(self._wm.get().model, self._wm.get().options.dt, _ptr(V) + k * self._nv, _ptr(W) + k * self._nv,
                                 _ptr(out) + k * self._nv)
        return out

    def difference(self, q0, q1):
        """The tangent vector d (nv,) with integrate(q0, d) == q1."""
        self._ensure()
        cdef cnp.ndarray A = _vec(q0, self._nq, "q0")
        cdef cnp.ndarray B = _vec(q1, self._nq, "q1")
        cdef cnp.ndarray out = _empty1(self._nv)
        api.difference(self._wm.get().model, _ptr(A), _ptr(B), _ptr(out))
        return out

    def neutral_configuration(self):
        """(nq,) zeros, with identity quaternions (0, 0, 0, 1) for ball and free joints."""
        self._ensure()
        cdef cnp.ndarray out = _empty1(self._nq)
        api.neutral(self._wm.get().model, _ptr(out))
        return out

    def normalize(self, q):
        """A copy of q with every quaternion normalised (ValueError naming the joint and the norm for a
        quaternion of norm 1e-12 or less, or not finite)."""
        self._ensure()
        cdef cnp.ndarray out = np.array(_vec(q, self._nq, "q"), dtype=np.float64, copy=True)
        api.normalize(self._wm.get().model, _ptr(out))
        return out

    # ---- stepping
    def step(self, q, v, tau, f_ext=None):
        """One time step of length dt: semi-implicit Euler, damping and springs implicit, tau clipped to
        effort limits, or the RK4 or implicit step with World(integrator="rk4" / "implicit")
        (docs/conventions.md). Pure: the world's own state is untouched.

        Args:
            q: (nq,), v: (nv,), tau: (nv,); f_ext: body wrenches as in inverse_dynamics.
        Returns:
            (q_next, v_next). RuntimeError if the state diverges.

        With contacts, the solve is warm-started from the previous step's contact mode only when (q, v)
        is bitwise that step's (q_next, v_next) (docs/contact.md); otherwise it does not depend on the
        calls made before.
        """
        self._ensure()
        cdef cnp.ndarray Q = _vec(q, self._nq, "q")
        cdef cnp.ndarray V = _vec(v, self._nv, "v")
        cdef cnp.ndarray T = _vec(tau, self._nv, "tau")
        cdef list keep = []
        cdef double* fx = self._fext_ptr(f_ext, keep)
        cdef cnp.ndarray qn = _empty1(self._nq)
        cdef cnp.ndarray vn = _empty1(self._nv)
        api.worldStep(deref(self._wm), deref(self._wd), _ptr(Q), _ptr(V), _ptr(T), fx, _ptr(qn), _ptr(vn))
        if (self._wm.get().constrained() and not self._depth_warned
                and api.lastDeepest(self._wd.get().contact) < -self._wm.get().options.max_penetration):
            self._warn_depth(api.lastDeepest(self._wd.get().contact))
        return qn, vn

    def rollout(self, q0, v0, taus):
        """T steps in one C++ call, with the GIL released.

        Args:
            q0: (nq,), v0: (nv,), taus: (T, nv) torques per step.
        Returns:
            Q (T+1, nq) and V (T+1, nv), starting with q0 and v0.
        """
        self._ensure()
        cdef unsigned long generation = self._generation
        cdef cnp.ndarray Q0 = _vec(q0, self._nq, "q0")
        cdef cnp.ndarray V0 = _vec(v0, self._nv, "v0")
        cdef cnp.ndarray T = _mat(taus, -1, self._nv, "taus")
        cdef int n = <int>cnp.PyArray_DIM(T, 0)
        cdef cnp.ndarray Q = _empty2(n + 1, self._nq)
        cdef cnp.ndarray V = _empty2(n + 1, self._nv)
        cdef double* pq0 = _ptr(Q0)
        cdef double* pv0 = _ptr(V0)
        cdef double* pt = _ptr(T)
        cdef double* pQ = _ptr(Q)
        cdef double* pV = _ptr(V)
        cdef bint constrained = self._wm.get().constrained()
        cdef cnp.ndarray[int, ndim=1] rows = np.zeros(max(n, 1), dtype=np.intc)
        cdef int* prows = &rows[0]
        cdef vector[int64_t] keys
        cdef vector[int] classes
        cdef vector[double] impulses
        cdef vector[int64_t]* pkeys = &keys if self._record_modes else NULL
        cdef vector[int]* pclasses = &classes if self._record_modes else NULL
        cdef vector[double]* pimpulses = &impulses if self._record_modes else NULL
        self._last_rollout_modes = None
        api.stepKind(deref(self._wm))  # raises before the GIL is released
        self._enter_nogil(generation)
        try:
            with nogil:
                api.worldRollout(deref(self._wm), pq0, pv0, pt, n, pQ, pV, prows, pkeys, pclasses, pimpulses)
        finally:
            self._busy -= 1
        self._last_rollout_rows = rows[:n] if constrained else None
        if constrained and self._record_modes:
            self._last_rollout_modes = _mode_arrays(keys, classes, impulses)
        return Q, V

    def _warn_depth(self, double deepest):
        import warnings

        self._depth_warned = True
        warnings.warn(f"a contact is {-deepest:.4g} m deep, beyond max_penetration = {self._wm.get().options.max_penetration:g} "
                      "m: it is still solved (never dropped), but such depth usually means a body started inside "
                      "another or dt is too large; contact_options(erp=...) pushes penetrations out (warned once per "
                      "world)",
                      RuntimeWarning, stacklevel=3)

    # ---- sizes and settings
    def _core_set_dt(self, double dt):
        self._check_idle()
        api.setTimeStep(self._wm.get().options, dt)

    def _core_dt(self):
        """The time step, read from the world's options."""
        return self._wm.get().options.dt

    @property
    def nq(self):
        """Size of the configuration vector q."""
        self._ensure()
        return self._nq

    @property
    def nv(self):
        """Size of the velocity vector v (and of tau)."""
        self._ensure()
        return self._nv

    @property
    def nbodies(self):
        """Number of bodies (welded ones included)."""
        self._ensure()
        return self._nframes

    def _core_is_ready(self):
        return self._ready


cdef class _Change:
    """with world._core_changing(): ... (see WorldCore._core_changing)."""
    cdef WorldCore core

    def __cinit__(self, WorldCore core):
        self.core = core

    def __enter__(self):
        if self.core._busy:
            raise RuntimeError(_BUSY)
        self.core._check_other_thread()
        self.core._changer = PyThread_get_thread_ident()
        self.core._change_depth += 1
        return self

    def __exit__(self, *exc):
        self.core._change_depth -= 1
        if self.core._change_depth == 0:
            self.core._changer = 0
        return False
