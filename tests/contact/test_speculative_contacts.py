"""Speculative contacts (contact_options(speculative=True), the default; docs/contact.md): a body that
lands stops at the surface it reaches, rests there whatever it fell from, bounces to e^2 h, and the
step Jacobians of approaching contacts stay exact."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rigidiff as rd
from rigidiff.testing import check_jacobians

G = 9.81
IDENTITY = [0.0, 0.0, 0.0, 1.0]


def ball_world(restitution=0.0, friction=0.8, dt=1e-3, **options):
    world = rd.World(dt=dt)
    sk = rd.Skeleton("ball")
    body = sk.add_body("ball", joint=rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(rd.Sphere(0.1), mass=1.0))
    body.add_shape(rd.Sphere(0.1), friction=friction, restitution=restitution)
    world.add_skeleton(sk)
    world.add_ground(friction=friction, restitution=restitution)
    if options:
        world.contact_options(**options)
    return world


def test_balls_dropped_from_any_height_rest_at_the_surface():
    world = ball_world()
    rest = []
    for h in np.linspace(0.1, 2.0, 10):
        Q, V = world.rollout(np.r_[0.0, 0.0, 0.1 + h, IDENTITY], np.zeros(6), np.zeros((1200, 6)))
        assert np.abs(V[-1]).max() < 1e-9
        assert Q[:, 2].min() > 0.1 - 1e-4  # never sank in on landing
        rest.append(Q[-1, 2])
    np.testing.assert_allclose(rest, 0.1 - 5e-5, atol=1e-9)  # all at rest_depth
    # without speculative contacts they sink by up to one step's travel, each to its own depth
    world.contact_options(speculative=False)
    deep = [world.rollout(np.r_[0.0, 0.0, 0.1 + h, IDENTITY], np.zeros(6), np.zeros((1200, 6)))[0][-1, 2]
            for h in np.linspace(0.1, 2.0, 10)]
    assert np.ptp(deep) > 1e-3


@pytest.mark.parametrize("e", [0.0, 0.5, 0.8])
def test_a_dropped_ball_rebounds_to_e_squared_h(e):
    world = ball_world(restitution=e, friction=0.0)
    h = 1.0
    Q, V = world.rollout(np.r_[0.0, 0.0, 0.1 + h, IDENTITY], np.zeros(6), np.zeros((1600, 6)))
    z = Q[:, 2] - 0.1
    assert z.min() > -1e-4  # it never sinks in
    landing = int(np.argmax(V[1:, 2] >= 0.0)) + 1  # the first step that ends not falling
    assert 440 < landing < 460  # sqrt(2 h / g) = 0.4515 s
    rebound = z[landing:].max()
    if e == 0.0:
        assert rebound < 1e-9  # no bounce
    else:
        assert rebound == pytest.approx(e**2 * h, rel=0.02)


def box_stack(n=5, size=0.2):
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.6)
    for k in range(n):
        sk = rd.Skeleton(f"box{k}")
        b = sk.add_body("box", joint=rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(rd.Box([size] * 3), mass=1.0))
        b.add_shape(rd.Box([size] * 3), friction=0.6)
        world.add_skeleton(sk)
    q = np.concatenate([np.r_[0.0, 0.0, size * (k + 0.5), IDENTITY] for k in range(n)])
    return world, q


@pytest.mark.slow
def test_a_stack_of_five_boxes_rests_for_10_s():
    world, q = box_stack()
    Q, V = world.rollout(q, np.zeros(world.nv), np.zeros((10_000, world.nv)))
    assert np.abs(Q[-1] - q).max() < 1e-4
    assert np.abs(V[-1]).max() < 1e-6


def test_a_stack_of_five_boxes_rests_for_2_s():
    world, q = box_stack()
    Q, V = world.rollout(q, np.zeros(world.nv), np.zeros((2000, world.nv)))
    assert np.abs(Q - q).max() < 1e-4  # no drift, no jitter
    assert np.abs(V[-1]).max() < 1e-6


def test_a_sliding_box_stops_after_v0_squared_over_2_mu_g():
    mu, v0 = 0.4, 2.0
    world = rd.World(dt=1e-3)
    world.add_ground(friction=mu)
    sk = rd.Skeleton("box")
    b = sk.add_body("box", joint=rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(rd.Box((0.2, 0.2, 0.1)), mass=1.0))
    b.add_shape(rd.Box((0.2, 0.2, 0.1)), friction=mu)
    world.add_skeleton(sk)
    Q, V = world.rollout(np.r_[0.0, 0.0, 0.05, IDENTITY], np.r_[v0, 0.0, 0.0, 0.0, 0.0, 0.0], np.zeros((1000, 6)))
    assert np.abs(V[-1]).max() < 1e-9
    assert Q[-1, 0] == pytest.approx(v0**2 / (2 * mu * G), rel=1e-2)


def test_a_fast_ball_is_seen_before_it_reaches_the_ground():
    """Moving at 5 m/s, 3 mm above the ground at dt = 1 ms: the contact is in the step that closes it, and
    the ball stops at the surface."""
    world = ball_world()
    q, v = np.r_[0.0, 0.0, 0.103, IDENTITY], np.r_[0.0, 0.0, -5.0, 0.0, 0.0, 0.0]
    qn, vn = world.step(q, v, np.zeros(6))
    c = world.last_contacts()
    assert len(c) == 1 and c.distances[0] == pytest.approx(0.003)
    # it moves at -(gap + rest_depth) / dt: the 3 mm close and it ends rest_depth deep; the next step
    # stops it there
    depth = world.contact_options().rest_depth
    assert depth == 5e-5
    assert qn[2] == pytest.approx(0.1 - depth, abs=1e-12) and vn[2] == pytest.approx(-3.05, rel=1e-9)
    qn, vn = world.step(qn, vn, np.zeros(6))
    assert qn[2] == pytest.approx(0.1 - depth, abs=1e-12) and abs(vn[2]) < 1e-9
    # a contact it cannot reach within the step is not one
    world.step(np.r_[0.0, 0.0, 0.11, IDENTITY], v, np.zeros(6))
    assert len(world.last_contacts()) == 0


@pytest.mark.parametrize("restitution", [0.0, 0.6], ids=["stopping", "bouncing"])
def test_step_jacobians_of_an_approaching_contact_match_finite_differences(restitution):
    """A speculative contact (gap 3 mm, closing at 5 m/s): its row allows the gap to close (target -gap/dt)
    or bounces (target -e J v); the Jacobians are those of the discrete step."""
    world = ball_world(restitution=restitution, friction=0.5, bounce_correction=False)
    q = np.r_[0.01, 0.0, 0.103, Rotation.from_rotvec([0.1, 0.2, 0.0]).as_quat()]
    v = np.r_[0.3, 0.1, -5.0, 1.0, -2.0, 0.5]
    tau = np.r_[0.0, 0.2, 0.0, 0.0, 0.0, 0.0]
    J = world.step_jacobians(q, v, tau)
    assert J.contacts.distances[0] > 0.0
    report = check_jacobians(world, q, v, tau, wrt=("q", "v", "tau"), method="central", eps=1e-7, rtol=1e-5)
    report.raise_if_failed()
    assert np.abs(J.dv_dq).max() > 1.0


def test_resting_box_jacobians_match_finite_differences_with_the_defaults():
    world, q = box_stack(n=1)
    q[2] -= 1e-5  # resting, slightly in: a design without ties between touching and not
    v = np.r_[0.3, 0.0, 0.0, 0.0, 0.0, 0.4]
    report = check_jacobians(world, q, v, np.zeros(6), wrt=("v", "tau"), method="central", eps=1e-7, rtol=1e-5)
    report.raise_if_failed()
