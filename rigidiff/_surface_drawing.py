"""What rigidiff.viz needs from a world whose bodies are not rigid bodies on joints (the barrier world's affine
bodies, the projective world's deformable ones): no rigid body of its own, and the triangles of its surfaces
at a configuration. A world class mixes this in and defines ``_viz_surfaces(q)`` and ``_viz_planes()``."""

from __future__ import annotations

import numpy as np

from rigidiff._validate import as_array
from rigidiff.errors import UnknownNameError


class DrawnBySurfaces:
    """Mixed into worlds that rigidiff.viz draws by their surfaces: ``_viz_surfaces(q)`` returns
    [(key, triangles (m, 3, 3) in world coordinates)] (one colour per key), ``_viz_planes()``
    [(normal, a point)] of the ground planes."""

    @property
    def nbodies(self) -> int:
        """Rigid bodies on joints: none (rigidiff.viz draws this world's surfaces instead)."""
        return 0

    def body_poses(self, q) -> np.ndarray:
        """(0, 4, 4): the world has no rigid body on a joint."""
        as_array(q, (self.nq,), "q")
        return np.zeros((0, 4, 4))

    def body(self, index):
        """Refused: the world has no rigid body on a joint (its bodies: body_names)."""
        raise UnknownNameError(f"this world has no rigid body {index!r} on a joint; its bodies: {self.body_names}")
