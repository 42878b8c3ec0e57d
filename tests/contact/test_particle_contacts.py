"""Particles in contact (docs/particles.md): pushed by a robot link, carried by a moving one, hitting each
other and points landing on shapes, with step Jacobians against mode-preserving central differences
(test_contact_gradients.py's check) and the closed-form sensitivities of an elastic exchange."""

import numpy as np
import pytest
from test_contact_gradients import assert_step_jacobians_match_fd, step_contacts

import rigidiff as rd
import rigidiff.testing as rdt

R = 0.05  # particle radius of the pile


def paddle() -> rd.Skeleton:
    """A flat paddle on a vertical hinge at the origin, lying along +x just above the ground."""
    sk = rd.Skeleton("paddle")
    body = sk.add_body("paddle", joint=rd.RevoluteJoint("hinge", axis=(0.0, 0.0, 1.0)),
                       inertia=rd.Inertia(2.0, com=(0.3, 0.0, 0.0), rotational_inertia=np.diag([1e-3, 0.02, 0.02])))
    body.add_shape(rd.Box((0.6, 0.04, 0.08)), origin=rd.Transform(translation=(0.3, 0.0, 0.045)), friction=0.3)
    return sk


def pile_positions() -> np.ndarray:
    """Three touching particles in a triangle on the ground beside the paddle, and one on top of them."""
    c, d = np.array([0.35, 0.08, R]), 2.0 * R
    base = [c, c + [d, 0.0, 0.0], c + [0.5 * d, 0.5 * np.sqrt(3.0) * d, 0.0]]
    top = np.mean(base, axis=0) + [0.0, 0.0, d * np.sqrt(2.0 / 3.0)]
    return np.array(base + [top])


def pile_world(particles_first: bool) -> rd.World:
    world = rd.World(dt=1e-3)
    add = lambda: world.add_particles(pile_positions(), masses=0.1, radius=R, friction=0.6, name="pile")  # noqa: E731
    if particles_first:
        add()
    world.add_skeleton(paddle())
    world.add_ground(friction=0.6)
    if not particles_first:
        add()
    return world


def pushed_pile(world):
    """The pile settled for 0.3 s, then the paddle driven into it for 0.15 s: (q, v, tau)."""
    q0 = world.neutral_configuration()
    Q, V = world.rollout(q0, np.zeros(world.nv), np.zeros((300, world.nv)))
    q, v = Q[-1], V[-1].copy()
    v[world.layout("paddle").v] = 0.3
    tau = np.zeros(world.nv)
    tau[world.layout("paddle").v] = 0.5
    Q, V = world.rollout(q, v, np.tile(tau, (150, 1)))
    return Q[-1], V[-1], tau


@pytest.fixture(scope="module")
def pushed():
    world = pile_world(particles_first=False)
    return (world, *pushed_pile(world))


def test_the_pile_settles_resting_on_the_ground_and_on_itself():
    world = pile_world(particles_first=False)
    Q, V = world.rollout(world.neutral_configuration(), np.zeros(world.nv), np.zeros((300, world.nv)))
    pos = Q[-1][world.layout("pile").q].reshape(-1, 3)
    # resting: the base placed touching the ground holds there, the top on the base, nothing moving
    np.testing.assert_allclose(pos[:3, 2], R, atol=1e-7)
    gaps = np.linalg.norm(pos[3] - pos[:3], axis=1) - 2.0 * R
    assert np.all(np.abs(gaps) < 1e-4)
    assert np.max(np.abs(V[-1])) < 1e-6
    contacts = step_contacts(world, Q[-1], V[-1], np.zeros(world.nv))
    pairs = {tuple(sorted(p)) for p in zip(contacts.body_a, contacts.body_b)}
    assert {("ground", "p0"), ("ground", "p1"), ("ground", "p2"), ("p0", "p3"), ("p1", "p3"), ("p2", "p3")} <= pairs


def test_the_paddle_pushes_the_pile_with_exact_step_jacobians(pushed):
    world, q, v, tau = pushed
    contacts = step_contacts(world, q, v, tau)
    pushed_particles = {b for a, b in zip(contacts.body_a, contacts.body_b) if a == "paddle"}
    assert pushed_particles, "the paddle must touch the pile"
    pile = q[world.layout("pile").q].reshape(-1, 3)
    assert np.all(pile[:3, 1] > pile_positions()[:3, 1] + 1e-3) or np.any(pile[:, 1] > pile_positions()[:, 1] + 1e-3)
    assert_step_jacobians_match_fd(world, q, v, tau)


def test_the_order_of_adding_particles_and_skeletons_does_not_change_the_world(pushed):
    """Particles follow the skeletons in q and v whatever the order of the calls; the two worlds
    compute the same thing, bit for bit."""
    world, q, v, tau = pushed
    other = pile_world(particles_first=True)
    assert other.layout("pile") == world.layout("pile")
    assert other.layout("pile").q == slice(1, 13) and other.layout("paddle").v == slice(0, 1)
    assert other.body_names == world.body_names
    for a, b in zip(pushed_pile(other), (q, v, tau)):
        np.testing.assert_array_equal(a, b)
    ja, jb = world.step_jacobians(q, v, tau), other.step_jacobians(q, v, tau)
    np.testing.assert_array_equal(ja.A, jb.A)
    np.testing.assert_array_equal(ja.B, jb.B)


def test_the_particle_point_map_equals_the_chain_walk_of_the_same_bodies_as_a_skeleton(pushed):
    """A particle's contact rows and their derivatives come from its own point map (the identity on its 3
    dofs, contact/point_jacobian.hpp); the same point masses built as a skeleton of translational joints
    take the articulated chain walks. Both worlds step, differentiate and pull cotangents back alike, bit
    for bit: the identity map is the chain walk without its terms that vanish."""
    world, q, v, tau = pushed
    chain = rd.World(dt=world.dt)
    chain.add_skeleton(paddle())
    chain.add_ground(friction=0.6)
    sk = rd.Skeleton("pile", self_collision=True)  # as the particles of one set touch each other
    for i in range(len(pile_positions())):
        body = sk.add_body(f"p{i}", joint=rd.TranslationalJoint(f"p{i}"), inertia=rd.Inertia(0.1))
        body.add_shape(rd.Sphere(R), friction=0.6, name=f"p{i}")
    chain.add_skeleton(sk)
    assert chain.nq == world.nq and chain.layout("pile").q == world.layout("pile").q
    for a, b in zip(chain.step(q, v, tau), world.step(q, v, tau)):
        np.testing.assert_array_equal(a, b)
    ja, jb = chain.step_jacobians(q, v, tau), world.step_jacobians(q, v, tau)
    np.testing.assert_array_equal(ja.A, jb.A)
    np.testing.assert_array_equal(ja.B, jb.B)
    g = np.random.default_rng(2).normal(size=(2, world.nv))
    ga, gb = chain.step_vjp(q, v, tau, *g), world.step_vjp(q, v, tau, *g)
    for x, y in ((ga.q, gb.q), (ga.v, gb.v), (ga.tau, gb.tau)):
        np.testing.assert_array_equal(x, y)


def test_reverse_mode_and_batches_agree_with_the_step_jacobians(pushed):
    world, q, v, tau = pushed
    jac = world.step_jacobians(q, v, tau)
    rng = np.random.default_rng(3)
    gq, gv = rng.normal(size=world.nv), rng.normal(size=world.nv)
    g = world.step_vjp(q, v, tau, gq, gv)
    np.testing.assert_allclose(g.q, jac.dq_dq.T @ gq + jac.dv_dq.T @ gv, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g.v, jac.dq_dv.T @ gq + jac.dv_dv.T @ gv, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g.tau, jac.dq_dtau.T @ gq + jac.dv_dtau.T @ gv, rtol=1e-10, atol=1e-12)
    # a recorded rollout's backward equals the chained step Jacobians
    taus = np.tile(tau, (5, 1))
    traj = world.rollout(q, v, taus, record=True)
    GQ, GV = np.zeros((6, world.nv)), np.zeros((6, world.nv))
    GQ[-1], GV[-1] = gq, gv
    back = traj.backward(GQ, GV)
    lam_q, lam_v = gq.copy(), gv.copy()
    for k in reversed(range(5)):
        J = world.step_jacobians(traj.q[k], traj.v[k], taus[k])
        lam_q, lam_v = J.dq_dq.T @ lam_q + J.dv_dq.T @ lam_v, J.dq_dv.T @ lam_q + J.dv_dv.T @ lam_v
    np.testing.assert_allclose(back.q, lam_q, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(back.v, lam_v, rtol=1e-8, atol=1e-10)
    # a batch equals a loop of cold steps
    world.contact_options(warm_start=False)
    try:
        Q = np.stack([q, world.integrate(q, 1e-3 * rng.normal(size=world.nv))])
        V, TAU = np.stack([v, v]), np.stack([tau, -tau])
        QN, VN = world.step_batch(Q, V, TAU, threads=2)
        for i in range(2):
            qn, vn = world.step(Q[i], V[i], TAU[i])
            np.testing.assert_array_equal(QN[i], qn)
            np.testing.assert_array_equal(VN[i], vn)
    finally:
        world.contact_options(warm_start=True)


def test_particle_parameters_have_exact_derivatives(pushed):
    """d(q_next, v_next) / d(particle mass, friction, restitution) against finite differences."""
    world, q, v, tau = pushed
    names = ["p0/mass", "p1/mass", "p0/friction", "paddle/shape0/friction", "p1/restitution"]
    report = rdt.check_jacobians(world, q, v, tau, wrt=tuple(names), eps=1e-7, rtol=1e-5, atol=1e-7)
    assert report.passed, str(report)
    jac = world.step_jacobians(q, v, tau, wrt=names)
    assert np.abs(jac.dv_dp[:, 0]).max() > 0.0  # the pushed particle's mass matters


def platform_world(radius: float) -> rd.World:
    """A platform box on a prismatic x joint, a particle resting on it."""
    world = rd.World(dt=1e-3)
    sk = rd.Skeleton("platform")
    body = sk.add_body("platform", joint=rd.PrismaticJoint("slide", axis=(1.0, 0.0, 0.0)),
                       joint_origin=rd.Transform(translation=(0.0, 0.0, 0.5)), inertia=rd.Inertia(5.0))
    body.add_shape(rd.Box((1.0, 1.0, 0.1)), friction=0.8)
    world.add_skeleton(sk)
    world.add_particles([[0.1, -0.2, 0.55 + radius]], masses=0.2, radius=radius, friction=0.8, name="rider")
    return world


@pytest.mark.parametrize("radius", [0.0, 0.03])
def test_a_particle_rides_a_moving_link(radius):
    """A particle (a point, or a small sphere) on an accelerating platform sticks to it (mu g > a) and
    moves with it; its step Jacobians are exact."""
    world = platform_world(radius)
    lay = world.layout("rider")
    q = world.neutral_configuration()
    tau = np.zeros(world.nv)
    tau[world.layout("platform").v] = 5.2 * 2.0  # 2 m/s^2 for platform and rider
    Q, V = world.rollout(q, np.zeros(world.nv), np.tile(tau, (400, 1)))
    x_platform, x_rider = Q[-1][0], Q[-1][lay.q][0]
    assert x_platform > 0.1
    np.testing.assert_allclose(x_rider - 0.1, x_platform, rtol=1e-3)
    np.testing.assert_allclose(Q[-1][lay.q][2], 0.55 + radius, atol=1e-7)  # placed touching: it holds there
    c = step_contacts(world, Q[-1], V[-1], tau)
    assert len(c) == 1 and {c.body_a[0], c.body_b[0]} == {"platform", "p0"}
    assert list(c.row_classes) == ["clamping"] * 3  # sticking
    assert_step_jacobians_match_fd(world, Q[-1], V[-1], tau)


def test_particles_of_two_sets_collide_and_conserve_momentum():
    """Two sets in free space, an off-centre inelastic hit: momentum is conserved exactly, the normal
    velocities equalise, and the step through the impact has exact Jacobians."""
    world = rd.World(dt=1e-3, gravity=(0.0, 0.0, 0.0))
    world.add_particles([[0.0, 0.0, 0.0]], masses=1.0, radius=0.1, friction=0.0, name="a")
    world.add_particles([[0.25, 0.05, 0.02]], masses=3.0, radius=0.1, friction=0.0, name="b")
    q = world.neutral_configuration()
    v = np.array([2.0, 0.0, 0.0, -1.0, 0.5, 0.0])
    masses = np.repeat([1.0, 3.0], 3)
    Q, V = world.rollout(q, v, np.zeros((40, 6)))
    np.testing.assert_allclose(masses * V[-1] @ np.kron(np.ones(2), np.eye(3)).T,
                               masses * v @ np.kron(np.ones(2), np.eye(3)).T, atol=1e-12)
    hit = next(k for k in range(40) if not np.array_equal(V[k + 1], V[k]))
    n = Q[hit + 1][3:] - Q[hit + 1][:3]
    n /= np.linalg.norm(n)
    assert abs((V[-1][3:] - V[-1][:3]) @ n) < 1e-9  # perfectly inelastic along the normal
    contacts = step_contacts(world, Q[hit], V[hit], np.zeros(6))
    assert {contacts.body_a[0], contacts.body_b[0]} == {"a/p0", "b/p0"}
    assert_step_jacobians_match_fd(world, Q[hit], V[hit], np.zeros(6))


def test_two_elastic_particles_exchange_their_sensitivities():
    """Restitution 1 on a line, no gravity (as two rigid balls): after T = 1 s,
    x2(T) = x1 + 2r + v1 T, so d x2(T) / d(x1, x2, v1, v2) = (1, 0, T, 0)."""
    world = rd.World(dt=1e-3, gravity=(0.0, 0.0, 0.0))
    world.add_particles([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0]], masses=1.0, radius=0.1, friction=0.0, restitution=1.0)
    q0, v0 = world.neutral_configuration(), np.array([1.0, 0, 0, 0.2, 0, 0])
    T = 1000
    traj = world.rollout(q0, v0, np.zeros((T, 6)), record=True)
    np.testing.assert_allclose(traj.v[-1], [0.2, 0, 0, 1.0, 0, 0], atol=1e-9)
    GQ = np.zeros((T + 1, 6))
    GQ[-1, 3] = 1.0
    g = traj.backward(GQ)
    np.testing.assert_allclose([g.q[0], g.q[3], g.v[0], g.v[3]], [1.0, 0.0, 1.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(g.q[[1, 2, 4, 5]], 0.0, atol=1e-12)


@pytest.mark.parametrize("shape", [rd.Box((0.4, 0.4, 0.2)), rd.Sphere(0.2), rd.Capsule(0.1, 0.3),
                                   rd.Cylinder(0.2, 0.2)])
def test_a_point_lands_on_a_shape_and_rests_at_its_surface(shape):
    """A particle of radius zero dropped on a welded shape stops at its top, rest_depth inside."""
    world = rd.World(dt=1e-3)
    sk = rd.Skeleton("table")
    sk.add_body("top", joint=rd.FixedJoint("weld"), joint_origin=rd.Transform(translation=(0.0, 0.0, 0.5))) \
        .add_shape(shape, friction=0.5)
    world.add_skeleton(sk)
    world.add_particles([[0.0, 0.0, 1.0]], masses=0.1)
    Q, V = world.rollout(world.neutral_configuration(), np.zeros(3), np.zeros((800, 3)))
    top = 0.5 + {rd.Box: 0.1, rd.Sphere: 0.2, rd.Capsule: 0.25, rd.Cylinder: 0.1}[type(shape)]
    np.testing.assert_allclose(Q[-1], [0.0, 0.0, top - world.contact_options().rest_depth], atol=1e-6)
    np.testing.assert_allclose(V[-1], 0.0, atol=1e-9)


@pytest.mark.parametrize("share", [0.98, 0.999])
def test_a_light_particle_that_sticks_across_its_slide_is_differentiated_as_sticking(share):
    """A 10 g particle slides along y on the ground while a force along x takes 98 % (99.9 %) of the
    friction that direction can give: the x friction row sticks. Its impulse is 1e-6 N s or less inside
    its bound, within the solver's impulse tolerance: it must still be classified as sticking (clamping),
    and the step Jacobians must match mode-preserving differences."""
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.4)
    world.add_particles([[0.0, 0.0, 0.02]], masses=0.01, radius=0.02, friction=0.4)
    q, v = world.neutral_configuration(), np.array([0.0, 0.3, 0.0])
    tau = np.array([share * 0.4 * 0.01 * 9.81, 0.0, 0.0])
    c = step_contacts(world, q, v, tau)
    bound = 0.4 * c.normal_impulses[0]
    assert 0.0 < bound - abs(c.friction_impulses[0][0]) <= world.contact_options().tolerance
    assert list(c.row_classes)[0] == "clamping" and "clamping" in list(c.row_classes)[1:]
    assert {"upper_bound", "lower_bound"} & set(c.row_classes)  # the y row slides
    _, vn = world.step(q, v, tau)
    assert vn[0] == pytest.approx(0.0, abs=1e-12)  # no motion along x
    assert_step_jacobians_match_fd(world, q, v, tau)
