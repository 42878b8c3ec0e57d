"""example-robot-data's Panda (fixed base, its shipped collision meshes: closed, outward wound) in a barrier
world sweeps its hand through a stack of three affine blocks under a joint-space PD controller (torques as the
input), pushing the upper two off. IPC Toolkit checks every step for intersections, independently of the
solver."""

import numpy as np
import pytest

import rigidiff as rd
from ipc_checks import assert_intersection_free

ipctk = pytest.importorskip("ipctk")

DHAT = 1e-3
SIZE = 0.08
# the hand 0.09 to 0.23 m above the ground, 0.6 m out: at the height of the upper two blocks
POSE = np.array([0.0, 0.5, 0.0, -2.0, 0.0, 2.5, 0.785, 0.02, 0.02])
AZIMUTH, REACH = 0.5, 0.6  # the stack's centre
OMEGA = 20.0  # the controller's bandwidth, rad/s


def _world(robots_dir):
    panda = rd.load_urdf(str(robots_dir / "panda_description" / "urdf" / "panda.urdf"),
                         package_dirs=[str(robots_dir.parent)], load_geometry=True, strict=False)
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.5)
    world.add_ground()
    world.add_skeleton(panda)
    c, s = np.cos(AZIMUTH), np.sin(AZIMUTH)
    for k in range(3):
        world.add_affine_body(rd.Box((SIZE,) * 3), density=300.0, name=f"block{k}",
                              pose=rd.Transform((REACH * c, REACH * s, SIZE / 2 + DHAT / 2 + k * (SIZE + DHAT / 2)),
                                                rpy=(0.0, 0.0, AZIMUTH)))
    return world


@pytest.mark.filterwarnings("ignore:.*URDF mimic joints")
def test_panda_pushes_blocks_off_a_stack_intersection_free(robots_dir):
    """The first joint's reference turns from 0 to 0.9 rad at 1 rad/s while the others hold POSE; the torque is
    gravity compensation plus M(q) (OMEGA^2 (q_ref - q) - 2 OMEGA v), a PD controller whose gains the joint-space
    inertia scales (explicit in the step, so OMEGA dt = 0.2 keeps it stable). The hand reaches the stack after
    0.3 s and drives through it: the upper blocks are pushed off (measured: 27 and 17 cm), the bottom one is
    dragged less (9 cm), the arm tracks its reference within 0.02 rad, and no block or link goes below the
    ground."""
    world = _world(robots_dir)
    arm, skeleton = world.layout("panda"), world.skeleton_world()
    q, v = world.q, world.v
    q[arm.q] = POSE
    start = {name: world.body_pose(q, name)[:3, 3].copy() for name in world.body_names}
    links = sum(len(V) for _, V, _ in world._link_surfaces(q))
    base = len(next(iter(world._link_surfaces(q)))[1])  # link0 stands on the ground
    patches = [0] * links + [k + 1 for k, name in enumerate(world.body_names) for _ in world.surface(q, name)[0]]
    for t in range(90):
        ref = POSE.copy()
        ref[0] = min(0.9, t * world.dt)
        qa, va = q[arm.q], v[arm.v]
        tau = np.zeros(world.nv)
        tau[arm.v] = skeleton.gravity_forces(qa) + skeleton.mass_matrix(qa) @ (OMEGA ** 2 * (ref - qa) - 2 * OMEGA * va)
        q, v = world.step(q, v, tau)
        assert_intersection_free(ipctk, world, q, DHAT, patches=patches)
        V, _ = world.surfaces(q)
        assert V[base:, 2].min() > 0.0
        assert np.abs(q[arm.q][1:7] - POSE[1:7]).max() < 0.02
    moved = {name: np.linalg.norm(world.body_pose(q, name)[:2, 3] - start[name][:2]) for name in world.body_names}
    assert moved["block2"] > 0.15 and moved["block1"] > 0.1
    assert moved["block0"] < moved["block1"] < moved["block2"]
    for name in world.body_names:
        A, _ = world.affine_map(q, name)
        assert np.linalg.norm(A @ A.T - np.eye(3)) <= 1e-3
