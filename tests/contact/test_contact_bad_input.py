"""Bad input to the contact API: clear exceptions, never a crash."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rigidiff as rd


def ball_world():
    world = rd.World()
    world.add_ground()
    sk = rd.Skeleton("ball")
    body = sk.add_body("ball", joint=rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(rd.Sphere(0.1), mass=1.0))
    body.add_shape(rd.Sphere(0.1))
    world.add_skeleton(sk)
    return world


@pytest.mark.parametrize("options,match", [
    ({"friction_directions": 3}, "friction_directions"),
    ({"friction_combine": "median"}, "friction_combine"),
    ({"restitution_combine": 2}, "restitution_combine"),
    ({"erp": 1.5}, "erp"),
    ({"erp": float("nan")}, "erp"),
    ({"margin": -0.1}, "margin"),
    ({"tolerance": 0.0}, "tolerance"),
    ({"restitution_threshold": "fast"}, "restitution_threshold"),
    ({"no_such_option": 1}, "unknown contact option"),
    ({"friction_directions": "2"}, "friction_directions"),
    ({"friction_directions": 4.0}, "friction_directions"),
    ({"friction_directions": True}, "friction_directions"),
    ({"joint_limits": "yes"}, "joint_limits"),
    ({"warm_start": None}, "warm_start"),
    ({"bounce_correction": 2}, "bounce_correction"),
])
def test_contact_options_reject_bad_values(options, match):
    world = ball_world()
    before = world.contact_options()
    with pytest.raises(ValueError, match=match):
        world.contact_options(**options)
    assert world.contact_options() == before  # nothing half-applied


@pytest.mark.parametrize("kwargs,match", [
    ({"restitution": 1.5}, "restitution"),
    ({"restitution": -0.1}, "restitution"),
    ({"friction": -1.0}, "friction"),
    ({"group": -1}, "group"),
    ({"mask": 2**40}, "mask"),
    ({"group": 1.5}, "group"),
])
def test_add_shape_rejects_bad_contact_properties(kwargs, match):
    body = rd.Skeleton("s").add_body("b", joint=rd.FreeJoint("f"), inertia=rd.Inertia(1.0))
    with pytest.raises(ValueError, match=match):
        body.add_shape(rd.Sphere(0.1), **kwargs)


def test_last_contacts_before_any_step_is_empty():
    world = ball_world()
    c = world.last_contacts()
    assert len(c) == 0 and c.normal_impulses.shape == (0,)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=0, max_size=9),
    st.text(max_size=5), st.none(), st.integers(),
))
def test_collide_and_step_never_crash_on_garbage(q):
    world = ball_world()
    for call in (lambda: world.collide(q), lambda: world.step(q, np.zeros(6), np.zeros(6))):
        try:
            call()
        except (ValueError, RuntimeError, IndexError):
            pass
