"""Contacts between non-convex meshes (docs/contact.md) against coal's collide, and the step against
MuJoCo's mj_step.

Scene: a T-shaped peg resting in a corner of the square blind hole of a block, both finely triangulated
(--cells 12: 13k and 10k triangles), the peg 0.2 mm into the floor and the walls. In one interleaved run:
rigidiff's contact query (world.collide: box trees traversed together, triangle features, reduction per
patch) against coal's collide on the same pair and pose (OBBRSS trees, enable_contact, every contact
kept: the intersecting triangle pairs, not reduced), and one step of each world. MuJoCo cannot represent
the hole (it replaces every mesh by its convex hull), so its mj_step runs a mug standing on a box shelf,
the mug as its convex hull, next to rigidiff's step of the same mug as its triangles. And the step
Jacobians of the peg in the hole against central differences of its step (rigidiff.testing).

    python benchmarks/bench_mesh_contact.py [--repeat 15] [--cells 12]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from _common import interleaved_medians

import rigidiff as rd
import rigidiff.testing as rdt

# the test meshes (grids of cells, watertight) are the benchmark's scenes too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "collision"))
from voxel_meshes import holed_block, mug, t_peg  # noqa: E402

PEG_POSE = np.array([0.0012, 0.0013, 0.05 - 2e-4, 0.0, 0.0, 0.0, 1.0])
MUG_POSE = np.array([0.05, 0.02, 0.0095, 0.0, 0.0, 0.0, 1.0])


def two_body_world(welded, free, mass):
    world = rd.World(dt=1e-3)
    sk = rd.Skeleton("welded")
    sk.add_body("welded", joint=rd.FixedJoint("weld")).add_shape(welded, friction=0.5)
    world.add_skeleton(sk)
    sk = rd.Skeleton("free")
    body = sk.add_body("free", joint=rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(rd.Box((0.1, 0.1, 0.1)),
                                                                                           mass=mass))
    body.add_shape(free, friction=0.5)
    world.add_skeleton(sk)
    return world


def coal_collide(mesh_a, mesh_b, q_b):
    """coal's collide of mesh_a (at the origin) and mesh_b (at q_b), or None when coal is not installed."""
    try:
        import coal
    except ImportError:
        return None
    from scipy.spatial.transform import Rotation

    def model(mesh):
        m = coal.BVHModelOBBRSS()
        m.beginModel(len(mesh.faces), len(mesh.vertices))
        m.addVertices(np.asarray(mesh.vertices))
        m.addTriangles(np.asarray(mesh.faces, dtype=np.int64))
        m.endModel()
        return m

    a = coal.CollisionObject(model(mesh_a), coal.Transform3s(np.eye(3), np.zeros(3)))
    b = coal.CollisionObject(model(mesh_b), coal.Transform3s(Rotation.from_quat(q_b[3:]).as_matrix(), q_b[:3]))
    request = coal.CollisionRequest()
    request.num_max_contacts = 10**7
    request.enable_contact = True

    def collide():
        result = coal.CollisionResult()
        coal.collide(a, b, request, result)
        return result.numContacts()

    return collide


def mujoco_mug_step(mesh):
    """mj_step of the mug (its convex hull, as MuJoCo makes of any mesh) on a box shelf, or None."""
    try:
        import mujoco
    except ImportError:
        return None
    v = " ".join(f"{x:.9g}" for x in np.asarray(mesh.vertices).ravel())
    xml = f"""<mujoco><option timestep="0.001"/>
      <asset><mesh name="mug" vertex="{v}"/></asset>
      <worldbody><geom type="box" size="0.2 0.15 0.01" pos="0 0 -0.01"/>
        <body pos="{MUG_POSE[0]} {MUG_POSE[1]} {MUG_POSE[2]}"><freejoint/>
          <geom type="mesh" mesh="mug" mass="0.3"/></body></worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    for _ in range(200):  # settle, then time steps at rest
        mujoco.mj_step(model, data)
    return lambda: mujoco.mj_step(model, data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed rounds (median reported)")
    parser.add_argument("--cells", type=int, default=12, help="grid cells per edge of each coarse face")
    args = parser.parse_args()
    block, peg, cup = holed_block(cells=args.cells), t_peg(cells=args.cells), mug()
    peg_world = two_body_world(rd.Mesh(block), rd.Mesh(peg), 1.0)
    mug_world = two_body_world(rd.Box((0.4, 0.3, 0.02), ), rd.Mesh(cup), 0.3)
    zero = np.zeros(6)
    mug_q, mug_v = MUG_POSE.copy(), zero.copy()
    for _ in range(200):
        mug_q, mug_v = mug_world.step(mug_q, mug_v, zero)
    fns = {
        "rigidiff peg collide": (lambda: peg_world.collide(PEG_POSE), None),
        "rigidiff peg step": (lambda: peg_world.step(PEG_POSE, zero, zero), None),
        "rigidiff mug step": (lambda: mug_world.step(mug_q, mug_v, zero), None),
        "rigidiff peg step_jacobians": (lambda: peg_world.step_jacobians(PEG_POSE, zero, zero), None),
        "central differences of the peg step": (
            lambda: rdt.finite_difference_jacobians(peg_world, PEG_POSE, zero, zero, method="central"), None),
    }
    coal_fn, mj_fn = coal_collide(block, peg, PEG_POSE), mujoco_mug_step(cup)
    if coal_fn is not None:
        fns["coal peg collide"] = (coal_fn, None)
    if mj_fn is not None:
        fns["mujoco mug step"] = (mj_fn, None)
    times = interleaved_medians(fns, args.repeat)
    ms = {k: 1e3 * t for k, t in times.items()}
    print(f"peg in hole: block {len(block.faces)} and peg {len(peg.faces)} triangles; mug {len(cup.faces)} "
          f"triangles on a box; median of {args.repeat} rounds (ms)")
    print(f"rigidiff collide: {ms['rigidiff peg collide']:.2f} ms, {len(peg_world.collide(PEG_POSE))} contacts "
          "(reduced per patch)")
    if coal_fn is not None:
        print(f"coal collide:     {ms['coal peg collide']:.2f} ms, {coal_fn()} contacts (intersecting triangle "
              f"pairs); rigidiff / coal = {times['rigidiff peg collide'] / times['coal peg collide']:.2f}")
    else:
        print("coal: not installed")
    print(f"rigidiff step, peg in hole: {ms['rigidiff peg step']:.2f} ms")
    print(f"rigidiff step_jacobians, peg in hole: {ms['rigidiff peg step_jacobians']:.2f} ms; central differences "
          f"of the step (q, v, tau: {6 * peg_world.nv} steps): {ms['central differences of the peg step']:.1f} ms; "
          f"speed-up {times['central differences of the peg step'] / times['rigidiff peg step_jacobians']:.0f}x")
    print(f"rigidiff step, mug on shelf (its triangles): {ms['rigidiff mug step']:.3f} ms")
    if mj_fn is not None:
        print(f"mujoco mj_step, mug on shelf (its convex hull: MuJoCo cannot represent the cavity or the hole): "
              f"{ms['mujoco mug step']:.3f} ms; rigidiff / mujoco = "
              f"{times['rigidiff mug step'] / times['mujoco mug step']:.1f}")
    else:
        print("mujoco: not installed")


if __name__ == "__main__":
    main()
