"""world.add_particles: layout, names, parameters, copies, drawing and bad input (docs/particles.md)."""

import numpy as np
import pytest

import rigidiff as rd


def cart() -> rd.Skeleton:
    sk = rd.Skeleton("cart")
    sk.add_body("cart", joint=rd.PrismaticJoint("x", axis=(1.0, 0.0, 0.0)), inertia=rd.Inertia(1.0)) \
        .add_shape(rd.Box((0.2, 0.2, 0.2)))
    return sk


def test_particles_follow_the_skeletons_in_q_and_v():
    world = rd.World()
    dust = world.add_particles([[0.0, 0.0, 1.0], [1.0, 0.0, 1.0]], masses=[0.1, 0.2], name="dust")
    world.add_skeleton(cart())
    sand = world.add_particles(np.zeros((3, 3)) + [0.0, 2.0, 0.5], radius=0.01, name="sand")
    assert world.nq == world.nv == 1 + 6 + 9
    assert world.layout("cart") == rd.Layout("cart", "skeleton", slice(0, 1), slice(0, 1))
    assert world.layout("dust") == rd.Layout("dust", "particles", slice(1, 7), slice(1, 7))
    assert world.layout(sand).q == slice(7, 16) and world.layout(sand).nv == 9
    assert world.particle_sets == [dust, sand] and world.skeletons[0].name == "cart"
    q = world.neutral_configuration()
    np.testing.assert_array_equal(q[world.layout("dust").q].reshape(-1, 3), dust.initial_positions)
    np.testing.assert_array_equal(world.q, q)
    np.testing.assert_array_equal(dust.masses, [0.1, 0.2])
    assert len(sand) == sand.count == 3 and sand.radius == 0.01
    assert "dust/p0" in world.body_names and world.body_index("sand/p2") == len(world.body_names) - 1
    with pytest.raises(rd.UnknownNameError, match="no skeleton or particle set named 'gravel'"):
        world.layout("gravel")
    assert "dust" in repr(world) and "ParticleSet('sand', n=3" in world.summary()


def test_tau_is_the_force_on_each_particle():
    world = rd.World(dt=1e-3, gravity=(0.0, 0.0, -9.81))
    world.add_particles([[0.0, 0.0, 0.0]], masses=2.0)
    q, v = world.step(world.q, world.v, [1.0, -2.0, 2.0 * 9.81])
    np.testing.assert_allclose(v, [0.5e-3, -1e-3, 0.0], atol=1e-15)
    np.testing.assert_allclose(q, 1e-3 * v, atol=1e-18)


def test_particle_parameters_are_a_mass_and_contact_coefficients():
    world = rd.World()
    world.add_ground()
    ps = world.add_particles([[0.0, 0.0, 0.1], [0.3, 0.0, 0.1]], masses=1.0, radius=0.1, friction=[0.2, 0.4],
                             restitution=0.5)
    names = world.parameters().names
    assert names == ("p0/mass", "p1/mass", "gravity_x", "gravity_y", "gravity_z", "ground/plane/friction",
                     "p0/friction", "p1/friction", "ground/plane/restitution", "p0/restitution", "p1/restitution")
    np.testing.assert_array_equal(ps.friction, [0.2, 0.4])
    world.set_parameters({"p1/mass": 3.0, "p0/friction": 0.7})
    np.testing.assert_array_equal(ps.masses, [1.0, 3.0])
    np.testing.assert_array_equal(ps.friction, [0.7, 0.4])
    assert world.parameters()["p1/mass"] == 3.0
    # pushed by 20 N along x, sliding against the ground's 0.5 (geometric mean): (20 - mu m g) / m
    _, v = world.step(world.q, world.v, [20.0, 0, 0, 20.0, 0, 0])
    mu = np.sqrt(np.array([0.7, 0.4]) * 0.5)
    m = np.array([1.0, 3.0])
    np.testing.assert_allclose(v[[0, 3]], 1e-3 * (20.0 - mu * m * 9.81) / m, rtol=1e-9)


def test_a_copy_of_a_world_with_particles_computes_the_same(tmp_path):
    world = rd.World()
    world.add_ground()
    world.add_particles(np.random.default_rng(0).uniform(0.0, 1.0, (4, 3)) + [0.0, 0.0, 0.1], radius=0.05)
    other = world._copy()
    taus = np.zeros((200, world.nv))
    for a, b in zip(world.rollout(world.q, world.v, taus), other.rollout(other.q, other.v, taus)):
        np.testing.assert_array_equal(a, b)
    other.set_parameters({"p0/mass": 5.0})
    assert world.parameters()["p0/mass"] == 1.0


def test_particles_are_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    world = rd.World()
    world.add_ground()
    world.add_particles([[0.0, 0.0, 0.5]], name="points")  # radius 0: drawn as a small ball
    world.add_particles([[0.5, 0.0, 0.5]], radius=0.1, name="balls")
    Q, _ = world.rollout(world.q, world.v, np.zeros((50, world.nv)))
    path = rd.viz.frame_strip(world, Q, tmp_path / "particles.png", n_frames=2)
    assert path.exists() and path.stat().st_size > 1000


@pytest.mark.parametrize("kwargs, message", [
    ({"positions": [[0.0, 0.0]]}, r"positions must be an \(n, 3\) array"),
    ({"positions": np.zeros((0, 3))}, r"n >= 1"),
    ({"positions": [[0.0, np.nan, 0.0]]}, r"positions\[0\] \(particle 0\) is not finite"),
    ({"positions": "abc"}, "positions must be"),
    ({"positions": np.zeros((2, 3)) + 1j}, "positions must be a real-valued array"),
    ({"masses": -1.0}, r"masses\[0\] \(particle 0\) must be finite and > 0"),
    ({"masses": [1.0, 0.0]}, r"masses\[1\] \(particle 1\) must be finite and > 0"),
    ({"masses": ["1", "1"]}, "masses must be a real-valued array"),
    ({"masses": [1.0, 1.0, 1.0]}, r"masses must be a number or an array of shape \(2,\) \(one per row of positions\)"),
    ({"radius": -0.1}, "radius"),
    ({"radius": np.inf}, "radius"),
    ({"friction": [0.5, -1.0]}, r"friction\[1\] \(particle 1\)"),
    ({"restitution": 1.5}, r"restitution\[0\] \(particle 0\) must be finite and >= 0.0 and <= 1.0"),
    ({"name": ""}, "name"),
])
def test_bad_particles_are_refused_with_a_clear_message(kwargs, message):
    world = rd.World()
    args = {"positions": np.zeros((2, 3))} | kwargs
    with pytest.raises(ValueError, match=message):
        world.add_particles(**args)
    assert world.particle_sets == []


def test_names_are_unique_across_skeletons_and_particle_sets():
    world = rd.World()
    world.add_skeleton(cart())
    with pytest.raises(ValueError, match="already has a skeleton named 'cart'"):
        world.add_particles([[0.0, 0.0, 0.0]], name="cart")
    world.add_particles([[0.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="already has a particle set named 'particles'"):
        world.add_particles([[0.0, 0.0, 0.0]])
    sk = rd.Skeleton("particles")
    sk.add_body("b", joint=rd.FreeJoint("f"), inertia=rd.Inertia(1.0, rotational_inertia=np.eye(3)))
    with pytest.raises(ValueError, match="already has a particle set named 'particles'"):
        world.add_skeleton(sk)


def test_a_world_of_particles_only_needs_no_skeleton():
    world = rd.World(dt=1e-2)
    world.add_particles([[0.0, 0.0, 1.0]])
    q, v = world.advance(n_steps=10)
    np.testing.assert_allclose(v, [0.0, 0.0, -0.981], rtol=1e-12)
    with pytest.raises(RuntimeError, match="add_particles"):
        rd.World().nq  # noqa: B018
