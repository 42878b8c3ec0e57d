"""Skeletons in projective worlds: their links push and rub on soft bodies two-way in one implicit step. A box on
a prismatic joint pushes a soft block (momentum balance), the gradients of coupled steps against central
differences of our own step (prismatic and revolute joints, penalty and friction), the state layout, and bad
input. The gripper's lift is in test_projective_gripper.py."""

import numpy as np
import pytest
from test_projective_obstacles import _friction_switched_on

import rigidiff as rd
from rigidiff.errors import UnknownNameError


def _world(friction=0.0, tolerance=1e-12, gravity=(0.0, 0.0, -9.81), contact_stiffness=2e4, depth=2e-4):
    world = rd.World(dt=1e-2, solver="projective", tolerance=tolerance, max_iterations=5000, friction=friction,
                     gravity=gravity, contact_stiffness=contact_stiffness)
    # `depth` into the ground: no vertex on the penalty's kink, where central differences straddle two modes
    mesh = rd.HexMesh.box((0.1, 0.1, 0.05), (2, 2, 2), origin=(0.0, 0.0, -depth))
    world.add_deformable(mesh, rd.ProjectiveMaterial(3e4, 0.3, 1000.0, kind=("corotated", "volume")), name="block")
    return world


X0 = 0.0005  # the pusher's face, just inside the block's back (x = 0)


def _pusher(axes=("x",), damping=0.0):
    """A box on prismatic joints along the given world axes, its face at X0, covering the middle column of the
    block's back vertices."""
    sk = rd.Skeleton("pusher")
    parent = None
    block = rd.Box((0.04, 0.06, 0.06))
    for i, a in enumerate(axes):
        axis = {"x": (1, 0, 0), "y": (0, 1, 0), "z": (0, 0, 1)}[a]
        last = i == len(axes) - 1
        origin = rd.Transform((X0 - 0.02, 0.05, 0.025)) if i == 0 else None
        body = sk.add_body(f"slide_{a}", rd.PrismaticJoint(f"rail_{a}", axis=axis, damping=damping), parent=parent,
                           joint_origin=origin, inertia=rd.Inertia.from_shape(block, mass=0.5 if last else 0.1))
        parent = body
    parent.add_shape(block)
    return sk


def _arm():
    """A capsule lying along x on the block's top on a revolute joint (about y), with a ball on a second revolute
    joint (vertical) at its tip, off its axis: both touch the block's top from the start."""
    sk = rd.Skeleton("arm")
    link = rd.Capsule(0.02, 0.08)
    upper = sk.add_body("upper", rd.RevoluteJoint("shoulder", axis=(0, 1, 0), damping=0.1),
                        joint_origin=rd.Transform((0.0, 0.05, 0.0695), rpy=(0.0, np.pi / 2, 0.0)),
                        inertia=rd.Inertia.from_shape(link, mass=0.3, origin=rd.Transform((0.0, 0.0, 0.04))))
    upper.add_shape(link, rd.Transform((0.0, 0.0, 0.04)))
    tip = sk.add_body("tip", rd.RevoluteJoint("wrist", axis=(1, 0, 0), stiffness=2.0), parent=upper,
                      joint_origin=rd.Transform((0.0, 0.0, 0.1)),
                      inertia=rd.Inertia.from_shape(rd.Sphere(0.023), mass=0.1))
    tip.add_shape(rd.Sphere(0.023), rd.Transform((0.0, 0.01, 0.0)))
    return sk


def test_layout_follows_the_vertices_and_steps_keep_vertex_calls_working():
    world = _world()
    nx = world.nq
    sk = world.add_skeleton(_pusher(("x", "z")))
    assert world.layout("pusher").kind == "skeleton"
    assert world.layout("pusher").q == slice(nx, nx + 2) and world.layout(sk).v == slice(nx, nx + 2)
    assert world.nq == world.nv == nx + 2
    assert world.layout("block").q == slice(0, nx)
    # a body added after the skeleton goes before its coordinates
    world.add_deformable(rd.HexMesh.box((0.02, 0.02, 0.02), (1, 1, 1), origin=(0.5, 0.0, 0.01)),
                         rd.ProjectiveMaterial(3e4, 0.3, 1000.0), name="cube")
    assert world.layout("pusher").q == slice(nx + 24, nx + 26)
    assert np.array_equal(world.q[world.layout("pusher").q], np.zeros(2))
    q, v = world.step(world.q, world.v)
    assert q.shape == (world.nq,) and np.isfinite(q).all()
    assert world.positions(q, "cube").shape == (8, 3)
    with pytest.raises(UnknownNameError, match="nothing.*pusher"):
        world.layout("nothing")


def test_a_pushed_block_moves_and_momentum_balances_the_joint_force():
    """No gravity along x and a frictionless ground: the x momentum of block and pusher grows by tau dt per step
    (the contact forces are internal), and the block is pushed forward."""
    world = _world(tolerance=1e-10)
    world.add_ground()
    world.add_skeleton(_pusher(("x",)))
    s = world.layout("pusher")
    q, v = world.q, world.v
    tau = 2.0
    f = np.zeros(world.nv)
    f[s.v] = tau
    x0 = world.positions(q, "block")[:, 0].mean()
    momentum = _x_momentum(world)

    for t in range(40):
        p = momentum(v)
        q, v = world.step(q, v, f)
        assert momentum(v) == pytest.approx(p + tau * world.dt, rel=1e-6, abs=1e-9)
    assert world.positions(q, "block")[:, 0].mean() > x0 + 0.01
    assert world.last_step["contacts"] > 0
    # the pusher's face stays at the block's back, a little inside (the penalty's depth)
    back = world.positions(q, "block")[:, 0].min()
    assert 0.0 < X0 + q[s.q][0] - back < 3e-3


def _x_momentum(world):
    """The x momentum of the block and the pusher (0.5 kg on one x rail) at the velocities v."""
    m = world.masses("block")
    block, rail = world.layout("block").v, world.layout("pusher").v
    return lambda v: m @ v[block].reshape(-1, 3)[:, 0] + 0.5 * v[rail][0]


def _check_vjp(world, q, v, f, seed=0, rel=1e-6, parameters=()):
    rng = np.random.default_rng(seed)
    wq, wv = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
    g = world.step_vjp(q, v, f, wq, wv)

    def loss(q=q, v=v, f=f):
        qn, vn = world.step(q, v, f)
        return wq @ qn + wv @ vn

    h = 1e-6
    scale = max(np.abs(g.q).max(), np.abs(g.v).max(), np.abs(g.tau).max())
    for name, x, grad in (("q", q, g.q), ("v", v, g.v), ("f", f, g.tau)):
        for i in range(len(x)):
            e = np.zeros(len(x))
            e[i] = h
            args = {name: x + e}
            up = loss(**args)
            args = {name: x - e}
            fd = (up - loss(**args)) / (2 * h)
            assert grad[i] == pytest.approx(fd, rel=rel, abs=rel * scale), (name, i)
    for p, setter, value in parameters:
        step = h * max(1.0, abs(value))  # relative for the contact stiffness (N/m), whose step would drown in rounding
        setter(value + step)
        up = loss()
        setter(value - step)
        down = loss()
        setter(value)
        assert g.parameter(p) == pytest.approx((up - down) / (2 * step), rel=rel,
                                               abs=rel * np.abs(g.parameters).max())
    return g


def _start(world, seed=1):
    rng = np.random.default_rng(seed)
    q, v = world.q, 0.02 * rng.standard_normal(world.nv)
    f = 0.05 * rng.standard_normal(world.nv)
    return q, v, f


def _arm_start(world):
    """(q, v, f) of the arm (layout "arm") lying on the block, its shoulder turning down into it and its wrist
    swinging the ball sideways."""
    q, v, f = _start(world, seed=3)
    s = world.layout("arm")
    v[s.v] = (0.05, -0.3)
    q[s.q] = (0.002, 0.3)
    return q, v, f


def test_gradients_of_a_prismatic_pusher_with_friction_match_central_differences():
    world = _world(friction=0.4)
    world.add_ground()
    world.add_skeleton(_pusher(("x", "z"), damping=0.5))
    q, v, f = _start(world)
    s = world.layout("pusher")
    q[s.q] = (0.0, 0.0052)  # the box's bottom 0.2 mm above the ground (5 mm into it at the rail's zero)
    v[s.v] = (0.3, -0.05)
    f[s.v] = (1.0, 2.0)
    world.step(q, v, f)
    assert world.last_step["contacts"] > 0
    g = _check_vjp(world, q, v, f, parameters=(
        ("friction", lambda x: setattr(world, "friction", x), 0.4),
        ("contact_stiffness", lambda x: setattr(world, "contact_stiffness", x), 2e4)))
    assert np.abs(g.tau[s.v]).max() > 0.0


def test_gradients_of_a_revolute_arm_with_friction_match_central_differences():
    """Turning links: the second derivatives of the links' poses enter the Hessian and the friction's material
    points."""
    world = _world(friction=0.5)
    world.add_ground()
    world.add_skeleton(_arm())
    q, v, f = _arm_start(world)
    world.step(q, v, f)
    assert world.last_step["contacts"] >= 2
    _check_vjp(world, q, v, f, seed=2, parameters=(("friction", lambda x: setattr(world, "friction", x), 0.5),))


def test_gradient_of_switching_friction_on_exists_at_zero():
    """At mu = 0 the links' (and the ground's) friction contacts are still found for the adjoint: its gradient
    with respect to mu matches a forward difference (mu cannot go below 0)."""
    world = _world(friction=0.0)
    world.add_ground()
    world.add_skeleton(_pusher(("x",)))
    q, v, f = _start(world, seed=5)
    v[world.layout("pusher").v] = 0.2
    g, fd = _friction_switched_on(world, q, v, f)
    assert g != 0.0 and g == pytest.approx(fd, rel=1e-5)


def test_dense_jacobians_and_rollout_backward_carry_the_joints():
    # a softer ground, the block at its resting depth: no vertex leaves it over the rollout
    world = _world(friction=0.3, tolerance=1e-12, contact_stiffness=2e3, depth=2.7e-4)
    world.add_ground()
    world.add_skeleton(_pusher(("x",)))
    s = world.layout("pusher")
    q, v, f = _start(world, seed=7)
    J = world.step_jacobians(q, v, f)
    assert J.dq_dtau.shape == (world.nv, world.nv)
    assert abs(J.dv_dtau[s.v, s.v][0, 0]) > 0.0
    forces = np.tile(f, (3, 1))
    Q, V = world.rollout(q, v, forces)
    rng = np.random.default_rng(0)
    dQ, dV = np.zeros_like(Q), np.zeros_like(V)
    dQ[-1], dV[-1] = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
    g = world.rollout_backward(Q, V, forces, dQ, dV)
    h = 1e-5  # N: the three solves' rounding drowns smaller differences

    def loss(f0):
        fs = forces.copy()
        fs[0] = f0
        Qh, Vh = world.rollout(q, v, fs)
        return dQ[-1] @ Qh[-1] + dV[-1] @ Vh[-1]

    for i in (s.v.start, 0, 5):
        e = np.zeros(world.nv)
        e[i] = h
        fd = (loss(f + e) - loss(f - e)) / (2 * h)
        assert g.tau[0, i] == pytest.approx(fd, rel=1e-6, abs=1e-9)


def test_bad_skeletons_are_refused():
    world = _world()
    with pytest.raises(TypeError, match="Skeleton"):
        world.add_skeleton("arm")
    plate = rd.Skeleton("plate")
    body = plate.add_body("b", rd.PrismaticJoint("p", axis=(1, 0, 0)),
                          inertia=rd.Inertia.from_shape(rd.Box((0.1,) * 3), mass=1.0))
    body.add_shape(rd.Plane())
    with pytest.raises(ValueError, match="'b' has a plane shape"):
        world.add_skeleton(plate)
    world.add_skeleton(_pusher())
    with pytest.raises(ValueError, match="already"):
        world.add_skeleton(_pusher())
    s = world.layout("pusher")
    q, v = world.q, world.v
    q[s.q] = np.nan
    with pytest.raises(ValueError, match="not finite"):
        world.step(q, v)
    with pytest.raises(ValueError, match="f"):
        world.step(world.q, v, np.zeros(world.nv - 1))


def test_link_shapes_are_drawn_with_the_soft_bodies():
    world = _world()
    world.add_skeleton(_arm())
    surfaces = world._viz_surfaces(world.q)
    keys = [key for key, _ in surfaces]
    assert keys.count("arm") == 2 and "block" in keys
    assert all(tri.shape[1:] == (3, 3) for _, tri in surfaces)  # triangles, as rd.viz draws them
    pusher = _world()
    pusher.add_skeleton(_pusher())
    box = [tri for key, tri in pusher._viz_surfaces(pusher.q) if key == "pusher"][0]
    assert len(box) == 12 and box[:, :, 0].max() == pytest.approx(X0)  # the whole box, its face at X0


@pytest.mark.parametrize("joint", ["universal", "translational"])
def test_gradients_through_universal_and_translational_joints(joint):
    """A ball on a universal joint (two revolutes) swinging against the block's side, or a box on a translational
    joint: the coupled step's gradients against central differences."""
    world = _world(friction=0.3)
    world.add_ground()
    sk = rd.Skeleton(joint)
    if joint == "universal":
        body = sk.add_body("bob", rd.UniversalJoint("u", axis1=(1, 0, 0), axis2=(0, 1, 0), damping=0.05),
                           joint_origin=rd.Transform((0.1 + 0.0195, 0.05, 0.15)),
                           inertia=rd.Inertia.from_shape(rd.Sphere(0.02), mass=0.2, origin=rd.Transform((0, 0, -0.125))))
        body.add_shape(rd.Sphere(0.02), rd.Transform((0.0, 0.0, -0.125)))
    else:
        body = sk.add_body("slab", rd.TranslationalJoint("t", damping=0.2),
                           joint_origin=rd.Transform((0.05, 0.05, 0.07 - 5e-4)),
                           inertia=rd.Inertia.from_shape(rd.Box((0.06, 0.06, 0.04)), mass=0.3))
        body.add_shape(rd.Box((0.06, 0.06, 0.04)))
    world.add_skeleton(sk)
    q, v, f = _start(world, seed=11)
    s = world.layout(joint)
    v[s.v] = 0.1
    world.step(q, v, f)
    assert world.last_step["contacts"] > 0
    _check_vjp(world, q, v, f, seed=12)
