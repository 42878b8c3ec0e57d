"""An independent check of barrier-world states with IPC Toolkit: no crossing surfaces and a positive distance
for every pair within dhat."""

import numpy as np


def ipc_surfaces(ipctk, world, q, ground_half_width=None):
    """(CollisionMesh, vertices) of every surface of the world at q (bodies, static meshes, link surfaces); the
    ground z = 0, when a half width is given, as a square quad of that half width around the origin."""
    V, F = world.surfaces(q)
    if ground_half_width is not None:
        h = ground_half_width
        F = np.vstack([F, np.array([[0, 1, 2], [0, 2, 3]]) + len(V)])
        V = np.vstack([V, [[-h, -h, 0.0], [h, -h, 0.0], [h, h, 0.0], [-h, h, 0.0]]])
    return ipctk.CollisionMesh(V, ipctk.edges(F), F), V


def assert_intersection_free(ipctk, world, q, dhat, ground_half_width=None, patches=None):
    """Asserts that IPC Toolkit finds no intersection at q and a positive distance for every pair within dhat;
    returns IPC Toolkit's minimum distance over those pairs (inf when there is none). patches (one per vertex
    of world.surfaces(q)), when given, pairs only vertices of different patches (a skeleton's links overlap at
    their joints and never collide with each other)."""
    mesh, V = ipc_surfaces(ipctk, world, q, ground_half_width)
    if patches is not None:
        mesh.can_collide = ipctk.make_vertex_patches_filter(np.asarray(patches, dtype=np.int32))
    assert not ipctk.has_intersections(mesh, V)
    collisions = ipctk.NormalCollisions()
    collisions.build(mesh, V, dhat)
    if len(collisions) == 0:
        return np.inf
    distance = collisions.compute_minimum_distance(mesh, V)
    assert distance > 0.0
    return distance
