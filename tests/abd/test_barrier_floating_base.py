"""Floating bases (free and ball joints) in barrier worlds: the incremental potential's gradient in the tangent of
the step's chart against central differences, free flight against the lcp world's semi-implicit step, a free box
and a small free-floating tree landing on the ground and coming to rest, a fast spinning box thrown at the ground
(the CCD along the free joint's path), IPC Toolkit checking every step, and bad input (bad quaternions,
cotangents of q's size)."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rigidiff as rd
from ipc_checks import assert_intersection_free

DHAT = 1e-3
BOX = (0.2, 0.12, 0.08)


def _box_skeleton(name="box", **joint):
    """One box on a free root joint, its centre of mass 1 cm off the joint's origin (so that the free joint's
    linear and angular parts couple in M)."""
    sk = rd.Skeleton(name)
    inertia = rd.Inertia.from_shape(rd.Box(BOX), density=500.0, origin=rd.Transform((0.01, 0.0, 0.0)))
    body = sk.add_body("base", rd.FreeJoint("root", **joint), inertia=inertia)
    body.add_shape(rd.Box(BOX))
    return sk


def _tree(name="tree"):
    """A free-floating box base on two legs along x: each a revolute hip about y (a PD spring about the vertical)
    carrying an upper segment, then a wide foot, on a ball ankle at the front and a revolute knee about y at the
    back (springs on both); the segments stop 1 cm short of each other. Its feet are 0.195 m below the base's
    centre."""
    sk = rd.Skeleton(name)
    base_box, upper, foot = rd.Box((0.3, 0.16, 0.06)), rd.Box((0.04, 0.04, 0.1)), rd.Box((0.06, 0.16, 0.03))
    base = sk.add_body("base", rd.FreeJoint("root"), inertia=rd.Inertia.from_shape(base_box, density=500.0))
    base.add_shape(base_box)
    at_upper, at_foot = rd.Transform((0.0, 0.0, -0.06)), rd.Transform((0.0, 0.0, -0.02))
    for side, x in (("front", 0.1), ("back", -0.1)):
        leg = sk.add_body(f"{side}_leg", rd.RevoluteJoint(f"{side}_hip", axis=(0, 1, 0), damping=0.1, stiffness=20.0),
                          parent=base, joint_origin=rd.Transform((x, 0.0, -0.03)),
                          inertia=rd.Inertia.from_shape(upper, density=500.0, origin=at_upper))
        leg.add_shape(upper, at_upper)
        joint = (rd.BallJoint("front_ankle", damping=0.05, stiffness=5.0) if side == "front" else
                 rd.RevoluteJoint("back_knee", axis=(0, 1, 0), damping=0.05, stiffness=5.0))
        sole = sk.add_body(f"{side}_foot", joint, parent=leg, joint_origin=rd.Transform((0.0, 0.0, -0.13)),
                           inertia=rd.Inertia.from_shape(foot, density=500.0, origin=at_foot))
        sole.add_shape(foot, at_foot)
    return sk


def _quaternion(rotvec):
    return Rotation.from_rotvec(rotvec).as_quat()  # (x, y, z, w), rigidiff's order


def _step_move(q, delta):
    """q (+) delta for a single free joint in the step's chart: p + R delta_lin, R exp(delta_ang)."""
    R = Rotation.from_quat(q[3:7])
    out = q.copy()
    out[:3] = q[:3] + R.apply(delta[:3])
    quat = (R * Rotation.from_rotvec(delta[3:6])).as_quat()
    out[3:7] = quat if quat @ q[3:7] >= 0 else -quat
    return out


def test_incremental_potential_gradient_in_the_step_chart():
    """The gradient the Newton method uses with a free joint is in the tangent at the configuration, moved as
    q (+) delta = (p + R delta_lin, R exp(delta_ang)): it matches central differences of E along such moves, with
    the box pressing on the ground (barrier terms) and a displacement from the start state of 0.1 rad and 1 cm
    (so that dq's Jacobian in delta is not the identity)."""
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT)
    world.add_ground()
    q0 = np.concatenate([[0.0, 0.0, 0.04 + 0.4 * DHAT], _quaternion([0.0, 0.0, 0.3])])
    world.add_skeleton(_box_skeleton(), q=q0)
    v_n = np.array([0.3, -0.2, 0.1, 1.0, 0.5, -2.0])
    tau = np.array([1.0, 2.0, -3.0, 0.1, 0.2, -0.1])
    kappa = 1e3
    q = _step_move(q0, np.array([0.01, -0.005, 0.0, 0.0, 0.0, 0.1]))  # slid and turned about z: still in contact

    def energy(x):
        return world._bw_incremental_potential(x, q0, v_n, tau, kappa)

    e, g = energy(q)
    assert e - world._bw_incremental_potential(q, q0, v_n, tau, 0.0)[0] > 0.0  # the barrier acts
    eps = 1e-7
    fd = np.empty(6)
    for i in range(6):
        d = np.zeros(6)
        d[i] = eps
        fd[i] = (energy(_step_move(q, d))[0] - energy(_step_move(q, -d))[0]) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7 * np.abs(g).max())


@pytest.mark.parametrize("gyroscopic", ["explicit", "implicit"])
@pytest.mark.parametrize("make", [_box_skeleton, _tree])
def test_free_flight_matches_the_lcp_step(make, gyroscopic):
    """Without contact the incremental potential is quadratic in the displacement dq from the start (in the step's
    chart) with the Hessian M + dt D + dt^2 K, and its minimiser is the lcp world's semi-implicit step with the
    free joint moved on R^3 x SO(3) and its velocity re-expressed in the new frame (the gyroscopic term taken alike
    in both: explicitly, or by the implicit update on the lone box's free joint): q and v agree at every one of 50
    steps to 1e-8 (the base spinning at up to 6 rad/s, with torques on every dof)."""
    dt = 1e-2
    barrier = rd.World(dt=dt, solver="barrier", newton_tolerance=1e-12, gyroscopic=gyroscopic)
    lcp = rd.World(dt=dt, gyroscopic=gyroscopic)
    sk = make()
    lcp.add_skeleton(make())
    q = lcp.q
    q[:7] = np.concatenate([[0.1, -0.2, 1.0], _quaternion([0.3, -0.2, 0.5])])
    barrier.add_skeleton(sk, q=q)
    v = np.zeros(lcp.nv)
    v[:6] = [0.5, -0.3, 1.0, 2.0, -6.0, 3.0]
    v[6:] = np.linspace(1.0, -1.0, lcp.nv - 6)
    ql, vl = q.copy(), v.copy()
    rng = np.random.default_rng(0)
    for t in range(50):
        tau = rng.normal(scale=0.3, size=lcp.nv)
        q, v = barrier.step(q, v, tau)
        ql, vl = lcp.step(ql, vl, tau)
        np.testing.assert_allclose(q, ql, rtol=0, atol=1e-8)
        np.testing.assert_allclose(v, vl, rtol=0, atol=1e-8)
        assert barrier.last_step["newton_iterations"] <= 2


def _patches(world, q):
    """One patch per skeleton's link surfaces (they never collide with each other), one per body."""
    patches = []
    for f, V, _ in world._link_surfaces(q):
        patches += [0] * len(V)
    for k, name in enumerate(world.body_names):
        patches += [k + 1] * len(world.surface(q, name)[0])
    return patches


def test_free_box_lands_and_rests_like_an_affine_box():
    """A free box dropped tilted and spinning onto the ground (friction 0.5) comes to rest flat on it within dhat,
    intersection-free at every step by IPC Toolkit, and ends where the same box as a stiff affine body ends (the
    two steps differ only in how they keep the box rigid)."""
    ipctk = pytest.importorskip("ipctk")
    pose = np.concatenate([[0.0, 0.0, 0.1], _quaternion([0.25, 0.1, 0.0])])
    v0 = np.array([0.3, 0.0, 0.0, 0.0, 0.0, 2.0])
    finals = []
    for kind in ("skeleton", "affine"):
        world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.5)
        world.add_ground()
        if kind == "skeleton":
            world.add_skeleton(_box_skeleton(), q=pose)
            q, v = world.q, world.v
            v[:] = v0
        else:
            T = rd.Transform(pose[:3], pose[3:7]) @ rd.Transform((0.01, 0.0, 0.0))  # the same centre of mass
            world.add_affine_body(rd.Box(BOX), density=500.0, stiffness=1e11, name="box",
                                  pose=T @ rd.Transform((-0.01, 0.0, 0.0)))
            q, v = world.q, world.v
            R = Rotation.from_quat(pose[3:7]).as_matrix()
            # the same rigid velocity: origin velocity and angular velocity in world axes
            v[:] = rd.barrier_world._affine_velocity(np.concatenate([R @ v0[:3], R @ v0[3:]]),
                                                     q[3:].reshape(3, 3), q[:3])
        for _ in range(100):
            q, v = world.step(q, v)
            if kind == "skeleton":
                assert_intersection_free(ipctk, world, q, DHAT, ground_half_width=2.0)
        V, _ = world.surfaces(q)
        assert 0.0 < V[:, 2].min() < DHAT
        assert np.ptp(V[:, 2]) == pytest.approx(BOX[2], abs=1e-3)  # flat on its largest face
        assert np.abs(v).max() < 1e-2
        finals.append(V.mean(axis=0))
    np.testing.assert_allclose(finals[0], finals[1], atol=5e-3)


def test_tree_lands_on_its_feet_intersection_free():
    """The free-floating tree (revolute hips and knee with springs, a ball ankle) falls 5 cm onto the ground with friction
    0.5 and comes to rest standing on its feet: no step intersects (IPC Toolkit), the base stays above the ground
    and its quaternion of unit norm."""
    ipctk = pytest.importorskip("ipctk")
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.5)
    world.add_ground()
    sk = _tree()
    q0 = np.concatenate([[0.0, 0.0, 0.245], _quaternion([0.05, 0.1, 0.0]), [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]])
    world.add_skeleton(sk, q=q0)
    q, v = world.q, world.v
    patches = _patches(world, q)
    for _ in range(100):
        q, v = world.step(q, v)
        assert_intersection_free(ipctk, world, q, DHAT, ground_half_width=2.0, patches=patches)
        assert abs(np.linalg.norm(q[3:7]) - 1.0) < 1e-12
    V, _ = world.surfaces(q)
    assert 0.0 < V[:, 2].min() < DHAT
    assert q[2] > 0.17  # the base stands on its legs (0.195 m when they are straight)
    assert np.abs(v[:6]).max() < 0.05


def test_fast_spinning_box_does_not_tunnel():
    """A thin free plate thrown at the ground at 4 m/s while spinning at 60 rad/s about a horizontal axis (its
    corners sweep 0.06 m per step, 7 times its thickness) bounces off it without an intersecting step: the CCD
    along the free joint's path (a straight move and a turn about a fixed axis) certifies every step."""
    ipctk = pytest.importorskip("ipctk")
    sk = rd.Skeleton("plate")
    plate = rd.Box((0.2, 0.2, 0.008))
    sk.add_body("base", rd.FreeJoint("root"), inertia=rd.Inertia.from_shape(plate, density=2000.0)).add_shape(plate)
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT)
    world.add_ground()
    world.add_skeleton(sk, q=np.concatenate([[0.0, 0.0, 0.16], _quaternion([0.3, 0.0, 0.0])]))
    q, v = world.q, world.v
    v[:] = Rotation.from_quat(q[3:7]).inv().apply([0.0, 0.0, -4.0]).tolist() + [60.0, 0.0, 0.0]
    lowest = np.inf
    for _ in range(15):
        q, v = world.step(q, v)
        assert_intersection_free(ipctk, world, q, DHAT, ground_half_width=2.0)
        lowest = min(lowest, world.surfaces(q)[0][:, 2].min())
    assert 0.0 < lowest < 5 * DHAT  # it reached the ground


def test_ccd_follows_a_free_joint_turn():
    """A free rod (0.4 m, 2 cm square) spinning at 90 rad/s about its centre, without gravity, towards a 1 cm static
    post centred 0.2 m out and 0.3 rad ahead of its tip: a step turns it by 0.9 rad, so the chord of each vertex
    (from the start to the end of the step) cuts inside the tip's arc and passes 8.9 mm from the post (more than
    the tenth of their 44 mm start gap at which additive CCD stops), and the step's end state is clear of it,
    while the rod itself strikes it 5 mm deep mid-step. The CCD along the free joint's turn catches the strike in
    the first step: the rod recoils (measured: 3.4 m/s sideways, its spin down to 40 rad/s). With the free joint's
    turn left out of the CCD's bound (its dofs counted as prismatic, the chords taken as the path) the rod passed
    through the post, its velocity unchanged. No step intersects (IPC Toolkit)."""
    strike_a_post_with_a_spinning_rod(pytest.importorskip("ipctk"), rd.FreeJoint("root"),
                                      [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], spin=5, linear=slice(0, 3))


def strike_a_post_with_a_spinning_rod(ipctk, joint, q0, spin, linear):
    """The rod of test_ccd_follows_a_free_joint_turn on joint (at q0; v[spin] its turn rate about z, v[linear] its
    origin's velocity) spinning at 90 rad/s towards the post: asserts that the first step strikes it and the rod
    recoils, and that no step of three intersects."""
    sk = rd.Skeleton("rod")
    rod = rd.Box((0.4, 0.02, 0.02))
    sk.add_body("rod", joint, inertia=rd.Inertia.from_shape(rod, density=1000.0)).add_shape(rod)
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, gravity=(0.0, 0.0, 0.0))
    post_angle = 0.3
    world.add_static_mesh(rd.Box((0.01, 0.01, 0.1)), name="post",
                          pose=rd.Transform((0.2 * np.cos(post_angle), 0.2 * np.sin(post_angle), 0.0)))
    world.add_skeleton(sk, q=q0)
    q, v = world.q, world.v
    v[spin] = 90.0
    for t in range(3):
        q, v = world.step(q, v)
        assert_intersection_free(ipctk, world, q, DHAT)
        if t == 0:
            assert world.last_step["active_pairs"] > 0
            assert np.linalg.norm(v[linear]) > 1.0 and v[spin] < 70.0


def test_floating_base_bad_input():
    world = rd.World(dt=1e-2, solver="barrier")
    with pytest.raises(ValueError, match="q"):
        world.add_skeleton(_box_skeleton(), q=np.zeros(6))
    with pytest.raises(ValueError, match="root"):  # a quaternion of norm 2
        world.add_skeleton(_box_skeleton(), q=[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0])
    assert world.skeletons == [] and world.nq == 0
    world.add_skeleton(_box_skeleton(), q=[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    world.add_affine_body(rd.Box((0.1,) * 3), pose=rd.Transform((1.0, 0.0, 1.0)), name="cube")
    assert (world.nq, world.nv) == (7 + 12, 6 + 12)
    assert world.layout("cube").q == slice(7, 19) and world.layout("cube").v == slice(6, 18)
    q, v = world.q, world.v
    q[3:7] *= 1.5
    with pytest.raises(ValueError, match="root"):
        world.step(q, v)
    # the step's chart holds turns below pi per step (300 rad/s at dt = 1e-2 steps as the lcp world does)
    spin = np.zeros(world.nv)
    spin[5] = 320.0
    with pytest.raises(ValueError, match=r"joint 'box/root' would turn by 3.2 rad.*smaller dt"):
        world.step(world.q, spin)
    # the derivatives take q's cotangents in the tangent (nv), as the lcp world's do
    q, v = world.q, world.v
    with pytest.raises(ValueError, match="dL_dq_next"):
        world.step_vjp(q, v, None, np.zeros(world.nq), np.zeros(world.nv))
    traj = world.rollout(q, v, np.zeros((2, world.nv)), record=True)
    assert traj.q.shape == (3, world.nq) and traj.v.shape == (3, world.nv)
    with pytest.raises(ValueError, match="dL_dQ"):
        traj.backward(np.ones((3, world.nq)))
    assert np.isfinite(traj.backward(np.ones((3, world.nv))).q).all()
    # the projective world holds free joints too (tests/deformable/test_projective_floating_base.py)
    projective = rd.World(dt=1e-2, solver="projective")
    projective.add_skeleton(_box_skeleton())
    assert (projective.nq, projective.nv) == (7, 6)


def _limited_leg():
    """A free box base with one leg on a hip about y limited to [-0.3, 0.3] rad."""
    sk = rd.Skeleton("limited")
    base_box, leg = rd.Box((0.3, 0.16, 0.06)), rd.Box((0.04, 0.04, 0.1))
    base = sk.add_body("base", rd.FreeJoint("root"), inertia=rd.Inertia.from_shape(base_box, density=500.0))
    base.add_shape(base_box)
    at = rd.Transform((0.0, 0.0, -0.06))
    hip = sk.add_body("leg", rd.RevoluteJoint("hip", axis=(0, 1, 0), lower=-0.3, upper=0.3), parent=base,
                      joint_origin=rd.Transform((0.1, 0.0, -0.03)), inertia=rd.Inertia.from_shape(leg, density=500.0,
                                                                                                   origin=at))
    hip.add_shape(leg, at)
    return sk


def push_leg_to_its_limit(world, steps):
    """Adds the limited leg to world (joint limits on, no gravity) floating 1 m up and drives its hip by 0.5 N m
    against the upper limit for steps steps, asserting that it stays below; returns the state and the torque."""
    world.joint_limits = True
    world.gravity = (0.0, 0.0, 0.0)
    world.add_skeleton(_limited_leg(), q=[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0])
    q, v = world.q, world.v
    tau = np.zeros(world.nv)
    tau[6] = 0.5
    for _ in range(steps):
        q, v = world.step(q, v, tau)
        assert q[7] < 0.3
    return q, v, tau


def test_joint_limits_act_beside_a_free_joint():
    """With joint_limits on, a hip driven by 0.5 N m against its upper limit while the body floats (its coordinate
    in q after the free joint's quaternion) stays strictly below the limit and comes to rest within dhat of it; a
    start beyond the limit raises ValueError naming the joint and its coordinate."""
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT)
    q, v, tau = push_leg_to_its_limit(world, 150)
    assert 0.3 - DHAT < q[7] and abs(v[6]) < 1e-3
    q[7] = 0.31
    with pytest.raises(ValueError, match=r"joint 'limited/hip'.*q\[7\] = 0.31"):
        world.step(q, v, tau)
