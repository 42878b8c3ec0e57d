"""Many affine bodies in contact: an aligned stack of 10 cubes stays at rest, its CCD takes a full fraction of
a move that closes the gaps, and a pile of 100 tilted cubes dropped into a box stays intersection-free
at every step, checked independently with IPC Toolkit, with every A within 1e-3 of a rotation."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rigidiff as rd

ipctk = pytest.importorskip("ipctk")

DHAT = 1e-3
SIZE = 0.1


def _surfaces(world, q, planes):
    """(CollisionMesh, vertices) of the bodies' surfaces at q with each plane (axis, sign, height: the plane
    x[axis] = sign * height) as a quad that stops short of the others, so that the quads do not cross."""
    V, F = world.surfaces(q)
    verts, faces, offset = [V], [F], len(V)
    for axis, sign, height in planes:
        quad = np.zeros((4, 3))
        if axis == 2:  # the ground: 2 m square
            quad[:, 0], quad[:, 1] = [-0.99, 0.99, 0.99, -0.99], [-0.99, -0.99, 0.99, 0.99]
        else:  # a wall: from just above the ground, 1 cm short of the walls beside it
            quad[:, 1 - axis], quad[:, 2] = [-0.44, 0.44, 0.44, -0.44], [0.01, 0.01, 0.99, 0.99]
        quad[:, axis] = sign * height
        verts.append(quad)
        faces.append(np.array([[0, 1, 2], [0, 2, 3]]) + offset)
        offset += 4
    V, F = np.vstack(verts), np.vstack(faces)
    return ipctk.CollisionMesh(V, ipctk.edges(F), F), V


def _check_step(world, q, planes):
    """Intersection-free and every distance within dhat positive (IPC Toolkit), A near a rotation."""
    mesh, V = _surfaces(world, q, planes)
    assert not ipctk.has_intersections(mesh, V)
    collisions = ipctk.NormalCollisions()
    collisions.build(mesh, V, DHAT)
    if len(collisions) > 0:
        assert collisions.compute_minimum_distance(mesh, V) > 0.0
    for name in world.body_names:
        A, _ = world.affine_map(q, name)
        assert np.linalg.norm(A @ A.T - np.eye(3)) <= 1e-3


def _aligned_stack(n=10, gap=0.5 * DHAT, friction=0.0, size=SIZE):
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=friction)
    world.add_ground()
    for i in range(n):
        world.add_affine_body(rd.Box((size,) * 3), density=500.0,
                              pose=rd.Transform((0.0, 0.0, size / 2 + gap + i * (size + gap))), name=f"cube{i}")
    return world


def test_stack_of_ten_cubes_stays_at_rest():
    """With friction 0.5 (without it, nothing holds the tall stack's lateral modes and it drifts over)."""
    world = _aligned_stack(friction=0.5)
    ground = [(2, 1.0, 0.0)]
    q, v = world.q, world.v
    z0 = q[2::12].copy()
    for _ in range(60):
        q, v = world.step(q, v)
        _check_step(world, q, ground)
        assert world.last_step["newton_iterations"] <= 20
    # resting: every gap (to the ground, between neighbours) settles inside (0, dhat), where the barrier
    # carries the weight above it; barely moving, upright and in line
    z = q[2::12]
    gaps = np.diff(np.concatenate([[0.0], z])) - np.concatenate([[SIZE / 2], np.full(9, SIZE)])
    assert np.all(gaps > 0.0) and np.all(gaps < DHAT)
    assert np.abs(z - z0).max() < 10 * DHAT
    assert np.abs(v).max() < 2e-3
    assert np.abs(q[0::12]).max() < 1e-6 and np.abs(q[1::12]).max() < 1e-6
    assert world.last_step["active_pairs"] > 0
    assert world.last_step["symbolic_factorisations"] <= 1  # the resting pattern is kept between iterations


def test_ccd_does_not_stall_on_an_aligned_stack():
    """Every cube moves down, closing 1.5 gaps between neighbours and with the ground: the additive CCD stops
    at 0.9 / 1.5 of the move, as IPC Toolkit's does, instead of stalling on the parallel faces and edges."""
    world = _aligned_stack()
    gap = 0.5 * DHAT
    q = world.q
    dq = np.zeros(world.nq)
    dq[2::12] = -1.5 * gap * np.arange(1, 11)
    alpha = world._bw_collision_free_step(q, dq)
    mesh, V0 = _surfaces(world, q, [(2, 1.0, 0.0)])
    V1 = _surfaces(world, q + dq, [(2, 1.0, 0.0)])[1]
    reference = ipctk.compute_collision_free_stepsize(mesh, V0, V1, 0.0, None,
                                                      ipctk.AdditiveCCD(conservative_rescaling=0.9))
    assert alpha >= 0.5
    assert alpha == pytest.approx(reference, abs=1e-2)
    assert alpha <= 1.0 / 1.5  # never past the first contact
    # the step the CCD allows is intersection-free
    _check_step(world, q + alpha * dq, [(2, 1.0, 0.0)])


def _pile(side=5, layers=4, wall=0.45, seed=1):
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.5)
    planes = [(2, 1.0, 0.0)] + [(axis, sign, wall) for axis in (0, 1) for sign in (1.0, -1.0)]
    for axis, sign, height in planes:
        normal = np.zeros(3)
        normal[axis] = -sign if axis != 2 else 1.0
        world.add_ground(height=-height if axis != 2 else 0.0, normal=normal)
    rng = np.random.default_rng(seed)
    centre = (side - 1) / 2
    for layer in range(layers):
        for i in range(side):
            for j in range(side):
                R = Rotation.from_rotvec(rng.normal(scale=0.2, size=3)).as_matrix()
                pos = ((i - centre) * 1.6 * SIZE, (j - centre) * 1.6 * SIZE, 0.1 + layer * 1.8 * SIZE)
                world.add_affine_body(rd.Box((SIZE,) * 3), density=500.0, pose=rd.Transform(pos, R),
                                      name=f"cube{len(world.body_names)}")
    return world, planes


def test_pile_of_100_cubes_is_intersection_free_at_every_step():
    world, planes = _pile()
    assert len(world.body_names) == 100
    q, v = world.q, world.v
    top0 = q[2::12].max()
    for _ in range(80):  # it lands by step 20, collapses until 60 and is at rest (|v| < 1e-2) from 70
        q, v = world.step(q, v)
        _check_step(world, q, planes)
        assert world.last_step["min_distance"] > 0.0
    # it fell and landed: the top layer is lower than it started, every cube inside the box and above the ground
    assert q[2::12].max() < top0 - 0.05
    assert np.all(np.abs(q[0::12]) < 0.45) and np.all(np.abs(q[1::12]) < 0.45)
    assert np.all(q[2::12] > 0.0)


def test_surfaces_stack_every_body():
    world = _aligned_stack(n=3)
    q = world.q + 0.01
    V, F = world.surfaces(q)
    parts = [world.surface(q, name) for name in world.body_names]
    np.testing.assert_array_equal(V, np.vstack([p[0] for p in parts]))
    assert F.shape == (sum(len(p[1]) for p in parts), 3)
    np.testing.assert_array_equal(F[len(parts[0][1]):][: len(parts[1][1])], parts[1][1] + len(parts[0][0]))
    with pytest.raises(ValueError, match="q"):
        world.surfaces(np.zeros(5))
    assert rd.World(solver="barrier").surfaces(np.zeros(0))[0].shape == (0, 3)


def test_parallel_chunks_visit_each_pair_once_and_pass_errors_on():
    """The pairs' terms are shared between two threads in chunks: each element exactly once, and an error on
    either thread comes back as a ValueError instead of ending the process."""
    from rigidiff import _testing

    for n in (0, 10, 255, 256, 5000):  # below and above the two-thread threshold
        visits = _testing.parallel_chunk_visits(n)
        assert visits.shape == (n,) and np.all(visits == 1)
    for n, bad in ((10, 3), (5000, 4990), (5000, 7)):
        with pytest.raises(ValueError, match=f"element {bad} failed"):
            _testing.parallel_chunk_visits(n, bad)
