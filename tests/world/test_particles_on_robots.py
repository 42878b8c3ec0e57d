"""Particles on robots loaded from URDF (docs/particles.md): a pile dropped on a floating quadruped's
collision meshes and on the ground keeps every function of the world exact, and parameter changes or
rollouts that no longer fit the world are refused with a message."""

import pickle
import warnings

import numpy as np
import pytest

import rigidiff as rd

DT = 2e-3
STAND = np.array([0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6])  # the feet under the hips


def solo_with_particles(robots_dir):
    """solo12 (floating base, its shipped collision meshes, legs held by springs) dropped on its feet,
    with one set of 1 cm particles (added before the robot) dropped onto its body and one set of points
    (added after it) on the ground around it; masses from 1 g to 10 kg."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the URDF's unused elements
        solo = rd.load_urdf(robots_dir / "solo_description/robots/solo12.urdf", package_dirs=[robots_dir.parent],
                            floating_base=True, strict=False)
    legs = [b.joint for b in solo.bodies if b.joint.type == "revolute"]
    for joint, angle in zip(legs, STAND):  # joint springs hold a standing pose (the step treats them implicitly)
        joint.stiffness, joint.damping, joint.rest_position = np.array([20.0]), np.array([0.5]), np.array([angle])
    rng = np.random.default_rng(0)
    world = rd.World(dt=DT)
    world.add_ground(friction=0.6)
    over = np.array([[x, y, 0.45] for x in (-0.1, 0.0, 0.1) for y in (-0.05, 0.05)])
    world.add_particles(over, masses=10 ** rng.uniform(-3, 1, len(over)), radius=0.01, friction=0.5,
                        restitution=0.2, name="over")
    world.add_skeleton(solo)
    floor = np.c_[rng.uniform(-0.4, 0.4, (8, 2)), np.full(8, 0.02)]
    world.add_particles(floor, masses=10 ** rng.uniform(-3, 1, 8), friction=rng.uniform(0.2, 0.9, 8), name="floor")
    q = world.neutral_configuration()
    lay = world.layout("solo").q
    q[lay.start + 2] = 0.3
    q[lay.start + 7:lay.stop] = STAND
    return world, q


@pytest.fixture(scope="module")
def landed(robots_dir):
    world, q = solo_with_particles(robots_dir)
    world.contact_options(tolerance=1e-12, bounce_correction=False)  # the discrete step's own derivatives
    Q, V = world.rollout(q, np.zeros(world.nv), np.zeros((200, world.nv)))
    return world, Q, V


def test_the_pile_lands_on_the_robot_and_the_ground(landed):
    world, Q, V = landed
    assert np.isfinite(Q).all() and np.isfinite(V).all()
    over = Q[:, world.layout("over").q].reshape(len(Q), -1, 3)
    floor = Q[:, world.layout("floor").q].reshape(len(Q), -1, 3)
    assert over[..., 2].min() > 0.01 - 1e-3 and floor[..., 2].min() > -1e-3
    # the pile came to rest on the standing robot's body (it did not fall through), the points on the ground
    assert np.abs(V[-1, world.layout("over").v]).max() < 0.1 and np.abs(V[-1, world.layout("floor").v]).max() < 1e-9
    assert over[-1, :, 2].min() > Q[-1, 2] and np.abs(over[-1, :, :2] - over[0, :, :2]).max() < 0.05
    world.clear_warm_start()
    world.step(Q[-1], V[-1], np.zeros(world.nv))
    c = world.last_contacts()
    pairs = set(zip(c.body_a, c.body_b)) | set(zip(c.body_b, c.body_a))
    # a particle's body is "floor/p3" where another set has a "p3" too, "p7" where none has
    floor_names = [f"floor/p{i}" if f"floor/p{i}" in world.body_names else f"p{i}" for i in range(8)]
    assert floor_names[-1] == "p7" and all((name, "ground") in pairs for name in floor_names)
    robot = {b.name for b in world.skeletons[1].bodies}
    assert all(any(a == f"over/p{i}" and b in robot for a, b in pairs) for i in range(6))
    assert (c.normal_impulses >= 0).all()


def central_columns(world, q, v, tau, which, columns, h=1e-6):
    """Central differences of the step along the given columns, and whether both sides kept the step's
    contact mode (the constraint rows and their classes)."""
    def mode():
        c = world.last_contacts()
        return tuple(c.row_kinds), tuple(c.row_index), tuple(c.row_classes)

    world.clear_warm_start()
    world.step(q, v, tau)
    base = mode()
    out = []
    for k in columns:
        e = np.zeros(world.nv)
        e[k] = h
        sides = []
        for s in (1.0, -1.0):
            world.clear_warm_start()
            args = {"q": (world.integrate(q, s * e), v, tau), "v": (q, v + s * e, tau), "tau": (q, v, tau + s * e)}
            sides.append((*world.step(*args[which]), mode() == base))
        fd = np.r_[world.difference(sides[1][0], sides[0][0]), sides[0][1] - sides[1][1]] / (2 * h)
        out.append((k, fd, sides[0][2] and sides[1][2]))
    return out


def test_step_jacobians_are_those_of_the_step_on_the_robot_and_the_pile(landed):
    world, Q, V = landed
    rng = np.random.default_rng(1)
    q, v, tau = Q[-1], V[-1], rng.normal(0.0, 0.01, world.nv)
    world.clear_warm_start()
    J = world.step_jacobians(q, v, tau)
    assert "clamping" in J.contacts.row_classes
    blocks = {"q": np.vstack([J.dq_dq, J.dv_dq]), "v": np.vstack([J.dq_dv, J.dv_dv]),
              "tau": np.vstack([J.dq_dtau, J.dv_dtau])}
    columns = list(range(0, 18, 2)) + list(range(18, world.nv, 4))  # base, legs and particles
    kept = 0
    for which, A in blocks.items():
        for k, fd, same_mode in central_columns(world, q, v, tau, which, columns):
            if same_mode:
                kept += 1
                np.testing.assert_allclose(A[:, k], fd, rtol=0, atol=1e-6 * max(np.abs(fd).max(), 1e-3))
    assert kept > 0.9 * 3 * len(columns)
    g1, g2 = rng.normal(size=world.nv), rng.normal(size=world.nv)
    world.clear_warm_start()
    G = world.step_vjp(q, v, tau, g1, g2)
    for got, (Aq, Av) in ((G.q, (J.dq_dq, J.dv_dq)), (G.v, (J.dq_dv, J.dv_dv)), (G.tau, (J.dq_dtau, J.dv_dtau))):
        want = Aq.T @ g1 + Av.T @ g2
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-10 * np.abs(want).max())


def test_particle_parameters_on_the_robot_have_the_step_gradients(landed):
    world, Q, V = landed
    q, v = Q[-1], V[-1]
    tau = np.r_[np.zeros(world.nv - 24), np.tile([3.0, 0.0, 0.0], 8)]  # the points on the ground pushed along x
    names = ["floor/p3/mass", "floor/p3/friction", "over/p2/mass", "over/p2/friction", "over/p2/restitution"]
    world.clear_warm_start()
    J = world.step_jacobians(q, v, tau, wrt=names)
    assert sorted(J.parameter_names) == sorted(names)
    p = world.parameters()
    for j, name in enumerate(J.parameter_names):
        h = 1e-6 * p[name]
        outs = []
        for value in (p[name] + h, p[name] - h):
            world.set_parameters({name: value})
            world.clear_warm_start()
            outs.append(world.step(q, v, tau))
            assert world.last_contacts().row_classes == J.contacts.row_classes
        world.set_parameters({name: p[name]})
        fd = np.r_[world.difference(outs[1][0], outs[0][0]), outs[0][1] - outs[1][1]] / (2 * h)
        an = np.r_[J.dq_dp[:, j], J.dv_dp[:, j]]
        np.testing.assert_allclose(an, fd, rtol=0, atol=1e-5 * max(np.abs(fd).max(), 1e-3))
    # the pushed point slides: its mass and friction change its step
    for name in ("floor/p3/mass", "floor/p3/friction"):
        assert np.abs(J.dv_dp[:, J.parameter_names.index(name)]).max() > 1e-3


def test_batches_rollout_backward_and_warm_start_on_the_robot(landed):
    world, Q, V = landed
    rng = np.random.default_rng(2)
    rows = [60, 100, 200]
    taus = rng.normal(0.0, 0.01, (3, world.nv))
    Qb, Vb = world.step_batch(Q[rows], V[rows], taus, threads=2)
    for j, t in enumerate(rows):
        world.clear_warm_start()
        qn, vn = world.step(Q[t], V[t], taus[j])
        assert np.array_equal(qn, Qb[j]) and np.array_equal(vn, Vb[j])
    T = 20
    seq = rng.normal(0.0, 0.01, (2, T, world.nv))
    QQ, VV = world.rollout_batch(Q[[100, 200]], V[[100, 200]], seq, threads=2)
    for j, t in enumerate([100, 200]):
        Qs, Vs = world.rollout(Q[t], V[t], seq[j])
        assert np.array_equal(Qs, QQ[j]) and np.array_equal(Vs, VV[j])
    # the warm start of a step, pickled and put back after another step, solves the next step the same
    world.clear_warm_start()
    q1, v1 = world.step(Q[200], V[200], np.zeros(world.nv))
    saved = pickle.loads(pickle.dumps(world.warm_start()))
    want = world.step(q1, v1, np.zeros(world.nv))
    world.step(Q[60], V[60], np.zeros(world.nv))
    world.set_warm_start(saved)
    got = world.step(q1, v1, np.zeros(world.nv))
    assert np.array_equal(want[0], got[0]) and np.array_equal(want[1], got[1])
    # a 20-step rollout's gradient of a loss of its velocities against central differences of the loss
    weights = rng.normal(size=(T + 1, world.nv))
    traj = world.rollout(Q[180], V[180], seq[0], record=True)
    G = traj.backward(None, weights)
    loss = lambda v0, taus: float(np.sum(weights * world.rollout(Q[180], v0, taus)[1]))  # noqa: E731
    h = 1e-6
    for k in (2, 20, world.nv - 3):
        e = np.zeros(world.nv)
        e[k] = h
        fd = (loss(V[180] + e, seq[0]) - loss(V[180] - e, seq[0])) / (2 * h)
        assert abs(G.v[k] - fd) <= 1e-4 * max(abs(fd), 1.0)
        E = np.zeros((T, world.nv))
        E[5, k] = h
        fd = (loss(V[180], seq[0] + E) - loss(V[180], seq[0] - E)) / (2 * h)
        assert abs(G.tau[5, k] - fd) <= 1e-4 * max(abs(fd), 1.0)


def test_a_particle_mass_cannot_be_set_to_zero():
    world = rd.World()
    world.add_ground()
    world.add_particles([[0.0, 0.0, 0.1], [0.1, 0.0, 0.1]], masses=[0.1, 1.0], radius=0.01, name="sand")
    world.add_particles([[0.0, 1.0, 0.1]], name="dust")
    with pytest.raises(ValueError, match=r"parameter 'sand/p0/mass': a particle's mass must be > 0 \(particle set "
                                         r"'sand'\), got 0.0"):
        world.set_parameters({"sand/p0/mass": 0.0})
    with pytest.raises(ValueError, match="'dust/p0/mass'.*particle set 'dust'"):
        world.set_parameters(np.where(np.array(world.parameters().names) == "dust/p0/mass", 0.0,
                                      world.parameters().values))
    np.testing.assert_array_equal(world.particle_sets[0].masses, [0.1, 1.0])
    world.step(world.q, world.v, np.zeros(world.nv))  # still steps: nothing was changed


def test_a_rollout_recorded_before_particles_were_added_is_refused():
    world = rd.World()
    world.add_ground()
    world.add_particles([[0.0, 0.0, 0.1]], radius=0.01)
    traj = world.rollout(world.q, world.v, np.zeros((5, world.nv)), record=True)
    world.add_particles([[0.5, 0.0, 0.1]], name="more")
    with pytest.raises(RuntimeError, match=r"the world changed since the rollout was recorded: its state has nq=6, "
                                           r"nv=6 .*the rollout's nq=3, nv=3; record it again"):
        traj.backward(None, np.zeros((6, 6)))
