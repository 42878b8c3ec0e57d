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
