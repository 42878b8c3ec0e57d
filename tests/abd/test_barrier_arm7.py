"""rigidiff's shipped 7-dof arm (panda-like masses, collision cylinders and an STL hand) in a barrier world sweeps
its hand through the top of a stack of three affine blocks: the top blocks are knocked off, the bottom one stays,
and IPC Toolkit finds no intersection and a positive minimum distance between any two objects at every step."""

import numpy as np
import pytest

import rigidiff as rd

ipctk = pytest.importorskip("ipctk")

DHAT = 1e-3
SIZE = 0.1
# the arm reaching out at hand height 0.2 to 0.3 m, 0.49 m from its base (found by bounded least squares)
POSE = np.array([-0.346, 1.763, -0.808, -1.044, -2.188, 3.752, 0.785])
STACK_AZIMUTH = 0.45


def _world():
    arm = rd.load_urdf(rd.models.path("arm7"), load_geometry=True)
    # joints 2 to 7 hold the pose by implicit springs about it (stiffness and damping are part of the step)
    for i, (joint, k) in enumerate(zip([j for j in arm.joints if j.nv], (0, 400, 200, 200, 20, 20, 5))):
        joint.stiffness = np.array([float(k)])
        joint.damping = joint.damping + 0.1 * k + 2.0
        joint.rest_position = POSE[i:i + 1].copy()
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.5)
    world.add_ground()
    world.add_skeleton(arm)
    c, s, r = np.cos(STACK_AZIMUTH), np.sin(STACK_AZIMUTH), 0.49
    for k in range(3):
        world.add_affine_body(rd.Box((SIZE,) * 3), density=300.0, name=f"block{k}",
                              pose=rd.Transform((r * c, r * s, SIZE / 2 + DHAT / 2 + k * (SIZE + DHAT / 2)),
                                                rpy=(0, 0, STACK_AZIMUTH)))
    return world


def _ipc_mesh(world, q):
    """IPC Toolkit's mesh of the arm's links (one patch: they overlap at their joints and never collide with
    each other), each block (a patch each) and the ground as a 2 m square with a hole for the arm's base, which
    stands on it, with the filter that pairs only different patches."""
    V, F = world.surfaces(q)
    patch = []
    for _, Vl, _ in world._link_surfaces(q):
        patch += [0] * len(Vl)
    for k, name in enumerate(world.body_names):
        patch += [k + 1] * len(world.surface(q, name)[0])
    outer = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    ground = np.hstack([np.vstack([outer, 0.1 * outer]), np.zeros((8, 1))])
    frame = [[k, (k + 1) % 4, 4 + (k + 1) % 4] for k in range(4)] + [[k, 4 + (k + 1) % 4, 4 + k] for k in range(4)]
    F = np.vstack([F, np.array(frame) + len(V)])
    V = np.vstack([V, ground])
    mesh = ipctk.CollisionMesh(V, ipctk.edges(F), F)
    mesh.can_collide = ipctk.make_vertex_patches_filter(np.array(patch + [-1] * 8, dtype=np.int32))
    return mesh, V


def test_arm_sweeps_blocks_off_a_stack_intersection_free():
    world = _world()
    arm = world.layout("arm7")
    gravity = world.skeleton_world().gravity_forces
    q, v = world.q, world.v
    q[arm.q] = POSE
    q[0] += 0.1  # the hand starts 0.1 rad short of the stack
    start = {name: world.body_pose(q, name)[:3, 3].copy() for name in world.body_names}
    for t in range(90):
        tau = np.zeros(world.nv)
        tau[arm.v] = gravity(q[arm.q])
        tau[0] += 30.0 * (min(0.8, POSE[0] + 0.1 + 0.02 * t) - q[0]) - 10.0 * v[0]
        q, v = world.step(q, v, tau)
        mesh, V = _ipc_mesh(world, q)
        assert not ipctk.has_intersections(mesh, V), f"step {t}"
        collisions = ipctk.NormalCollisions()
        collisions.build(mesh, V, DHAT)
        assert len(collisions) > 0 and collisions.compute_minimum_distance(mesh, V) > 0.0
    moved = {name: np.linalg.norm(world.body_pose(q, name)[:2, 3] - start[name][:2]) for name in world.body_names}
    assert moved["block2"] > 0.1 and moved["block1"] > 0.05  # swept off
    assert moved["block0"] < 0.01  # the bottom block stays
    assert world.body_pose(q, "block2")[2, 3] < 0.06  # the top block fell to the ground
    np.testing.assert_allclose(q[1:7], POSE[1:], atol=0.05)  # the springs held the rest of the arm
    for name in world.body_names:
        A, _ = world.affine_map(q, name)
        assert np.linalg.norm(A @ A.T - np.eye(3)) <= 1e-3
