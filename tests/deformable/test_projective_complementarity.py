"""DiffPD's complementarity contact in a projective world (contact_model="complementarity"): vertices touching a
ground plane are held on it by an active set. A block lands and rests with no penetration, a ball bounces off the
ground, a spinning ball keeps its horizontal momentum without friction and is set rolling with it, a block on a
slope sticks below mu and slides at g (sin - mu cos) above, a block pushed into a corner is held on two planes
(balls and boxes: test_projective_complementarity_obstacles.py), and the gradients of steps and of a rollout match
central differences of our own step and the Newton-Cholesky baseline's."""

import numpy as np
import pytest
import trimesh

import rigidiff as rd
from complementarity_support import check_landing_rollout, difference

G = 9.81


def _world(friction=0.0, tolerance=1e-10, method="newton", normal=(0.0, 0.0, 1.0), dt=1e-2):
    world = rd.World(dt=dt, solver="projective", contact_model="complementarity", friction=friction,
                     tolerance=tolerance, method=method, max_iterations=5000)
    world.add_ground(normal=normal)
    return world


def _tilt(normal):
    """The rotation taking z to the unit normal (about their common perpendicular)."""
    n = np.asarray(normal, dtype=float) / np.linalg.norm(normal)
    axis = np.cross([0.0, 0.0, 1.0], n)
    s, c = np.linalg.norm(axis), n[2]
    if s == 0.0:
        return np.eye(3)
    k = axis / s
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + s * K + (1.0 - c) * K @ K


def _block(world, cells=2, size=0.1, height=0.0, youngs_modulus=1e5):
    """A block of cells^3 hexahedra standing on the world's (possibly tilted) plane, `height` above it."""
    mesh = rd.HexMesh.box((size, size, size), (cells, cells, cells), origin=(-size / 2, -size / 2, 0.0))
    n = world._planes[0][0]
    pose = rd.Transform(height * n, _tilt(n))
    world.add_deformable(mesh, rd.ProjectiveMaterial(youngs_modulus, 0.3, 1000.0, kind=("corotated", "volume")),
                         name="block", pose=pose)
    return world


def _ball(world, height=0.052):
    ball = rd.HexMesh.from_surface(trimesh.creation.icosphere(radius=0.05), dx=0.02)
    world.add_deformable(ball, rd.ProjectiveMaterial(2e5, 0.4, 1000.0, kind=("corotated", "volume")), name="ball",
                         pose=rd.Transform((0.0, 0.0, height)))
    return world


def _centre(world, x, name):
    m = world.masses(name)
    return m @ x.reshape(-1, 3)[: len(m)] / m.sum()


def test_the_penalty_stays_the_default_and_a_bad_model_names_the_choices():
    world = rd.World(dt=1e-2, solver="projective")
    assert world.contact_model == "penalty"
    with pytest.raises(ValueError, match="'penalty', 'complementarity'"):
        rd.World(dt=1e-2, solver="projective", contact_model="springs")
    with pytest.raises(ValueError, match="contact_model must be one of"):
        world.contact_model = "lcp"
    world.contact_model = "complementarity"
    assert world.contact_model == "complementarity"


def test_a_dropped_block_lands_and_rests_on_the_ground_without_penetrating():
    world = _block(_world(), height=0.01)
    penalty = rd.World(dt=1e-2, solver="projective", tolerance=1e-10)
    penalty.add_ground()
    penalty = _block(penalty, height=0.01)
    q, v = world.q, world.v
    qp, vp = penalty.q, penalty.v
    lowest, lowest_penalty, changes = np.inf, np.inf, 0
    for _ in range(80):
        q, v = world.step(q, v)
        qp, vp = penalty.step(qp, vp)
        lowest = min(lowest, q.reshape(-1, 3)[:, 2].min())
        lowest_penalty = min(lowest_penalty, qp.reshape(-1, 3)[:, 2].min())
        changes += world.last_step["active_set_iterations"]
    assert lowest >= -1e-9  # never below the ground by more than the contact gap
    assert lowest_penalty < -1e-4  # the penalty's weight over k, for comparison
    assert changes >= 1  # the landing changed the active set within a step
    x = q.reshape(-1, 3)
    assert np.abs(x[x[:, 2] < 1e-6, 2]).max() <= 1e-12  # the bottom face is on the ground
    assert world.last_step["contacts"] == 9  # its 3 x 3 vertices
    assert np.abs(v).max() < 1e-4  # at rest
    # at rest the ground carries the weight: grad g = M (x - y) / dt^2 + grad E on the held vertices sums to M g
    _, grad = world.energy(q)
    m = world.masses("block")
    held = x[:, 2] < 1e-6
    assert np.isclose(grad.reshape(-1, 3)[held, 2].sum() + m[held].sum() * G, m.sum() * G, rtol=1e-6)


def test_a_ball_bounces_off_the_ground_without_penetrating():
    world = _ball(_world(dt=2e-3, tolerance=1e-8), height=0.06)
    q, v = world.q, world.v
    v = v - 1.0 * np.tile([0.0, 0.0, 1.0], world.nv // 3)
    heights, vz = [], []
    for _ in range(60):
        q, v = world.step(q, v)
        assert q.reshape(-1, 3)[:, 2].min() >= -1e-9
        heights.append(_centre(world, q, "ball")[2])
        vz.append(_centre(world, v, "ball")[2])
    assert min(vz) < -0.9 and max(vz) > 0.2  # it comes down and goes up again
    assert np.argmax(vz) > np.argmin(vz)


def test_a_spinning_ball_keeps_its_momentum_without_friction_and_rolls_with_it():
    speeds = {}
    for mu in (0.0, 0.5):
        world = _ball(_world(friction=mu, dt=5e-3, tolerance=1e-9), height=0.05)
        x = world.q.reshape(-1, 3)
        v = np.cross([0.0, 10.0, 0.0], x - x.mean(axis=0)).ravel()
        q = world.q
        p0 = _centre(world, v, "ball")[:2]
        track = []
        for _ in range(30):
            q, v = world.step(q, v)
            assert q.reshape(-1, 3)[:, 2].min() >= -1e-9
            track.append(_centre(world, v, "ball")[:2] - p0)
        speeds[mu] = np.abs(track).max()
    assert speeds[0.0] < 1e-9  # the ground's forces are normal: no horizontal momentum from them
    assert speeds[0.5] > 0.02  # friction on the spinning contact patch drives the ball


@pytest.mark.parametrize("slope, mu", [(0.3, 0.5), (0.5, 0.3)])
def test_a_block_on_a_slope_sticks_below_mu_and_slides_at_g_sin_minus_mu_cos_above(slope, mu):
    # the ground tilted by `slope` about y, the block tilted with it and resting on it
    normal = (np.sin(slope), 0.0, np.cos(slope))
    world = _block(_world(friction=mu, normal=normal, tolerance=1e-9), youngs_modulus=1e6)
    n = np.array(normal)
    down = np.array([np.cos(slope), 0.0, -np.sin(slope)])  # along the slope, downhill
    q, v = world.q, world.v
    speeds = []
    for _ in range(40):
        q, v = world.step(q, v)
        assert (q.reshape(-1, 3) @ n).min() >= -1e-9
        speeds.append(_centre(world, v, "block") @ down)
    if np.tan(slope) < mu:
        assert abs(speeds[-1]) < world.friction_velocity  # static (IPC's smoothed friction creeps below eps_v)
    else:
        acceleration = (speeds[-1] - speeds[20]) / (19 * world.dt)
        expected = G * (np.sin(slope) - mu * np.cos(slope))
        assert acceleration == pytest.approx(expected, rel=0.03)


def _check_step_gradients(world, q, v, f, rng):
    wq, wv = rng.standard_normal(world.nq), rng.standard_normal(world.nv)

    def loss(q_, v_, f_):
        qn, vn = world.step(q_, v_, f_)
        return wq @ qn + wv @ vn

    g = world.step_vjp(q, v, f, wq, wv)
    n = world.nq // 3
    # q moves along the ground for the vertices touching it (others freely), so the active set stays
    touching = np.abs(q.reshape(-1, 3) @ world._planes[0][0]) < 1e-9
    dq = rng.standard_normal((n, 3))
    dq[touching] -= np.outer(dq[touching] @ world._planes[0][0], world._planes[0][0])
    dq = dq.ravel()
    dv, df = rng.standard_normal(world.nv), rng.standard_normal(world.nv)
    for name, analytic, numeric in (
            ("q", g.q @ dq, difference(lambda t: loss(t, v, f), q, dq)),
            ("v", g.v @ dv, difference(lambda t: loss(q, t, f), v, dv)),
            ("f", g.tau @ df, difference(lambda t: loss(q, v, t), f, df))):
        assert analytic == pytest.approx(numeric, rel=1e-6, abs=1e-9), name
    parameters = world.parameters()
    for i, name in enumerate(parameters.names):
        if name == "contact_stiffness":
            assert g.parameters[i] == 0.0  # the planes' forces do not depend on it
            continue
        value = parameters.values[i]
        h = 1e-5 * max(abs(value), 1e-2)

        def at(t):
            world.set_parameters({name: t})
            out = loss(q, v, f)
            world.set_parameters({name: value})
            return out

        numeric = (at(value + h) - at(value - h)) / (2 * h)
        assert g.parameters[i] == pytest.approx(numeric, rel=1e-6, abs=1e-10), name
    return g


@pytest.mark.parametrize("method", ["newton", "pd"])
@pytest.mark.parametrize("scene", ["sliding", "landing", "slope"])
def test_step_gradients_match_central_differences(method, scene):
    rng = np.random.default_rng(3)
    normal = (0.2, 0.1, 1.0) if scene == "slope" else (0.0, 0.0, 1.0)
    world = _world(friction=0.4, tolerance=1e-13, method=method, normal=normal)
    world = _block(world, cells=1, height=0.002 if scene == "landing" else 0.0)
    q, v = world.q, world.v.reshape(-1, 3)
    v[:] = (0.3, 0.1, -0.5 if scene == "landing" else 0.0)
    v = v.ravel() + 0.01 * rng.standard_normal(world.nv)
    f = 0.1 * rng.standard_normal(world.nv)
    _check_step_gradients(world, q, v, f, rng)
    if scene == "landing":
        assert world.last_step["active_set_iterations"] >= 1
        assert world.last_step["contacts"] == 4
    else:
        assert world.last_step["contacts"] >= 1


def test_step_gradients_agree_with_the_newton_cholesky_baseline():
    rng = np.random.default_rng(5)
    gradients = {}
    for method in ("newton", "newton-cholesky"):
        world = _block(_world(friction=0.4, tolerance=1e-13, method=method), cells=2, height=0.001)
        v = np.tile([0.4, -0.2, -0.3], world.nv // 3)
        a, b = np.random.default_rng(1).standard_normal((2, world.nq))
        gradients[method] = world.step_vjp(world.q, v, None, a, b)
    for field in ("q", "v", "tau", "parameters", "q_next"):
        mine, baseline = getattr(gradients["newton"], field), getattr(gradients["newton-cholesky"], field)
        assert np.allclose(mine, baseline, rtol=1e-7, atol=1e-9 * np.abs(baseline).max()), field


def test_rollout_gradients_match_central_differences():
    check_landing_rollout(_block(_world(friction=0.3, tolerance=1e-13), cells=1, height=0.003))


def test_a_block_pushed_into_a_corner_rests_on_both_planes_with_exact_gradients():
    # the ground and a wall at x = -0.05 (the block's left face): the edge vertices are held on both planes
    world = _world(friction=0.3, tolerance=1e-13)
    world.add_ground(-0.05, normal=(1.0, 0.0, 0.0))
    world = _block(world, cells=1)
    push = np.tile([-0.5, 0.0, 0.0], world.nv // 3) * np.repeat(world.masses("block"), 3)  # towards the wall
    q, v = world.q, world.v
    for _ in range(5):
        q, v = world.step(q, v, push)
        x = q.reshape(-1, 3)
        assert x[:, 2].min() >= -1e-9 and x[:, 0].min() >= -0.05 - 1e-9
    assert world.last_step["contacts"] == 8  # pairs: 4 vertices on the ground, 4 on the wall, 2 of them on both
    rng = np.random.default_rng(4)
    wq, wv = rng.standard_normal((2, world.nq))

    def loss(v_):
        qn, vn = world.step(q, v_, push)
        return wq @ qn + wv @ vn

    g = world.step_vjp(q, v, push, wq, wv)
    d = np.zeros((world.nq // 3, 3))
    d[:, 1] = rng.standard_normal(world.nq // 3)  # along the edge: every pair stays held
    d = d.ravel()
    assert g.v @ d == pytest.approx(difference(loss, v, d), rel=1e-6)


def test_a_rolling_ball_rollout_and_its_gradient_agree_with_the_newton_cholesky_baseline():
    # DiffPD's rolling sphere, coarse: 20 steps spinning on the ground with friction, tolerance 1e-8
    results = {}
    for method in ("newton", "newton-cholesky"):
        world = _ball(_world(friction=0.5, dt=5e-3, tolerance=1e-8, method=method), height=0.05)
        x = world.q.reshape(-1, 3)
        v0 = np.cross([0.0, 10.0, 0.0], x - x.mean(axis=0)).ravel()
        forces = np.zeros((20, world.nv))
        Q, V = world.rollout(world.q, v0, forces)
        assert Q[:, 2::3].min() >= -1e-9
        a = np.random.default_rng(0).standard_normal(world.nq)
        dQ, dV = np.zeros_like(Q), np.zeros_like(V)
        dQ[-1] = a
        results[method] = a @ Q[-1], world.rollout_backward(Q, V, forces, dQ, dV).v
    (loss, grad), (loss_ref, grad_ref) = results["newton"], results["newton-cholesky"]
    assert loss == pytest.approx(loss_ref, rel=1e-8)  # measured: 9e-11
    assert np.abs(grad - grad_ref).max() <= 1e-6 * np.abs(grad_ref).max()  # measured: 9e-9
