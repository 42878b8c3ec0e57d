"""World.collide: contact manifolds per shape pair, consistency with rd.distance and python-fcl, and the
pair filters (self-collision, parent-child, groups and masks, static bodies)."""

import zlib

import fcl
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rigidiff as rd

SHAPES = {
    "sphere": rd.Sphere(0.15),
    "capsule": rd.Capsule(0.1, 0.3),
    "box": rd.Box((0.3, 0.2, 0.25)),
    "cylinder": rd.Cylinder(0.12, 0.3),
    "mesh": rd.Mesh(rd.Box((0.25, 0.3, 0.2)).to_trimesh()),
}
EXACT = {"sphere", "capsule", "box"}  # pairs of these have closed forms or SAT: exact deepest points
CLOSED_FORM = {"sphere", "capsule"}


def free_body(sk_name, shape, name="body"):
    sk = rd.Skeleton(sk_name)
    body = sk.add_body(name, joint=rd.FreeJoint(f"{sk_name}_free"), inertia=rd.Inertia.from_shape(shape, mass=1.0))
    body.add_shape(shape)
    return sk


def pose_q(p, quat):
    return np.concatenate([p, quat])


def two_body_world(sa, sb):
    world = rd.World()
    world.add_skeleton(free_body("a", sa))
    world.add_skeleton(free_body("b", sb))
    return world


def transform(q7):
    return rd.Transform(translation=q7[:3], rotation=q7[3:])


def random_pair_state(rng, reach):
    qa = pose_q(rng.uniform(-0.05, 0.05, 3), Rotation.random(random_state=rng).as_quat())
    direction = rng.normal(size=3)
    direction /= np.linalg.norm(direction)
    qb = pose_q(qa[:3] + direction * rng.uniform(0.3, 1.0) * reach, Rotation.random(random_state=rng).as_quat())
    return np.concatenate([qa, qb])


def reach_of(shape):
    lo, hi = shape.aabb()
    return float(np.linalg.norm(hi - lo) / 2)


@pytest.mark.parametrize("name_a", list(SHAPES))
@pytest.mark.parametrize("name_b", list(SHAPES))
def test_deepest_contact_matches_signed_distance(name_a, name_b):
    """Whenever rd.distance reports an overlap, collide reports contacts whose deepest distance is it;
    every contact is consistent (unit normal, point between the surfaces) and none is reported apart."""
    sa, sb = SHAPES[name_a], SHAPES[name_b]
    world = two_body_world(sa, sb)
    rng = np.random.default_rng(zlib.crc32(f"{name_a}/{name_b}".encode()))  # the same samples every run
    reach = reach_of(sa) + reach_of(sb)
    seen = 0
    for _ in range(60):
        q = random_pair_state(rng, reach)
        d = rd.distance(sa, transform(q[:7]), sb, transform(q[7:])).distance
        c = world.collide(q)
        if d > 1e-9:
            assert len(c) == 0, f"contacts reported at distance {d}"
            continue
        if d > -1e-6:
            continue  # grazing: tolerance of the distance query
        seen += 1
        assert len(c) >= 1
        np.testing.assert_allclose(np.linalg.norm(c.normals, axis=1), 1.0, atol=1e-12)
        assert all(t in rd.contacts.CONTACT_TYPES for t in c.types)
        assert np.all(c.distances < 1e-9)
        if {name_a, name_b} <= CLOSED_FORM:
            tol = 1e-9
        elif {name_a, name_b} <= EXACT and {name_a, name_b} != {"capsule", "box"}:
            tol = 1e-5  # the GJK/EPA reference's own tolerance
        else:
            tol = 2e-2 * reach
        assert abs(c.distances.min() - d) <= tol, (c.distances.min(), d)
    assert seen >= 5, "too few overlapping samples to test"


def fcl_geometry(shape):
    if isinstance(shape, rd.Sphere):
        return fcl.Sphere(shape.radius)
    if isinstance(shape, rd.Box):
        return fcl.Box(*shape.size)
    if isinstance(shape, rd.Capsule):
        return fcl.Capsule(shape.radius, shape.length)
    if isinstance(shape, rd.Cylinder):
        return fcl.Cylinder(shape.radius, shape.length)
    raise AssertionError(shape)


@pytest.mark.parametrize("pair", [("box", "box"), ("sphere", "box"), ("capsule", "capsule"), ("sphere", "capsule"),
                                  ("capsule", "box")])
def test_penetration_depth_against_fcl(pair):
    """The deepest contact matches python-fcl's signed distance (GJK/EPA) in penetration, and no contact
    is reported where fcl finds a gap. (fcl's collide() depths are not minimal for capsules and for
    box edges, so its signed distance is the reference.)"""
    sa, sb = SHAPES[pair[0]], SHAPES[pair[1]]
    world = two_body_world(sa, sb)
    rng = np.random.default_rng(7)
    reach = reach_of(sa) + reach_of(sb)
    compared = 0
    for _ in range(80):
        q = random_pair_state(rng, reach)
        c = world.collide(q)
        objs = [fcl.CollisionObject(fcl_geometry(s), fcl.Transform(Rotation.from_quat(x[3:]).as_matrix(), x[:3]))
                for s, x in ((sa, q[:7]), (sb, q[7:]))]
        res = fcl.DistanceResult()
        d = fcl.distance(objs[0], objs[1], fcl.DistanceRequest(enable_signed_distance=True), res)
        if d > 1e-6:
            assert len(c) == 0
            continue
        if d > -1e-4:
            continue
        compared += 1
        assert len(c) >= 1
        tol = 2e-2 * reach if "box" in pair and "capsule" in pair else 1e-5
        assert abs(c.distances.min() - d) <= tol, (c.distances.min(), d)
    assert compared >= 5


def ground_world(shape, q_body):
    world = rd.World()
    world.add_ground()
    world.add_skeleton(free_body("obj", shape))
    return world, np.asarray(q_body, dtype=float)


IDENTITY = [0.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize("shape,height,count", [
    (rd.Box((0.4, 0.2, 0.1)), 0.049, 4),
    (rd.Cylinder(0.1, 0.3), 0.149, 4),
    (rd.Capsule(0.05, 0.4), None, 2),
    (rd.Sphere(0.1), 0.099, 1),
    (rd.Mesh(rd.Box((0.2, 0.2, 0.2)).to_trimesh()), 0.099, 4),
])
def test_resting_manifolds_on_the_ground(shape, height, count):
    """A shape resting on a face touches the ground at the corners of that face, with the ground's
    normal (moving body first, normal from the ground up) and the right depth."""
    if isinstance(shape, rd.Capsule):  # lying on its side
        quat = Rotation.from_euler("x", 90, degrees=True).as_quat()
        height = 0.049
    else:
        quat = IDENTITY
    world, q = ground_world(shape, [0.3, -0.2, height, *quat])
    c = world.collide(q)
    assert len(c) == count
    np.testing.assert_allclose(c.normals, np.tile([0.0, 0.0, 1.0], (count, 1)), atol=1e-12)
    np.testing.assert_allclose(c.distances, -0.001, atol=1e-9)
    assert set(c.body_a) == {"obj/body"} or set(c.body_a) == {"body"}
    assert set(c.body_b) == {"ground"}
    np.testing.assert_allclose(c.points[:, 2], -0.0005, atol=1e-9)
    if count == 4:  # the corners span the face: their centroid is below the body's centre
        np.testing.assert_allclose(c.points[:, :2].mean(axis=0), [0.3, -0.2], atol=1e-9)


def test_tilted_box_touches_the_ground_with_one_corner():
    quat = Rotation.from_euler("xy", [20, 30], degrees=True).as_quat()
    box = rd.Box((0.2, 0.2, 0.2))
    world, q = ground_world(box, [0.0, 0.0, 0.0, *quat])
    signs = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).T.reshape(-1, 3)
    corners = Rotation.from_quat(quat).apply(0.1 * signs)
    q[2] = -corners[:, 2].min() - 0.002
    c = world.collide(q)
    assert len(c) == 1
    assert c.types == ["point_face"]
    np.testing.assert_allclose(c.distances, [-0.002], atol=1e-12)


def test_box_stacked_on_a_box_gives_four_face_contacts():
    world = two_body_world(rd.Box((0.4, 0.4, 0.2)), rd.Box((0.2, 0.2, 0.2)))
    q = np.concatenate([[0, 0, 0.1], IDENTITY, [0.05, 0.02, 0.299], IDENTITY])
    c = world.collide(q)
    assert len(c) == 4
    np.testing.assert_allclose(c.distances, -0.001, atol=1e-12)
    np.testing.assert_allclose(np.abs(c.normals[:, 2]), 1.0, atol=1e-12)
    assert set(c.types) <= {"face_point", "point_face"}


def test_crossed_box_edges_give_an_edge_edge_contact():
    a = rd.Box((0.2, 0.2, 0.2))
    world = two_body_world(a, a)
    qa = Rotation.from_euler("x", 45, degrees=True).as_quat()
    qb = Rotation.from_euler("y", 45, degrees=True).as_quat()
    h = 0.1 * np.sqrt(2)
    q = np.concatenate([[0, 0, 0], qa, [0, 0, 2 * h - 0.003], qb])
    c = world.collide(q)
    assert c.types == ["segment_segment"]
    np.testing.assert_allclose(c.distances, [-0.003], atol=1e-12)
    np.testing.assert_allclose(np.abs(c.normals[0]), [0, 0, 1], atol=1e-12)


@pytest.mark.parametrize("offset,expected", [
    ((0.0, 0.0, 0.19), "point_face"),      # above the top face
    ((0.165, 0.0, 0.165), "point_segment"),  # beside an edge
    ((0.15, 0.15, 0.15), "point_point"),   # at a corner
])
def test_sphere_box_feature_regions(offset, expected):
    world = two_body_world(rd.Sphere(0.1), rd.Box((0.2, 0.2, 0.2)))
    q = np.concatenate([offset, IDENTITY, [0, 0, 0], IDENTITY])
    c = world.collide(q)
    assert c.types == [expected]
    exact = rd.distance(rd.Sphere(0.1), transform(q[:7]), rd.Box((0.2, 0.2, 0.2)), transform(q[7:]))
    np.testing.assert_allclose(c.distances, [exact.distance], atol=1e-12)


def test_parallel_capsules_touch_at_both_ends_of_their_overlap():
    cap = rd.Capsule(0.05, 0.4)
    world = two_body_world(cap, cap)
    q = np.concatenate([[0, 0, 0], IDENTITY, [0.098, 0, 0.1], IDENTITY])
    c = world.collide(q)
    assert len(c) == 2
    np.testing.assert_allclose(c.distances, -0.002, atol=1e-12)
    np.testing.assert_allclose(sorted(c.points[:, 2]), [-0.1, 0.2], atol=1e-12)
    assert sorted(c.types) == ["point_segment", "segment_point"]


def chain_with_shapes(self_collision):
    sk = rd.Skeleton("chain", self_collision=self_collision)
    parent = None
    for k in range(3):
        body = sk.add_body(f"link{k}", parent=parent, joint=rd.RevoluteJoint(f"j{k}", axis=(0, 1, 0)),
                           joint_origin=rd.Transform(translation=(0, 0, -0.2 if k else 0.0)),
                           inertia=rd.Inertia(mass=1.0, rotational_inertia=np.eye(3) * 0.01))
        body.add_shape(rd.Sphere(0.12), origin=rd.Transform(translation=(0, 0, -0.1)))
        parent = body
    world = rd.World()
    world.add_skeleton(sk)
    return world


def test_self_collision_is_opt_in_and_skips_parent_child_pairs():
    # the three spheres overlap their neighbours; link0 and link2 overlap once the chain folds
    q = np.array([0.0, 2.6, 0.0])
    assert len(chain_with_shapes(False).collide(q)) == 0
    c = chain_with_shapes(True).collide(q)
    assert len(c) == 1
    assert {c.body_a[0], c.body_b[0]} == {"link0", "link2"}


def test_groups_and_masks_filter_pairs():
    world = rd.World()
    world.add_ground()
    sk = rd.Skeleton("ball")
    body = sk.add_body("ball", joint=rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(rd.Sphere(0.1), mass=1.0))
    body.add_shape(rd.Sphere(0.1), group=0b10, mask=0b10)
    world.add_skeleton(sk)
    q = np.array([0, 0, 0.09, *IDENTITY])
    assert len(world.collide(q)) == 0  # the ground is in group 1, which the ball's mask excludes
    body.shapes.clear()
    body.add_shape(rd.Sphere(0.1), group=0b10, mask=0b11)
    world.rebuild()
    assert len(world.collide(q)) == 1


def test_welded_bodies_never_touch_each_other():
    world = rd.World()
    world.add_ground()
    sk = rd.Skeleton("table")
    body = sk.add_body("top", joint=rd.FixedJoint("weld"))
    body.add_shape(rd.Box((1, 1, 0.1)))  # sunk into the ground
    world.add_skeleton(sk)
    world.add_skeleton(free_body("ball", rd.Sphere(0.1)))
    q = np.array([2.0, 0, 0.09, *IDENTITY])
    c = world.collide(q)
    assert len(c) == 1 and c.body_b == ["ground"]


@pytest.mark.parametrize("spread", [(1, 1, 1), (0.5, 0.5, 3), (0.5, 3, 0.5)], ids=["cube", "column", "row"])
def test_broad_phase_finds_every_overlapping_pair(spread):
    """Many bodies at random: a pair has contacts exactly when rd.distance says it overlaps, whichever axis the
    sweep takes (the one the boxes spread most along: x, z for a column, y for a row)."""
    rng = np.random.default_rng(3)
    names = list(SHAPES)
    world = rd.World()
    shapes = []
    for k in range(24):
        s = SHAPES[names[k % len(names)]]
        shapes.append(s)
        world.add_skeleton(free_body(f"s{k}", s))
    q = np.concatenate([pose_q(rng.uniform(-0.5, 0.5, 3) * spread, Rotation.random(random_state=rng).as_quat())
                        for _ in shapes])
    c = world.collide(q)
    assert len(c) > 0
    touching = {tuple(sorted(p)) for p in zip(c.geometry_a.tolist(), c.geometry_b.tolist())}
    for i in range(24):
        for j in range(i + 1, 24):
            d = rd.distance(shapes[i], transform(q[7 * i:7 * i + 7]), shapes[j],
                            transform(q[7 * j:7 * j + 7])).distance
            if d < -1e-6:
                assert (i, j) in touching, (i, j, d)
            elif d > 1e-6:
                assert (i, j) not in touching, (i, j, d)


def test_contact_margin_reports_contacts_about_to_close():
    world, q = ground_world(rd.Sphere(0.1), [0, 0, 0.15, *IDENTITY])
    assert len(world.collide(q)) == 0
    world.contact_options(margin=0.1)
    c = world.collide(q)
    assert len(c) == 1 and c.distances[0] == pytest.approx(0.05)
    with pytest.raises(ValueError, match="margin"):
        world.contact_options(margin=-1.0)


def test_collide_rejects_bad_configurations():
    world, q = ground_world(rd.Sphere(0.1), [0, 0, 0.15, *IDENTITY])
    with pytest.raises(ValueError, match="q"):
        world.collide(np.zeros(3))
    bad = q.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError):
        world.collide(bad)
