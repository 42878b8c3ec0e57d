"""Planar joints in barrier worlds: stepped in the tangent of SE(2) as the lcp world moves them (free motion equal to
the lcp world's semi-implicit step, and its Jacobians), a spinning planar puck and a planar cart carrying a swinging
link pushing affine cubes across the ground (IPC Toolkit checking every step, a fast spin for the CCD along the
joint's arcs), and the step's derivatives -- state, torques, every parameter -- against central differences of
the step, q perturbed as q (+) e."""

import numpy as np
import pytest

import rigidiff as rd
from ipc_checks import assert_intersection_free
from step_differences import (assert_felt_parameter_jacobians, assert_parameter_vjp_is_transposed_jacobians,
                              assert_step_jacobians, assert_vjp_is_transposed_jacobians)
from test_barrier_floating_base import strike_a_post_with_a_spinning_rod
from test_barrier_floating_derivatives import _central_jacobians, _change

DHAT = 1e-3
PUCK = (0.08, 0.08, 0.04)
CUBE = 0.1


def _puck(name="puck"):
    """A box on a planar joint (normal z) whose centre of mass is 1 cm off the joint axis (so that the joint's
    translation and rotation couple in M), its underside 1 cm above the ground."""
    sk = rd.Skeleton(name)
    inertia = rd.Inertia.from_shape(rd.Box(PUCK), mass=0.5, origin=rd.Transform((0.01, 0.0, 0.0)))
    body = sk.add_body("disc", rd.PlanarJoint("slide"), joint_origin=rd.Transform((0.0, 0.0, 0.03)),
                       inertia=inertia)
    body.add_shape(rd.Box(PUCK))
    return sk


def _cart(name="cart"):
    """A box cart on a planar joint (normal z) carrying a link on a hinge about y at its front, hanging down to
    1 cm above the ground."""
    sk = rd.Skeleton(name)
    box = rd.Box((0.2, 0.1, 0.06))
    cart = sk.add_body("cart", rd.PlanarJoint("base", damping=0.1), joint_origin=rd.Transform((0.0, 0.0, 0.2)),
                       inertia=rd.Inertia.from_shape(box, mass=2.0, origin=rd.Transform((0.02, 0.0, 0.0))))
    cart.add_shape(box)
    rod = rd.Box((0.04, 0.04, 0.18))
    link = sk.add_body("rod", rd.RevoluteJoint("hinge", axis=(0, 1, 0), damping=0.05, stiffness=2.0), parent=cart,
                       joint_origin=rd.Transform((0.12, 0.0, 0.0)),
                       inertia=rd.Inertia.from_shape(rod, mass=0.4, origin=rd.Transform((0.0, 0.0, -0.09))))
    link.add_shape(rod, origin=rd.Transform((0.0, 0.0, -0.09)))
    return sk


def _world(friction=0.3, tolerance=1e-2):
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=friction, newton_tolerance=tolerance,
                     max_newton_iterations=2000)
    world.add_ground()
    return world


def _with_cube(world, x, density=200.0, stiffness=1e8):
    world.add_affine_body(rd.Box((CUBE,) * 3), density=density, stiffness=stiffness,
                          pose=rd.Transform((x, 0.02, CUBE / 2 + DHAT / 2)), name="cube")
    return world


def _patches(world, q):
    patches = [0] * sum(len(V) for _, V, _ in world._link_surfaces(q))
    for k, name in enumerate(world.body_names):
        patches += [k + 1] * len(world.surface(q, name)[0])
    return patches


def _free_puck():
    """The puck on a free joint instead (the same inertia and origin)."""
    sk = rd.Skeleton("puck")
    inertia = rd.Inertia.from_shape(rd.Box(PUCK), mass=0.5, origin=rd.Transform((0.01, 0.0, 0.0)))
    sk.add_body("disc", rd.FreeJoint("root"), joint_origin=rd.Transform((0.0, 0.0, 0.03)), inertia=inertia)
    return sk


def _move(q, d):
    """q (+) d on R^2 x SO(2), the step's chart: (x + R(theta) d_xy, theta + d_w)."""
    c, s = np.cos(q[2]), np.sin(q[2])
    return np.array([q[0] + c * d[0] - s * d[1], q[1] + s * d[0] + c * d[1], q[2] + d[2]])


def test_free_motion_is_a_free_bodys_in_its_plane():
    """Without contact the planar puck moves as the lcp world moves the same body on a free joint without gravity
    (on R^3 x SO(3), its velocity re-expressed in the new frame, gyroscopic term explicit): sliding at 1.2 m/s and
    spinning at 40 rad/s under in-plane forces, q and v agree at every one of 50 steps to 1e-9. The lcp world's own
    planar joint keeps a child-frame velocity with an explicit w x u, whose speed grows by sqrt(1 + (dt w)^2) a
    step: after 50 steps it slides at 137 m/s, the barrier step's puck at 1.1 m/s."""
    barrier = rd.World(dt=1e-2, solver="barrier", newton_tolerance=1e-12)
    barrier.add_skeleton(_puck(), q=[0.1, -0.2, 0.7])
    free = rd.World(dt=1e-2, gravity=(0.0, 0.0, 0.0), gyroscopic="explicit")
    free.add_skeleton(_free_puck())
    planar = rd.World(dt=1e-2, gravity=(0.0, 0.0, 0.0), gyroscopic="explicit")
    planar.add_skeleton(_puck())
    q, v, tau = np.array([0.1, -0.2, 0.7]), np.array([1.2, -0.3, 40.0]), np.array([0.4, -0.2, 0.01])
    qf = np.r_[q[:2], 0.0, np.sin(q[2] / 2) * np.array([0.0, 0.0, 1.0]), np.cos(q[2] / 2)]
    vf = np.r_[v[:2], 0.0, 0.0, 0.0, v[2]]
    ql, vl = q, v
    for _ in range(50):
        q, v = barrier.step(q, v, tau)
        qf, vf = free.step(qf, vf, np.r_[tau[:2], 0.0, 0.0, 0.0, tau[2]])
        ql, vl = planar.step(ql, vl, tau)
        turn = 2.0 * np.arctan2(qf[5], qf[6])
        np.testing.assert_allclose(q[:2], qf[:2], rtol=0, atol=1e-9)
        assert abs(np.remainder(q[2] - turn + np.pi, 2 * np.pi) - np.pi) < 1e-9
        np.testing.assert_allclose(v, vf[[0, 1, 5]], rtol=0, atol=1e-9)
    assert np.abs(qf[2:5]).max() < 1e-12 and np.abs(vf[2:5]).max() < 1e-12  # the free body stayed in the plane
    assert np.linalg.norm(vl[:2]) > 100.0 * np.linalg.norm(v[:2])


@pytest.mark.parametrize("make, q0", [(_puck, [0.0, 0.0, 0.0]), (_cart, [0.0, 0.0, 0.0, -0.3])])
def test_incremental_potential_gradient_in_the_step_chart(make, q0):
    """The gradient the Newton method uses with a planar joint is in the tangent at the configuration, moved as
    q (+) delta = (x + R(theta) delta_xy, theta + delta_w): it matches central differences of E along such moves,
    1 cm and 0.1 rad from the start (so that dq's Jacobian is not I) and 0.5 dhat from a cube (barrier terms)."""
    q_n = np.array(q0, dtype=float)
    q = q_n.copy()
    q[:3] = _move(q_n[:3], [0.01, -0.005, 0.1])
    probe = _world()
    probe.add_skeleton(make(), q=q_n)
    front = max(V[:, 0].max() for _, V, _ in probe._link_surfaces(q))  # the links' foremost point at q
    world = _with_cube(_world(), front + CUBE / 2 + 0.5 * DHAT)
    world.add_skeleton(make(), q=q_n)
    q_n, q = np.r_[q_n, world.q[len(q0):]], np.r_[q, world.q[len(q0):]]
    rng = np.random.default_rng(1)
    v_n, tau = rng.normal(size=world.nv), rng.normal(scale=0.3, size=world.nv)
    v_n[:3] = [0.5, -0.3, 4.0]

    def energy(x, kappa=1e3):
        return world._bw_incremental_potential(x, q_n, v_n, tau, kappa)

    def moved(d):
        x = q.copy()
        x[:3] = _move(q[:3], d[:3])
        x[3:] += d[3:]
        return x

    e, g = energy(q)
    assert e > energy(q, 0.0)[0]  # the barrier acts
    eps = 1e-7
    fd = np.empty(world.nv)
    for i in range(world.nv):
        d = np.zeros(world.nv)
        d[i] = eps
        fd[i] = (energy(moved(d))[0] - energy(moved(-d))[0]) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7 * np.abs(g).max())


def test_spinning_puck_pushes_a_cube_intersection_free():
    """The puck, thrown at 1.5 m/s and spinning at 30 rad/s (its corners 1.7 m/s), strikes the cube (friction 0.3
    with the ground) and pushes it along: every step intersection-free by IPC Toolkit, the puck's height held by
    its joint, the cube moved in +x."""
    ipctk = pytest.importorskip("ipctk")
    world = _with_cube(_world(), 0.16)
    world.add_skeleton(_puck(), q=[0.0, 0.0, 0.0])
    q, v = world.q, world.v
    v[:3] = [1.5, 0.0, 30.0]
    patches = _patches(world, q)
    touched = False
    for _ in range(20):
        q, v = world.step(q, v)
        assert_intersection_free(ipctk, world, q, DHAT, ground_half_width=2.0, patches=patches)
        touched |= world.last_step["active_pairs"] > 0
    cube = world.body_pose(q, "cube")[:3, 3]
    assert touched and cube[0] > 0.18 and abs(cube[2] - (CUBE / 2 + DHAT / 2)) < 1e-3
    assert np.ptp(world.surfaces(q)[0][:8, 2]) < 0.041  # the puck stays flat: only its joint's three dofs move


def test_cart_and_swinging_link_push_a_cube_intersection_free():
    """The cart drives at 1 m/s towards the cube with its link swinging forward: the link's end strikes the cube's
    side and pushes it along (IPC Toolkit checking every step)."""
    ipctk = pytest.importorskip("ipctk")
    world = _with_cube(_world(), 0.30)
    world.add_skeleton(_cart(), q=[0.0, 0.0, 0.0, 0.0])
    q, v = world.q, world.v
    v[:4] = [1.0, 0.0, 0.5, 2.0]
    patches = _patches(world, q)
    for _ in range(25):
        q, v = world.step(q, v, np.r_[3.0, 0.0, 0.0, 0.0, np.zeros(12)])
        assert_intersection_free(ipctk, world, q, DHAT, ground_half_width=2.0, patches=patches)
    assert world.body_pose(q, "cube")[0, 3] > 0.31


def test_ccd_follows_a_planar_joint_turn():
    """A rod (0.4 m, 2 cm square) on a planar joint spinning at 90 rad/s about its centre, without gravity, towards a
    1 cm static post 0.2 m out and 0.3 rad ahead of its tip (the free rod of test_barrier_floating_base.py on a
    planar joint): the chords of its vertices over a step pass 8.9 mm from the post and the step's end state is
    clear of it, while the rod strikes it mid-step. The CCD along the planar joint's turn catches the strike in the
    first step and the rod recoils; no step intersects (IPC Toolkit). With the joint's turn left out of the CCD's
    bound (counted as a translation) the rod passed through the post untouched."""
    strike_a_post_with_a_spinning_rod(pytest.importorskip("ipctk"), rd.PlanarJoint("slide"), [0.0, 0.0, 0.0], spin=2,
                                      linear=slice(0, 2))


def _puck_pressing_on_the_cube(friction=0.3):
    """(world, q, v, tau) at a step where the spinning puck presses on the cube, at a Newton tolerance of 1e-12."""
    # a soft cube (kappa = 1e4 Pa): at ABD's stiff 1e8 its stiffness moves the step by less than the solve's noise
    world = _with_cube(_world(friction, tolerance=1e-12), 0.16, stiffness=1e4)
    world.add_skeleton(_puck(), q=[0.0, 0.0, 0.0])
    q, v = world.q, world.v
    v[:3] = [1.0, 0.1, 4.0]
    tau = np.r_[0.5, 0.0, 0.02, np.zeros(12)]
    for _ in range(60):
        q_next, v_next = world.step(q, v, tau)
        if world.last_step["active_pairs"] > 0:
            return world, q, v, tau
        q, v = q_next, v_next
    raise AssertionError("the puck never reached the cube")


def _cart_pressing_on_the_cube():
    """(world, q, v, tau) at a step where the cart's link presses on the cube, at a Newton tolerance of 1e-12."""
    world = _with_cube(_world(tolerance=1e-12), 0.30, stiffness=1e4)
    world.add_skeleton(_cart(), q=[0.0, 0.0, 0.0, 0.0])
    q, v = world.q, world.v
    v[:4] = [1.0, 0.0, 0.5, 2.0]
    tau = np.r_[3.0, 0.2, 0.05, 0.1, np.zeros(12)]
    for _ in range(60):
        q_next, v_next = world.step(q, v, tau)
        if world.last_step["active_pairs"] > 0 and np.abs(world.step_jacobians(q, v, tau).dq_dq[4:7, :4]).max() > 1e-3:
            return world, q, v, tau
        q, v = q_next, v_next
    raise AssertionError("the link never pressed on the cube")


SCENES = {"puck": _puck_pressing_on_the_cube, "cart": _cart_pressing_on_the_cube}


@pytest.mark.parametrize("scene", SCENES)
def test_step_jacobians_match_central_differences(scene):
    """The six Jacobians of a step in contact (the joint's R^2 x SO(2) chart: its Jacobian, the derivative of its
    transpose, the start's chart; the frame-turn shift and the re-expression) against central differences of the
    step, within 1e-6 of the largest entry."""
    world, q, v, tau = SCENES[scene]()
    J = world.step_jacobians(q, v, tau)
    assert world.last_step["active_pairs"] > 0
    # q's steps of 1e-8: the cart's truncation error at 1e-7 is 1.3e-6 relative (at 1e-8, 1.3e-8)
    assert_step_jacobians(J, _central_jacobians(world, q, v, tau, eps=(1e-8, 1e-6, 1e-5)))


@pytest.mark.parametrize("scene", SCENES)
def test_parameter_jacobians_match_central_differences(scene):
    """Every parameter the step feels (the links' mass, centre of mass and inertia, the joints' damping, stiffness
    and armature, the cube's density and stiffness, gravity, friction, dhat), each moved by set_parameters."""
    world, q, v, tau = SCENES[scene]()
    must_feel = ("disc/mass", "disc/inertia_zz", "slide/damping_2", "slide/armature_0", "cube/density")
    assert_felt_parameter_jacobians(world, q, v, tau, must_feel if scene == "puck" else (),
                                    change=lambda a, b: _change(world, a, b))


def test_step_vjp_is_the_transposed_jacobians():
    world, q, v, tau = _cart_pressing_on_the_cube()
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=world.nv), rng.normal(size=world.nv)
    J = assert_vjp_is_transposed_jacobians(world, q, v, tau, a, b, atol=1e-9)
    assert_parameter_vjp_is_transposed_jacobians(world, q, v, tau, a, b)
    assert J.dq_dq.shape == (world.nv, world.nv)


def test_turn_limits_act_and_bad_input():
    """With joint limits on, a planar joint's turn stays strictly within its limits (the spinning puck, a torque
    turning it on, comes to rest within dhat of its upper limit); a turn of pi or more in one step (|w| dt) raises
    ValueError naming the joint (x's and y's limits: test_barrier_planar_limits.py)."""
    world = _world()
    sk = _puck()
    sk.bodies[0].joint.lower[2], sk.bodies[0].joint.upper[2] = -0.5, 0.5
    world.add_skeleton(sk, q=[0.0, 0.0, 0.0])
    world.joint_limits = True
    q, v = world.q, world.v
    v[2] = 20.0
    tau = np.r_[0.0, 0.0, 0.01, np.zeros(world.nv - 3)]  # turning it on against the limit
    for _ in range(60):
        q, v = world.step(q, v, tau)
        assert q[2] < 0.5
    assert 0.5 - q[2] < DHAT and abs(v[2]) < 1e-2
    v = world.v
    v[2] = 320.0  # 3.2 rad in one step
    with pytest.raises(ValueError, match="slide"):
        world.step(world.q, v)


def test_rollout_backward_is_the_chained_step_jacobians():
    """Eight steps of the cart driving into the cube: the recorded rollout's reverse pass (state, torques, every
    parameter) equals the step Jacobians chained backwards, q's cotangents in the tangent."""
    world = _with_cube(_world(tolerance=1e-12), 0.30, stiffness=1e4)
    world.add_skeleton(_cart(), q=[0.06, 0.0, 0.0, 0.0])
    q, v = world.q, world.v
    v[:4] = [1.0, 0.0, 0.5, 2.0]
    T = 8
    taus = np.tile(np.r_[3.0, 0.2, 0.05, 0.1, np.zeros(12)], (T, 1))
    traj = world.rollout(q, v, taus, record=True)
    rng = np.random.default_rng(4)
    dL_dQ, dL_dV = np.zeros((T + 1, world.nv)), np.zeros((T + 1, world.nv))
    dL_dQ[-1], dL_dV[-1] = rng.normal(size=(2, world.nv))
    g = traj.backward(dL_dQ, dL_dV, wrt="all")
    gq, gv, gp = dL_dQ[-1].copy(), dL_dV[-1].copy(), np.zeros(len(world.parameters()))
    gtaus, touched = np.zeros_like(taus), False
    for t in range(T - 1, -1, -1):
        J = world.step_jacobians(traj.q[t], traj.v[t], taus[t], wrt="all")
        touched |= world.last_step["active_pairs"] > 0
        gtaus[t] = J.dq_dtau.T @ gq + J.dv_dtau.T @ gv
        gp += J.dq_dp.T @ gq + J.dv_dp.T @ gv
        gq, gv = J.dq_dq.T @ gq + J.dv_dq.T @ gv + dL_dQ[t], J.dq_dv.T @ gq + J.dv_dv.T @ gv + dL_dV[t]
    assert touched
    for got, want in ((g.q, gq), (g.v, gv), (g.tau, gtaus), (g.parameters, gp)):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-8 * np.abs(want).max())
