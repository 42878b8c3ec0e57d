"""The step keeps each constraint row on the dofs of the one or two kinematic trees it touches, and the
inverse mass matrix as one block per tree: the Delassus matrix it solves must equal J M^-1 J^T formed
densely from the bodies' Jacobians, across a multi-dof robot, free bodies and particles at once, and two
rows on disjoint trees must not couple."""

import numpy as np
import pytest

import rigidiff as rd


def mixed_world():
    """A quadruped (a floating tree of 18 dofs) standing, two stacked boxes, a lone box and particles,
    all on the ground, with a few steps of settling: islands of different kinds and sizes."""
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.8)
    world.add_skeleton(rd.load_urdf(rd.models.path("quadruped"), floating_base=True))
    boxes = [(1.0, 0.0, 0.1), (1.0, 0.0, 0.3), (-1.0, 0.5, 0.1)]
    for i in range(len(boxes)):
        shape = rd.Box((0.2, 0.2, 0.2))
        sk = rd.Skeleton(f"box{i}")
        body = sk.add_body(f"box{i}", joint=rd.FreeJoint(f"free{i}"), inertia=rd.Inertia.from_shape(shape, mass=1.0 + i))
        body.add_shape(shape, friction=0.7)
        world.add_skeleton(sk)
    world.add_particles([[0.0, 1.0, 0.0], [0.3, 1.0, 0.0], [0.6, 1.0, 0.02]], masses=[0.1, 0.2, 0.3], radius=0.02)
    q = world.neutral_configuration()
    lay = world.layout("quadruped")
    q[lay.q.start + 2] = 0.36  # the feet 2 cm above the ground
    for i, pos in enumerate(boxes):
        q[world.layout(f"box{i}").q][:3] = pos
    v, tau = np.zeros(world.nv), np.zeros(world.nv)
    for _ in range(80):  # the feet land, the knees start to give
        q, v = world.step(q, v, tau)
    return world, q, v, tau


def point_jacobian(world, q, body, p):
    """(3, nv) Jacobian of the world point p moving with `body` (zero for the ground)."""
    if body == "ground":
        return np.zeros((3, world.nv))
    J = world.body_jacobian(q, body, frame="world")
    r = p - world.body_pose(q, body)[:3, 3]
    skew = np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])
    return J[:3] - skew @ J[3:]


@pytest.fixture(scope="module")
def stepped():
    world, q, v, tau = mixed_world()
    world.step(q, v, tau)
    return world, q


def test_normal_rows_delassus_equals_dense_product(stepped):
    world, q = stepped
    c = world.last_contacts()
    A = world._core_last_lcp()[0]
    kinds = np.array(c.row_kinds)
    normals = np.flatnonzero(kinds == "normal")
    assert len(normals) >= 10  # feet, boxes on boxes and ground, particles
    bodies = {c.body_a[c.row_index[r]] for r in normals} | {c.body_b[c.row_index[r]] for r in normals}
    assert {"box0", "box1", "box2", "p0", "p2"} <= bodies and any(b.endswith("lower") for b in bodies)
    Jn = np.zeros((len(normals), world.nv))
    for i, r in enumerate(normals):
        k = c.row_index[r]
        p, n = np.asarray(c.points[k]), np.asarray(c.normals[k])
        Jn[i] = n @ (point_jacobian(world, q, c.body_a[k], p) - point_jacobian(world, q, c.body_b[k], p))
    # the step's impulse response is that of M + dt D + dt^2 K (joint damping D, stiffness K)
    M = world.mass_matrix(q)
    for name in world.joint_names:
        j = world.joint(name)
        dofs = np.arange(j.v_index, j.v_index + j.nv)
        M[dofs, dofs] += world.dt * np.asarray(j.damping) + world.dt**2 * np.asarray(j.stiffness)
    dense = Jn @ np.linalg.solve(M, Jn.T)
    got = A[np.ix_(normals, normals)]
    assert np.abs(got - dense).max() <= 1e-10 * np.abs(dense).max()


def test_rows_of_disjoint_trees_do_not_couple(stepped):
    world, q = stepped
    c = world.last_contacts()
    A = world._core_last_lcp()[0]
    owner = []  # the moving bodies of each contact row
    for r, kind in enumerate(c.row_kinds):
        k = c.row_index[r]
        owner.append({c.body_a[k], c.body_b[k]} - {"ground"})
    quad = {b for b in world.body_names if b not in ("ground",) and not b.startswith(("box", "p"))} | {"base"}
    group = [("quad" if o & quad else "/".join(sorted(o))) for o in owner]
    for i in range(len(group)):
        for j in range(len(group)):
            shares = group[i] == group[j] or (set(group[i].split("/")) & set(group[j].split("/")))
            if not shares:
                assert A[i, j] == 0.0
    assert np.allclose(A, A.T, rtol=0, atol=1e-12 * np.abs(A).max())
    assert np.linalg.eigvalsh(A).min() > -1e-10 * np.abs(A).max()
