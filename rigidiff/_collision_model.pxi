# CollisionCore: the compiled collision model of a World (C++ CollisionModel + CollisionData) and its
# contact query. rigidiff.World builds it from the shapes of its bodies (rigidiff/contacts.py).


cdef class CollisionCore:
    """Collision geometry of one compiled WorldCore (see rigidiff.World.collide)."""

    cdef unique_ptr[api.CollisionModel] _cmodel
    cdef unique_ptr[api.CollisionData] _cdata

    def __cinit__(self):
        self._cmodel.reset(new api.CollisionModel())

    def add_geometry(self, WorldCore world, int type_code, params, vertices, int frame, int skeleton, placement,
                     double friction, double restitution, unsigned int group, unsigned int mask, str name):
        """Attach a shape (type code, 4 parameters, (n, 3) vertices) to a frame of the world's model."""
        cdef cnp.ndarray P = _vec(params, 4, "shape parameters")
        cdef cnp.ndarray V = _mat(vertices, -1, 3, "mesh vertices")
        cdef cnp.ndarray M = _vec(placement, 12, "placement")
        self._cdata.reset()
        return api.addGeometry(deref(self._cmodel), deref(world._model), type_code, _ptr(P), _ptr(V),
                               <int>cnp.PyArray_DIM(V, 0), frame, skeleton, _ptr(M), friction, restitution, group,
                               mask, name.encode())

    def set_self_collision(self, int skeleton, bint enabled):
        api.setSelfCollision(deref(self._cmodel), skeleton, enabled)

    def set_margin(self, double margin):
        api.setContactMargin(deref(self._cmodel), margin)

    def compute(self, WorldCore world, q):
        """Contacts at q: points (n, 3), normals (n, 3), distances (n,), geometries a, b and types (n,)."""
        world._ensure()
        cdef cnp.ndarray Q = _vec(q, world._nq, "q")
        if not self._cdata:
            self._cdata.reset(new api.CollisionData(deref(self._cmodel)))
        cdef int n = api.computeContacts(deref(world._model), deref(world._data), deref(self._cmodel),
                                         deref(self._cdata), _ptr(Q))
        cdef cnp.ndarray pts = _empty2(n, 3)
        cdef cnp.ndarray nrm = _empty2(n, 3)
        cdef cnp.ndarray dist = _empty1(n)
        cdef cnp.ndarray[int, ndim=1] ga = np.empty(n, dtype=np.intc)
        cdef cnp.ndarray[int, ndim=1] gb = np.empty(n, dtype=np.intc)
        cdef cnp.ndarray[int, ndim=1] types = np.empty(n, dtype=np.intc)
        if n > 0:
            api.readContacts(deref(self._cdata), _ptr(pts), _ptr(nrm), _ptr(dist), &ga[0], &gb[0], &types[0])
        return pts, nrm, dist, ga, gb, types
