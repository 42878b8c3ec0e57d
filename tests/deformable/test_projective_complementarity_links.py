"""The complementarity contact on skeletons' links in projective worlds: a soft vertex touching a link is held on
the link's tangent plane, which moves with the joints, and pushes back on them. A block rests on a sprung plate
without sinking (where the penalty sinks) and loads its joint with its weight, box and capsule fingers press a
block on the ground without entering it, a block sticks to or slides down a tilted plate with friction, and the
gradients of coupled steps and of a rollout match central differences of our own step."""

import numpy as np
import pytest
import trimesh
from complementarity_support import difference
from test_projective_complementarity_obstacles import _check_step_gradients, _table
from test_projective_floating_gradients import H, _pressing_box
from test_projective_floating_gradients import _check as _check_floating
from test_projective_planar import _pressing_puck
from test_projective_skeleton_parameters import _derivative

import rigidiff as rd
from rigidiff._testing import hull_distances

GAP = 1e-9
STIFFNESS, G = 2000.0, 9.81


def _world(model="complementarity", friction=0.0, tolerance=1e-10, method="newton"):
    return rd.World(dt=1e-2, solver="projective", contact_model=model, friction=friction, tolerance=tolerance,
                    method=method, max_iterations=5000)


def _block(world, height=0.0, cells=2, pose=None):
    """A 0.1 x 0.1 x 0.05 block centred over the origin, its bottom `height` above z = 0 (in `pose`'s frame)."""
    mesh = rd.HexMesh.box((0.1, 0.1, 0.05), (cells, cells, cells), origin=(-0.05, -0.05, height))
    world.add_deformable(mesh, rd.ProjectiveMaterial(3e4, 0.3, 1000.0, kind=("corotated", "volume")), name="block",
                         pose=pose)
    return world


def _plate(joint, tilt=0.0, mass=0.5):
    """A 0.4 x 0.4 x 0.02 plate whose top face is z = 0 (turned by `tilt` about x) at the joint's zero."""
    sk = rd.Skeleton("plate")
    plate = rd.Box((0.4, 0.4, 0.02))
    R = rd.Transform((0.0, 0.0, 0.0), rpy=(tilt, 0.0, 0.0)).rotation
    body = sk.add_body("plate", joint, joint_origin=rd.Transform(-0.01 * R[:, 2], rpy=(tilt, 0.0, 0.0)),
                       inertia=rd.Inertia.from_shape(plate, mass=mass))
    body.add_shape(plate)
    return sk


def _spring():
    return rd.PrismaticJoint("lift", axis=(0, 0, 1), damping=20.0, stiffness=STIFFNESS)


def _gap_to_plate(world, q):
    """The block's bottom vertices' heights over the plate's top face (on the prismatic joint along z)."""
    return world.positions(q, "block")[:, 2].min() - q[world.layout("plate").q][0]


def test_a_block_rests_on_a_sprung_plate_on_its_surface_and_loads_the_joint_with_its_weight():
    gaps = {}
    for model in ("complementarity", "penalty"):
        world = _block(_world(model))
        world.add_skeleton(_plate(_spring()))
        q, v = world.q, world.v
        for _ in range(150):
            q, v = world.step(q, v)
        gaps[model] = _gap_to_plate(world, q)
        if model == "complementarity":
            assert world.last_step["contacts"] == 9  # the bottom face's vertices, held
            assert np.abs(v).max() < 1e-8  # at rest
            # Newton's third law: the spring carries the plate and the block, which weighs on it through the holds
            weight = (0.5 + world.masses("block").sum()) * G
            assert -STIFFNESS * q[world.layout("plate").q][0] == pytest.approx(weight, rel=1e-6)
    assert abs(gaps["complementarity"]) <= GAP
    assert gaps["penalty"] < -1e-5


HULL = trimesh.creation.icosphere(subdivisions=1, radius=0.025)  # a convex polytope, 80 faces


def _bottom(shape):
    """The finger's lowest point under its link's origin."""
    return {"box": 0.02, "capsule": 0.015, "sphere": 0.02, "hull": -HULL.vertices[:, 2].min()}[shape]


def test_a_block_on_a_plate_resting_on_its_joint_limit_loads_the_limit_with_both_weights():
    world = _block(_world())
    world.add_skeleton(_plate(rd.PrismaticJoint("lift", axis=(0, 0, 1), damping=20.0, lower=-0.002)))
    world.joint_limits = True
    world.joint_limit_stiffness = 1e4
    q, v = world.q, world.v
    for _ in range(150):
        q, v = world.step(q, v)
    s = q[world.layout("plate").q][0]
    assert abs(_gap_to_plate(world, q)) <= GAP and np.abs(v).max() < 1e-8
    weight = (0.5 + world.masses("block").sum()) * G
    assert 1e4 * (-0.002 - s) == pytest.approx(weight, rel=1e-6)


def test_two_shapes_of_a_link_sharing_a_face_hold_a_vertex_once():
    # (a mesh's convex parts do): the same constraint twice would make the active set degenerate
    world = _block(_world(), height=-1e-4)
    sk = _plate(_spring())
    sk.body("plate").add_shape(rd.Box((0.4, 0.4, 0.02)))
    world.add_skeleton(sk)
    q, v = world.q, world.v
    for _ in range(5):
        q, v = world.step(q, v)
        assert abs(_gap_to_plate(world, q)) <= GAP
    assert world.last_step["contacts"] == 9


def _finger(shape, depth):
    """A finger on a prismatic joint along z over the block's middle: a box 0.06 x 0.06 x 0.04, a capsule lying
    along x (radius 0.015, axis 0.04), a ball (radius 0.02) or a mesh's convex hull (HULL); its bottom `depth` into
    the block's top (z = 0.05) at the joint's zero."""
    sk = rd.Skeleton("finger")
    placement, bottom = rd.Transform(), _bottom(shape)
    if shape == "box":
        link = rd.Box((0.06, 0.06, 0.04))
    elif shape == "sphere":
        link = rd.Sphere(0.02)
    elif shape == "hull":
        link = rd.Mesh(HULL)
    else:
        link, placement = rd.Capsule(0.015, 0.04), rd.Transform(rpy=(0.0, np.pi / 2, 0.0))
    body = sk.add_body("tip", rd.PrismaticJoint("press", axis=(0, 0, 1), damping=5.0),
                       joint_origin=rd.Transform((0.0, 0.0, 0.05 + bottom - depth)),
                       inertia=rd.Inertia.from_shape(link, mass=0.2))
    body.add_shape(link, placement)
    return sk


def _finger_distance(shape, x, centre):
    """Signed distances of points x (k, 3) to the finger centred at `centre`."""
    r = x - centre
    if shape == "sphere":
        return np.linalg.norm(r, axis=1) - 0.02
    if shape == "hull":
        return hull_distances(HULL.vertices, HULL.faces, r)[0]
    if shape == "box":
        excess = np.abs(r) - np.array([0.03, 0.03, 0.02])
        outside = np.linalg.norm(np.maximum(excess, 0.0), axis=1)
        return np.where((excess < 0.0).all(axis=1), excess.max(axis=1), outside)
    r[:, 0] -= np.clip(r[:, 0], -0.02, 0.02)
    return np.linalg.norm(r, axis=1) - 0.015


@pytest.mark.parametrize("shape", ["box", "capsule", "sphere", "hull"])
def test_a_finger_presses_a_block_on_the_ground_without_entering_it(shape):
    world = _block(_world(friction=0.3), cells=4)
    world.add_ground()
    world.add_skeleton(_finger(shape, depth=1e-3))
    press = world.layout("finger")
    q, v, f = world.q, world.v, np.zeros(world.nv)
    f[press.v] = -2.0  # N down (the block weighs 5 N)
    middle = np.linalg.norm(world.positions(q, "block") - (0.0, 0.0, 0.05), axis=1).argmin()  # the top's centre
    bottom = _bottom(shape)
    for _ in range(20):
        q, v = world.step(q, v, f)
        x = world.positions(q, "block")
        centre = np.array([0.0, 0.0, 0.05 + bottom - 1e-3 + q[press.q][0]])
        assert _finger_distance(shape, x, centre).min() >= -GAP
        assert x[:, 2].min() >= -GAP
    assert 0.05 - world.positions(q, "block")[middle, 2] > 1e-3  # pressed in
    assert world.last_step["contacts"] > 9  # on the ground and under the finger


def _slope(friction, tilt=0.3):
    """A block on a plate tilted by `tilt` about x, the plate sprung along its normal."""
    R = rd.Transform((0.0, 0.0, 0.0), rpy=(tilt, 0.0, 0.0)).rotation
    world = _block(_world(friction=friction, tolerance=1e-10), pose=rd.Transform((0.0, 0.0, 0.0), R))
    world.add_skeleton(_plate(rd.PrismaticJoint("lift", axis=(0, 0, 1), damping=50.0, stiffness=1e4), tilt=tilt))
    return world, R


@pytest.mark.parametrize("mu", [0.1, 0.6])
def test_a_block_sticks_on_or_slides_down_a_tilted_plate(mu):
    tilt = 0.3  # tan = 0.309
    world, R = _slope(mu, tilt)
    q, v = world.q, world.v
    T = 15
    for _ in range(T):
        q, v = world.step(q, v)
    down = R[:, 1]  # the slope's direction (its y axis turned up by the tilt: blocks slide towards -y)
    speed = -(v[world.layout("block").v].reshape(-1, 3) @ down).mean()
    normal = (world.positions(q, "block") - q[world.layout("plate").q][0] * R[:, 2]) @ R[:, 2]
    assert normal.min() >= -GAP  # on the plate, which moved along its normal
    if mu > np.tan(tilt):
        assert abs(speed) < 1e-3  # stuck (up to the smoothed friction's creep)
    else:
        expected = G * (np.sin(tilt) - mu * np.cos(tilt)) * T * world.dt
        assert speed == pytest.approx(expected, rel=0.05)


def _hinged_plate():
    """The plate on a revolute joint about x at its edge (y = -0.1), sprung, so that holds turn with it."""
    sk = rd.Skeleton("plate")
    plate = rd.Box((0.2, 0.2, 0.02))
    body = sk.add_body("plate", rd.RevoluteJoint("hinge", axis=(1, 0, 0), damping=0.5, stiffness=20.0),
                       joint_origin=rd.Transform((0.0, -0.1, -0.01)),
                       inertia=rd.Inertia.from_shape(plate, mass=0.5, origin=rd.Transform((0.0, 0.1, 0.0))))
    body.add_shape(plate, rd.Transform((0.0, 0.1, 0.0)))
    return sk


def _hinge_scene(method, friction=0.5):
    """A block 0.2 mm into a hinged plate, a capsule finger 1 mm into its top."""
    world = _block(_world(friction=friction, tolerance=1e-13, method=method), height=-2e-4)
    world.add_skeleton(_hinged_plate())
    world.add_skeleton(_finger("capsule", depth=1e-3))
    q, v, f = world.q, world.v, np.zeros(world.nv)
    rng = np.random.default_rng(3)
    # sliding on both links (slips far from friction's smoothing, whose kink central differences would straddle)
    block = world.layout("block").v
    v[block] = np.tile([0.3, 0.2, 0.0], block.stop // 3) + 0.02 * rng.standard_normal(block.stop)
    v[world.layout("plate").v] = 0.2
    v[world.layout("finger").v] = -0.05
    f[world.layout("block").v] = 0.1 * rng.standard_normal(world.layout("block").v.stop)
    f[world.layout("plate").v] = 0.3
    f[world.layout("finger").v] = -2.0
    return world, q, v, f


@pytest.mark.parametrize("method", ["newton", "pd"])
def test_step_gradients_of_a_block_held_on_a_hinged_plate_under_a_finger(method):
    world, q, v, f = _hinge_scene(method)
    g, loss = _check_step_gradients(world, q, v, f, {})
    assert world.last_step["contacts"] >= 10  # the bottom face on the plate, the top's middle under the finger
    for name in world.parameters().names:
        if "/" in name and world.parameters()[name] > 0.0 or "/com" in name or "/inertia_" in name:
            assert g.parameter(name) == pytest.approx(_derivative(world, loss, name), rel=1e-6,
                                                      abs=1e-6 * np.abs(g.parameters).max()), name
    # the joints' start: the holds' planes and friction's material points turn with the hinge
    wq = np.random.default_rng(0).standard_normal(world.nq)
    g = world.step_vjp(q, v, f, wq, np.zeros(world.nv))
    for joint in ("plate", "finger"):
        d = np.zeros(world.nq)
        d[world.layout(joint).q] = 1.0
        numeric = difference(lambda t: wq @ world.step(t, v, f)[0], q, d, 1e-6)
        assert g.q @ d == pytest.approx(numeric, rel=1e-6), joint


def test_rollout_gradients_of_a_block_landing_on_a_hinged_plate():
    world = _block(_world(friction=0.3, tolerance=1e-13), height=0.002)
    world.add_skeleton(_hinged_plate())
    T = 5
    q0, v0 = world.q, world.v
    v0[world.layout("block").v] = np.tile([0.1, 0.05, -0.3], len(world.masses("block")))
    forces = np.zeros((T, world.nv))
    a = np.random.default_rng(0).standard_normal(world.nq)

    def loss(v_start=v0):
        Q, _ = world.rollout(q0, v_start, forces)
        return a @ Q[-1]

    Q, V = world.rollout(q0, v0, forces)
    assert world.last_step["contacts"] >= 9
    dQ, dV = np.zeros_like(Q), np.zeros_like(V)
    dQ[-1] = a
    g = world.rollout_backward(Q, V, forces, dQ, dV)
    d = np.random.default_rng(1).standard_normal(world.nv)
    block = d[world.layout("block").v].reshape(-1, 3)
    block[:, 2] = 0.0  # horizontal: the landing stays in the same step
    d[world.layout("block").v] = block.ravel()
    assert g.v @ d == pytest.approx(difference(loss, v0, d, 1e-6), rel=1e-6)


def test_step_jacobians_of_a_block_held_on_a_hinged_plate_match_central_differences():
    world, q, v, f = _hinge_scene("newton")
    jac = world.step_jacobians(q, v, f)
    rng = np.random.default_rng(5)
    for name, d, matrix in (("v", rng.standard_normal(world.nv), jac.dq_dv), ("tau", rng.standard_normal(world.nv),
                                                                              jac.dv_dtau)):
        def state(t):
            qn, vn = world.step(q, t, f) if name == "v" else world.step(q, v, t)
            return qn if name == "v" else vn
        numeric = difference(state, v if name == "v" else f, d, 1e-6)
        np.testing.assert_allclose(matrix @ d, numeric, rtol=0, atol=1e-6 * np.abs(numeric).max())


def _pusher(tilt=-0.1):
    """A box on a prismatic joint along x, turned by `tilt` about y, its face through the line 0.5 mm inside the
    block's back (x = -0.05) at z = 0 and reaching below it: the back's bottom edge is held on it and on what the
    block stands on, whose normal is not perpendicular to the face's."""
    sk = rd.Skeleton("pusher")
    box = rd.Box((0.04, 0.12, 0.06))
    turn = rd.Transform(rpy=(0.0, tilt, 0.0))
    R = turn.rotation
    centre = np.array([-0.05 + 5e-4, 0.0, 0.0]) + 0.025 * R[:, 2] - 0.02 * R[:, 0]
    body = sk.add_body("slide", rd.PrismaticJoint("rail", axis=(1, 0, 0), damping=0.5),
                       joint_origin=rd.Transform(centre), inertia=rd.Inertia.from_shape(box, mass=0.5))
    body.add_shape(box, turn)
    return sk


@pytest.mark.parametrize("method", ["newton", "pd"])
def test_step_gradients_of_a_block_pushed_along_a_moving_box_held_on_both(method):
    # the block starts 0.2 mm into the box (held from the start on both sides of any change of the box's height)
    world = _block(_world(friction=0.3, tolerance=1e-13, method=method), height=-2e-4)
    table = _table(world)
    world.set_obstacle_pose(table, world.obstacle_pose(table), velocity=(0.05, -0.02, 0.0, 0.0, 0.0, 0.3))
    world.add_skeleton(_pusher())
    q, v, f = world.q, world.v, np.zeros(world.nv)
    block = world.layout("block")
    v[block.v] = np.tile([0.1, 0.1, 0.0], block.v.stop // 3)  # sliding (no vertex near friction's kink)
    v[world.layout("pusher").v] = 0.6  # catching up with it
    f[world.layout("pusher").v] = 5.0
    _check_step_gradients(world, q, v, f, {table: ("x", "y", "z", "rz")})
    x = world.positions(world.step(q, v, f)[0], "block")
    edge = (np.abs(x[:, 2]) < 1e-12) & (x[:, 0] < -0.04)
    assert np.count_nonzero(edge) == 3 and np.ptp(x[edge, 0]) < 1e-12  # the back's bottom edge held on both
    assert world.last_step["contacts"] >= 9 + 3


@pytest.mark.parametrize("joint, spin", [("free", False), ("free", True), ("planar", False)])
def test_step_gradients_of_a_floating_box_and_a_planar_puck_held_on_a_block(joint, spin):
    """The free box and the planar puck of test_projective_floating_gradients.py and test_projective_planar.py,
    1.5 mm into a soft block, under the complementarity: the block's top vertices are held on them (the unknown is
    the joints' displacement in the step's chart); spinning, the box turns by 0.09 rad in the step. q is moved as
    q (+) e."""
    world, q, v, f = (_pressing_box if joint == "free" else _pressing_puck)(0.4)
    name = "box" if joint == "free" else "puck"
    if spin:
        v[world.layout(name).v] = [0.2, -0.1, -0.05, 3.0, -4.0, 8.0]
    world.contact_model = "complementarity"
    world.tolerance = 1e-13
    world.step(q, v, f)
    assert world.last_step["contacts"] >= 4  # the top's vertices under the box, held
    s = world.layout(name)
    vertices = np.random.default_rng(1).choice(s.v.start, 6, replace=False)
    _, worst = _check_floating(world, q, v, f, list(range(s.v.start, s.v.stop)) + list(vertices), parameters=(
        ("friction", lambda t: setattr(world, "friction", t), 0.4, H),))
    assert worst < 1e-6


def test_a_link_turning_too_fast_for_its_planes_raises_naming_the_holds():
    # 0.9 rad in a step: the planes, moved to first order, cannot follow the box's faces and the set cycles
    world, q, v, f = _pressing_box(0.4)
    v[world.layout("box").v] = [0.2, -0.1, -0.05, 30.0, -40.0, 80.0]
    world.contact_model = "complementarity"
    with pytest.raises(RuntimeError, match=r"did not settle: it came back to a set it had held after \d+ changes \("
                                           r"\d+ vertices held on planes, balls or boxes, \d+ on links\); "
                                           r"contact_model=\"penalty\" has no active set"):
        world.step(q, v, f)
