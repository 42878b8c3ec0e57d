"""Mesh and cylinder link shapes in projective worlds. A mesh collides through its convex hull (or through the
hulls of its convex parts when the Mesh was made with ``decompose=True``), as MuJoCo's mesh geoms do; a cylinder
through the prism of CYLINDER_SECTIONS sides inscribed in it. The core's hull shape (deformable/pd_hull.hpp) has
an exact signed distance on both sides of its surface (docs/deformable.md, "Robots")."""

from __future__ import annotations

import numpy as np


#: sides of the prism a cylinder link collides through: its rims are within radius (1 - cos(pi / 32)), 0.5 % of
#: the radius, of the cylinder's
CYLINDER_SECTIONS = 32


def cylinder_hull(cylinder) -> tuple:
    """(vertices, outward triangles) of the prism inscribed in a Cylinder (axis z, centred on the origin)."""
    import trimesh

    prism = trimesh.creation.cylinder(radius=cylinder.radius, height=cylinder.length,
                                      sections=CYLINDER_SECTIONS).convex_hull
    return np.asarray(prism.vertices, dtype=np.float64), np.asarray(prism.faces, dtype=np.intc)


def mesh_hulls(mesh, where: str) -> list:
    """[(vertices (n, 3), outward triangles (m, 3))] of the convex hulls a Mesh collides through, in its frame.
    ValueError naming `where` for a mesh whose hull is flat (no volume)."""
    import trimesh
    from scipy.spatial import QhullError

    parts = mesh.convex_parts() if mesh.decompose else [mesh]
    out = []
    for part in parts:
        centred = part.vertices - part.vertices.mean(axis=0)
        spread = np.linalg.svd(centred, compute_uv=False) if len(centred) >= 3 else np.zeros(3)
        hull = None
        if len(spread) == 3 and spread[2] > 1e-9 * spread[0]:  # not flat: qhull can build it
            try:
                hull = trimesh.Trimesh(vertices=part.vertices, faces=part.faces, process=False).convex_hull
            except QhullError:
                hull = None
        if hull is None or not hull.is_volume:
            raise ValueError(f"{where}: the mesh is flat (its convex hull has no volume); a projective world's "
                             f"links collide through the convex hulls of their meshes")
        out.append((np.asarray(hull.vertices, dtype=np.float64), np.asarray(hull.faces, dtype=np.intc)))
    return out
