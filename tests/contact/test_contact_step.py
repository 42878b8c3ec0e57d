"""The constrained step: contact physics against closed forms, joint limits and joint friction, the
impulses it reports, and the consistency of step, rollout and step_batch."""

import numpy as np
import pytest

import rigidiff as rd
from rigidiff.testing import check_jacobians

G = 9.81


def free_shape_world(shape, mass=1.0, friction=0.5, restitution=0.0, ground_normal=(0.0, 0.0, 1.0), dt=1e-3):
    world = rd.World(dt=dt)
    ground = rd.Skeleton("ground")
    ground.add_body("ground", joint=rd.FixedJoint("weld")).add_shape(rd.Plane(normal=ground_normal), friction=friction,
                                                                     restitution=restitution)
    world.add_skeleton(ground)
    sk = rd.Skeleton("obj")
    body = sk.add_body("body", joint=rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(shape, mass=mass))
    body.add_shape(shape, friction=friction, restitution=restitution)
    world.add_skeleton(sk)
    return world


def run(world, q, v, steps, tau=None):
    tau = np.zeros(world.nv) if tau is None else tau
    for _ in range(steps):
        q, v = world.step(q, v, tau)
    return q, v


@pytest.mark.parametrize("mu,v0", [(0.5, 2.0), (0.3, 1.0)])
def test_sliding_box_stops_after_v0_squared_over_2_mu_g(mu, v0):
    world = free_shape_world(rd.Box((0.2, 0.2, 0.2)), friction=mu)
    q = world.neutral_configuration()
    q[2] = 0.1
    v = np.zeros(6)
    v[0] = v0
    q, v = run(world, q, v, int(1.5 * v0 / (mu * G) / world.dt))
    expected = v0**2 / (2 * mu * G)
    assert abs(q[0] - expected) <= 0.02 * expected
    assert np.abs(v).max() < 1e-9  # at rest: static friction holds it
    assert abs(q[2] - 0.1) < 1e-4  # neither sinking nor lifting


@pytest.mark.parametrize("mu,slides", [(0.7, False), (0.2, True)])
def test_box_on_an_incline_sticks_or_accelerates_at_g_sin_minus_mu_cos(mu, slides):
    theta = np.radians(25.0)
    n = np.array([np.sin(theta), 0.0, np.cos(theta)])  # the incline falls towards -x
    world = free_shape_world(rd.Box((0.2, 0.2, 0.2)), friction=mu, ground_normal=n)
    rot = rd.Transform(rpy=(0.0, theta, 0.0)).rotation  # the box's bottom face on the incline
    q = np.concatenate([0.1 * n, rd.Transform(rotation=rot).quaternion])
    v = np.zeros(6)
    q, v = run(world, q, v, 20)  # settle
    x0, t = q[:3].copy(), 0.5
    q1, v1 = run(world, q, v, int(t / world.dt))
    travelled = np.linalg.norm(q1[:3] - x0)
    if slides:
        a = G * (np.sin(theta) - mu * np.cos(theta))
        speed = np.linalg.norm(v1[:3])
        assert abs(speed - np.linalg.norm(v[:3]) - a * t) <= 0.02 * a * t
    else:
        assert travelled < 1e-5


@pytest.mark.parametrize("e", [0.5, 0.8])
def test_ball_rebounds_to_e_squared_h(e):
    world = free_shape_world(rd.Sphere(0.1), restitution=e, dt=2e-4)
    h = 1.0
    q = world.neutral_configuration()
    q[2] = 0.1 + h
    v = np.zeros(6)
    top, bounced = 0.0, False
    for _ in range(int(1.2 * (np.sqrt(2 * h / G) * (1 + 2 * e)) / world.dt)):
        q, v = world.step(q, v, np.zeros(6))
        bounced |= v[2] > 0
        if bounced:
            top = max(top, q[2] - 0.1)
    assert abs(top - e**2 * h) <= 0.02 * e**2 * h


def stack_world(n):
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.6)
    for k in range(n):
        sk = rd.Skeleton(f"box{k}")
        body = sk.add_body("body", joint=rd.FreeJoint(f"free{k}"),
                           inertia=rd.Inertia.from_shape(rd.Box((0.2, 0.2, 0.2)), mass=1.0))
        body.add_shape(rd.Box((0.2, 0.2, 0.2)), friction=0.6)
        world.add_skeleton(sk)
    q = world.neutral_configuration()
    for k in range(n):
        q[7 * k + 2] = 0.1 + 0.2 * k
    return world, q


def test_resting_stack_does_not_drift():
    world, q0 = stack_world(5)
    q, v = run(world, q0, np.zeros(world.nv), 2000)
    drift = max(np.linalg.norm(q[7 * k:7 * k + 3] - q0[7 * k:7 * k + 3]) for k in range(5))
    assert drift < 1e-3
    c = world.last_contacts()
    assert len(c) == 4 * 5
    # the impulses carry the weight: the ground holds 5 boxes for one step
    ground = [k for k in range(len(c)) if "ground" in (c.body_a[k], c.body_b[k])]
    assert sum(c.normal_impulses[k] for k in ground) == pytest.approx(5 * G * world.dt, rel=1e-6)


def test_contact_impulses_of_a_resting_box_are_symmetric_and_carry_its_weight():
    world = free_shape_world(rd.Box((0.2, 0.2, 0.2)), mass=2.0)
    q = world.neutral_configuration()
    q[2] = 0.1
    q, v = run(world, q, np.zeros(6), 5)
    c = world.last_contacts()
    assert len(c) == 4
    np.testing.assert_allclose(c.normal_impulses, 2.0 * G * world.dt / 4, rtol=1e-9)
    np.testing.assert_allclose(c.friction_impulses, 0.0, atol=1e-12)
    assert c.classes == ["clamping"] * 4
    assert c.solver == "warm_start"  # the previous step's classes were right


def pendulum(lower=None, upper=None, friction=0.0):
    sk = rd.Skeleton("pendulum")
    sk.add_body("link", joint=rd.RevoluteJoint("hinge", axis=(0, 1, 0), lower=lower, upper=upper, friction=friction),
                inertia=rd.Inertia(mass=1.0, com=(0.5, 0, 0), rotational_inertia=np.eye(3) * 1e-3))
    world = rd.World(dt=1e-3)
    world.add_skeleton(sk)
    world.contact_options(joint_limits=True, joint_friction=True)
    return world


def test_joint_limit_stops_the_pendulum():
    # falling from horizontal: the angle about +y grows as the link swings down; the limit is at 0.5 rad
    world = pendulum(lower=-1.0, upper=0.5)
    q, v = np.array([0.0]), np.array([0.0])
    qs = []
    for _ in range(1500):
        q, v = world.step(q, v, np.zeros(1))
        qs.append(q[0])
    assert max(qs) <= 0.5 + 1e-9
    assert world.last_contacts().solver != "none"
    assert q[0] == pytest.approx(0.5, abs=1e-6)
    world.contact_options(joint_limits=False)
    Q, _ = world.rollout(np.array([0.0]), np.array([0.0]), np.zeros((1500, 1)))
    assert Q[:, 0].max() > 0.6


def limited_body(joint):
    sk = rd.Skeleton("s")
    sk.add_body("b", joint=joint, inertia=rd.Inertia(1.0, com=(0.1, 0.05, 0.0), rotational_inertia=np.eye(3) * 0.01))
    world = rd.World(dt=1e-3)
    world.add_skeleton(sk)
    world.contact_options(joint_limits=True)
    return world


def test_translational_joint_limits_hold_each_coordinate_and_their_jacobians_match_central_differences():
    world = limited_body(rd.TranslationalJoint("j", lower=[-0.1, -0.2, -0.1], upper=[0.1, 0.2, 0.1]))
    q, v = np.zeros(3), np.array([50.0, 0.5, -30.0])
    for _ in range(300):
        q, v = world.step(q, v, np.zeros(3))
        assert np.all(q >= [-0.1, -0.2, -0.1 - 1e-12]) and np.all(q <= [0.1 + 1e-12, 0.2, 0.1])
    assert q[0] == pytest.approx(0.1) and q[2] == pytest.approx(-0.1)  # pressed against two limits, gravity on z
    # a step that reaches two limits from inside: both rows are gaps, whose closing the Jacobians differentiate
    report = check_jacobians(world, np.array([0.09, 0.0, -0.095]), np.array([50.0, 1.0, -30.0]), np.ones(3), wrt="all")
    assert report.passed, report


def test_a_planar_joints_angle_limit_holds_and_its_xy_limits_are_refused_by_name():
    inf = np.inf
    world = limited_body(rd.PlanarJoint("j", lower=[-inf, -inf, -0.2], upper=[inf, inf, 0.2]))
    q, v = np.zeros(3), np.array([1.0, 0.0, 30.0])
    for _ in range(200):
        q, v = world.step(q, v, np.zeros(3))
        assert q[2] <= 0.2 + 1e-12
    assert q[2] == pytest.approx(0.2)
    report = check_jacobians(world, np.array([0.1, 0.2, 0.15]), np.array([5.0, 1.0, 80.0]), np.ones(3), wrt="all")
    assert report.passed, report
    boxed = limited_body(rd.PlanarJoint("j", lower=[-0.1, -inf, -inf], upper=[0.1, inf, inf]))
    with pytest.raises(ValueError, match=r"planar joint 's/j' has position limits on its x coordinate.*solver=\"barrier\""):
        boxed.step(np.zeros(3), np.array([50.0, 0.0, 0.0]), np.zeros(3))
    boxed.contact_options(joint_limits=False)  # off: the limits are not in the step at all
    assert boxed.step(np.zeros(3), np.array([50.0, 0.0, 0.0]), np.zeros(3))[0][0] == pytest.approx(0.05)


def test_joint_coulomb_friction_holds_or_slips():
    # gravity torque at horizontal: m g l = 4.905 N m (about +y)
    held = pendulum(friction=6.0)
    q, v = run(held, np.array([0.0]), np.array([0.0]), 500)
    assert abs(q[0]) < 1e-9 and abs(v[0]) < 1e-9
    slips = pendulum(friction=2.0)
    q, v = run(slips, np.array([0.0]), np.array([0.0]), 10)
    # while slipping, the net torque is m g l - friction (the link starts horizontal: cos ~ 1)
    inertia = 1.0 * 0.5**2 + 1e-3
    assert v[0] == pytest.approx((G * 0.5 - 2.0) / inertia * 10 * slips.dt, rel=2e-2)


def test_rollout_and_batch_match_the_step_loop():
    world, q0 = stack_world(2)
    v0 = np.zeros(world.nv)
    v0[0] = 0.3
    taus = np.zeros((50, world.nv))
    Q, V = world.rollout(q0, v0, taus)
    q, v = q0, v0
    for t in range(50):
        q, v = world.step(q, v, taus[t])
        np.testing.assert_allclose(Q[t + 1], q, atol=1e-12)
        np.testing.assert_allclose(V[t + 1], v, atol=1e-10)
    # the batch solves every row cold, as a step that does not continue the step before it does
    Qn, Vn = world.step_batch(Q[:-1], V[:-1], taus, threads=2)
    for t in range(50):
        world.clear_warm_start()
        q, v = world.step(Q[t], V[t], taus[t])
        np.testing.assert_allclose(Qn[t], q, atol=1e-12)
        np.testing.assert_allclose(Vn[t], v, atol=1e-10)
    # along the chain, the sliding box's four corners share their load in one of many valid ways: the
    # warm start keeps the one nearest the step before, the cold solve pivots to another (docs/contact.md)
    np.testing.assert_allclose(Qn, Q[1:], atol=1e-9)
    np.testing.assert_allclose(Vn, V[1:], atol=1e-6)


def test_friction_combination_rules():
    world = free_shape_world(rd.Box((0.2, 0.2, 0.2)), friction=0.5)
    world.skeletons[0].bodies[0].shapes.clear()
    world.skeletons[0].bodies[0].add_shape(rd.Plane(), friction=0.2)
    world.rebuild()

    def slide(**opts):
        world.contact_options(**opts)
        q = world.neutral_configuration()
        q[2] = 0.1
        v = np.zeros(6)
        v[0] = 1.0
        q, _ = run(world, q, v, 1200)
        return q[0]

    for rule, mu in (("geometric_mean", np.sqrt(0.1)), ("min", 0.2), ("max", 0.5), ("mean", 0.35)):
        assert slide(friction_combine=rule) == pytest.approx(1.0 / (2 * mu * G), rel=0.02), rule
    with pytest.raises(ValueError, match="friction_combine"):
        world.contact_options(friction_combine="median")
    with pytest.raises(ValueError, match="unknown contact option"):
        world.contact_options(frction=1)


def test_four_friction_directions_slide_the_same_way():
    world = free_shape_world(rd.Box((0.2, 0.2, 0.2)), friction=0.5)
    world.contact_options(friction_directions=4)
    q = world.neutral_configuration()
    q[2] = 0.1
    v = np.zeros(6)
    v[0] = 2.0
    q, v = run(world, q, v, 1000)
    assert q[0] == pytest.approx(4.0 / (2 * 0.5 * G), rel=0.02)
    with pytest.raises(ValueError, match="friction_directions"):
        world.contact_options(friction_directions=3)


def test_deep_contacts_are_solved_and_reported_once():
    world = free_shape_world(rd.Box((0.2, 0.2, 0.2)))
    q = world.neutral_configuration()
    q[2] = 0.05  # 5 cm inside the ground
    with pytest.warns(RuntimeWarning, match="deep"):
        q1, v1 = world.step(q, np.zeros(6), np.zeros(6))
    assert len(world.last_contacts()) == 4
    assert v1[2] >= -1e-12  # still held: the contact is not dropped
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        world.step(q1, v1, np.zeros(6))  # once per world
    world.contact_options(erp=0.2)
    for _ in range(100):
        q1, v1 = world.step(q1, v1, np.zeros(6))
    assert q1[2] > 0.099  # erp pushed it out


def test_advance_reports_the_contacts_of_its_last_step():
    world = free_shape_world(rd.Box((0.2, 0.2, 0.2)))
    q = world.neutral_configuration()
    q[2] = 0.1 + 0.02  # 2 cm above the ground: it lands during the advance
    world.q, world.v = q, np.zeros(6)
    assert len(world.last_contacts()) == 0
    world.advance(n_steps=200)
    contacts = world.last_contacts()
    assert len(contacts) == 4 and contacts.normal_impulses.sum() == pytest.approx(world.total_mass * G * world.dt,
                                                                                  rel=1e-6)
    world.rollout(q, np.zeros(6), np.zeros((3, 6)))  # the box in the air: rollout keeps its own contacts
    assert len(world.last_contacts()) == 4


# ------------------------------------------------------------------------------------------ warm start
def quadruped_world():
    world = rd.World()
    world.add_skeleton(rd.models.load("quadruped"))
    world.add_ground()
    world.contact_options(max_penetration=1.0)  # random legs go deep into the ground: no warning
    return world


def quadruped_states(n, seed=0):
    """The quadruped on the ground and n unrelated states: trunk 0.1 to 0.5 m up (no feet, some, all of
    them touching), random joint angles, velocities and torques: many contact modes."""
    world = quadruped_world()
    rng = np.random.default_rng(seed)
    q0 = world.neutral_configuration()
    Q = np.array([world.random_configuration(rng) for _ in range(n)])
    Q[:, :7] = q0[:7]
    Q[:, 2] = rng.uniform(0.1, 0.5, n)
    V = 0.5 * rng.normal(size=(n, world.nv))
    TAU = 5.0 * rng.normal(size=(n, world.nv))
    TAU[:, :6] = 0.0
    return world, Q, V, TAU


def test_step_batch_equals_a_loop_of_step_bitwise():
    # step() used to warm-start from whatever the previous call on the world solved: a third of these
    # rows then differed from step_batch (up to 0.6 m/s)
    world, Q, V, TAU = quadruped_states(150)
    Qb, Vb = world.step_batch(Q, V, TAU, threads=2)
    for i in range(len(Q)):
        q, v = world.step(Q[i], V[i], TAU[i])
        assert np.array_equal(q, Qb[i]) and np.array_equal(v, Vb[i]), f"row {i}: {np.abs(v - Vb[i]).max()}"


def test_a_step_does_not_depend_on_unrelated_calls_before_it():
    world, Q, V, TAU = quadruped_states(40, seed=1)
    for i in range(1, len(Q)):
        fresh = quadruped_world()
        expected = fresh.step(Q[i], V[i], TAU[i])
        jac_expected = fresh.step_jacobians(Q[i], V[i], TAU[i])
        world.step(Q[i - 1], V[i - 1], TAU[i - 1])
        q, v = world.step(Q[i], V[i], TAU[i])
        assert np.array_equal(q, expected[0]) and np.array_equal(v, expected[1]), f"state {i}"
        world.step_jacobians(Q[i - 1], V[i - 1], TAU[i - 1])
        jac = world.step_jacobians(Q[i], V[i], TAU[i])
        assert np.array_equal(jac.A, jac_expected.A) and np.array_equal(jac.B, jac_expected.B), f"state {i}"


def test_steps_that_continue_each_other_still_warm_start_and_equal_the_rollout():
    world = quadruped_world()
    q = world.neutral_configuration()
    q[2] = 0.3
    v = np.zeros(world.nv)
    taus = np.zeros((300, world.nv))
    Q, V = world.rollout(q, v, taus)  # the trunk falls on its legs and settles
    solvers = []
    for t in range(len(taus)):
        q, v = world.step(q, v, taus[t])
        assert np.array_equal(q, Q[t + 1]) and np.array_equal(v, V[t + 1]), f"step {t}"
        if len(world.last_contacts()):
            solvers.append(world.last_contacts().solver)
    assert solvers.count("warm_start") > 0.9 * len(solvers)  # a persisting contact mode is reused
    world.step(Q[0], V[0], taus[0])  # an unrelated state: the next step starts cold
    world.step(Q[-2], V[-2], taus[-1])
    assert world.last_contacts().solver != "warm_start"
