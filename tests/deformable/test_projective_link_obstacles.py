"""The links of a projective world's skeletons against its ground, balls and boxes: a foot resting at the penalty
depth, a flat box sharing its weight between its corners, Coulomb friction on the ground and from a moving box,
an arm stopped by a ball, and the gradients of steps against central differences of our own step for every pair of
geometries, in contact (with friction) and out of it (capsule, box and mesh links on boxes are in
test_projective_links_on_boxes.py)."""

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation
from test_projective_obstacles import _attribute_difference, _friction_switched_on, _pose_differences

import rigidiff as rd
from rigidiff.deformable.link_hulls import CYLINDER_SECTIONS

K = 1e4  # N/m, the contact stiffness
G = 9.81


def _world(ground=True, friction=0.0, gravity=(0.0, 0.0, -G), tolerance=1e-12):
    """A world with a one-element soft cube standing on four fixed vertices far from the links (a projective world
    needs a deformable body) and, if asked, the ground."""
    world = rd.World(dt=1e-2, solver="projective", tolerance=tolerance, max_iterations=5000, friction=friction,
                     gravity=gravity, contact_stiffness=K)
    if ground:
        world.add_ground()
    mesh = rd.HexMesh.box((0.02, 0.02, 0.02), (1, 1, 1), origin=(1.0, 1.0, 0.001))
    world.add_deformable(mesh, rd.ProjectiveMaterial(3e4, 0.3, 1000.0), name="cube", fixed=[0, 1, 2, 3])
    return world


def _shape_pose(shape):
    """A capsule lies along x; other shapes keep their frame."""
    return rd.Transform(rpy=(0.0, np.pi / 2, 0.0)) if isinstance(shape, rd.Capsule) else rd.Transform()


def _foot(shape, height, mass=0.5):
    """A shape on a vertical prismatic joint whose zero is `height`."""
    sk = rd.Skeleton("foot")
    body = sk.add_body("foot", rd.PrismaticJoint("lift", axis=(0, 0, 1)), joint_origin=rd.Transform((0, 0, height)),
                       inertia=rd.Inertia.from_shape(shape, mass=mass))
    body.add_shape(shape, _shape_pose(shape))
    return sk


FEET = {"sphere": (rd.Sphere(0.03), 0.03, 1), "box": (rd.Box((0.04, 0.06, 0.02)), 0.01, 4),
        "capsule": (rd.Capsule(0.02, 0.08), 0.02, 2),
        # a cylinder rests on the corners of its inscribed prism's bottom rim, a box mesh on its hull's 4 corners
        "cylinder": (rd.Cylinder(0.03, 0.04), 0.02, CYLINDER_SECTIONS),
        "mesh box": (rd.Mesh(trimesh.creation.box((0.08, 0.06, 0.02))), 0.01, 4),
        }  # shape, its bottom below its centre, contact points


@pytest.mark.parametrize("kind", list(FEET))
def test_a_dropped_foot_rests_at_the_penalty_depth(kind):
    shape, bottom, points = FEET[kind]
    m = 0.5
    world = _world()
    world.add_skeleton(_foot(shape, 0.1, m))
    s = world.layout("foot")
    q, v = world.q, world.v
    for _ in range(300):
        q, v = world.step(q, v)
    depth = -(0.1 + q[s.q][0] - bottom)
    assert depth == pytest.approx(m * G / (K * points), rel=1e-6)
    assert abs(v[s.v][0]) < 1e-9
    # without the ground it falls through
    world = _world(ground=False)
    world.add_skeleton(_foot(shape, 0.1, m))
    q, v = world.q, world.v
    for _ in range(30):
        q, v = world.step(q, v)
    assert 0.1 + q[s.q][0] - bottom < -0.3


def _tilting_box(mass=0.6, height=0.011):
    """A box on a translational joint and two revolute joints (about x, then y) at its centre, so it may slide and
    tilt; its bottom 1 mm above the ground."""
    sk = rd.Skeleton("slab")
    light = rd.Inertia.from_shape(rd.Sphere(0.01), mass=1e-3)
    base = sk.add_body("base", rd.TranslationalJoint("move", damping=0.5),
                       joint_origin=rd.Transform((0.0, 0.0, height)), inertia=light)
    roll = sk.add_body("roll", rd.RevoluteJoint("rx", axis=(1, 0, 0), damping=0.05), parent=base, inertia=light)
    box = rd.Box((0.08, 0.06, 0.02))
    body = sk.add_body("box", rd.RevoluteJoint("ry", axis=(0, 1, 0), damping=0.05), parent=roll,
                       inertia=rd.Inertia.from_shape(box, mass=mass - 2e-3))
    body.add_shape(box)
    return sk


@pytest.mark.parametrize("support", ["ground", "box"])
def test_a_flat_box_carries_a_quarter_of_its_weight_on_each_corner_and_does_not_tilt(support):
    """On the ground, or on a box obstacle whose top is where the ground was (a stair: the link's corners are probed
    in the box's field)."""
    world = _world(ground=support == "ground")
    if support == "box":
        world.add_box((0.3, 0.3, 0.05), rd.Transform((0.0, 0.0, -0.025)))
    world.add_skeleton(_tilting_box())
    s = world.layout("slab")
    q, v = world.q, world.v
    q[s.q] = (0.0, 0.0, 0.0, 0.01, -0.015)  # dropped a little tilted: the corners right it
    for _ in range(400):
        q, v = world.step(q, v)
    assert np.abs(q[s.q][3:]).max() < 1e-9 and np.abs(q[s.q][:2]).max() < 1e-9
    pose = world.skeleton_world().body_pose(q[s.q], "box")
    corners = np.array([(x, y, -0.01) for x in (-0.04, 0.04) for y in (-0.03, 0.03)])
    z = corners @ pose[:3, :3].T[:, 2] + pose[2, 3]
    assert K * -z == pytest.approx(np.full(4, 0.6 * G / 4), rel=1e-6)


def _slide(force, steps=60, friction=0.5):
    """A flat box resting on the ground, then pushed along x with `force` for a number of steps: its x velocities."""
    world = _world(friction=friction)
    world.add_skeleton(_tilting_box())
    return _push(world, "slab", force, steps), world


def _push(world, name, force, steps):
    """Skeleton `name`'s first joint velocity over `steps` steps pushed by `force` on it, after 200 steps at rest."""
    s = world.layout(name)
    q, v = world.q, world.v
    for _ in range(200):
        q, v = world.step(q, v)
    f = np.zeros(world.nv)
    f[s.v.start] = force
    out = []
    for _ in range(steps):
        q, v = world.step(q, v, f)
        out.append(v[s.v][0])
    return np.array(out)


def test_friction_holds_a_pushed_box_below_mu_m_g_and_lets_it_slide_above():
    mu, m = 0.5, 0.6
    held, world = _slide(0.6 * mu * m * G)
    assert np.abs(held[-20:]).max() < world.friction_velocity  # static: slips slower than eps_v
    sliding, world = _slide(1.4 * mu * m * G)
    acceleration = np.diff(sliding[-30:]) / world.dt
    # the joint's damping (0.5 N s/m) slows it too
    expected = (1.4 * mu * m * G - mu * m * G - 0.5 * sliding[-30:-1]) / m
    assert acceleration == pytest.approx(expected, rel=0.03)
    free, _ = _slide(0.6 * mu * m * G, friction=0.0)
    assert free[-1] > 0.1  # without friction the small force moves it


def test_a_box_obstacle_moving_under_a_ball_link_drags_it_by_friction():
    def drag(friction):
        world = _world(ground=False, friction=friction)
        conveyor = world.add_box((0.3, 0.3, 0.1), rd.Transform((0.0, 0.0, -0.05)))
        sk = rd.Skeleton("puck")
        body = sk.add_body("puck", rd.TranslationalJoint("move"), joint_origin=rd.Transform((0.0, 0.0, 0.0295)),
                           inertia=rd.Inertia.from_shape(rd.Sphere(0.03), mass=0.3))
        body.add_shape(rd.Sphere(0.03))
        world.add_skeleton(sk)
        s = world.layout("puck")
        q, v = world.q, world.v
        for t in range(40):
            world.set_obstacle_pose(conveyor, rd.Transform((0.1 * world.dt * (t + 1), 0.0, -0.05)),
                                    velocity=(0.1, 0, 0, 0, 0, 0))
            q, v = world.step(q, v)
        return v[s.v], world

    dragged, world = drag(0.6)
    assert dragged[0] == pytest.approx(0.1, rel=1e-2)  # carried along at the box's speed
    assert world.last_step["contacts"] >= 1
    still, _ = drag(0.0)
    assert abs(still[0]) < 1e-9


def _swing_arm():
    """A capsule arm along x on a vertical revolute joint at the origin, swinging towards +y."""
    sk = rd.Skeleton("arm")
    link = rd.Capsule(0.02, 0.2)
    body = sk.add_body("arm", rd.RevoluteJoint("yaw", axis=(0, 0, 1), damping=0.02), joint_origin=rd.Transform(),
                       inertia=rd.Inertia.from_shape(link, mass=0.4, origin=rd.Transform((0.12, 0.0, 0.0))))
    body.add_shape(link, rd.Transform((0.12, 0.0, 0.0), rpy=(0.0, np.pi / 2, 0.0)))
    return sk


def test_a_swinging_arm_stops_against_a_ball():
    def swing(ball):
        world = _world(ground=False, gravity=(0.0, 0.0, 0.0))
        if ball:
            world.add_sphere((0.15, 0.1, 0.0), 0.05)
        world.add_skeleton(_swing_arm())
        s = world.layout("arm")
        q, v = world.q, world.v
        f = np.zeros(world.nv)
        f[s.v] = 0.5  # N m, towards the ball
        for _ in range(300):
            q, v = world.step(q, v, f)
        return q[s.q][0], v[s.v][0]

    angle, rate = swing(True)
    touch = np.arctan2(0.1, 0.15) - np.arcsin(0.07 / np.hypot(0.15, 0.1))  # the capsule's side meets the ball
    assert abs(rate) < 1e-6
    assert touch < angle < touch + 0.02  # stopped a little inside, at the penalty's depth
    # the lever: the contact force k depth balances the torque at the contact's distance along the arm
    assert swing(False)[0] > np.pi


# --- gradients ----------------------------------------------------------------------------------------------------

def _leg(shape, hip, shape_origin=(0.0, 0.0, -0.07)):
    """A shape below a hip: a translational joint at `hip`, then a revolute joint about y (the shape turns about the
    hip, so the links' turning enters the Hessian)."""
    sk = rd.Skeleton("leg")
    light = rd.Inertia.from_shape(rd.Sphere(0.01), mass=0.05)
    base = sk.add_body("base", rd.TranslationalJoint("move", damping=0.1), joint_origin=rd.Transform(hip),
                       inertia=light)
    body = sk.add_body("shin", rd.RevoluteJoint("knee", axis=(0, 1, 0), damping=0.01, stiffness=0.5), parent=base,
                       inertia=rd.Inertia.from_shape(shape, mass=0.3, origin=rd.Transform(shape_origin)))
    pose = _shape_pose(shape)
    body.add_shape(shape, rd.Transform(shape_origin, pose.rotation))
    return sk


# each pair: the link's shape, the obstacle ("plane", ("ball", centre, radius) or ("box", size, rotvec)), the hip
# when touching, the knee's angle at the start
PAIRS = {
    "plane-sphere": (rd.Sphere(0.03), "plane", (0.0, 0.0, 0.099), 0.05),
    "plane-capsule": (rd.Capsule(0.02, 0.08), "plane", (0.0, 0.0, 0.088), 0.1),  # one end-sphere in
    "plane-box": (rd.Box((0.06, 0.04, 0.02)), "plane", (0.0, 0.0, 0.0785), 0.1),  # two corners in
    "ball-sphere": (rd.Sphere(0.03), ("ball", (0.0, 0.0, 0.0), 0.05), (0.01, 0.0, 0.149), 0.05),
    "ball-capsule": (rd.Capsule(0.02, 0.08), ("ball", (0.0, 0.0, 0.0), 0.05), (0.005, 0.0, 0.139), 0.02),
    "ball-box": (rd.Box((0.06, 0.04, 0.02)), ("ball", (0.0, 0.0, 0.0), 0.05), (-0.05, 0.0, 0.1247), 0.0),  # an edge
    "box-sphere": (rd.Sphere(0.03), ("box", (0.2, 0.2, 0.1), (0.01, -0.02, 0.05)), (0.12, 0.0, 0.141), 0.0),
}


def _pair_world(pair, touching, friction=0.5):
    shape, obstacle, hip, angle = PAIRS[pair]
    world = _world(ground=obstacle == "plane", friction=friction)
    name = None
    if obstacle != "plane" and obstacle[0] == "ball":
        name = world.add_sphere(obstacle[1], obstacle[2])
        world.set_obstacle_pose(name, world.obstacle_pose(name), velocity=(0.03, -0.02, 0.01, 0.5, 1.0, -2.0))
    elif obstacle != "plane":
        name = world.add_box(obstacle[1], rd.Transform((0.0, 0.0, 0.0),
                                                       Rotation.from_rotvec(obstacle[2]).as_matrix()))
        world.set_obstacle_pose(name, world.obstacle_pose(name), velocity=(0.05, -0.02, 0.01, 0.3, -0.2, 0.5))
    hip = np.array(hip) + (0.0 if touching else 0.02) * np.array([0.0, 0.0, 1.0])
    world.add_skeleton(_leg(shape, hip))
    s = world.layout("leg")
    rng = np.random.default_rng(len(pair))
    q, v, f = world.q, 0.02 * rng.standard_normal(world.nv), 0.05 * rng.standard_normal(world.nv)
    q[s.q] = (0.0, 0.0, 0.0, angle)
    v[s.v] = (0.15, -0.1, 0.02, 0.5)  # sliding: friction is past its static band
    f[s.v] = (0.3, 0.1, 2.0, 0.02)
    return world, name, q, v, f


def _check_gradients(world, name, q, v, f, rel=1e-6, h=1e-6, skeletons=("leg",)):
    """step_vjp against central differences of our own step: every joint entry of the skeletons' q, v and tau, the
    vertices' along a random direction, the obstacle `name`'s pose (unless None), friction and contact stiffness."""
    rng = np.random.default_rng(0)
    wq, wv = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
    g = world.step_vjp(q, v, f, wq, wv)

    def loss(q=q, v=v, f=f):
        qn, vn = world.step(q, v, f)
        return wq @ qn + wv @ vn

    joints = [i for sk in skeletons for i in range(world.layout(sk).v.start, world.layout(sk).v.stop)]
    scale = max(np.abs(g.q).max(), np.abs(g.v).max(), np.abs(g.tau).max())
    for key, x, grad in (("q", q, g.q), ("v", v, g.v), ("f", f, g.tau)):
        # every joint entry, and the vertices' along one random direction
        directions = [np.eye(len(x))[i] for i in joints]
        directions.append(np.concatenate([rng.standard_normal(min(joints)), np.zeros(len(x) - min(joints))]))
        for e in directions:
            fd = (loss(**{key: x + h * e}) - loss(**{key: x - h * e})) / (2 * h)
            assert grad @ e == pytest.approx(fd, rel=rel, abs=rel * scale), (key, e)
    pscale = np.abs(g.parameters).max()
    if name is not None:
        components = 6 if name.startswith("box") else 3
        for key, fd in _pose_differences(world, name, components, loss, h).items():
            assert g.parameter(key) == pytest.approx(fd, rel=rel, abs=rel * pscale), key
    for attr in ("friction", "contact_stiffness"):
        fd = _attribute_difference(world, attr, loss, h)
        assert g.parameter(attr) == pytest.approx(fd, rel=rel, abs=rel * pscale), attr
    return g


@pytest.mark.parametrize("touching", [True, False], ids=["touching", "apart"])
@pytest.mark.parametrize("pair", list(PAIRS))
def test_gradients_of_links_on_obstacles_match_central_differences(pair, touching):
    world, name, q, v, f = _pair_world(pair, touching)
    qn, _ = world.step(q, v, f)
    cube_contacts = 0
    links = world.last_step["contacts"] - cube_contacts
    assert (links > 0) == touching
    g = _check_gradients(world, name, q, v, f)
    if touching:
        assert g.parameter("friction") != 0.0 and g.parameter("contact_stiffness") != 0.0
        if name is not None:
            assert np.abs([g.parameter(f"pose:{name}:{c}") for c in "xyz"]).max() > 0.0


def test_gradient_of_switching_the_links_friction_on_exists_at_zero():
    """At mu = 0 the links' friction contacts on the obstacles are still found for the adjoint: the gradient with
    respect to mu matches a forward difference (mu cannot go below 0) for every pair."""
    for pair in PAIRS:
        world, _, q, v, f = _pair_world(pair, True, friction=0.0)
        g, fd = _friction_switched_on(world, q, v, f)
        assert g != 0.0 and g == pytest.approx(fd, rel=1e-5), pair


def test_dense_jacobians_and_rollout_backward_carry_the_links_on_obstacles():
    """A capsule leg sliding over a moving ball with friction: the joints' columns of step_jacobians, and the
    gradient of a three-step rollout with respect to the first step's joint forces, against central differences."""
    world, name, q, v, f = _pair_world("ball-capsule", True)
    _check_jacobians_and_rollout(world, q, v, f, ("leg",))


def _check_jacobians_and_rollout(world, q, v, f, skeletons, tau_step=1e-4):
    """The skeletons' rows and joint columns of step_jacobians, and a three-step rollout_backward's gradient with
    respect to the first step's joint forces, against central differences."""
    layouts = [world.layout(name) for name in skeletons]
    rows = np.r_[tuple(s.q for s in layouts)]
    joints = [i for s in layouts for i in range(s.v.start, s.v.stop)]
    J = world.step_jacobians(q, v, f)
    for i in joints:
        # the skeletons' rows: the far cube's vertices move only by the solver's tolerance, which the joints set
        for key, column, h in (("q", J.dq_dq[rows, i], 1e-6), ("v", J.dq_dv[rows, i], 1e-6),
                               ("f", J.dq_dtau[rows, i], tau_step)):
            e = np.zeros(world.nv)
            e[i] = h
            args = {"q": q, "v": v, "f": f}
            up = world.step(**{**args, key: args[key] + e})[0][rows]
            down = world.step(**{**args, key: args[key] - e})[0][rows]
            assert column == pytest.approx((up - down) / (2 * h), rel=1e-6, abs=1e-6 * np.abs(column).max()), key
    forces = np.tile(f, (3, 1))
    Q, V = world.rollout(q, v, forces)
    assert world.last_step["contacts"] > 0
    rng = np.random.default_rng(0)
    dQ, dV = np.zeros_like(Q), np.zeros_like(V)
    dQ[-1], dV[-1] = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
    g = world.rollout_backward(Q, V, forces, dQ, dV)

    def loss(f0):
        fs = forces.copy()
        fs[0] = f0
        Qh, Vh = world.rollout(q, v, fs)
        return dQ[-1] @ Qh[-1] + dV[-1] @ Vh[-1]

    for i in joints:
        e = np.zeros(world.nv)
        e[i] = 1e-5
        fd = (loss(f + e) - loss(f - e)) / 2e-5
        assert g.tau[0, i] == pytest.approx(fd, rel=1e-6, abs=1e-6 * np.abs(g.tau[0, joints]).max())


def test_a_box_link_standing_on_frictionless_ground_pushes_a_block_and_momentum_balances():
    """A box on a translational joint rests on the ground (its corners in it) and pushes a soft block standing on
    the same frictionless ground: the ground pushes both along z only, so the x momentum of box and block grows by
    the joint's x force times dt at every step."""
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-10, max_iterations=5000, contact_stiffness=K)
    world.add_ground()
    mesh = rd.HexMesh.box((0.1, 0.1, 0.05), (2, 2, 2), origin=(0.0, 0.0, -2e-4))
    world.add_deformable(mesh, rd.ProjectiveMaterial(3e4, 0.3, 1000.0, kind=("corotated", "volume")), name="block")
    sk = rd.Skeleton("pusher")
    box = rd.Box((0.04, 0.06, 0.04))
    body = sk.add_body("pusher", rd.TranslationalJoint("slide"), joint_origin=rd.Transform((-0.0195, 0.05, 0.0195)),
                       inertia=rd.Inertia.from_shape(box, mass=0.4))
    body.add_shape(box)
    world.add_skeleton(sk)
    s, m = world.layout("pusher"), world.masses("block")
    f = np.zeros(world.nv)
    f[s.v] = (3.0, 0.0, 0.0)

    def momentum(v):
        return m @ v[world.layout("block").v].reshape(-1, 3)[:, 0] + 0.4 * v[s.v][0]

    q, v = world.q, world.v
    x0 = world.positions(q, "block")[:, 0].mean()
    for _ in range(30):
        p = momentum(v)
        q, v = world.step(q, v, f)
        assert momentum(v) == pytest.approx(p + 3.0 * world.dt, rel=1e-6, abs=1e-9)
    assert world.positions(q, "block")[:, 0].mean() > x0 + 0.01  # pushed along
    assert -2e-3 < 0.0195 + q[s.q][2] - 0.02 < 0.0  # the pusher stands on the ground, a little in it
