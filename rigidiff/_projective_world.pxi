# The Projective Dynamics world of the C++ core (bind/api_projective.hpp), for rigidiff.ProjectiveWorld.
from rigidiff._cpp.projective cimport ProjectiveWorld as _ProjectiveWorld


cdef class ProjectiveWorldCore:
    """Compiled core of a projective world (see rigidiff.ProjectiveWorld, which adds names, meshes and
    documentation). Steps release the GIL; one C++ scratch serves every call, so a world is not shared by
    threads."""

    cdef unique_ptr[_ProjectiveWorld] _pw

    def __cinit__(self, *args, **kwargs):
        self._pw.reset(new _ProjectiveWorld())

    def _pw_set_dt(self, double dt):
        self._pw.get().setTimeStep(dt)

    def _pw_dt(self):
        return self._pw.get().timeStep()

    def _pw_set_gravity(self, g):
        cdef cnp.ndarray G = _vec(g, 3, "gravity")
        self._pw.get().setGravity(_ptr(G))

    def _pw_gravity(self):
        cdef cnp.ndarray out = _empty1(3)
        self._pw.get().gravity(_ptr(out))
        return out

    def _pw_set_options(self, double tolerance, int max_iterations, int history, double contact_stiffness,
                        int method):
        self._pw.get().setOptions(tolerance, max_iterations, history, contact_stiffness, method)

    def _pw_options(self):
        cdef cnp.ndarray out = _empty1(5)
        self._pw.get().options(_ptr(out))
        return float(out[0]), int(out[1]), int(out[2]), float(out[3]), int(out[4])

    def _pw_set_threads(self, int threads):
        self._pw.get().setThreads(threads)

    def _pw_threads(self):
        return self._pw.get().threads()

    def _pw_set_friction(self, double friction, double friction_velocity):
        self._pw.get().setFriction(friction, friction_velocity)

    def _pw_set_contact_model(self, int contact_model):
        self._pw.get().setContactModel(contact_model)

    def _pw_contact_model(self):
        return self._pw.get().contactModel()

    def _pw_friction(self):
        return self._pw.get().friction(), self._pw.get().frictionVelocity()

    def _pw_add_body(self, str name, points, elements, double youngs_modulus, double poisson_ratio,
                     double density, int energies):
        cdef cnp.ndarray P = _mat(points, -1, 3, "mesh vertices")
        cdef cnp.ndarray E = np.ascontiguousarray(elements, dtype=np.intc)
        return self._pw.get().addBody(name.encode(), _ptr(P), <int>cnp.PyArray_DIM(P, 0), <int*>cnp.PyArray_DATA(E),
                                      <int>cnp.PyArray_DIM(E, 0), <int>cnp.PyArray_DIM(E, 1), youngs_modulus,
                                      poisson_ratio, density, energies)

    def _pw_set_material(self, int body, double youngs_modulus, double poisson_ratio):
        self._pw.get().setMaterial(body, youngs_modulus, poisson_ratio)

    def _pw_set_density(self, int body, double density):
        self._pw.get().setDensity(body, density)

    def _pw_set_fixed(self, int body, vertices):
        cdef cnp.ndarray V = np.ascontiguousarray(vertices, dtype=np.intc).reshape(-1)
        self._pw.get().setFixed(body, <int*>cnp.PyArray_DATA(V), <int>cnp.PyArray_DIM(V, 0))

    def _pw_add_muscle(self, str name, int body, elements, fibers, double stiffness):
        cdef cnp.ndarray E = np.ascontiguousarray(elements, dtype=np.intc).reshape(-1)
        cdef cnp.ndarray F = _mat(fibers, -1, 3, "fiber")
        return self._pw.get().addMuscle(name.encode(), body, <int*>cnp.PyArray_DATA(E), <int>cnp.PyArray_DIM(E, 0),
                                        _ptr(F), <int>cnp.PyArray_DIM(F, 0), stiffness)

    def _pw_set_muscle_stiffness(self, int muscle, double stiffness):
        self._pw.get().setMuscleStiffness(muscle, stiffness)

    def _pw_muscle_stiffness(self, int muscle):
        return self._pw.get().muscleStiffness(muscle)

    def _pw_set_activation(self, a):
        cdef cnp.ndarray A = _vec(a, self._pw.get().muscleCount(), "activation")
        self._pw.get().setActivation(_ptr(A))

    def _pw_muscle_gradients(self):
        cdef int m = self._pw.get().muscleCount()
        cdef cnp.ndarray out = _empty1(2 * m)
        self._pw.get().muscleGradients(_ptr(out))
        return out[:m], out[m:]

    def _pw_add_plane(self, normal, double offset):
        cdef cnp.ndarray N = _vec(normal, 3, "normal")
        self._pw.get().addPlane(_ptr(N), offset)

    def _pw_add_sphere(self, centre, double radius):
        cdef cnp.ndarray C = _vec(centre, 3, "centre")
        self._pw.get().addSphere(_ptr(C), radius)

    def _pw_add_box(self, half, rotation, position):
        cdef cnp.ndarray H = _vec(half, 3, "half extents")
        cdef cnp.ndarray R = _mat(rotation, 3, 3, "rotation")
        cdef cnp.ndarray P = _vec(position, 3, "position")
        return self._pw.get().addBox(_ptr(H), _ptr(R), _ptr(P))

    def _pw_set_obstacle_pose(self, int o, rotation, position):
        cdef cnp.ndarray R = _mat(rotation, 3, 3, "rotation")
        cdef cnp.ndarray P = _vec(position, 3, "position")
        self._pw.get().setObstaclePose(o, _ptr(R), _ptr(P))

    def _pw_set_obstacle_velocity(self, int o, linear, angular):
        cdef cnp.ndarray V = _vec(linear, 3, "linear velocity")
        cdef cnp.ndarray W = _vec(angular, 3, "angular velocity")
        self._pw.get().setObstacleVelocity(o, _ptr(V), _ptr(W))

    def _pw_contact_and_density_gradients(self):
        cdef cnp.ndarray out = _empty1(self._pw.get().bodyCount() + 2)
        self._pw.get().contactAndDensityGradients(_ptr(out))
        return out

    def _pw_obstacle_gradients(self):
        cdef cnp.ndarray out = _empty1(6 * self._pw.get().obstacleCount())
        self._pw.get().obstacleGradients(_ptr(out))
        return out.reshape(-1, 6)

    def _pw_nq(self):
        return self._pw.get().configurationSize()

    def _pw_nv(self):
        return self._pw.get().stateSize()

    def _pw_set_skeletons(self, WorldCore compiled):
        """Copies the multibody model of compiled (an lcp World holding the skeletons) into the world."""
        self._pw.get().setSkeletons(deref(compiled._wm).model)

    def _pw_clear_skeletons(self):
        self._pw.get().clearSkeletons()

    def _pw_set_joint_limits(self, bint on, double stiffness):
        self._pw.get().setJointLimits(on, stiffness)

    def _pw_joint_limits(self):
        cdef cnp.ndarray out = _empty1(2)
        self._pw.get().jointLimits(_ptr(out))
        return bool(out[0]), float(out[1])

    def _pw_skeleton_parameter_gradients(self):
        cdef cnp.ndarray out = _empty1(self._pw.get().skeletonParameterCount())
        self._pw.get().skeletonParameterGradients(_ptr(out))
        return out

    def _pw_add_link_shape(self, int joint, int kind, rotation, position, size):
        cdef cnp.ndarray R = _mat(rotation, 3, 3, "rotation")
        cdef cnp.ndarray P = _vec(position, 3, "position")
        cdef cnp.ndarray S = _vec(size, 3, "size")
        return self._pw.get().addLinkShape(joint, kind, _ptr(R), _ptr(P), _ptr(S))

    def _pw_add_link_hull(self, int joint, rotation, position, vertices, triangles):
        cdef cnp.ndarray R = _mat(rotation, 3, 3, "rotation")
        cdef cnp.ndarray P = _vec(position, 3, "position")
        cdef cnp.ndarray V = np.ascontiguousarray(vertices, dtype=np.float64).reshape(-1, 3)
        cdef cnp.ndarray T = np.ascontiguousarray(triangles, dtype=np.intc).reshape(-1, 3)
        return self._pw.get().addLinkHull(joint, _ptr(R), _ptr(P), _ptr(V), V.shape[0],
                                          <const int*>cnp.PyArray_DATA(T), T.shape[0])

    def _pw_set_link_group(self, int shape, int group, int parent_joint, bint self_collision):
        self._pw.get().setLinkGroup(shape, group, parent_joint, self_collision)

    def _pw_body_range(self, int body):
        cdef cnp.ndarray out = np.empty(2, dtype=np.intc)
        self._pw.get().bodyRange(body, <int*>cnp.PyArray_DATA(out))
        return int(out[0]), int(out[1])

    def _pw_masses(self):
        cdef cnp.ndarray out = _empty1(self._pw.get().vertexCount())
        self._pw.get().masses(_ptr(out))
        return out

    def _pw_masks(self):
        cdef int n = self._pw.get().vertexCount()
        cdef cnp.ndarray surface = np.empty(n, dtype=np.intc)
        cdef cnp.ndarray fixed = np.empty(n, dtype=np.intc)
        self._pw.get().surfaceMask(<int*>cnp.PyArray_DATA(surface))
        self._pw.get().fixedMask(<int*>cnp.PyArray_DATA(fixed))
        return surface.astype(bool), fixed.astype(bool)

    def _pw_step(self, q, v, f):
        cdef int n = self._pw.get().stateSize()
        cdef int nq = self._pw.get().configurationSize()
        cdef cnp.ndarray Q = _vec(q, nq, "q")
        cdef cnp.ndarray V = _vec(v, n, "v")
        cdef cnp.ndarray F = _vec(f, n, "f")
        cdef cnp.ndarray q_out = _empty1(nq)
        cdef cnp.ndarray v_out = _empty1(n)
        cdef _ProjectiveWorld* w = self._pw.get()
        cdef double* p[5]
        p[:] = [_ptr(Q), _ptr(V), _ptr(F), _ptr(q_out), _ptr(v_out)]
        with nogil:
            w.step(p[0], p[1], p[2], p[3], p[4])
        return q_out, v_out

    def _pw_step_vjp(self, q, v, f, gq_next, gv_next):
        cdef int n = self._pw.get().stateSize()
        cdef int nq = self._pw.get().configurationSize()
        cdef cnp.ndarray Q = _vec(q, nq, "q")
        cdef cnp.ndarray V = _vec(v, n, "v")
        cdef cnp.ndarray F = _vec(f, n, "f")
        cdef cnp.ndarray A = _vec(gq_next, n, "dL_dq_next")
        cdef cnp.ndarray B = _vec(gv_next, n, "dL_dv_next")
        cdef cnp.ndarray q_out = _empty1(nq)
        cdef cnp.ndarray v_out = _empty1(n)
        cdef cnp.ndarray gq = _empty1(n)
        cdef cnp.ndarray gv = _empty1(n)
        cdef cnp.ndarray gf = _empty1(n)
        cdef cnp.ndarray gE = _empty1(self._pw.get().bodyCount())
        cdef cnp.ndarray gnu = _empty1(self._pw.get().bodyCount())
        cdef _ProjectiveWorld* w = self._pw.get()
        cdef double* p[12]
        p[:] = [_ptr(Q), _ptr(V), _ptr(F), _ptr(A), _ptr(B), _ptr(q_out), _ptr(v_out), _ptr(gq), _ptr(gv), _ptr(gf),
                _ptr(gE), _ptr(gnu)]
        with nogil:
            w.stepVjp(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11])
        return q_out, v_out, gq, gv, gf, gE, gnu

    def _pw_set_raise_on_failure(self, bint raise_):
        self._pw.get().setRaiseOnFailure(raise_)

    def _pw_raise_on_failure(self):
        return self._pw.get().raiseOnFailure()

    def _pw_set_start_guess(self, x):
        cdef cnp.ndarray X = _vec(x, self._pw.get().configurationSize(), "start guess")
        self._pw.get().setStartGuess(_ptr(X))

    def _pw_stats(self):
        cdef cnp.ndarray out = _empty1(8)
        self._pw.get().stats(_ptr(out))
        return out

    def _pw_energy(self, x):
        cdef int n = 3 * self._pw.get().vertexCount()
        cdef cnp.ndarray X = _vec(x, n, "x")
        cdef cnp.ndarray grad = _empty1(n)
        cdef double e = self._pw.get().energy(_ptr(X), _ptr(grad))
        return e, grad

    def _pw_hessian_product(self, x, z, bint after_energy=False):
        """hess E(x) z; with after_energy, (that product built after the energy at x as a Newton iteration
        builds it, reusing the energy's SVDs, and the number of samples reused)."""
        cdef int n = 3 * self._pw.get().vertexCount()
        cdef cnp.ndarray X = _vec(x, n, "x")
        cdef cnp.ndarray Z = _vec(z, n, "z")
        cdef cnp.ndarray out = _empty1(n)
        cdef int reused = self._pw.get().hessianProduct(_ptr(X), _ptr(Z), _ptr(out), after_energy)
        return (out, reused) if after_energy else out
