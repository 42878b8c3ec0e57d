"""dt, gravity and the contact settings have one home, the world's options in the core: the World
properties read them back from there, they survive recompiling, and a rejected change leaves them all
as they were."""

import numpy as np
import pytest

import rigidiff as rd


def falling_ball(world):
    sk = rd.Skeleton("ball")
    sk.add_body("ball", joint=rd.FreeJoint("free"), inertia=rd.Inertia(2.0, rotational_inertia=np.eye(3) * 0.01))
    world.add_skeleton(sk)
    return world


def test_options_set_before_compiling_survive_compiling_and_rebuilding():
    world = rd.World(dt=2e-3, gravity=(0.5, 0.0, -3.0))
    world.contact_options(margin=0.01, erp=0.2, friction_combine="min", max_penetration=0.1, warm_start=False)
    set_before = world.contact_options()
    falling_ball(world)
    world.add_ground()
    for _ in range(2):
        q, v = world.neutral_configuration(), np.zeros(world.nv)
        q[2] = 1.0
        _, vn = world.step(q, v, np.zeros(world.nv))
        np.testing.assert_allclose(vn[:3], 2e-3 * np.array([0.5, 0.0, -3.0]), rtol=1e-12)  # dt and gravity
        assert world.dt == 2e-3
        np.testing.assert_array_equal(world.gravity, [0.5, 0.0, -3.0])
        assert world.contact_options() == set_before
        world.rebuild()


def test_a_change_reaches_the_compiled_model_at_once():
    world = falling_ball(rd.World())
    world.gravity = (0.0, 0.0, -1.0)
    world.dt = 0.01
    q, v = world.neutral_configuration(), np.zeros(6)
    _, vn = world.step(q, v, np.zeros(6))
    np.testing.assert_allclose(vn[:3], [0.0, 0.0, -0.01], rtol=1e-12)
    np.testing.assert_allclose(world.gravity_forces(q)[:3], [0.0, 0.0, 2.0], rtol=1e-12)


def test_the_options_live_only_in_the_core():
    world = falling_ball(rd.World(dt=5e-4))
    world.contact_options(margin=0.02)
    world.step(world.neutral_configuration(), np.zeros(6), np.zeros(6))
    for cached in ("_dt", "_gravity", "_contact_options"):
        assert not hasattr(world, cached)
    g = world.gravity
    g[2] = 100.0  # a new array: the world keeps its own
    assert world.gravity[2] == -9.81
    copy = world._copy()
    assert (copy.dt, copy.contact_options()) == (world.dt, world.contact_options())
    np.testing.assert_array_equal(copy.gravity, world.gravity)


@pytest.mark.parametrize("change, message", [
    ({"erp": 2.0}, "erp must be in"),
    ({"friction_directions": 3}, "friction_directions"),
    ({"margin": -1.0}, "margin must be"),
    ({"friction_combine": "median"}, "friction_combine"),
])
def test_a_rejected_change_leaves_every_option_as_it_was(change, message):
    world = falling_ball(rd.World())
    world.add_ground()
    world.contact_options(margin=0.01, max_penetration=0.2)
    before = world.contact_options()
    with pytest.raises(ValueError, match=message):
        world.contact_options(**{"rest_depth": 1e-4, "margin": 0.05, **change})
    assert world.contact_options() == before
    with pytest.raises(ValueError, match="dt"):
        world.dt = -1.0
    assert world.dt == 1e-3
    with pytest.raises(ValueError, match="gravity"):
        world.gravity = (0.0, np.nan, 0.0)
    np.testing.assert_array_equal(world.gravity, [0.0, 0.0, -9.81])
