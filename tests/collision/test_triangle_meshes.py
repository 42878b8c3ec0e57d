"""Meshes that are not convex collide per triangle (each face a thin prism behind it), never as their
convex hull: a ring lets a ball through its hole, a bowl holds a ball below its rim, terrain meshes
carry bodies like a plane does, and the step's Jacobians through such contacts match finite
differences."""

import numpy as np
import pytest
import trimesh

import rigidiff as rd

IDENTITY = [0.0, 0.0, 0.0, 1.0]


def free_skeleton(name, shape, mass=1.0, friction=0.5):
    sk = rd.Skeleton(name)
    body = sk.add_body(name, joint=rd.FreeJoint(f"{name}_free"), inertia=rd.Inertia.from_shape(shape, mass=mass))
    body.add_shape(shape, friction=friction)
    return sk


def fixed_skeleton(name, shape, origin=None, friction=0.5):
    sk = rd.Skeleton(name)
    sk.add_body(name, joint=rd.FixedJoint(f"{name}_weld")).add_shape(shape, origin=origin, friction=friction)
    return sk


def grid_terrain(n=8, half=1.0, bump=0.05):
    """An open surface z = bump sin(3x) cos(2y) over a square, faces counter-clockwise seen from above."""
    xs = np.linspace(-half, half, n)
    X, Y = np.meshgrid(xs, xs)
    verts = np.c_[X.ravel(), Y.ravel(), (bump * np.sin(3 * X) * np.cos(2 * Y)).ravel()]
    faces = []
    for i in range(n - 1):
        for j in range(n - 1):
            a = i * n + j
            faces += [[a, a + 1, a + n + 1], [a, a + n + 1, a + n]]
    return trimesh.Trimesh(verts, np.array(faces), process=False)


RING = trimesh.creation.annulus(0.1, 0.2, 0.1)  # closed, not convex: a hole of radius 0.1 along z


def test_a_ring_touches_the_ground_through_its_hull():
    world = rd.World()
    world.add_ground()
    world.add_skeleton(free_skeleton("ring", rd.Mesh(RING)))
    c = world.collide(np.array([0, 0, 0.049, *IDENTITY]))
    assert len(c) == 4 and set(c.types) == {"point_face"}
    np.testing.assert_allclose(c.distances, -0.001, atol=1e-12)


def test_a_ball_falls_through_the_hole_of_a_ring_and_rests_on_its_rim():
    world = rd.World(dt=1e-3)
    world.add_skeleton(fixed_skeleton("ring", rd.Mesh(RING), origin=rd.Transform(translation=(0, 0, 0.5))))
    world.add_skeleton(free_skeleton("ball", rd.Sphere(0.05)))
    q0, v0 = np.array([0, 0, 0.8, *IDENTITY]), np.zeros(6)
    Q, _ = world.rollout(q0, v0, np.zeros((400, 6)))
    assert Q[-1, 2] < 0.2  # through the hole: its hull would have stopped it at 0.6
    q0 = np.array([0.15, 0, 0.8, *IDENTITY])  # above the ring's body
    Q, V = world.rollout(q0, v0, np.zeros((1000, 6)))
    assert Q[-1, 2] == pytest.approx(0.55 + 0.05, abs=2e-3)  # on the top face (z = 0.55)
    c = world.collide(Q[-1])
    assert len(c) >= 1 and np.all(c.normals[:, 2] > 0.99)


def test_a_bowl_holds_a_ball_below_its_rim():
    sphere = trimesh.creation.icosphere(3, radius=0.3)
    lower = np.all(sphere.vertices[sphere.faces][:, :, 2] < 1e-9, axis=1)  # the lower half: an open bowl
    bowl = trimesh.Trimesh(sphere.vertices, sphere.faces[lower][:, ::-1])  # faces towards the inside
    world = rd.World(dt=1e-3)
    world.add_skeleton(fixed_skeleton("bowl", rd.Mesh(bowl)))
    world.add_skeleton(free_skeleton("ball", rd.Sphere(0.05)))
    Q, V = world.rollout(np.array([0.05, 0, 0.1, *IDENTITY]), np.zeros(6), np.zeros((3000, 6)))
    assert Q[-1, 2] < -0.2  # near the bottom (-0.25), far below the hull's top (0)
    # it rolls to and fro on the inside (nothing dissipates rolling): always 0.25 from the bowl's centre
    # (0.3 - 0.05, less the facets' sag), never far from the bottom
    np.testing.assert_allclose(np.linalg.norm(Q[500:, :3], axis=1), 0.25, atol=2e-3)
    assert np.abs(Q[500:, 0]).max() < 0.1


def test_a_flat_terrain_mesh_carries_a_box_like_a_plane():
    flat = trimesh.Trimesh([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], [[0, 1, 2], [0, 2, 3]], process=False)
    results = []
    for ground in (rd.Mesh(flat), rd.Plane()):
        world = rd.World(dt=1e-3)
        world.add_skeleton(fixed_skeleton("ground", ground, friction=0.6))
        world.add_skeleton(free_skeleton("box", rd.Box((0.2, 0.3, 0.1)), friction=0.6))
        q0 = np.array([0.1, 0.05, 0.05 - 1e-4, *IDENTITY])
        v0 = np.array([0.5, 0.2, 0.0, 0.0, 0.0, 0.5])
        c = world.collide(q0)
        assert len(c) == 4
        results.append(world.rollout(q0, v0, np.zeros((300, 6)))[0][-1])
    np.testing.assert_allclose(results[0], results[1], atol=1e-6)


def test_bodies_settle_on_bumpy_terrain_and_rings_on_rings():
    world = rd.World(dt=1e-3)
    world.add_skeleton(fixed_skeleton("terrain", rd.Mesh(grid_terrain()), friction=0.9))
    world.add_skeleton(free_skeleton("box", rd.Box((0.2, 0.2, 0.2)), friction=0.9))
    world.add_skeleton(free_skeleton("ring", rd.Mesh(RING), friction=0.9))
    q = np.array([0.3, 0.2, 0.25, *IDENTITY, -0.4, -0.3, 0.3, *IDENTITY])
    Q, V = world.rollout(q, np.zeros(12), np.zeros((2000, 12)))
    assert np.abs(V[-1]).max() < 0.05
    c = world.collide(Q[-1])
    assert {"box/box", "ring/ring"} <= set(c.body_a) | set(c.body_b) or {"box", "ring"} <= set(c.body_a)
    assert np.all(c.normals[:, 2] > 0.8)
    assert np.all(c.distances > -2e-3)


def test_step_jacobians_through_mesh_contacts_match_finite_differences():
    world = rd.World(dt=1e-3)
    world.add_skeleton(fixed_skeleton("terrain", rd.Mesh(grid_terrain()), friction=0.9))
    world.add_skeleton(free_skeleton("box", rd.Box((0.2, 0.2, 0.2)), friction=0.9))
    q = np.array([0.3, 0.2, 0.25, *IDENTITY])
    v = np.zeros(6)
    for _ in range(800):
        q, v = world.step(q, v, np.zeros(6))
    tau = np.array([0.2, 0.1, 0.0, 0.0, 0.0, 0.01])
    jac = world.step_jacobians(q, v, tau)
    mode = jac.contacts.row_classes
    assert "clamping" in mode
    eps = 1e-7
    analytic = np.hstack([np.vstack([jac.dq_dq, jac.dv_dq]), np.vstack([jac.dq_dv, jac.dv_dv]),
                          np.vstack([jac.dq_dtau, jac.dv_dtau])])
    checked = 0
    for col in range(18):
        outs = []
        for s in (1.0, -1.0):
            d = np.zeros(18)
            d[col] = s * eps
            qn, vn = world.step(world.integrate(q, d[:6]), v + d[6:12], tau + d[12:])
            outs.append((qn, vn, world.last_contacts().row_classes))
        if outs[0][2] != mode or outs[1][2] != mode:
            continue
        fd = np.concatenate([world.difference(outs[1][0], outs[0][0]), outs[0][1] - outs[1][1]]) / (2 * eps)
        np.testing.assert_allclose(analytic[:, col], fd, atol=1e-6)
        checked += 1
    assert checked >= 15


def test_degenerate_meshes_are_rejected_with_a_clear_error():
    flat = trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0]], [[0, 1, 2]], process=False)  # no area
    world = rd.World()
    world.add_ground()
    world.add_skeleton(fixed_skeleton("thing", rd.Mesh(flat)))
    with pytest.raises(ValueError, match="degenerate|area|face"):
        world.collide(world.neutral_configuration())
