"""Balls near parts of a mesh thinner than its prisms (a shelf, a bar, a lid): a ball centre behind a face's
plane is in the solid only if its way out to that face crosses no other face. Above a thin shelf the
shelf's underside lies behind the ball, within the prism depth, but the shelf's top is in between: no
contact. Checked against python-fcl's distances, on a closed T-shaped shelf and on the open trunk mesh
of example-robot-data's HyQ, and in a world where a ball tossed up from the shelf flies freely."""

import warnings

import numpy as np
import pytest
import trimesh

import rigidiff as rd
from test_mesh_primitive_contacts import fcl_model
from voxel_meshes import voxel_mesh

TOP, SHELF = 0.5, 0.01  # the shelf's top and thickness: far thinner than the prisms (a quarter of 0.5 m)


def shelf():
    """A T: a 1 m x 0.5 m shelf 1 cm thick (top at z = TOP) on a 10 cm stem, closed, not convex."""
    filled = np.zeros((3, 1, 2), bool)
    filled[1, 0, 0] = True
    filled[:, 0, 1] = True
    return voxel_mesh([-0.5, -0.05, 0.05, 0.5], [-0.25, 0.25], [0.0, TOP - SHELF, TOP], filled)


SHELF_MESH = shelf()


def fcl_distance(mesh_model, radius, centre):
    import fcl

    a = fcl.CollisionObject(mesh_model, fcl.Transform())
    b = fcl.CollisionObject(fcl.Sphere(radius), fcl.Transform(np.eye(3), np.asarray(centre, float)))
    return fcl.distance(a, b, fcl.DistanceRequest(), fcl.DistanceResult())


def test_the_shelf_prisms_are_deeper_than_the_shelf():
    """The premise: without the crossing rule a ball above the shelf would sit behind its underside."""
    mesh = rd.Mesh(SHELF_MESH)
    assert mesh.is_watertight and not mesh.is_convex
    assert 0.25 * min(SHELF_MESH.extents) > 4 * SHELF


@pytest.mark.parametrize("gap", [0.002, 0.01, 0.03, 0.06])
def test_a_ball_above_a_thin_shelf_is_as_far_as_fcl_says(gap):
    """rd.distance returns the deepest contact it finds: a phantom contact with the underside would make it
    about -(SHELF + gap + 2 r). Over the shelf's open span and its edge, it matches fcl to 1e-9."""
    pytest.importorskip("fcl")
    model = fcl_model(SHELF_MESH)
    r = 0.02
    for x, y in [(0.3, 0.0), (-0.27, 0.1), (0.45, -0.2), (0.49, 0.0)]:
        centre = np.array([x, y, TOP + r + gap])
        pose = np.eye(4)
        pose[:3, 3] = centre
        got = rd.distance(rd.Mesh(SHELF_MESH), np.eye(4), rd.Sphere(r), pose).distance
        assert got == pytest.approx(fcl_distance(model, r, centre), abs=1e-9), (x, y)


def test_a_ball_under_a_thin_shelf_is_as_far_as_fcl_says():
    """The same from below: the ball under the shelf lies behind its top face, across the shelf."""
    pytest.importorskip("fcl")
    model = fcl_model(SHELF_MESH)
    r = 0.02
    for gap in (0.002, 0.01, 0.05):
        centre = np.array([-0.3, 0.05, TOP - SHELF - r - gap])
        pose = np.eye(4)
        pose[:3, 3] = centre
        got = rd.distance(rd.Mesh(SHELF_MESH), np.eye(4), rd.Sphere(r), pose).distance
        assert got == pytest.approx(fcl_distance(model, r, centre), abs=1e-9)


@pytest.mark.parametrize("gap", [0.002, 0.01, 0.04])
def test_a_box_above_a_thin_shelf_is_as_far_as_fcl_says(gap):
    """The same rule for a polytope's corners: a box above the shelf, its corners behind the underside
    within the prism depth, is as far from the shelf as fcl says (tilted boxes included)."""
    fcl = pytest.importorskip("fcl")
    from scipy.spatial.transform import Rotation

    model = fcl_model(SHELF_MESH)
    half = 0.03
    for x, y, tilt in [(0.3, 0.0, 0.0), (-0.25, 0.1, 0.3), (0.4, -0.15, 0.6)]:
        R = Rotation.from_rotvec([tilt, 0.5 * tilt, 0.0]).as_matrix()
        corners = np.array([[sx, sy, sz] for sx in (-half, half) for sy in (-half, half) for sz in (-half, half)])
        lowest = (corners @ R.T)[:, 2].min()
        centre = np.array([x, y, TOP + gap - lowest])
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = R, centre
        got = rd.distance(rd.Mesh(SHELF_MESH), np.eye(4), rd.Box((2 * half,) * 3), pose).distance
        expected = fcl.distance(fcl.CollisionObject(model, fcl.Transform()),
                                fcl.CollisionObject(fcl.Box(2 * half, 2 * half, 2 * half), fcl.Transform(R, centre)),
                                fcl.DistanceRequest(), fcl.DistanceResult())
        assert got == pytest.approx(expected, abs=1e-9), (x, y, tilt)


def test_a_ball_pressed_into_the_shelf_still_touches_it():
    """A real penetration (the centre under the top face, inside the shelf's solid) keeps its contact:
    its way out to the top crosses nothing."""
    r = 0.02
    for depth in (1e-4, 2e-3, 0.008):
        pose = np.eye(4)
        pose[:3, 3] = (0.3, 0.0, TOP + r - depth)
        res = rd.distance(rd.Mesh(SHELF_MESH), np.eye(4), rd.Sphere(r), pose)
        assert res.distance == pytest.approx(-depth, abs=1e-12)
        np.testing.assert_allclose(res.normal, [0.0, 0.0, -1.0], atol=1e-12)


def shelf_world(z0):
    world = rd.World(dt=1e-3)
    fixed = world.add_ground(friction=0.5)
    holder = fixed.add_body("shelf")
    holder.add_shape(rd.Mesh(SHELF_MESH), friction=0.5)
    world.rebuild()
    ball = rd.Skeleton("ball")
    body = ball.add_body("ball", joint=rd.FreeJoint("ball_free"), inertia=rd.Inertia.from_shape(rd.Sphere(0.02), mass=0.1))
    body.add_shape(rd.Sphere(0.02), friction=0.5)
    world.add_skeleton(ball)
    q = world.neutral_configuration()
    q[:3] = (0.3, 0.0, z0)
    return world, q


def test_a_ball_tossed_up_from_a_thin_shelf_rises_freely():
    """A ball resting on the shelf, tossed up at 1.5 m/s, rises v^2 / 2g = 11.5 cm as in free flight, through
    the depth of the underside's prisms, and lands back on the top: no contact holds it on the way."""
    world, q = shelf_world(TOP + 0.02)
    v, zero = np.zeros(world.nv), np.zeros(world.nv)
    for _ in range(200):
        q, v = world.step(q, v, zero)
    assert q[2] == pytest.approx(TOP + 0.02, abs=1e-4)
    v[2] = 1.5
    highest = q[2]
    for _ in range(700):
        q, v = world.step(q, v, zero)
        highest = max(highest, q[2])
    g = 9.81
    assert highest - (TOP + 0.02) == pytest.approx(1.5**2 / (2 * g), abs=2e-3)
    assert q[2] == pytest.approx(TOP + 0.02, abs=1e-3)


@pytest.mark.parametrize("kind", ["cylinder", "convex_mesh"])
def test_a_can_standing_above_a_thin_shelf_touches_only_its_top(kind):
    """Cylinders and convex meshes meet the faces' prisms: a can 2 mm above the shelf has no contact, one
    pressed 1 mm into its top touches only the top (the underside's 12.5 cm prisms reach up through the
    shelf and hold it too), as deep as it is."""
    shape = rd.Cylinder(0.03, 0.08) if kind == "cylinder" else rd.Mesh(trimesh.creation.icosphere(2, 0.04))
    bottom = 0.04  # the can's lowest point below its origin
    for gap in (2e-3, -1e-3):
        world = rd.World(dt=1e-3)
        holder = world.add_ground().add_body("shelf")
        holder.add_shape(rd.Mesh(SHELF_MESH))
        world.rebuild()
        can = rd.Skeleton("can")
        body = can.add_body("can", joint=rd.FreeJoint("can_free"), inertia=rd.Inertia.from_shape(shape, mass=0.2))
        body.add_shape(shape)
        world.add_skeleton(can)
        q = world.neutral_configuration()
        q[:3] = (0.3, 0.05, TOP + bottom + gap)
        contacts = world.collide(q)
        mine = [i for i in range(len(contacts.distances)) if "can" in (contacts.body_a[i], contacts.body_b[i])]
        assert bool(mine) == (gap < 0.0), gap
        for i in mine:
            assert contacts.distances[i] == pytest.approx(gap, abs=1e-9)
            assert abs(contacts.normals[i][2]) > 1.0 - 1e-9  # the top's normal, up (or down, from B to A)


def test_particles_above_hyq_trunk_touch_it_only_where_fcl_does(robots_dir):
    """HyQ's trunk mesh is open (its parts are not all closed), so its prisms are 13 cm deep, deeper than
    its 2.4 cm handle bars. Balls of 2 cm radius whose centres lie above the whole trunk (so outside it)
    touch it no deeper than fcl's distance from the centre to the surface, less the radius."""
    pytest.importorskip("fcl")
    path = robots_dir / "hyq_description" / "meshes" / "trunk" / "trunk.dae"
    tm = trimesh.load(str(path), force="mesh")
    model = fcl_model(tm)
    r = 0.02
    rng = np.random.default_rng(3)
    lo, hi = tm.bounds
    centres = np.c_[rng.uniform(lo[0], hi[0], 150), rng.uniform(lo[1], hi[1], 150),
                    rng.uniform(hi[2] + 1e-3, hi[2] + 0.05, 150)]
    world = rd.World(dt=1e-3)
    trunk = world.add_ground().add_body("trunk")
    trunk.add_shape(rd.Mesh(str(path)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the mesh checks' warnings about its self-intersections
        world.rebuild()
        world.add_particles(centres, radius=r)
    contacts = world.collide(world.neutral_configuration())
    deepest = {}
    for i in range(len(contacts.distances)):
        pair = {contacts.body_a[i], contacts.body_b[i]}
        if "trunk" not in pair:
            continue  # two balls overlapping each other
        k = int((pair - {"trunk"}).pop()[1:])
        expected = fcl_distance(model, 1e-9, centres[k]) - r  # the centre is outside: this is the ball's
        # a contact is a local feature, at the surface's nearest point or a farther one, never deeper
        assert contacts.distances[i] >= expected - 1e-9, (k, contacts.types[i])
        deepest[k] = min(deepest.get(k, np.inf), contacts.distances[i])
    assert any(d < 0.0 for d in deepest.values())  # some balls overlap the trunk's top


@pytest.mark.parametrize("kind", ["box", "capsule", "cylinder"])
def test_shapes_above_hyq_trunk_touch_it_no_deeper_than_they_reach(kind, robots_dir):
    """Boxes, capsules and cylinders at random orientations, from 1 cm below the top of HyQ's open trunk
    mesh to 2 cm above it: apart by fcl, no contact is nearer than fcl's distance; touching, none is deeper
    than the shape reaches below the trunk's top. (Before the way-out rule 3, 9 and 37 of 60 placements
    had contacts 2-4 cm deep with the far sides of the trunk's bars.)"""
    fcl = pytest.importorskip("fcl")
    from scipy.spatial.transform import Rotation

    path = robots_dir / "hyq_description" / "meshes" / "trunk" / "trunk.dae"
    tm = trimesh.load(str(path), force="mesh")
    model = fcl.CollisionObject(fcl_model(tm), fcl.Transform())
    lo, hi = tm.bounds
    shape, fshape = {"box": (rd.Box((0.06, 0.04, 0.03)), fcl.Box(0.06, 0.04, 0.03)),
                     "capsule": (rd.Capsule(0.02, 0.08), fcl.Capsule(0.02, 0.08)),
                     "cylinder": (rd.Cylinder(0.02, 0.08), fcl.Cylinder(0.02, 0.08))}[kind]
    world = rd.World(dt=1e-3)
    world.add_ground().add_body("trunk").add_shape(rd.Mesh(str(path)))
    thing = rd.Skeleton("thing")
    thing.add_body("thing", joint=rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(shape, mass=1.0)).add_shape(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the mesh checks' warnings about its self-intersections
        world.add_skeleton(thing)
        world.collide(world.neutral_configuration())
    rng = np.random.default_rng(5)
    for _ in range(60):
        R = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
        if kind == "box":
            low = np.abs(R @ np.diag([0.03, 0.02, 0.015])).sum(axis=1)[2]
        elif kind == "capsule":
            low = 0.02 + 0.04 * abs(R[2, 2])
        else:
            low = 0.02 * np.sqrt(1.0 - R[2, 2] ** 2) + 0.04 * abs(R[2, 2])
        centre = np.array([rng.uniform(lo[0], hi[0]), rng.uniform(lo[1], hi[1]), hi[2] + low + rng.uniform(-0.01, 0.02)])
        q = world.neutral_configuration()
        q[:3], q[3:7] = centre, Rotation.from_matrix(R).as_quat()
        contacts = world.collide(q)
        if not len(contacts.distances):
            continue
        apart = fcl.distance(model, fcl.CollisionObject(fshape, fcl.Transform(R, centre)), fcl.DistanceRequest(),
                             fcl.DistanceResult())
        floor = apart if apart > 0.0 else -(hi[2] - (centre[2] - low))
        assert contacts.distances.min() >= floor - 1e-6, (centre, apart, contacts.types)


@pytest.mark.parametrize("faces, gap", [([[0, 1, 2]], 0.05 - 0.1), ([[0, 2, 1]], 0.05)], ids=["back-down", "front-down"])
def test_an_open_sheet_meets_a_plane_through_the_prisms_behind_its_faces(faces, gap):
    # docs/contact.md: an open surface's solid is the prisms behind its faces (a tenth of its largest extent
    # deep), so a sheet whose back faces the ground stands on them; whose front faces it, lies on it
    sheet = rd.Mesh(trimesh.Trimesh(np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), faces,
                                    process=False))
    result = rd.distance(sheet, rd.Transform((0.0, 0.0, 0.05)), rd.Plane(), rd.Transform())
    assert result.distance == pytest.approx(gap, abs=1e-12)
