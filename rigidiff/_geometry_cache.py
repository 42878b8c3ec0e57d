"""Results computed once per triangle-mesh geometry, whichever Mesh object carries it.

Each ``load_urdf`` call makes its own Mesh objects, so a robot loaded again (a second world, a plant beside
a controller's model) would otherwise repeat the convexity test, the checks for bad meshes and the prisms'
preparation of every collision mesh: about a second for Solo12's. The key is a digest of the vertices
(scale applied) and faces, which a Mesh never changes once loaded; a mesh file's contents are kept by its
path, modification time and size.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

#: geometries remembered per cache; the oldest one used is forgotten first
MAX_GEOMETRIES = 256


def geometry_key(vertices: np.ndarray, faces: np.ndarray) -> bytes:
    """A digest of the vertex coordinates and faces (their shapes and dtypes included)."""
    v = np.ascontiguousarray(vertices, dtype=np.float64)
    f = np.ascontiguousarray(faces, dtype=np.int64)
    h = hashlib.blake2b(digest_size=20)
    h.update(np.array(v.shape + f.shape, dtype=np.int64).tobytes())
    h.update(v.tobytes())
    h.update(f.tobytes())
    return h.digest()


class GeometryCache:
    """key (a geometry_key, or any hashable) -> value, computed on the first request and kept for the
    MAX_GEOMETRIES most recent keys."""

    def __init__(self, size: int = MAX_GEOMETRIES):
        self._size = size
        self._values: OrderedDict = OrderedDict()

    def get(self, key, compute):
        if key in self._values:
            self._values.move_to_end(key)
            return self._values[key]
        value = compute()
        self._values[key] = value
        if len(self._values) > self._size:
            self._values.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._values)

    def clear(self) -> None:
        self._values.clear()
