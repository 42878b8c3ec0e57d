"""Approximate convex decomposition of a triangle mesh with CoACD (the optional extra
``rigidiff[decompose]``): the convex parts collide in place of the mesh's triangles."""

from __future__ import annotations

import numpy as np


def coacd_parts(vertices: np.ndarray, faces: np.ndarray, threshold: float, seed: int) -> list:
    """(vertices, faces) of each convex part CoACD finds (concavity ``threshold``, random ``seed``)."""
    try:
        import coacd
    except ImportError:
        raise ImportError("convex decomposition needs CoACD: pip install 'rigidiff[decompose]' (or pip install "
                          "coacd)") from None
    coacd.set_log_level("error")
    mesh = coacd.Mesh(np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int32))
    return [(np.asarray(v, dtype=np.float64), np.asarray(f, dtype=np.int64))
            for v, f in coacd.run_coacd(mesh, threshold=float(threshold), seed=int(seed))]
