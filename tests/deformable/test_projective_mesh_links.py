"""Mesh and cylinder link shapes in projective worlds collide through convex hulls: the hull's signed distance field
against brute-force nearest points on both sides of the surface and python-fcl outside, its normal and curvature
against central differences; a box mesh pushing exactly as the Box it is (the resting cylinder and box mesh are in
test_projective_link_obstacles.py); a polytope pusher and leg on the ground and on a ball, with gradients against
central differences of our own step; a decomposed mesh colliding through its convex parts; a real robot's meshes
(solo12) standing on soft pads; and bad meshes."""

import numpy as np
import pytest
import trimesh
from test_projective_link_obstacles import _check_gradients, _leg
from test_projective_link_obstacles import _world as _obstacle_world
from test_projective_skeletons import X0, _check_vjp, _start
from test_projective_skeletons import _world as _block_world

import rigidiff as rd
from rigidiff._testing import hull_distances


def _polytope():
    """A convex polytope with no symmetry to hide behind: the hull of 30 random points in a 6 x 4 x 3 cm box."""
    points = np.random.default_rng(7).uniform(-1.0, 1.0, (30, 3)) * (0.03, 0.02, 0.015)
    return trimesh.Trimesh(points).convex_hull


def _segment_nearest(p, a, b):
    t = np.clip(np.einsum("ij,ij->i", p - a, b - a) / np.einsum("ij,ij->i", b - a, b - a), 0.0, 1.0)
    return a + t[:, None] * (b - a)


def _nearest_on_surface(mesh, p):
    """The nearest point of a triangle mesh's surface to p, by brute force: each triangle's plane projection if it
    falls inside the triangle, else the nearest of its three edges' nearest points."""
    tri = mesh.triangles
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1)[:, None]
    proj = p - np.einsum("ij,ij->i", p - a, n)[:, None] * n
    inside = np.ones(len(tri), dtype=bool)
    for u, w in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ij,ij->i", np.cross(w - u, proj - u), n) >= 0.0
    candidates = [np.where(inside[:, None], proj, np.inf)]
    P = np.broadcast_to(p, a.shape)
    candidates += [_segment_nearest(P, u, w) for u, w in ((a, b), (b, c), (c, a))]
    points = np.concatenate(candidates)
    distances = np.linalg.norm(points - p, axis=1)
    k = np.nanargmin(np.where(np.isfinite(distances), distances, np.inf))
    return points[k], distances[k]


def test_hull_distances_match_the_nearest_points_on_both_sides():
    hull = _polytope()
    rng = np.random.default_rng(0)
    points = rng.uniform(-1.0, 1.0, (300, 3)) * (0.035, 0.025, 0.02)
    d, n, _ = hull_distances(hull.vertices, hull.faces, points)
    inside = (points @ hull.face_normals.T - np.einsum("ij,ij->i", hull.face_normals, hull.triangles[:, 0])).max(1) < 0
    assert 30 < inside.sum() < 270  # both sides sampled
    for p, dp, np_, ins in zip(points, d, n, inside):
        nearest, distance = _nearest_on_surface(hull, p)
        assert dp == pytest.approx(-distance if ins else distance, abs=1e-12)
        if ins:  # the nearest face's normal: the nearest point is p - d n
            np.testing.assert_allclose(p - dp * np_, nearest, atol=1e-12)
        else:
            np.testing.assert_allclose(np_, (p - nearest) / distance, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, atol=1e-12)


def test_hull_distances_outside_match_python_fcl():
    fcl = pytest.importorskip("fcl")
    hull = _polytope()
    model = fcl.BVHModel()
    model.beginModel(len(hull.vertices), len(hull.faces))
    model.addSubModel(hull.vertices, hull.faces)
    model.endModel()
    mesh = fcl.CollisionObject(model, fcl.Transform())
    rng = np.random.default_rng(3)
    points = rng.normal(size=(50, 3))
    points = 0.06 * points / np.linalg.norm(points, axis=1)[:, None]  # outside: farther than any vertex
    d, _, _ = hull_distances(hull.vertices, hull.faces, points)
    radius = 1e-6
    for p, dp in zip(points, d):
        ball = fcl.CollisionObject(fcl.Sphere(radius), fcl.Transform(p))
        result = fcl.DistanceResult()
        fcl.distance(mesh, ball, fcl.DistanceRequest(enable_nearest_points=True), result)
        assert dp == pytest.approx(result.min_distance + radius, rel=1e-6)


def test_hull_normals_and_curvatures_are_the_fields_derivatives():
    hull = _polytope()
    rng = np.random.default_rng(1)
    points = rng.uniform(-1.0, 1.0, (200, 3)) * (0.035, 0.025, 0.02)
    d, n, C = hull_distances(hull.vertices, hull.faces, points)
    h = 1e-7
    curved = 0
    for p, np_, Cp in zip(points, n, C):
        grad = np.zeros(3)
        hess = np.zeros((3, 3))
        for a in range(3):
            e = np.zeros(3)
            e[a] = h
            (dp,), (n_up,), _ = hull_distances(hull.vertices, hull.faces, [p + e])
            (dm,), (n_dn,), _ = hull_distances(hull.vertices, hull.faces, [p - e])
            grad[a] = (dp - dm) / (2 * h)
            hess[:, a] = (n_up - n_dn) / (2 * h)
        if np.abs(hess - Cp).max() > 1e-4 * max(1.0, np.abs(Cp).max()):
            # a difference straddling two regions of the field (a face's and an edge's): rare, and only there
            assert np.linalg.norm(grad - np_) > 1e-9 or np.abs(hess).max() > 1e6
            continue
        np.testing.assert_allclose(grad, np_, atol=1e-6)
        curved += np.abs(Cp).max() > 0.0
    assert curved > 20  # edges and vertices outside are curved
    np.testing.assert_allclose(C, np.transpose(C, (0, 2, 1)), atol=1e-12)


def test_a_far_point_may_be_reported_by_a_bound_at_least_the_reach():
    hull = _polytope()
    far = np.array([[0.5, 0.1, -0.2], [0.0, 0.0, 0.3]])
    exact, _, _ = hull_distances(hull.vertices, hull.faces, far)
    bound, normals, _ = hull_distances(hull.vertices, hull.faces, far, reach=0.1)
    assert np.all(bound >= 0.1) and np.all(bound <= exact + 1e-15)
    near = np.array([[0.035, 0.0, 0.0]])
    np.testing.assert_array_equal(hull_distances(hull.vertices, hull.faces, near, reach=0.1)[0],
                                  hull_distances(hull.vertices, hull.faces, near)[0])


def test_bad_hulls_are_refused_with_the_reason():
    box = trimesh.creation.box((0.1, 0.1, 0.1))
    with pytest.raises(ValueError, match="convex and wound outward"):
        hull_distances(box.vertices, box.faces[:, ::-1], np.zeros((1, 3)))
    with pytest.raises(ValueError, match="outside"):
        hull_distances(box.vertices, box.faces + 100, np.zeros((1, 3)))
    with pytest.raises(ValueError, match="at least 4 vertices"):
        hull_distances(box.vertices[:3], [[0, 1, 2]], np.zeros((1, 3)))
    # a flat mesh on a link: the skeleton is refused, naming the body
    world = _obstacle_world()
    flat = trimesh.Trimesh([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0.1, 0.1, 0]], [[0, 1, 2], [1, 3, 2]])
    sk = rd.Skeleton("plate")
    body = sk.add_body("shin", rd.PrismaticJoint("lift", axis=(0, 0, 1)),
                       inertia=rd.Inertia.from_shape(rd.Sphere(0.05), mass=0.3))
    body.add_shape(rd.Mesh(flat))
    with pytest.raises(ValueError, match="'shin'.*flat"):
        world.add_skeleton(sk)
    assert world.skeletons == []


@pytest.mark.filterwarnings("ignore:.*self-intersecting surface:UserWarning")  # the lcp world's check of the mesh
@pytest.mark.parametrize("rel_path", ["z1_description/meshes/collision/z1_GripperStator.STL",
                                      "g1_description/meshes/left_hip_roll_link.STL",
                                      "so_arm_description/meshes/so101/base_so101_v2.stl"])
def test_robot_meshes_whose_hull_qhull_merges_collide_through_it(robots_dir, rel_path):
    """Robots' CAD meshes of thousands of points (a Z1 gripper part, g1's hip, the SO-101's base) have hulls
    triangulated over merged, nearly coplanar facets: trimesh finds them not watertight, and their vertices stand
    up to 1e-8 of the size off their triangles' planes. They are hulls all the same (they used to be refused as
    flat, or as not convex): the hull keeps the mesh's hull volume and its every vertex, its field is negative at
    the centroid and equals the distance to the nearest vertex beyond a corner, and a link of that shape (g1's,
    the SO-101's) lands on the ground on its hull's lowest vertices."""
    path = robots_dir / rel_path
    if not path.exists():
        pytest.skip(f"this example-robot-data has no {rel_path}")
    mesh = trimesh.load(path, force="mesh")
    from rigidiff.deformable.link_hulls import mesh_hulls

    (V, F), = mesh_hulls(rd.Mesh(mesh), "link")
    assert trimesh.Trimesh(V, F).volume == pytest.approx(mesh.convex_hull.volume, rel=1e-9)
    centre = V.mean(axis=0)
    corner = V[np.argmax(V @ [1.0, 1.0, 1.0])]
    beyond = corner + 0.05 * np.array([1.0, 1.0, 1.0]) / np.sqrt(3.0)
    d, _, _ = hull_distances(V, F, np.array([centre, beyond]))
    assert d[0] < 0.0
    assert d[1] == pytest.approx(np.linalg.norm(V - beyond, axis=1).min(), rel=1e-9)
    if len(mesh.faces) > 10000:
        return  # the Z1 part's 43k faces: the hull is the point, the landing below is g1's and the SO-101's
    world = _obstacle_world()
    sk = rd.Skeleton("part")
    body = sk.add_body("part", rd.PrismaticJoint("lift", axis=(0, 0, 1)), inertia=rd.Inertia(mass=0.2))
    body.add_shape(rd.Mesh(mesh), rd.Transform((0.0, 0.0, 0.01 - V[:, 2].min())))  # 1 cm above the ground
    world.add_skeleton(sk)
    q, v = world.q, world.v
    for _ in range(40):
        q, v = world.step(q, v)
    assert -1e-3 < q[world.layout("part").q][0] + 0.01 < 0.0  # on the ground, at the penalty's depth


def _pusher(shape):
    """test_projective_skeletons' pusher on its x rail with the given shape."""
    sk = rd.Skeleton("pusher")
    body = sk.add_body("slide_x", rd.PrismaticJoint("rail_x", axis=(1, 0, 0)),
                       joint_origin=rd.Transform((X0 - 0.02, 0.05, 0.025)),
                       inertia=rd.Inertia.from_shape(rd.Box((0.04, 0.06, 0.06)), mass=0.5))
    body.add_shape(shape)
    return sk


def test_a_box_mesh_pushes_a_soft_block_as_the_box_it_is():
    runs = {}
    box = (0.04, 0.06, 0.06)
    for kind, shape in (("box", rd.Box(box)), ("mesh", rd.Mesh(trimesh.creation.box(box)))):
        world = _block_world(friction=0.4, tolerance=1e-10)
        world.add_ground()
        world.add_skeleton(_pusher(shape))
        q, v, f = _start(world)
        v[world.layout("pusher").v] = 0.3
        states = []
        for _ in range(8):
            q, v = world.step(q, v, f)
            states.append(np.concatenate([q, v]))
            assert world.last_step["contacts"] > 0
        runs[kind] = np.array(states)
    np.testing.assert_allclose(runs["mesh"], runs["box"], atol=1e-9)


def test_gradients_of_a_polytope_pusher_with_friction_match_central_differences():
    world = _block_world(friction=0.4)
    world.add_ground()
    world.add_skeleton(_pusher(rd.Mesh(_polytope())))
    q, v, f = _start(world)
    v[world.layout("pusher").v] = 0.25
    world.step(q, v, f)
    assert world.last_step["contacts"] > 0
    _check_vjp(world, q, v, f, parameters=(("friction", lambda x: setattr(world, "friction", x), 0.4),))


def _knee(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _lowest(hull, angle, origin=(0.0, 0.0, -0.07)):
    """The lowest z of the polytope on _leg's knee turned by angle, relative to the hip."""
    return ((hull.vertices + origin) @ _knee(angle).T)[:, 2].min()


def _hip_over_ball(hull, angle, xy, radius, depth, origin=(0.0, 0.0, -0.07)):
    """The hip (xy, z) that puts the polytope on _leg's knee `depth` into a ball of `radius` at the world origin."""
    def gap(z):
        local = _knee(angle).T @ -np.array([*xy, z]) - origin
        return hull_distances(hull.vertices, hull.faces, [local])[0][0] - radius + depth

    lo, hi = radius, radius + 0.2
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gap(mid) < 0.0 else (lo, mid)
    return (*xy, 0.5 * (lo + hi))


# where the hip puts the ball's centre: nearest to an edge of the polytope (a curved field) or to a face (flat)
BALL_XY = {"ball-edge": (0.012, 0.004), "ball-face": (0.02, -0.01)}


@pytest.mark.parametrize("obstacle", ["plane", *BALL_XY])
def test_gradients_of_a_polytope_leg_on_an_obstacle_match_central_differences(obstacle):
    hull = _polytope()
    angle = 0.3
    world = _obstacle_world(ground=obstacle == "plane", friction=0.5)
    name = None
    if obstacle == "plane":
        hip = (0.0, 0.0, -_lowest(hull, angle) - 0.002)  # its lowest corner 2 mm into the ground
    else:
        name = world.add_sphere((0.0, 0.0, 0.0), 0.05)
        world.set_obstacle_pose(name, world.obstacle_pose(name), velocity=(0.03, -0.02, 0.01, 0.5, 1.0, -2.0))
        hip = _hip_over_ball(hull, angle, BALL_XY[obstacle], 0.05, 0.001)
    world.add_skeleton(_leg(rd.Mesh(hull), hip))
    s = world.layout("leg")
    q, v, f = world.q, np.zeros(world.nv), np.zeros(world.nv)
    q[s.q] = (0.0, 0.0, 0.0, angle)
    v[s.v] = (0.15, -0.1, 0.02, 0.5)
    f[s.v] = (0.3, 0.1, 2.0, 0.02)
    world.step(q, v, f)
    assert world.last_step["contacts"] > 0
    if name is not None:  # the field at the ball's centre is curved only next to an edge or a corner
        local = _knee(angle).T @ -np.array(hip) - (0.0, 0.0, -0.07)
        curvature = hull_distances(hull.vertices, hull.faces, [local])[2][0]
        assert (np.abs(curvature).max() > 1.0) == (obstacle == "ball-edge")
    g = _check_gradients(world, name, q, v, f)
    assert g.parameter("friction") != 0.0 and g.parameter("contact_stiffness") != 0.0


def test_solo12_with_its_collision_meshes_stands_on_four_soft_pads():
    """example-robot-data's solo12 as its URDF gives it (a collision mesh per link) dropped 5 mm onto four soft pads,
    one under each foot, meshed finer (1 cm) than its 16 mm thick feet (links touch the soft surface's vertices):
    only the feet touch, each on several vertices, and it comes to rest on them without a foot sinking between
    the vertices."""
    import warnings

    robots = rd.models.example_robot_data_dir()
    if robots is None:
        pytest.skip("example-robot-data is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the URDF's unused elements
        solo = rd.load_urdf(robots / "solo_description/robots/solo12.urdf", package_dirs=[robots.parent],
                            floating_base=True, strict=False)
    stand = np.array([0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6])
    for joint, angle in zip([b.joint for b in solo.bodies if b.joint.type == "revolute"], stand):
        joint.stiffness, joint.damping, joint.rest_position = np.array([20.0]), np.array([0.5]), np.array([angle])
    world = rd.World(dt=1e-2, solver="projective", friction=0.8, contact_stiffness=2e4, tolerance=1e-6,
                     max_iterations=500)
    world.add_skeleton(solo, q=np.concatenate([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], stand]))
    def feet(q):
        """Each foot's surface points (the link drawing's triangles' corners) at q."""
        shapes = zip(world._link_shapes, world._viz_link_surfaces(q))
        return [tri.reshape(-1, 3) for (_, f, _, _), (_, tri) in shapes if world._link_name(f).endswith("_FOOT")]

    q = world.q
    top, side = 0.03, 0.08
    for k, points in enumerate(feet(q)):
        centre = points[points[:, 2].argmin(), :2]  # the foot's lowest point
        pad = rd.HexMesh.box((side, side, top), (8, 8, 2), origin=(*(centre - side / 2), 0.0))
        world.add_deformable(pad, rd.ProjectiveMaterial(5e4, 0.3, 300.0), name=f"pad{k}",
                             fixed=np.flatnonzero(pad.vertices[:, 2] < 1e-9))
    q, v = world.q, world.v
    surface = [world.positions(q, f"pad{k}")[:, 2] > top - 1e-9 for k in range(4)]  # each pad's top vertices
    base = world.layout(solo.name).q.start + 2
    lowest = min(points[:, 2].min() for points in feet(q))
    q[base] += top + 0.005 - lowest
    for _ in range(50):  # it lands and rocks for 38 steps (|v| up to 0.07 m/s), then stays below 0.035 m/s
        q, v = world.step(q, v)
    assert world.last_step["contacts"] >= 12  # the four feet, each on several vertices, nothing else
    assert np.all(np.isfinite(q)) and np.abs(v).max() < 0.05
    for k, foot in enumerate(feet(q)):
        low = foot[foot[:, 2].argmin()]
        pad = world.positions(q, f"pad{k}")[surface[k]]
        under = pad[np.linalg.norm(pad[:, :2] - low[:2], axis=1) < 0.015]  # the pad's top vertices by the foot
        assert top - 0.02 < low[2] < top  # pressed in, not through
        assert low[2] > under[:, 2].min() - 2e-3  # resting on the surface, not sunk between its vertices


def test_a_decomposed_mesh_collides_through_its_convex_parts():
    """An L-shaped foot around a ball in its notch: its convex hull covers the notch and touches the ball; made with
    decompose=True it collides through its two arms' hulls and does not."""
    pytest.importorskip("coacd")
    # the L: an arm along x (y in [-1, 1] cm), one along y (x in [3, 5] cm), 2 cm thick, as a closed prism
    outline = np.array([(-0.05, -0.01), (0.05, -0.01), (0.05, 0.09), (0.03, 0.09), (0.03, 0.01), (-0.05, 0.01)])
    vertices = np.vstack([np.c_[outline, np.full(6, -0.01)], np.c_[outline, np.full(6, 0.01)]])
    cap = [(4, 5, 0), (4, 0, 1), (4, 1, 2), (4, 2, 3)]  # a fan from the inner corner, counter-clockwise from +z
    faces = [(a + 6, b + 6, c + 6) for a, b, c in cap] + [(c, b, a) for a, b, c in cap]
    for i in range(6):
        j = (i + 1) % 6
        faces += [(i, j, j + 6), (i, j + 6, i + 6)]
    shape = trimesh.Trimesh(vertices, faces, process=False)
    assert shape.is_watertight and shape.volume > 0.0
    contacts = {}
    for decompose in (False, True):
        world = _obstacle_world(ground=False, gravity=(0.0, 0.0, 0.0))
        world.add_sphere((0.0, 0.04, 0.1), 0.01)  # 3 cm from both arms, inside the hull
        sk = rd.Skeleton("foot")
        body = sk.add_body("foot", rd.PrismaticJoint("lift", axis=(0, 0, 1)), joint_origin=rd.Transform((0, 0, 0.1)),
                           inertia=rd.Inertia.from_shape(rd.Sphere(0.05), mass=0.5))
        body.add_shape(rd.Mesh(shape, decompose=decompose))
        world.add_skeleton(sk)
        world.step(world.q, world.v)
        contacts[decompose] = world.last_step["contacts"]
    assert contacts == {False: 1, True: 0}
