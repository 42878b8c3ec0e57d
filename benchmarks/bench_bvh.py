"""Box tree of triangle meshes (collision/bvh.hpp) against python-fcl's and coal's BVH collide.

Two 10k-triangle tori cut through each other, both rotated. Times, in one run and interleaved so that
all see the same load: building the trees of both meshes, and one query between them. rigidiff's query
returns the pairs of triangles whose boxes overlap (the candidates a narrow phase then tests); fcl's and
coal's `collide` (OBBRSS trees, enable_contact, every contact kept) also intersect the triangles of those
pairs, so they do more work per candidate: the ratios bound what the mid phase costs next to theirs.
The refit of a deformed mesh is timed against rigidiff's own rebuild.

    python benchmarks/bench_bvh.py [--repeat 15] [--sections 100 50]
"""

from __future__ import annotations

import argparse

import numpy as np
import trimesh
from _common import interleaved_medians
from scipy.spatial.transform import Rotation

from rigidiff import _testing

MAX_CONTACTS = 10**7


def torus(sections):
    return trimesh.creation.torus(major_radius=1.0, minor_radius=0.3, major_sections=sections[0],
                                  minor_sections=sections[1])


def pose(rotvec, t):
    return np.r_[Rotation.from_rotvec(rotvec).as_matrix().ravel(), t]


def fcl_case(mesh, pa, pb):
    """(build both models, collide) for python-fcl, or None when it is not installed."""
    try:
        import fcl
    except ImportError:
        return None

    def model():
        m = fcl.BVHModel()
        m.beginModel(len(mesh.vertices), len(mesh.faces))
        m.addSubModel(mesh.vertices, mesh.faces)
        m.endModel()
        return m

    objects = [fcl.CollisionObject(model(), fcl.Transform(p[:9].reshape(3, 3), p[9:])) for p in (pa, pb)]
    request = fcl.CollisionRequest(num_max_contacts=MAX_CONTACTS, enable_contact=True)

    def collide():
        result = fcl.CollisionResult()
        fcl.collide(*objects, request, result)
        return len(result.contacts)

    return (lambda: (model(), model())), collide


def coal_case(mesh, pa, pb):
    """(build both models, collide) for coal, or None when it is not installed."""
    try:
        import coal
    except ImportError:
        return None
    verts, faces = np.asarray(mesh.vertices), np.asarray(mesh.faces, dtype=np.int64)

    def model():
        m = coal.BVHModelOBBRSS()
        m.beginModel(len(faces), len(verts))
        m.addVertices(verts)
        m.addTriangles(faces)
        m.endModel()
        return m

    objects = [coal.CollisionObject(model(), coal.Transform3s(p[:9].reshape(3, 3), p[9:])) for p in (pa, pb)]
    request = coal.CollisionRequest()
    request.num_max_contacts = MAX_CONTACTS
    request.enable_contact = True

    def collide():
        result = coal.CollisionResult()
        coal.collide(*objects, request, result)
        return result.numContacts()

    return (lambda: (model(), model())), collide


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed rounds (median reported)")
    parser.add_argument("--sections", type=int, nargs=2, default=(100, 50),
                        help="major and minor sections of each torus (2 triangles each)")
    args = parser.parse_args()
    mesh = torus(args.sections)
    pa, pb = pose((0.1, -0.2, 0.3), (0.5, 0.0, 0.0)), pose((0.4, 0.0, 0.0), (0.7, 0.1, 0.1))
    bent = mesh.vertices + 0.02 * np.sin(3.0 * mesh.vertices[:, [1, 2, 0]])
    a, b = _testing.BvhMesh(mesh.vertices, mesh.faces), _testing.BvhMesh(mesh.vertices, mesh.faces)
    fns = {
        "rigidiff build": (lambda: (_testing.BvhMesh(mesh.vertices, mesh.faces),
                                    _testing.BvhMesh(mesh.vertices, mesh.faces)), None),
        "rigidiff query": (lambda: a.pairs(b, pa, pb), None),
        "rigidiff refit": (lambda: (a.refit(bent), a.refit(mesh.vertices)), None),
    }
    peers = {"fcl": fcl_case(mesh, pa, pb), "coal": coal_case(mesh, pa, pb)}
    for name, case in peers.items():
        if case is not None:
            fns[f"{name} build"] = (case[0], None)
            fns[f"{name} query"] = (case[1], None)
    times = interleaved_medians(fns, args.repeat)
    print(f"two tori of {len(mesh.faces)} triangles each, median of {args.repeat} rounds (ms)")
    print(f"rigidiff: {len(a.pairs(b, pa, pb))} candidate pairs (overlapping triangle boxes)")
    for name, case in peers.items():
        if case is None:
            print(f"{name}: not installed")
        else:
            print(f"{name}: {case[1]()} contacts (intersecting triangle pairs)")
    print(f"{'stage':<8} {'rigidiff':>9} " + " ".join(f"{p:>9} {'ratio':>6}" for p in peers if peers[p]))
    for stage in ("build", "query"):
        ours = times[f"rigidiff {stage}"]
        cells = [f"{1e3 * times[f'{p} {stage}']:9.2f} {ours / times[f'{p} {stage}']:6.2f}" for p in peers if peers[p]]
        print(f"{stage:<8} {1e3 * ours:9.2f} " + " ".join(cells))
    refit, build = times["rigidiff refit"] / 2, times["rigidiff build"] / 2
    print(f"refit of one deformed mesh: {1e3 * refit:.2f} ms, {refit / build:.2f} of its build")


if __name__ == "__main__":
    main()
