"""Spheres and capsules against meshes that are not convex, triangle by triangle: each sphere centre or
capsule end meets the closest feature of the faces near it (interior, edge or vertex), the capsule's
axis the ridges and corners it passes over. A flat patch of many triangles gives one contact, a concave
corner one per face touched; distances agree with python-fcl and step Jacobians with finite differences,
whichever side of the pair moves."""

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

import rigidiff as rd
from rigidiff.demo import contact_jacobian_error
from test_triangle_meshes import grid_terrain

IDENTITY = [0.0, 0.0, 0.0, 1.0]


def grid_plate(n=20, half=1.0):
    """A flat open surface z = 0 over a square, (n - 1)^2 squares of two triangles, facing up."""
    return grid_terrain(n, half, bump=0.0)


def pit_plate(w=0.1, depth=0.1, half=0.5):
    """A flat open surface z = 0 with a square pyramidal pit (rim half-width w, apex at z = -depth)."""
    rim = [[w, -w, 0], [w, w, 0], [-w, w, 0], [-w, -w, 0]]
    outer = [[half, -half, 0], [half, half, 0], [-half, half, 0], [-half, -half, 0]]
    verts = np.array(rim + outer + [[0, 0, -depth]], dtype=float)
    faces = []
    for k in range(4):
        r0, r1, o0, o1 = k, (k + 1) % 4, 4 + k, 4 + (k + 1) % 4
        faces += [[8, r0, r1], [r0, o0, o1], [r0, o1, r1]]  # counter-clockwise seen from above
    return trimesh.Trimesh(verts, np.array(faces), process=False)


def v_groove(a=0.2, half=0.5):
    """Two open faces meeting at 90 degrees along the y axis (normals (-+1, 0, 1) / sqrt 2)."""
    verts = np.array([[-a, -half, a], [0, -half, 0], [0, half, 0], [-a, half, a], [a, -half, a], [a, half, a]],
                     dtype=float)
    return trimesh.Trimesh(verts, np.array([[0, 1, 2], [0, 2, 3], [1, 4, 5], [1, 5, 2]]), process=False)


def u_channel(width=0.4, height=0.2, wall=0.01, length=0.4):
    """A closed U-shaped channel along y, walls and floor `wall` thick: a thin-walled concave solid."""
    a, b = width / 2, width / 2 - wall
    # the outline in (x, z), counter-clockwise, with corners where the walls meet the floor
    outline = [(-a, 0), (a, 0), (a, wall), (a, height), (b, height), (b, wall), (-b, wall), (-b, height),
               (-a, height), (-a, wall)]
    caps = [(0, 1, 2), (0, 2, 5), (0, 5, 6), (0, 6, 9), (9, 6, 7), (9, 7, 8), (2, 3, 4), (2, 4, 5)]
    n = len(outline)
    verts = [(x, y, z) for y in (-length / 2, length / 2) for x, z in outline]
    faces = caps + [(n + i, n + k, n + j) for i, j, k in caps]
    for i in range(n):
        j = (i + 1) % n
        faces += [(i, n + j, j), (i, n + i, n + j)]
    return trimesh.Trimesh(np.array(verts, dtype=float), np.array(faces))


RING = trimesh.creation.annulus(0.1, 0.2, 0.1)  # closed, not convex


def two_bodies(mesh, shape, mesh_moves=False, dt=1e-3, friction=0.5):
    """A world with a mesh and a sphere or capsule: one on a free body, the other welded at the origin."""
    world = rd.World(dt=dt)
    for name, s, free in (("mesh", rd.Mesh(mesh), mesh_moves), ("ball", shape, not mesh_moves)):
        sk = rd.Skeleton(name)
        if free:  # a mesh body gets the inertia of a slab (an open surface has no volume)
            inertia = rd.Inertia.from_shape(rd.Box((0.4, 0.4, 0.1)) if name == "mesh" else s, mass=1.0)
            body = sk.add_body(name, joint=rd.FreeJoint(f"{name}_free"), inertia=inertia)
        else:
            body = sk.add_body(name, joint=rd.FixedJoint(f"{name}_weld"))
        body.add_shape(s, friction=friction)
        world.add_skeleton(sk)
    return world


def pose(p, rotvec=(0.0, 0.0, 0.0)):
    return np.array([*p, *Rotation.from_rotvec(rotvec).as_quat()])


def test_a_ball_on_a_finely_triangulated_plate_touches_once_wherever_it_is():
    n = 20
    step = 2.0 / (n - 1)
    spots = [(0.0, 0.0), (step, 0.3), (0.5 * step, 0.5 * step), (0.2 * step, 0.7 * step), (-0.5 * step, 0.0)]
    spots += [tuple(x) for x in np.random.default_rng(0).uniform(-0.8, 0.8, (20, 2))]
    for mesh_moves in (False, True):
        world = two_bodies(grid_plate(n), rd.Sphere(0.05), mesh_moves)
        for x, y in spots:
            # the plate moved by (-x, -y, -0.049) under a ball at the origin is the ball at (x, y, 0.049)
            q = pose((-x, -y, -0.049)) if mesh_moves else pose((x, y, 0.049))
            c = world.collide(q)
            assert len(c) == 1, (x, y, c.types)
            assert c.types == ["face_point" if mesh_moves else "point_face"]
            np.testing.assert_allclose(c.distances, [-0.001], atol=1e-12)
            np.testing.assert_allclose(c.normals[0], [0, 0, -1] if mesh_moves else [0, 0, 1], atol=1e-12)


def test_a_capsule_flat_on_a_plate_touches_at_its_two_ends():
    world = two_bodies(grid_plate(), rd.Capsule(0.05, 0.4))
    c = world.collide(pose((0.013, 0.021, 0.049), (0.0, np.pi / 2, 0.0)))
    assert c.types == ["point_face", "point_face"]
    np.testing.assert_allclose(c.distances, [-0.001, -0.001], atol=1e-12)
    np.testing.assert_allclose(np.sort(c.points[:, 0]), [0.013 - 0.2, 0.013 + 0.2], atol=1e-12)


def test_a_ball_rests_in_a_concave_pit_on_its_four_faces():
    r, w, depth = 0.05, 0.1, 0.1
    z = r * np.hypot(w, depth) / w - depth  # touching the four faces
    world = two_bodies(pit_plate(w, depth), rd.Sphere(r))
    q0 = pose((0.0, 0.0, z - 1e-5 * np.sqrt(2)))
    c = world.collide(q0)
    assert c.types == ["point_face"] * 4
    np.testing.assert_allclose(c.distances, -1e-5, atol=1e-12)
    horizontal = c.normals[:, :2] / np.linalg.norm(c.normals[:, :2], axis=1, keepdims=True)
    assert sorted(map(tuple, np.round(horizontal, 12) + 0.0)) == [(-1, 0), (0, -1), (0, 1), (1, 0)]
    np.testing.assert_allclose(c.normals[:, 2], 1 / np.sqrt(2), atol=1e-12)
    Q, V = world.rollout(q0, np.zeros(6), np.zeros((1000, 6)))  # 1 s
    assert np.max(np.linalg.norm(Q[:, :3] - q0[:3], axis=1)) < 5e-4
    assert np.abs(V[-1]).max() < 1e-3
    assert len(world.collide(Q[-1])) == 4
    # dropped off-centre from 2 cm above, it settles at the bottom and stays there
    Q, V = world.rollout(pose((0.01, 0.005, z + 0.02)), np.zeros(6), np.zeros((2000, 6)))
    np.testing.assert_allclose(Q[1000, :3], q0[:3], atol=1e-4)
    assert np.max(np.linalg.norm(Q[1000:, :3] - Q[1000, :3], axis=1)) < 5e-4
    c = world.collide(Q[-1])
    assert 2 <= len(c) <= 4 and np.allclose(c.normals[:, 2], 1 / np.sqrt(2), atol=1e-9)


def test_a_ball_in_the_round_hole_of_a_ring_keeps_eight_contacts_spread_around_the_rim():
    r = 0.12  # the hole's radius is 0.1: the ball sits on the 32 edges of its top rim
    world = two_bodies(RING, rd.Sphere(r))
    q0 = pose((0.0, 0.0, 0.05 + np.sqrt(r**2 - 0.1**2) - 1e-4))
    c = world.collide(q0)
    assert c.types == ["point_segment"] * 8
    np.testing.assert_allclose(c.distances, c.distances[0], atol=1e-12)
    horizontal = c.normals[:, :2] / np.linalg.norm(c.normals[:, :2], axis=1, keepdims=True)
    angles = np.sort(np.arctan2(horizontal[:, 1], horizontal[:, 0]))
    assert np.max(np.diff(np.r_[angles, angles[0] + 2 * np.pi])) < np.pi / 2  # all around the rim
    Q, _ = world.rollout(q0, np.zeros(6), np.zeros((1000, 6)))
    assert np.max(np.linalg.norm(Q[:, :3] - q0[:3], axis=1)) < 5e-4
    assert world.collide(Q[-1]).types == c.types


def test_a_small_ball_against_a_thin_wall_is_not_pushed_through_it():
    """The channel's walls (1 cm) are thinner than its prisms (5 cm): a ball touching the inside of a
    wall is behind the outer face too, which must not push it out through the wall."""
    r = 0.02
    channel = u_channel()
    assert channel.is_watertight
    world = two_bodies(channel, rd.Sphere(r))
    for centre, normal in (((-0.19 + r - 1e-5, 0.0, 0.1), (1, 0, 0)), ((0.0, 0.05, 0.01 + r - 1e-5), (0, 0, 1))):
        c = world.collide(pose(centre))
        assert c.types == ["point_face"]
        np.testing.assert_allclose(c.distances, [-1e-5], atol=1e-12)
        np.testing.assert_allclose(c.normals[0], normal, atol=1e-12)
    # thrown against a wall, it stays inside the channel, above its floor
    Q, _ = world.rollout(pose((0.0, 0.0, 0.1)), np.array([-1.0, 0.0, 0.0, 0.0, 0.0, 0.0]), np.zeros((1000, 6)))
    assert np.all(np.abs(Q[:, 0]) < 0.19 - r + 1e-3) and np.all(Q[:, 2] > 0.01 + r - 1e-3)
    assert Q[-1, 2] == pytest.approx(0.01 + r, abs=1e-3)


def test_a_capsule_in_a_v_groove_touches_both_faces():
    r = 0.05
    world = two_bodies(v_groove(), rd.Capsule(r, 0.3))
    q0 = pose((0.0, 0.0, r * np.sqrt(2) - 2e-5), (np.pi / 2, 0.0, 0.0))  # its axis along the groove
    c = world.collide(q0)
    assert c.types == ["point_face"] * 4
    np.testing.assert_allclose(c.distances, -1e-5 * np.sqrt(2), atol=1e-12)
    normals = sorted(map(tuple, np.round(c.normals * np.sqrt(2), 12) + 0.0))
    assert normals == [(-1, 0, 1), (-1, 0, 1), (1, 0, 1), (1, 0, 1)]
    Q, _ = world.rollout(q0, np.zeros(6), np.zeros((500, 6)))
    assert np.max(np.linalg.norm(Q[:, :3] - q0[:3], axis=1)) < 5e-4


def test_a_capsule_touches_a_ridge_with_its_axis_and_a_corner_across_it():
    r, theta = 0.05, 0.3
    world = two_bodies(grid_plate(6, 0.5), rd.Capsule(r, 0.3))
    # tilted down across the plate's boundary edge x = 0.5, its axis 0.049 from the edge: both ends clear
    centre = (0.5, 0.013, (r - 0.001) / np.cos(theta))
    c = world.collide(pose(centre, (0.0, np.pi / 2 + theta, 0.0)))
    assert c.types == ["segment_segment"]
    np.testing.assert_allclose(c.distances, [-0.001], atol=1e-12)
    np.testing.assert_allclose(c.normals[0], [np.sin(theta), 0.0, np.cos(theta)], atol=1e-12)
    # level, its axis across the diagonal over the corner (0.5, 0.5, 0): the corner touches the axis
    out = np.array([1.0, 1.0, 1.0]) / np.sqrt(3)
    axis_along = np.array([1.0, -1.0, 0.0]) / np.sqrt(2)
    rotvec = Rotation.align_vectors([axis_along], [[0.0, 0.0, 1.0]])[0].as_rotvec()
    c = world.collide(pose(np.array([0.5, 0.5, 0.0]) + (r - 0.001) * out, rotvec))
    assert c.types == ["segment_point"]
    np.testing.assert_allclose(c.distances, [-0.001], atol=1e-12)
    np.testing.assert_allclose(c.normals[0], out, atol=1e-12)


def fcl_model(mesh):
    import fcl

    model = fcl.BVHModel()
    model.beginModel(len(mesh.vertices), len(mesh.faces))
    model.addSubModel(np.asarray(mesh.vertices, dtype=float), np.asarray(mesh.faces, dtype=np.int32))
    model.endModel()
    return model


def surface_distance(mesh, points):
    """Distance from the points (n, 3) to the mesh's surface (the nearest point, nearest triangle), by
    checking every triangle that could be nearest: one whose box is farther from the points' box than some
    point is from a vertex cannot be."""
    best = np.full(len(points), np.inf)
    bound = min(np.linalg.norm(points - v, axis=1).min() for v in np.asarray(mesh.vertices))
    tri = np.asarray(mesh.triangles)
    gap = np.maximum(np.maximum(tri.min(axis=1) - points.max(axis=0), points.min(axis=0) - tri.max(axis=1)), 0.0)
    for a, b, c in tri[np.linalg.norm(gap, axis=1) <= bound]:
        n = np.cross(b - a, c - a)
        n /= np.linalg.norm(n)
        height = (points - a) @ n
        e1, e2, d = b - a, c - a, points - np.outer(height, n) - a
        den = (e1 @ e1) * (e2 @ e2) - (e1 @ e2) ** 2
        u = ((e2 @ e2) * (d @ e1) - (e1 @ e2) * (d @ e2)) / den
        w = ((e1 @ e1) * (d @ e2) - (e1 @ e2) * (d @ e1)) / den
        best = np.minimum(best, np.where((u >= 0) & (w >= 0) & (u + w <= 1), np.abs(height), np.inf))
        for p0, p1 in ((a, b), (b, c), (c, a)):
            t = np.clip((points - p0) @ (p1 - p0) / ((p1 - p0) @ (p1 - p0)), 0.0, 1.0)
            best = np.minimum(best, np.linalg.norm(points - p0 - np.outer(t, p1 - p0), axis=1))
    return best.min()


@pytest.mark.parametrize("mesh", [RING, pit_plate()], ids=["ring", "pit"])
@pytest.mark.parametrize("kind", ["sphere", "capsule"])
def test_distances_match_fcl_on_random_poses(mesh, kind):
    """Separated poses within the contact margin: the nearest contact's distance is the shapes' distance.
    python-fcl's sphere-mesh distance is exact; its capsule-mesh one comes out up to 1e-4 long (its
    iterative solver stops early), so capsules are also checked against a dense sampling of the axis."""
    fcl = pytest.importorskip("fcl")
    r, length = (0.04, 0.0) if kind == "sphere" else (0.03, 0.12)
    shape = rd.Sphere(r) if kind == "sphere" else rd.Capsule(r, length)
    fcl_shape = fcl.Sphere(r) if kind == "sphere" else fcl.Capsule(r, length)
    world = two_bodies(mesh, shape)
    world.contact_options(margin=0.3, speculative=False)
    mesh_object = fcl.CollisionObject(fcl_model(mesh), fcl.Transform())
    rng = np.random.default_rng(1)
    lo, hi = mesh.bounds
    compared = 0
    while compared < 40:
        p = rng.uniform(lo - 0.08, hi + 0.08)
        if not mesh.is_watertight and p[2] <= 0.0:  # an open surface is one-sided: stay above it
            continue
        rotvec = rng.normal(size=3)
        R = Rotation.from_rotvec(rotvec).as_matrix()
        expected = fcl.distance(mesh_object, fcl.CollisionObject(fcl_shape, fcl.Transform(R, p)),
                                fcl.DistanceRequest(), fcl.DistanceResult())
        if not 1e-3 < expected < 0.25:  # apart, within the margin
            continue
        c = world.collide(pose(p, rotvec))
        assert len(c) >= 1
        nearest = np.min(c.distances)
        if kind == "sphere":
            assert nearest == pytest.approx(expected, abs=1e-9)
        else:
            assert expected - 1e-4 <= nearest <= expected + 1e-9
            axis = p + np.outer(np.linspace(-length / 2, length / 2, 2001), R[:, 2])
            sampled = surface_distance(mesh, axis) - r  # >= the distance, by < 1e-6 here
            assert sampled - 1e-6 <= nearest <= sampled + 1e-12
        compared += 1


def assert_step_jacobians_match_fd(world, q, v, tau):
    """world.step_jacobians against central differences of world.step on the columns whose perturbed
    steps keep the contact mode (rigidiff.demo's check); most of the 18 columns must keep it. Returns the
    step's contacts."""
    error, checked = contact_jacobian_error(world, q, v, tau)
    assert checked >= 15 and error < 1e-7, (checked, error)
    world.step(q, v, tau)
    return world.last_contacts()


def upside_down(mesh):
    """The mesh mirrored in z, still facing out of its free side (now below)."""
    return trimesh.Trimesh(np.asarray(mesh.vertices) * [1, 1, -1], np.asarray(mesh.faces)[:, ::-1], process=False)


def mesh_pose_placing(rotvec, centre):
    """Configuration of a mesh body that puts a shape welded at the origin at `centre`, turned by `rotvec`,
    in the mesh's frame."""
    R = Rotation.from_rotvec(rotvec)
    return np.array([*(-R.inv().apply(centre)), *R.inv().as_quat()])


@pytest.mark.parametrize("case", ["pit", "edge", "corner", "capsule_ridge"])
def test_step_jacobians_of_a_mesh_resting_on_a_welded_shape_match_finite_differences(case):
    """The mesh body falls onto a ball or capsule welded below it: its faces (a concave pit), an edge,
    a corner or a ridge across the capsule's axis press on it."""
    r, gap = 0.05, 2e-5
    rotvec, shape = (0.02, -0.03, 0.01), rd.Sphere(r)
    if case == "pit":
        mesh, types = upside_down(pit_plate()), ["face_point"] * 4
        centre = (0.0, 0.0, -(r * np.sqrt(2) - 0.1) + gap * np.sqrt(2))
        rotvec = (0.0, 0.0, 0.0)
    elif case == "edge":
        mesh, types = upside_down(grid_plate(6, 0.5)), ["segment_point"]
        centre = np.array([0.5, 0.013, 0.0]) + (r - gap) * np.array([1.0, 0.0, -1.0]) / np.sqrt(2)
    elif case == "corner":
        mesh, types = upside_down(grid_plate(6, 0.5)), ["point_point"]
        centre = np.array([0.5, 0.5, 0.0]) + (r - gap) * np.array([1.0, 1.0, -1.0]) / np.sqrt(3)
    else:  # a capsule tilted up across the boundary edge x = 0.5 below the plate
        theta = 0.3
        mesh, types, shape = upside_down(grid_plate(6, 0.5)), ["segment_segment"], rd.Capsule(r, 0.3)
        centre = (0.5, 0.013, -(r - gap) / np.cos(theta))
        rotvec = (0.0, np.pi / 2 - theta, 0.0)
    world = two_bodies(mesh, shape, mesh_moves=True)
    q = mesh_pose_placing(rotvec, centre)
    c = world.collide(q)
    assert c.types == types
    np.testing.assert_allclose(c.distances, -gap, atol=1e-9)
    v = np.array([0.002, -0.001, 0.0, 0.0, 0.0, 0.01])
    tau = np.array([0.1, 0.0, 0.0, 0.0, 0.01, 0.0])
    ref = assert_step_jacobians_match_fd(world, q, v, tau)
    assert list(ref.types) == types and "clamping" in ref.row_classes


def test_step_jacobians_of_a_ball_in_a_pit_match_finite_differences():
    r = 0.05
    world = two_bodies(pit_plate(), rd.Sphere(r))
    q = pose((0.0, 0.0, r * np.sqrt(2) - 0.1 - 2e-5), (0.1, 0.2, 0.3))
    ref = assert_step_jacobians_match_fd(world, q, np.zeros(6), np.array([0.01, 0.0, 0.0, 0.0, 0.0, 0.001]))
    assert list(ref.types) == ["point_face"] * 4 and "clamping" in ref.row_classes


def test_step_vjp_and_rollout_gradients_through_mesh_contacts_chain_the_step_jacobians():
    """A ball resting in a pit: step_vjp is J^T g, and a recorded rollout's backward pass is
    the step Jacobians (checked against finite differences above) chained over its steps."""
    r = 0.05
    world = two_bodies(pit_plate(), rd.Sphere(r))
    q0 = pose((0.0, 0.0, r * np.sqrt(2) - 0.1 - 2e-5), (0.1, 0.2, 0.3))
    taus = np.tile([0.01, 0.0, 0.0, 0.0, 0.0, 0.001], (20, 1))
    traj = world.rollout(q0, np.zeros(6), taus, record=True)
    assert all(len(world.collide(q)) == 4 for q in traj.q)
    rng = np.random.default_rng(2)
    gq, gv = rng.normal(size=6), rng.normal(size=6)
    grads = traj.backward(dL_dQ=np.r_[np.zeros((20, 6)), gq[None]], dL_dV=np.r_[np.zeros((20, 6)), gv[None]])
    gtau = np.zeros((20, 6))
    for t in reversed(range(20)):
        jac = world.step_jacobians(traj.q[t], traj.v[t], traj.tau[t])
        if t == 19:
            vjp = world.step_vjp(traj.q[t], traj.v[t], traj.tau[t], gq, gv)
            np.testing.assert_allclose(vjp.v, jac.dq_dv.T @ gq + jac.dv_dv.T @ gv, rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(vjp.tau, jac.dq_dtau.T @ gq + jac.dv_dtau.T @ gv, rtol=1e-9, atol=1e-9)
        gtau[t] = jac.dq_dtau.T @ gq + jac.dv_dtau.T @ gv
        gq, gv = jac.dq_dq.T @ gq + jac.dv_dq.T @ gv, jac.dq_dv.T @ gq + jac.dv_dv.T @ gv
    np.testing.assert_allclose(grads.tau, gtau, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(grads.q, gq, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(grads.v, gv, rtol=1e-7, atol=1e-9)


def test_bad_meshes_still_raise_clearly():
    with pytest.raises(ValueError, match="Mesh has no usable vertices"):
        world = two_bodies(trimesh.Trimesh(np.zeros((0, 3)), np.zeros((0, 3), dtype=int), process=False),
                           rd.Sphere(0.05))
        world.collide(pose((0, 0, 0.1)))
    bad = pit_plate()
    verts = np.array(bad.vertices)
    verts[2, 1] = np.nan
    with pytest.raises(ValueError, match="Mesh has non-finite vertex coordinates"):
        world = two_bodies(trimesh.Trimesh(verts, bad.faces, process=False), rd.Sphere(0.05))
        world.collide(pose((0, 0, 0.1)))
