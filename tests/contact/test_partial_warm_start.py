"""A contact island whose rows existed in the previous step but for a few new ones (a box landing on a
resting box) is warm-started: the old rows keep their classes, a new normal row clamps when it approaches,
its friction rows stick with it. The step is then answered by the warm start and equals the cold solve."""

import numpy as np

import rigidiff as rd


def two_boxes():
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.5)
    for name in ("low", "high"):
        box = rd.Box((0.2, 0.2, 0.2))
        sk = rd.Skeleton(name)
        sk.add_body(name, joint=rd.FreeJoint(f"{name}_free"), inertia=rd.Inertia.from_shape(box, mass=1.0)) \
            .add_shape(box, friction=0.5)
        world.add_skeleton(sk)
    # the low box resting on the ground, the high one 1 cm above it, off-centre
    q = np.array([0, 0, 0.1 - 5e-5, 0, 0, 0, 1.0, 0.01, 0.02, 0.31, 0, 0, 0, 1.0])
    return world, q, np.zeros(12)


def test_a_box_landing_on_a_resting_box_is_warm_started_and_steps_as_the_cold_solve():
    world, q, v = two_boxes()
    landed = None
    for k in range(100):
        warm = world.warm_start()
        q_next, v_next = world.step(q, v, np.zeros(12))
        c = world.last_contacts()
        world.clear_warm_start()
        q_cold, v_cold = world.step(q, v, np.zeros(12))
        world.set_warm_start(warm)
        world.step(q, v, np.zeros(12))  # the chain continues from the warm step
        np.testing.assert_allclose(v_next, v_cold, atol=1e-9)
        np.testing.assert_allclose(q_next, q_cold, atol=1e-12)
        on_box = [{a, b} == {"low", "high"} for a, b in zip(c.body_a, c.body_b)]
        if any(on_box) and landed is None:
            landed = k
            assert c.solver == "warm_start"  # the new rows were guessed, the ground's kept their classes
        q, v = q_next, v_next
    assert landed is not None
