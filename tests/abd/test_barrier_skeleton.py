"""Articulated skeletons in barrier worlds: the link surfaces' contact coordinates and Jacobians against finite
differences, a pendulum without contact against the lcp world's step, a two-link arm pushing an affine cube on
the ground intersection-free at every step (checked independently with IPC Toolkit), and bad input."""

import numpy as np
import pytest

import rigidiff as rd

DHAT = 1e-3


def _pendulum(damping=0.0, stiffness=0.0, effort_limit=None, shape=True):
    """A double pendulum hanging from (0, 0, 1) about y, with spheres at the links' ends."""
    sk = rd.Skeleton("pendulum")
    kw = dict(damping=damping, stiffness=stiffness)
    if effort_limit is not None:
        kw["effort_limit"] = effort_limit
    inertia = rd.Inertia.from_shape(rd.Sphere(0.05), mass=1.0, origin=rd.Transform((0.3, 0.0, 0.0)))
    upper = sk.add_body("upper", rd.RevoluteJoint("j1", axis=(0, 1, 0), **kw), joint_origin=rd.Transform((0, 0, 1.0)),
                        inertia=inertia)
    lower = sk.add_body("lower", rd.RevoluteJoint("j2", axis=(0, 1, 0), **kw), parent=upper,
                        joint_origin=rd.Transform((0.3, 0.0, 0.0)), inertia=inertia)
    if shape:
        upper.add_shape(rd.Sphere(0.05), rd.Transform((0.3, 0.0, 0.0)))
        lower.add_shape(rd.Sphere(0.05), rd.Transform((0.3, 0.0, 0.0)))
    return sk


def _arm(name="arm"):
    """A planar two-link arm turning about z above the ground: each link a 0.18 x 0.04 x 0.04 box whose ends stop
    1 cm short of its joints (so that the links never touch each other)."""
    sk = rd.Skeleton(name)
    link = rd.Box((0.18, 0.04, 0.04))
    inertia = rd.Inertia.from_shape(link, density=1000.0, origin=rd.Transform((0.1, 0.0, 0.0)))
    first = sk.add_body("link1", rd.RevoluteJoint("shoulder", axis=(0, 0, 1), damping=0.05),
                        joint_origin=rd.Transform((0.0, 0.0, 0.05)), inertia=inertia)
    first.add_shape(link, rd.Transform((0.1, 0.0, 0.0)))
    second = sk.add_body("link2", rd.RevoluteJoint("elbow", axis=(0, 0, 1), damping=0.05, stiffness=1.0),
                         parent=first, joint_origin=rd.Transform((0.2, 0.0, 0.0)), inertia=inertia)
    second.add_shape(link, rd.Transform((0.1, 0.0, 0.0)))
    return sk


def _arm_and_cube(friction=0.3):
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=friction)
    world.add_ground()
    world.add_skeleton(_arm())
    world.add_affine_body(rd.Box((0.1, 0.1, 0.1)), density=200.0, pose=rd.Transform((0.32, 0.12, 0.05 + 0.5 * DHAT)),
                          name="cube")
    return world


def test_layout_puts_the_skeleton_before_the_bodies():
    world = rd.World(dt=1e-2, solver="barrier")
    world.add_ground()
    world.add_affine_body(rd.Box((0.1, 0.1, 0.1)), pose=rd.Transform((0.6, 0.0, 0.06)), name="cube")
    world.add_skeleton(_arm())  # added after the body, its coordinates still come first
    assert world.nq == world.nv == 2 + 12
    assert world.layout("arm").kind == "skeleton" and world.layout("arm").q == slice(0, 2)
    assert world.layout("cube").q == slice(2, 14)
    np.testing.assert_allclose(world.body_pose(world.q, "cube")[:3, 3], [0.6, 0.0, 0.06])
    np.testing.assert_array_equal(world.q[:2], 0.0)
    assert world.skeletons[0].name == "arm"
    V, F = world.surfaces(world.q)
    assert len(V) == 8 * 3 and F.max() == len(V) - 1  # two link boxes and the cube


def test_contact_coordinates_and_jacobians_match_finite_differences():
    world = rd.World(dt=1e-2, solver="barrier")
    world.add_skeleton(_pendulum())
    world.add_affine_body(rd.Box((0.1, 0.1, 0.1)), pose=rd.Transform((2.0, 0.0, 0.0)), name="cube")
    rng = np.random.default_rng(0)
    q = world.q
    q[:2] = rng.uniform(-1.0, 1.0, 2)
    y, jac = world._bw_contact_coordinates(q, 2)
    assert jac.shape == (2, 12, 2)
    np.testing.assert_array_equal(y[:12], q[2:])  # the body's own coordinates
    # a surface's coordinates are its joint's pose (p, rows of R)
    poses = world.skeleton_world().body_poses(q[:2])
    for k in range(2):
        np.testing.assert_allclose(y[12 + 12 * k: 15 + 12 * k], poses[k][:3, 3] - poses[k][:3, :3] @ [0, 0, 0], atol=1e-15)
        np.testing.assert_allclose(y[15 + 12 * k: 24 + 12 * k], poses[k][:3, :3].ravel(), atol=1e-15)
    eps = 1e-6
    for c in range(2):
        dq = np.zeros_like(q)
        dq[c] = eps
        fd = (world._bw_contact_coordinates(q + dq, 2)[0] - world._bw_contact_coordinates(q - dq, 2)[0]) / (2 * eps)
        np.testing.assert_allclose(jac[:, :, c].ravel(), fd[12:], atol=1e-9)


def _pushing_state(steps=14, friction=0.0):
    """The arm-and-cube world and a state where the arm presses on the cube (pairs within dhat between them)."""
    world = _arm_and_cube(friction=friction)
    q, v = world.q, world.v
    for _ in range(steps):
        tau = np.zeros(world.nv)
        tau[0] = 3.0 * (1.2 - q[0]) - 0.5 * v[0]
        q, v = world.step(q, v, tau)
    return world, q, v


def test_incremental_potential_gradient_matches_finite_differences():
    """E of a step of the arm pressing on the cube (barrier terms between the links and the cube, the cube and
    the ground): its gradient, pulled back to the joint coordinates through the surfaces' Jacobians, against
    central differences of E; the contact part (E at the step's kappa minus E at kappa = 0) on its own too, as
    it is small beside the inertial terms."""
    world, q_n, v_n = _pushing_state()
    kappa = world.last_step["kappa"]
    assert world.last_step["active_pairs"] > 0
    rng = np.random.default_rng(1)
    tau = rng.normal(size=world.nv)
    q = q_n + 1e-3 * world.dt * rng.normal(size=world.nv)  # a nearby state, still apart

    def energy(x, k):
        return world._bw_incremental_potential(x, q_n, v_n, tau, k)

    def contact(x):
        (e, g), (e0, g0) = energy(x, kappa), energy(x, 0.0)
        return e - e0, g - g0

    for f in (lambda x: energy(x, kappa), contact):
        _, g = f(q)
        assert np.abs(g[:2]).max() > 0.0
        eps = 1e-7
        fd = np.empty(world.nv)
        for i in range(world.nv):
            dq = np.zeros(world.nv)
            dq[i] = eps
            fd[i] = (f(q + dq)[0] - f(q - dq)[0]) / (2 * eps)
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6 * np.abs(g).max())


def test_friction_potential_gradient_matches_finite_differences():
    """The lagged friction of the pairs frozen at a state where the arm presses on the cube (friction 0.3), at a
    nearby state where the arm and the cube have slid (slips on both sides of eps_v dt): its gradient, pulled
    back to the joints, against central differences."""
    world, q_n, _ = _pushing_state(friction=0.3)
    kappa = world.last_step["kappa"]
    rng = np.random.default_rng(2)
    for scale in (1e-6, 1e-4):  # slips below and above eps_v dt = 1e-5 m
        q = q_n + scale * rng.normal(size=world.nv)
        e, g = world._bw_friction_potential(q, q_n, kappa)
        assert e > 0.0 and np.abs(g[:2]).max() > 0.0
        eps = 1e-9
        fd = np.empty(world.nv)
        for i in range(world.nv):
            dq = np.zeros(world.nv)
            dq[i] = eps
            fd[i] = (world._bw_friction_potential(q + dq, q_n, kappa)[0]
                     - world._bw_friction_potential(q - dq, q_n, kappa)[0]) / (2 * eps)
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6 * np.abs(g).max())


@pytest.mark.parametrize("passive", [False, True])
def test_pendulum_without_contact_matches_the_lcp_step(passive):
    """Without contact the incremental potential is quadratic in q' with the Hessian M + dt D + dt^2 K of the
    lcp world's semi-implicit step, whose stationary point is that step: one exact Newton step reaches it, so
    the two agree to round-off (1e-10), with damping, springs and clipped torques."""
    kw = dict(damping=0.3, stiffness=2.0, effort_limit=1.5) if passive else {}
    dt = 1e-2
    barrier = rd.World(dt=dt, solver="barrier", newton_tolerance=1e-12)
    barrier.add_skeleton(_pendulum(**kw))
    lcp = rd.World(dt=dt)
    lcp.add_skeleton(_pendulum(**kw))
    q, v = np.array([0.4, -0.7]), np.array([1.0, -2.0])
    ql, vl = q.copy(), v.copy()
    for t in range(50):
        tau = np.array([2.0 * np.sin(0.1 * t), -1.0])
        q, v = barrier.step(q, v, tau)
        ql, vl = lcp.step(ql, vl, tau)
        np.testing.assert_allclose(q, ql, rtol=0, atol=1e-10)
        np.testing.assert_allclose(v, vl, rtol=0, atol=1e-8)


def _surfaces_with_ground(world, q):
    """IPC Toolkit's CollisionMesh of every surface at q with the ground as a 2 m quad at z = 0."""
    ipctk = pytest.importorskip("ipctk")
    V, F = world.surfaces(q)
    quad = np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]])
    F = np.vstack([F, np.array([[0, 1, 2], [0, 2, 3]]) + len(V)])
    V = np.vstack([V, quad])
    return ipctk.CollisionMesh(V, ipctk.edges(F), F), V


def _check_intersection_free(world, q):
    ipctk = pytest.importorskip("ipctk")
    mesh, V = _surfaces_with_ground(world, q)
    assert not ipctk.has_intersections(mesh, V)
    collisions = ipctk.NormalCollisions()
    collisions.build(mesh, V, DHAT)
    if len(collisions) > 0:
        assert collisions.compute_minimum_distance(mesh, V) > 0.0


def test_arm_pushes_a_cube_intersection_free():
    """A PD-driven shoulder sweeps the arm into a cube resting on the ground (friction 0.3): the cube moves
    away, turns a little, stays on the ground, and IPC Toolkit finds no intersection and a positive minimum
    distance at every step."""
    pytest.importorskip("ipctk")
    world = _arm_and_cube()
    cube = world.layout("cube")
    q, v = world.q, world.v
    start = world.body_pose(q, "cube")[:3, 3].copy()
    target = 1.2
    for _ in range(60):
        tau = np.zeros(world.nv)
        tau[0] = 3.0 * (target - q[0]) - 0.5 * v[0]
        q, v = world.step(q, v, tau)
        _check_intersection_free(world, q)
        assert world.last_step["min_distance"] > 0.0
        A, _ = world.affine_map(q, "cube")
        assert np.linalg.norm(A @ A.T - np.eye(3)) <= 1e-3
    end = world.body_pose(q, "cube")[:3, 3]
    assert q[0] > 0.5  # the shoulder turned
    assert np.linalg.norm(end[:2] - start[:2]) > 0.02  # the cube was pushed
    assert abs(end[2] - start[2]) < 2 * DHAT  # on the ground
    assert np.all(np.isfinite(q[cube.q]))


def test_arm_ccd_keeps_a_fast_sweep_from_tunnelling():
    """A large shoulder torque swings the arm at the cube within a few steps: the joint-space CCD stops every
    Newton move short of contact, so no step intersects even though one step turns the links by several
    times the cube's width."""
    pytest.importorskip("ipctk")
    world = _arm_and_cube(friction=0.0)
    q, v = world.q, world.v
    v[0] = 20.0  # rad/s: the link end moves 8 cm per step, almost the cube's size
    for _ in range(10):
        q, v = world.step(q, v, np.zeros(world.nv))
        _check_intersection_free(world, q)
    assert world.body_pose(q, "cube")[:3, 3][1] > 0.13  # knocked away in +y


def test_skeleton_bad_input():
    world = rd.World(dt=1e-2, solver="barrier")
    with pytest.raises(TypeError, match="skeleton"):
        world.add_skeleton("arm")
    # free and ball joints are floating bases (tests/abd/test_barrier_floating_base.py), planar joints
    # tests/abd/test_barrier_planar.py's; a plane shape is refused
    flat = rd.Skeleton("flat")
    flat.add_body("b", rd.RevoluteJoint("hinge"), inertia=rd.Inertia.from_shape(rd.Box((0.1,) * 3), mass=1.0)) \
        .add_shape(rd.Plane())
    with pytest.raises(ValueError, match="plane shape"):
        world.add_skeleton(flat)
    assert world.nq == 0 and world.skeletons == []
    world.add_skeleton(_arm())
    with pytest.raises(ValueError, match="already in this world"):
        world.add_skeleton(world.skeletons[0])
    with pytest.raises(rd.UnknownNameError, match="no skeleton"):
        world.layout("robot")
    with pytest.raises(ValueError, match="already used"):
        world.add_affine_body(rd.Box((0.1,) * 3), pose=rd.Transform((1.0, 0.0, 0.5)), name="arm")
    # a cube placed through a link is refused with the pair named, and the world is unchanged
    with pytest.raises(ValueError, match="arm/.*cube|cube.*arm/"):
        world.add_affine_body(rd.Box((0.1,) * 3), pose=rd.Transform((0.1, 0.0, 0.05)), name="cube")
    assert world.nq == 2
    # a ground plane the links cross is refused
    with pytest.raises(ValueError, match="ground plane"):
        world.add_ground(height=0.06)
    # a second skeleton whose links cross the first's at the neutral configuration is refused and undone
    with pytest.raises(ValueError, match="intersect"):
        world.add_skeleton(_arm("arm2"))
    assert [s.name for s in world.skeletons] == ["arm"] and world.nq == 2
    q, v = world.q, world.v
    # the step's derivatives take the skeletons' coordinates (tests/abd/test_barrier_skeleton_derivatives.py)
    with pytest.raises(ValueError, match="dL_dq_next"):
        world.step_vjp(q, v, None, np.ones(world.nq + 1), np.zeros(world.nv))
    traj = world.rollout(q, v, np.zeros((2, world.nv)), record=True)
    with pytest.raises(ValueError, match="dL_dQ"):
        traj.backward(np.ones((2, world.nq)), np.zeros((3, world.nv)))
    with pytest.raises(ValueError, match="tau"):
        world.step(q, v, np.full(world.nv, np.nan))


def _limited_pendulum():
    sk = rd.Skeleton("limited")
    inertia = rd.Inertia.from_shape(rd.Sphere(0.05), mass=1.0, origin=rd.Transform((0.3, 0.0, 0.0)))
    body = sk.add_body("bob", rd.RevoluteJoint("hinge", axis=(0, 1, 0), lower=-0.5, upper=0.5),
                       joint_origin=rd.Transform((0, 0, 1.0)), inertia=inertia)
    body.add_shape(rd.Sphere(0.05), rd.Transform((0.3, 0.0, 0.0)))
    return sk


def test_joint_limits_keep_a_pendulum_within_them():
    """Released horizontal, the bob falls (q grows) towards the upper limit 0.5: with joint_limits on it stays
    strictly below it at every step and comes to rest within dhat of it; off (the default, as in the lcp
    world) it swings through."""
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT)
    world.add_skeleton(_limited_pendulum())
    assert world.joint_limits is False
    Q, _ = world.rollout(world.q, world.v, np.zeros((100, 1)))
    assert Q[:, 0].max() > 1.0
    world.joint_limits = True
    Q, V = world.rollout(world.q, world.v, np.zeros((300, 1)))
    assert np.all(Q[:, 0] < 0.5)
    assert 0.5 - DHAT < Q[-1, 0] < 0.5 and abs(V[-1, 0]) < 1e-3


def test_joint_limit_barrier_gradient_matches_finite_differences():
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT)
    world.add_skeleton(_limited_pendulum())
    world.joint_limits = True
    q_n, v_n, tau = np.array([0.5 - 0.6 * DHAT]), np.array([0.3]), np.zeros(1)

    def limit_part(x):
        (e, g), (e0, g0) = [world._bw_incremental_potential(x, q_n, v_n, tau, k) for k in (1e4, 0.0)]
        return e - e0, g - g0

    for q in (q_n - 0.1 * DHAT, q_n + 0.3 * DHAT, -q_n):  # near the upper limit, then near the lower one
        e, g = limit_part(q)
        assert e > 0.0 and abs(g[0]) > 0.0
        eps = 1e-8
        fd = (limit_part(q + eps)[0] - limit_part(q - eps)[0]) / (2 * eps)
        assert abs(g[0] - fd) <= 1e-5 * abs(g[0])


def test_joint_limits_bad_input():
    world = rd.World(dt=1e-2, solver="barrier")
    world.add_skeleton(_limited_pendulum())
    with pytest.raises(TypeError, match="joint_limits"):
        world.joint_limits = "yes"
    world.joint_limits = True
    with pytest.raises(ValueError, match="'limited/hinge' is at or beyond its position limit"):
        world.step(np.array([0.6]), np.zeros(1))


def test_arm_pushes_another_skeleton_on_a_prismatic_joint():
    """Surfaces of two skeletons pair with each other (those of one skeleton do not): the arm sweeps into a block
    that slides along y on a prismatic joint (a second skeleton, damped), pushing it along its rail; IPC Toolkit
    finds the two apart at every step (the arm's links in one patch, the block in another)."""
    ipctk = pytest.importorskip("ipctk")
    slider = rd.Skeleton("slider")
    block = rd.Box((0.1, 0.1, 0.1))
    body = slider.add_body("block", rd.PrismaticJoint("rail", axis=(0, 1, 0), damping=1.0),
                           joint_origin=rd.Transform((0.32, 0.12, 0.06)), inertia=rd.Inertia.from_shape(block, mass=0.5))
    body.add_shape(block)
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT)
    world.add_skeleton(_arm())
    world.add_skeleton(slider)
    assert world.layout("slider").q == slice(2, 3)
    q, v = world.q, world.v
    for _ in range(40):
        tau = np.zeros(world.nv)
        tau[0] = 3.0 * (1.0 - q[0]) - 0.5 * v[0]
        q, v = world.step(q, v, tau)
        V, F = world.surfaces(q)
        patch = np.array([0] * 16 + [1] * 8, dtype=np.int32)  # two link boxes, then the block
        mesh = ipctk.CollisionMesh(V, ipctk.edges(F), F)
        mesh.can_collide = ipctk.make_vertex_patches_filter(patch)
        assert not ipctk.has_intersections(mesh, V)
        collisions = ipctk.NormalCollisions()
        collisions.build(mesh, V, DHAT)
        if len(collisions) > 0:
            assert collisions.compute_minimum_distance(mesh, V) > 0.0
    assert q[2] > 0.05  # pushed along its rail


def test_a_welded_skeleton_is_static_geometry():
    """A skeleton without moving joints adds no coordinates: its shapes are static participants, and a cube
    dropped on its table top comes to rest within dhat of it."""
    table = rd.Skeleton("table")
    top = table.add_body("top", joint_origin=rd.Transform((0.0, 0.0, 0.2)))
    top.add_shape(rd.Box((0.4, 0.4, 0.05)))
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT)
    world.add_skeleton(table)
    world.add_affine_body(rd.Box((0.1, 0.1, 0.1)), pose=rd.Transform((0.0, 0.0, 0.3)), name="cube")
    assert world.nq == 12 and world.layout("table").q == slice(0, 0)
    Q, _ = world.rollout(world.q, world.v, np.zeros((60, 12)))
    gap = world.surface(Q[-1], "cube")[0][:, 2].min() - 0.225
    assert 0.0 < gap < DHAT
