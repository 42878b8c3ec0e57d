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
    parts = mesh.convex_parts() if mesh.decompose else [mesh]
    hulls = [convex_hull(np.asarray(part.vertices, dtype=np.float64)) for part in parts]
    if any(h is None for h in hulls):
        raise ValueError(f"{where}: the mesh is flat (its convex hull has no volume); a projective world's "
                         f"links collide through the convex hulls of their meshes")
    return hulls


def convex_hull(points: np.ndarray):
    """(vertices, outward triangles) of the convex hull of points (n, 3), None when it has no volume.

    Qhull's triangles are wound outward by its facets' own outward normals rather than by a closed-surface
    test: the hull of a scanned or CAD mesh's thousands of points is triangulated over nearly coplanar facets,
    and trimesh then finds it not watertight (a real gripper part and a humanoid's hip were taken for flat)."""
    from scipy.spatial import ConvexHull, QhullError

    if len(points) < 4:
        return None
    extent = float(np.ptp(points, axis=0).max())
    try:
        hull = ConvexHull(points)
    except QhullError:  # all points in a plane or on a line
        return None
    if not extent > 0.0 or not hull.volume > 1e-9 * extent**3:
        return None
    index = np.full(len(points), -1)
    index[hull.vertices] = np.arange(len(hull.vertices))
    triangles = index[hull.simplices]
    corners = points[hull.simplices]
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    inward = np.einsum("ij,ij->i", normal, hull.equations[:, :3]) < 0.0
    triangles[inward] = triangles[inward][:, ::-1]
    return np.ascontiguousarray(points[hull.vertices]), np.ascontiguousarray(triangles, dtype=np.intc)
