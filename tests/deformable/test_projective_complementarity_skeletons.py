"""The complementarity contact in projective worlds with skeletons: the soft bodies' surface vertices are held on
the ground planes, balls and boxes by the active set, and on the links (test_projective_complementarity_links.py),
while the links keep their penalty contact with the obstacles and each other. An arm lying on a soft block presses it on the ground without the block entering it
(where the penalty's sinks in), a prismatic pusher shoves a block along a box's top face, and the gradients of
coupled steps (the vertices' and joints' state, the forces and joint forces, every parameter, the box's pose) and
of a rollout match central differences of our own step."""

import numpy as np
import pytest
from complementarity_support import difference
from test_projective_complementarity_obstacles import GAP, _box_distance, _check_step_gradients, _table, _world
from test_projective_skeleton_parameters import _derivative
from test_projective_skeletons import _arm, _arm_start

import rigidiff as rd


def _block(world, height=0.0):
    """The 0.1 x 0.1 x 0.05 block of test_projective_skeletons.py, standing on z = 0 (`height` above)."""
    mesh = rd.HexMesh.box((0.1, 0.1, 0.05), (2, 2, 2), origin=(0.0, 0.0, height))
    world.add_deformable(mesh, rd.ProjectiveMaterial(3e4, 0.3, 1000.0, kind=("corotated", "volume")), name="block")
    return world


def _on_the_top(world, q):
    """tangent(dq) that keeps the block's vertices touching z = 0 on it (their vertical component removed)."""
    layout = world.layout("block")
    touching = np.abs(q[layout.q].reshape(-1, 3)[:, 2]) < 1e-9

    def tangent(dq):
        dq = dq.copy()
        block = dq[layout.v].reshape(-1, 3)
        block[touching, 2] = 0.0
        dq[layout.v] = block.ravel()
        return dq
    return tangent


def test_skeletons_are_accepted_under_the_complementarity():
    world = _block(_world())
    world.add_skeleton(_arm())
    assert world.contact_model == "complementarity"
    penalty = _block(rd.World(dt=1e-2, solver="projective"))
    penalty.add_skeleton(_arm())
    penalty.contact_model = "complementarity"  # either order
    assert penalty.contact_model == "complementarity"


def test_an_arm_presses_a_block_on_the_ground_without_it_entering_where_the_penalty_sinks_in():
    lowest = {}
    for model in ("complementarity", "penalty"):
        world = _block(_world(friction=0.5, model=model, tolerance=1e-9))
        world.add_ground()
        world.add_skeleton(_arm())
        q, v, _ = _arm_start(world)
        v[:] = 0.0
        v[world.layout("arm").v] = (0.5, -0.3)  # the shoulder turning down into the block, the wrist swinging
        lowest[model] = np.inf
        for _ in range(30):
            q, v = world.step(q, v)
            lowest[model] = min(lowest[model], world.positions(q, "block")[:, 2].min())
        if model == "complementarity":
            assert world.last_step["contacts"] > 9  # the bottom face's vertices held, and the links' contacts
    assert lowest["complementarity"] >= -GAP
    assert lowest["penalty"] < -1e-5


def _rail():
    """A box on a prismatic joint along x, its face just inside the block's back (x = 0) above the ground."""
    sk = rd.Skeleton("pusher")
    box = rd.Box((0.04, 0.06, 0.04))
    body = sk.add_body("slide", rd.PrismaticJoint("rail", axis=(1, 0, 0), damping=0.5),
                       joint_origin=rd.Transform((0.0005 - 0.02, 0.05, 0.03)),
                       inertia=rd.Inertia.from_shape(box, mass=0.5))
    body.add_shape(box)
    return sk


def test_a_prismatic_pusher_shoves_a_block_along_a_box_face():
    world = _block(_world(friction=0.3, tolerance=1e-9))
    table = _table(world, size=(1.0, 1.0, 0.1))
    world.add_skeleton(_rail())
    rail = world.layout("pusher").v
    q, v = world.q, world.v
    start = world.positions(q, "block")[:, 0].mean()
    f = np.zeros(world.nv)
    f[rail] = 5.0  # N along x
    for _ in range(30):
        q, v = world.step(q, v, f)
        assert _box_distance(world, table, world.positions(q, "block")).min() >= -GAP
    assert world.positions(q, "block")[:, 0].mean() - start > 0.02
    assert world.last_step["contacts"] > 9  # the bottom face's 9 vertices held, and the pusher's contacts


@pytest.mark.parametrize("method", ["newton", "pd"])
def test_step_gradients_of_an_arm_on_a_block_on_a_moving_box(method):
    world = _block(_world(friction=0.5, tolerance=1e-13, method=method))
    table = _table(world)
    world.set_obstacle_pose(table, world.obstacle_pose(table), velocity=(0.05, -0.02, 0.0, 0.0, 0.0, 0.3))
    world.add_skeleton(_arm())
    q, v, f = _arm_start(world)
    block = world.layout("block").v
    bottom = np.abs(q[world.layout("block").q].reshape(-1, 3)[:, 2]) < 1e-9
    vb = v[block].reshape(-1, 3)
    vb[bottom, 2] = 0.0  # the held vertices stay on the face
    v[block] = vb.ravel()
    g, loss = _check_step_gradients(world, q, v, f, {table: ("x", "y", "rz")}, _on_the_top(world, q), seed=4)
    assert world.last_step["contacts"] >= 11  # 9 held, and the capsule and the ball on the block
    for name in world.parameters().names:
        if "/" in name and world.parameters()[name] > 0.0 or "/com" in name or "/inertia_" in name:
            # the skeleton's inertial and joint parameters (the zero coefficients of a joint cannot go below 0)
            assert g.parameter(name) == pytest.approx(_derivative(world, loss, name), rel=1e-6,
                                                      abs=1e-6 * np.abs(g.parameters).max()), name


def test_rollout_gradients_of_a_pusher_and_a_block_landing_on_the_ground():
    world = _block(_world(friction=0.3, tolerance=1e-13), height=0.002)
    world.add_ground()
    world.add_skeleton(_rail())
    T = 5
    rail = world.layout("pusher").v
    q0, v0 = world.q, world.v
    v0[world.layout("block").v] = np.tile([0.1, 0.0, -0.3], len(world.masses("block")))
    forces = np.zeros((T, world.nv))
    forces[:, rail] = 3.0
    a = np.random.default_rng(0).standard_normal(world.nv)

    def loss(v_start=v0):
        Q, _ = world.rollout(q0, v_start, forces)
        return a @ Q[-1]

    Q, V = world.rollout(q0, v0, forces)
    assert Q[1:, world.layout("block").q][:, 2::3].min() >= -GAP
    dQ, dV = np.zeros_like(Q), np.zeros_like(V)
    dQ[-1] = a
    g = world.rollout_backward(Q, V, forces, dQ, dV)
    d = np.random.default_rng(1).standard_normal(world.nv)
    d[world.layout("block").v][2::3] = 0.0
    block = d[world.layout("block").v].reshape(-1, 3)
    block[:, 2] = 0.0  # horizontal: the landing stays the same
    d[world.layout("block").v] = block.ravel()
    assert g.v @ d == pytest.approx(difference(loss, v0, d, 1e-6), rel=1e-6)


@pytest.mark.parametrize("method", ["newton", "pd"])
def test_step_gradients_of_an_arm_on_a_block_landing_on_a_tilted_moving_box(method):
    # the block lands during the step: the planes it is held on depend on the box's pose (all six components)
    world = _block(_world(friction=0.5, tolerance=1e-13, method=method))
    table = _table(world, (0.02, 0.01, 1.0))
    pose = world.obstacle_pose(table)  # lowered 2 mm under the block
    world.set_obstacle_pose(table, rd.Transform(pose.translation - (0, 0, 0.002), pose.rotation),
                            velocity=(0.0, 0.05, 0.1, 0.2, -0.1, 0.3))
    world.add_skeleton(_arm())
    q, v, f = _arm_start(world)
    v[world.layout("block").v] += np.tile([0.1, 0.0, -0.5], len(world.masses("block")))
    # (friction's gradient is 1e-3 here, against solutions 1e-12 m apart: the parameters' steps are 1e-3, and
    # their differences agree to 1e-6 or 1e-8)
    _check_step_gradients(world, q, v, f, {table: ("x", "y", "z", "rx", "ry", "rz")}, seed=5, relative_step=1e-3,
                          parameter_abs=1e-8)
    assert world.last_step["active_set_iterations"] >= 1
    assert world.last_step["contacts"] >= 9
