"""DiffPD's complementarity contact on balls and boxes in a projective world (contact_model="complementarity"): a
vertex touching one is held on its tangent plane at the point nearest where the vertex slides to from its start. A
block rests on a box's top face carrying its weight, one dropped on a fixed ball stays outside it (where the
penalty's sinks in), a block on a tilted box sticks below mu and slides at g (sin - mu cos) above, a moving box
pushes a block along the ground with its face exactly on the box's, and the gradients of steps (the state, the forces, the materials, mu, the
obstacles' poses) and of a rollout match central differences of our own step and the Newton-Cholesky baseline."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rigidiff as rd
from complementarity_support import check_landing_rollout, difference

G = 9.81
GAP = 1e-9  # the contact gap: no vertex ends a step deeper than this inside an obstacle


def _world(friction=0.0, tolerance=1e-10, method="newton", dt=1e-2, model="complementarity"):
    return rd.World(dt=dt, solver="projective", contact_model=model, friction=friction, tolerance=tolerance,
                    method=method, max_iterations=5000)


def _tilt(normal):
    """The rotation taking z to the unit normal (about their common perpendicular)."""
    n = np.asarray(normal, dtype=float) / np.linalg.norm(normal)
    axis = np.cross([0.0, 0.0, 1.0], n)
    if np.linalg.norm(axis) == 0.0:
        return np.eye(3)
    return Rotation.from_rotvec(axis / np.linalg.norm(axis) * np.arccos(n[2])).as_matrix()


def _table(world, normal=(0.0, 0.0, 1.0), size=(0.4, 0.4, 0.1)):
    """A box whose top face passes through the origin with the given normal; returns its name."""
    R = _tilt(normal)
    return world.add_box(size, rd.Transform(-size[2] / 2 * R[:, 2], R), name="table")


def _block(world, cells=2, size=0.1, height=0.0, normal=(0.0, 0.0, 1.0), youngs_modulus=1e5, centre=(0.0, 0.0)):
    """A block of cells^3 hexahedra standing on the plane through the origin with this normal, `height` above."""
    mesh = rd.HexMesh.box((size, size, size), (cells, cells, cells),
                          origin=(centre[0] - size / 2, centre[1] - size / 2, 0.0))
    R = _tilt(normal)
    world.add_deformable(mesh, rd.ProjectiveMaterial(youngs_modulus, 0.3, 1000.0, kind=("corotated", "volume")),
                         name="block", pose=rd.Transform(height * R[:, 2], R))
    return world


def _box_distance(world, name, x):
    """Signed distances (k,) of points x (k, 3) to a box obstacle (negative inside)."""
    pose = world.obstacle_pose(name)
    half = world._obstacles[name][2] / 2
    local = (x - pose.translation) @ pose.rotation
    excess = np.abs(local) - half
    outside = np.linalg.norm(np.maximum(excess, 0.0), axis=1)
    return np.where((excess < 0.0).all(axis=1), excess.max(axis=1), outside)


def _ball_distance(world, name, x):
    pose = world.obstacle_pose(name)
    return np.linalg.norm(x - pose.translation, axis=1) - world._obstacles[name][2]


def _centre(world, x, name="block"):
    m = world.masses(name)
    return m @ x.reshape(-1, 3)[: len(m)] / m.sum()


def test_a_block_rests_on_a_box_carrying_its_weight_outside_it():
    world = _world()
    table = _table(world)
    world = _block(world, height=0.005)
    q, v = world.q, world.v
    for _ in range(80):
        q, v = world.step(q, v)
        assert _box_distance(world, table, q.reshape(-1, 3)).min() >= -GAP
    x = q.reshape(-1, 3)
    held = np.abs(x[:, 2]) <= GAP
    assert held.sum() == 9 and world.last_step["contacts"] == 9  # the bottom face's 3 x 3 vertices, on the face
    assert np.abs(v).max() < 1e-4  # at rest
    # at rest the face carries the weight: grad g = M (x - y) / dt^2 + grad E on the held vertices sums to M g
    _, grad = world.energy(q)
    m = world.masses("block")
    assert grad.reshape(-1, 3)[held, 2].sum() + m[held].sum() * G == pytest.approx(m.sum() * G, rel=1e-6)


def test_a_block_dropped_on_a_fixed_ball_stays_outside_it_where_the_penalty_sinks_in():
    lowest = {}
    for model in ("complementarity", "penalty"):
        world = _world(model=model)
        ball = world.add_sphere((0.0, 0.0, -0.05), 0.05, name="ball")  # its top at the origin
        world = _block(world, height=0.01)
        q, v = world.q, world.v
        lowest[model] = np.inf
        for _ in range(40):
            q, v = world.step(q, v)
            lowest[model] = min(lowest[model], _ball_distance(world, ball, q.reshape(-1, 3)).min())
        if model == "complementarity":
            assert world.last_step["contacts"] >= 1  # resting on the ball's top
    assert lowest["complementarity"] >= -GAP
    assert lowest["penalty"] < -1e-4  # its weight over k, for comparison


@pytest.mark.parametrize("slope, mu", [(0.3, 0.5), (0.5, 0.3)])
def test_a_block_on_a_tilted_box_sticks_below_mu_and_slides_at_g_sin_minus_mu_cos_above(slope, mu):
    normal = (np.sin(slope), 0.0, np.cos(slope))
    world = _world(friction=mu, tolerance=1e-9)
    table = _table(world, normal, size=(2.0, 1.0, 0.1))
    world = _block(world, normal=normal, youngs_modulus=1e6)
    down = np.array([np.cos(slope), 0.0, -np.sin(slope)])  # along the face, downhill
    q, v = world.q, world.v
    speeds = []
    for _ in range(40):
        q, v = world.step(q, v)
        assert _box_distance(world, table, q.reshape(-1, 3)).min() >= -GAP
        speeds.append(_centre(world, v) @ down)
    if np.tan(slope) < mu:
        assert abs(speeds[-1]) < world.friction_velocity  # static (IPC's smoothed friction creeps below eps_v)
    else:
        acceleration = (speeds[-1] - speeds[20]) / (19 * world.dt)
        assert acceleration == pytest.approx(G * (np.sin(slope) - mu * np.cos(slope)), rel=0.03)


def test_a_moving_box_pushes_a_block_along_the_ground_with_its_face_on_the_box():
    world = _world(friction=0.3, tolerance=1e-8)
    world.add_ground()
    mesh = rd.HexMesh.box((0.1, 0.05, 0.05), (2, 1, 1))
    world.add_deformable(mesh, rd.ProjectiveMaterial(2e4, 0.3, 1000.0, kind=("corotated", "volume")), name="block")
    # the pusher reaches below the ground, so that it meets the block's bottom edge too; it starts 5 mm away
    speed, start = 0.2, np.array([-0.025, 0.025, 0.04])
    pusher = world.add_box((0.04, 0.1, 0.1), rd.Transform(start))
    q, v = world.q, world.v
    first = world.positions(q, "block")[:, 0].mean()
    for t in range(60):  # moved at 0.2 m/s along x: the pose at the step's start and the velocity over it
        world.set_obstacle_pose(pusher, rd.Transform(start + [speed * world.dt * t, 0, 0]),
                                velocity=(speed, 0, 0, 0, 0, 0))
        q, v = world.step(q, v)
        world.set_obstacle_pose(pusher, rd.Transform(start + [speed * world.dt * (t + 1), 0, 0]))
        x = world.positions(q, "block")
        assert _box_distance(world, pusher, x).min() >= -GAP  # outside the box where it is at the step's end
        assert x[:, 2].min() >= -GAP
    travel = speed * world.dt * 60
    assert world.positions(q, "block")[:, 0].mean() - first == pytest.approx(travel - 0.005, abs=2e-3)
    face = world.obstacle_pose(pusher).translation[0] + 0.02
    assert world.positions(q, "block")[:, 0].min() == pytest.approx(face, abs=1e-9)  # held on the box's face
    assert abs(world.positions(q, "block")[:, 1].mean() - 0.025) < 1e-3  # straight along x


# ---------------------------------------------------------------------------------------------------- gradients

_COMPONENTS = ("x", "y", "z", "rx", "ry", "rz")


def _direction(component):
    """A pose direction (6,: translation, rotation about the obstacle's origin in world axes) from a component's
    name or the direction itself."""
    if isinstance(component, str):
        return np.eye(6)[_COMPONENTS.index(component)]
    return np.asarray(component, dtype=float)


def _moved(pose, component, h):
    d = h * _direction(component)
    return rd.Transform(pose.translation + d[:3], Rotation.from_rotvec(d[3:]).as_matrix() @ pose.rotation)


def _check_step_gradients(world, q, v, f, poses, tangent=None, seed=0, relative_step=1e-5, pose_step=1e-5,
                          parameter_abs=1e-10):
    """The step's gradients against central differences: q (moved by tangent(dq) so that the vertices touching
    at the start keep touching), v, f, every parameter but the skeletons' own (its step relative_step of its
    value, to 1e-6 relative or parameter_abs; the contact stiffness's gradient zero without skeletons, whose links
    keep the penalty), and the listed
    pose components or directions {obstacle: components}. Returns the gradients and the loss."""
    rng = np.random.default_rng(seed)
    wq, wv = rng.standard_normal(world.nq), rng.standard_normal(world.nv)

    def loss(q_=q, v_=v, f_=f):
        qn, vn = world.step(q_, v_, f_)
        return wq @ qn + wv @ vn

    g = world.step_vjp(q, v, f, wq, wv)
    dq = rng.standard_normal(world.nv)
    dq = tangent(dq) if tangent else dq
    dv, df = rng.standard_normal(world.nv), rng.standard_normal(world.nv)
    for name, analytic, numeric in (
            # (steps of 1e-6: friction's third derivatives make 1e-5's central differences up to 2e-6 off, on a
            # plane as much)
            ("q", g.q @ dq, difference(lambda t: loss(q_=t), q, dq, 1e-6)),
            ("v", g.v @ dv, difference(lambda t: loss(v_=t), v, dv, 1e-6)),
            ("f", g.tau @ df, difference(lambda t: loss(f_=t), f, df, 1e-6))):
        assert analytic == pytest.approx(numeric, rel=1e-6, abs=1e-9), name
    parameters = world.parameters()
    for i, name in enumerate(parameters.names):
        if "/" in name:  # a skeleton's own: scaled differences in test_projective_complementarity_skeletons.py
            continue
        if name == "contact_stiffness" and not world._skeletons:
            assert g.parameter(name) == 0.0  # the complementarity's forces do not depend on it
            continue
        value = parameters.values[i]
        h = relative_step * (max(abs(value), 1e-2) if value else 1.0)  # (a centre of mass at 0: 1e-5 m)

        def at(t):
            world.set_parameters({name: t})
            out = loss()
            world.set_parameters({name: value})
            return out

        numeric = (at(value + h) - at(value - h)) / (2 * h)
        assert g.parameter(name) == pytest.approx(numeric, rel=1e-6, abs=parameter_abs), name
    for obstacle, components in poses.items():
        pose, velocity = world.obstacle_pose(obstacle), world.obstacle_velocity(obstacle)
        names = [f"pose:{obstacle}:{c}" for c in _COMPONENTS]
        gradient = np.array([g.parameter(k) if k in g.parameter_names else 0.0 for k in names])
        for c in components:
            values = []
            for sign in (1, -1):
                world.set_obstacle_pose(obstacle, _moved(pose, c, sign * pose_step), velocity)
                values.append(loss())
            world.set_obstacle_pose(obstacle, pose, velocity)
            numeric = (values[0] - values[1]) / (2 * pose_step)
            # (a direction along a tilted face is a near cancellation of its components: relative to those)
            scale = np.abs(gradient) @ np.abs(_direction(c))
            assert gradient @ _direction(c) == pytest.approx(numeric, rel=1e-6, abs=1e-8 * scale), (obstacle, c)
    return g, loss


def _along_the_top(world, q):
    """Removes the vertical component of dq at the vertices on the table's top face (z = 0)."""
    touching = np.abs(q.reshape(-1, 3)[:, 2]) < 1e-9

    def tangent(dq):
        dq = dq.reshape(-1, 3).copy()
        dq[touching, 2] = 0.0
        return dq.ravel()
    return tangent


@pytest.mark.parametrize("method", ["newton", "pd"])
def test_step_gradients_of_a_block_sliding_on_a_moving_box(method):
    # a block sliding with friction on a box's top face, the box moving under it: the poses along the face
    world = _world(friction=0.4, tolerance=1e-13, method=method)
    table = _table(world)
    world.set_obstacle_pose(table, world.obstacle_pose(table), velocity=(0.05, -0.02, 0.0, 0.0, 0.0, 0.3))
    world = _block(world, cells=1)
    rng = np.random.default_rng(3)
    q = world.q
    v = (np.tile([0.3, 0.1, 0.0], world.nv // 3) + 0.01 * rng.standard_normal(world.nv)).reshape(-1, 3)
    v[np.abs(q.reshape(-1, 3)[:, 2]) < 1e-9, 2] = 0.0  # the held vertices stay on the face
    f = 0.1 * rng.standard_normal(world.nv)
    _check_step_gradients(world, q, v.ravel(), f, {table: ("x", "y", "rz")}, _along_the_top(world, q))
    assert world.last_step["contacts"] == 4


@pytest.mark.parametrize("method", ["newton", "pd"])
def test_step_gradients_of_a_block_landing_on_a_tilted_moving_box(method):
    normal = (0.2, 0.1, 1.0)
    world = _world(friction=0.4, tolerance=1e-13, method=method)
    table = _table(world, normal)
    world.set_obstacle_pose(table, world.obstacle_pose(table), velocity=(0.0, 0.05, 0.1, 0.2, -0.1, 0.3))
    world = _block(world, cells=1, height=0.002, normal=normal)
    rng = np.random.default_rng(4)
    v = np.tile([0.3, 0.1, -0.5], world.nv // 3) + 0.01 * rng.standard_normal(world.nv)
    f = 0.1 * rng.standard_normal(world.nv)
    _check_step_gradients(world, world.q, v, f, {table: _COMPONENTS}, seed=1)
    assert world.last_step["active_set_iterations"] >= 1
    assert world.last_step["contacts"] == 4


@pytest.mark.parametrize("method", ["newton", "pd"])
def test_step_gradients_of_a_block_landing_on_a_ball(method):
    world = _world(friction=0.4, tolerance=1e-13, method=method)
    ball = world.add_sphere((0.003, 0.002, -0.1), 0.1, name="ball")
    world = _block(world, cells=1, size=0.04, height=0.001)
    rng = np.random.default_rng(5)
    v = np.tile([0.2, 0.1, -0.8], world.nv // 3) + 0.01 * rng.standard_normal(world.nv)
    f = 0.1 * rng.standard_normal(world.nv)
    _check_step_gradients(world, world.q, v, f, {ball: ("x", "y", "z")}, seed=2)
    assert world.last_step["active_set_iterations"] >= 1
    assert world.last_step["contacts"] >= 2


@pytest.mark.parametrize("method", ["newton", "pd"])
def test_step_gradients_of_blocks_sliding_with_friction_on_a_tilted_box_and_a_ball(method):
    # touching at the start, so that friction's normal forces, the pushes holding them there, and its normals
    # depend on the poses: moved along the face (its plane stays) and about its normal, and the ball sideways
    # (its top vertex's gap changes by 1e-6^2 / (2 r))
    normal = np.array([0.2, 0.1, 1.0]) / np.linalg.norm([0.2, 0.1, 1.0])
    world = _world(friction=0.4, tolerance=1e-13, method=method)
    table = _table(world, normal)
    world.set_obstacle_pose(table, world.obstacle_pose(table), velocity=(0.1, 0.0, 0.0, 0.0, 0.0, 0.2))
    world = _block(world, cells=1, normal=normal)
    ball = world.add_sphere((0.3, 0.0, -0.1), 0.1, name="ball")
    mesh = rd.HexMesh.box((0.04, 0.04, 0.04), (2, 2, 2), origin=(0.28, -0.02, 0.0))
    # (as heavy as the block: the step's tolerance has a floor of rounding relative to |M y| / dt^2, the light
    # body's solution would be 1e-12 m noisy, too much for the differences)
    world.add_deformable(mesh, rd.ProjectiveMaterial(5e5, 0.3, 1e4, kind=("corotated", "volume")), name="small")
    q = world.q
    x = q.reshape(-1, 3)
    on_table = np.abs(x @ normal) < 1e-9
    on_ball = np.abs(_ball_distance(world, ball, x)) < 1e-9
    assert on_table.sum() == 4 and on_ball.sum() == 1
    rng = np.random.default_rng(6)
    v = np.tile([0.3, 0.1, 0.0], world.nv // 3).reshape(-1, 3)
    v[on_table] -= np.outer(v[on_table] @ normal, normal)

    def tangent(dq):
        dq = dq.reshape(-1, 3).copy()
        dq[on_table] -= np.outer(dq[on_table] @ normal, normal)
        dq[on_ball] = 0.0  # (the ball's top vertex keeps its start: moved along the ball, its gap would change)
        return dq.ravel()

    t1 = np.cross(normal, [0.0, 1.0, 0.0])
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(normal, t1)
    # a turn about the face's normal through the box's origin keeps the face's plane
    directions = [np.r_[t1, 0, 0, 0], np.r_[t2, 0, 0, 0], np.r_[0, 0, 0, normal]]
    f = 0.1 * rng.standard_normal(world.nv)
    f.reshape(-1, 3)[on_ball] = (5.0, -3.0, -5.0)  # pressed on the ball and sideways: friction's lambda turns with n
    _check_step_gradients(world, q, v.ravel(), f, {table: directions, ball: ("x", "y")}, tangent, seed=3)
    assert world.last_step["contacts"] >= 5


def test_step_gradients_agree_with_the_newton_cholesky_baseline():
    gradients = {}
    for method in ("newton", "newton-cholesky"):
        world = _world(friction=0.4, tolerance=1e-13, method=method)
        table = _table(world, (0.1, -0.2, 1.0))
        world.set_obstacle_pose(table, world.obstacle_pose(table), velocity=(0.1, 0.0, 0.0, 0.0, 0.0, 0.2))
        world.add_sphere((0.3, 0.0, -0.05), 0.1, name="ball")
        world = _block(world, cells=2, height=0.001, normal=(0.1, -0.2, 1.0))
        v = np.tile([0.4, -0.2, -0.3], world.nv // 3)
        a, b = np.random.default_rng(1).standard_normal((2, world.nq))
        gradients[method] = world.step_vjp(world.q, v, None, a, b)
        assert world.last_step["contacts"] >= 4
    for field in ("q", "v", "tau", "parameters", "q_next"):
        mine, baseline = getattr(gradients["newton"], field), getattr(gradients["newton-cholesky"], field)
        assert np.allclose(mine, baseline, rtol=1e-7, atol=1e-9 * np.abs(baseline).max()), field


def test_rollout_gradients_of_a_block_landing_and_sliding_on_a_box_match_central_differences():
    world = _world(friction=0.3, tolerance=1e-13)
    table = _table(world)
    g, loss = check_landing_rollout(_block(world, cells=1, height=0.003))
    pose = world.obstacle_pose(table)
    for c in ("x", "y", "rz"):  # along the face: the same vertices touch it
        values = []
        for sign in (1, -1):
            world.set_obstacle_pose(table, _moved(pose, c, sign * 1e-6))
            values.append(loss())
        world.set_obstacle_pose(table, pose)
        assert g.parameter(f"pose:{table}:{c}") == pytest.approx((values[0] - values[1]) / 2e-6, rel=1e-6), c


def test_a_vertex_held_by_two_parallel_surfaces_is_a_clear_error():
    # the ground and a box's top face both at z = 0: the block's bottom vertices touch both, along the same normal
    world = _world()
    world.add_ground()
    _table(world)
    world = _block(world)
    with pytest.raises(RuntimeError, match="held on two obstacles .* whose normals there are parallel"):
        world.step(world.q, world.v)
