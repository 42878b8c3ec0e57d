"""Step derivatives of barrier worlds with free and ball joints (floating bases), by the implicit function theorem
in the tangent of the step's chart: against central differences of the step itself at a Newton tolerance of 1e-12,
the configuration perturbed as q (+) e (SE(3)'s exponential, as the lcp world's step Jacobians take it) and q's
change measured by difference(q'_minus, q'_plus); the reverse mode against the transposed Jacobians; a recorded
rollout's backward pass against the chained step Jacobians."""

import numpy as np
import pytest

import rigidiff as rd
from step_differences import (NAMES, assert_parameter_jacobians, assert_rollout_backward_is_chained_jacobians,
                              assert_vjp_is_transposed_jacobians, central_parameter_jacobians, relative_error)
from test_barrier_floating_base import _box_skeleton, _quaternion, _tree, push_leg_to_its_limit

DHAT = 1e-3
EPS = (1e-7, 1e-6, 1e-5)  # central-difference steps for q, v, tau


def _world(friction=0.3, dhat=DHAT):
    world = rd.World(dt=1e-2, solver="barrier", dhat=dhat, friction=friction, newton_tolerance=1e-12,
                     max_newton_iterations=2000)
    world.add_ground()
    return world


def _move(world, q, d):
    """q (+) d: the skeletons' coordinates by SE(3)'s exponential (world.skeleton_world().integrate), the bodies'
    added."""
    ns, nvs = world.skeleton_world().nq, world.skeleton_world().nv
    return np.concatenate([world.skeleton_world().integrate(q[:ns], d[:nvs]), q[ns:] + d[nvs:]])


def _change(world, q0, q1):
    """q1 (-) q0 in the tangent at q0 (the skeletons' by difference, the bodies' subtracted)."""
    ns = world.skeleton_world().nq
    return np.concatenate([world.skeleton_world().difference(q0[:ns], q1[:ns]), q1[ns:] - q0[ns:]])


def _central_jacobians(world, q, v, tau, eps=EPS):
    n = world.nv
    cols = {name: np.zeros((n, n)) for name in NAMES}
    for which, name_q, name_v in ((0, "dq_dq", "dv_dq"), (1, "dq_dv", "dv_dv"), (2, "dq_dtau", "dv_dtau")):
        for j in range(n):
            e = np.zeros(n)
            e[j] = eps[which]
            args_p, args_m = [q.copy(), v.copy(), tau.copy()], [q.copy(), v.copy(), tau.copy()]
            if which == 0:
                args_p[0], args_m[0] = _move(world, q, e), _move(world, q, -e)
            else:
                args_p[which] = args_p[which] + e
                args_m[which] = args_m[which] - e
            qp, vp = world.step(*args_p)
            qm, vm = world.step(*args_m)
            cols[name_q][:, j] = _change(world, qm, qp) / (2 * eps[which])
            cols[name_v][:, j] = (vp - vm) / (2 * eps[which])
    return cols


def _box_sliding_and_spinning():
    """A free box resting on the ground (friction 0.3), sliding at 0.5 m/s and spinning about z at 3 rad/s, pushed
    by a torque on every dof."""
    world = _world()
    world.add_skeleton(_box_skeleton(), q=np.concatenate([[0.0, 0.0, 0.04 + 0.5 * DHAT], _quaternion([0, 0, 0.3])]))
    q, v = world.q, world.v
    for _ in range(3):  # settle into the barrier
        q, v = world.step(q, v)
    v[:] = [0.5, 0.1, 0.0, 0.0, 0.0, 3.0]
    return world, q, v, np.array([0.5, -0.3, 0.2, 0.01, -0.02, 0.03])


def _box_on_a_cube_world(friction=0.3, dhat=DHAT, density=300.0, stiffness=1e4):
    """A free box (turned about z) above an affine cube (a soft one, so that its stiffness moves the step by more
    than the solve's noise) on the ground."""
    world = _world(friction, dhat)
    world.add_affine_body(rd.Box((0.3, 0.3, 0.1)), density=density, stiffness=stiffness,
                          pose=rd.Transform((0.0, 0.0, 0.05 + 0.5 * DHAT)), name="cube")
    world.add_skeleton(_box_skeleton(), q=np.concatenate([[0.02, 0.0, 0.14 + DHAT], _quaternion([0, 0, 0.4])]))
    return world


def _box_on_a_cube():
    """The free box resting on the affine cube, both sliding with friction 0.3."""
    world = _box_on_a_cube_world()
    q, v = world.q, world.v
    for _ in range(3):
        q, v = world.step(q, v)
    v[:6] = [0.2, 0.0, 0.0, 0.0, 0.0, 1.0]
    tau = np.zeros(world.nv)
    tau[:6] = [0.3, 0.1, 0.0, 0.0, 0.02, 0.0]
    return world, q, v, tau


def _tree_standing():
    """The free-floating tree (revolute hips and knee, a ball ankle) standing on the ground, its joints moving."""
    world = _world()
    q0 = np.concatenate([[0.0, 0.0, 0.195 + 0.5 * DHAT], [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]])
    world.add_skeleton(_tree(), q=q0)
    q, v = world.q, world.v
    for _ in range(5):
        q, v = world.step(q, v)
    rng = np.random.default_rng(3)
    v = v + rng.normal(scale=0.2, size=world.nv)
    return world, q, v, rng.normal(scale=0.1, size=world.nv)


def _leg_at_its_limit():
    """The floating base whose hip a torque holds inside its upper limit's barrier (joint limits on, no gravity)."""
    world = _world()
    q, v, tau = push_leg_to_its_limit(world, 100)
    assert 0.3 - q[7] < DHAT
    v[:6] = [0.1, 0.0, 0.0, 0.5, 0.0, 0.2]
    return world, q, v, tau


SCENES = {"box sliding and spinning": _box_sliding_and_spinning, "box on an affine cube": _box_on_a_cube,
          "tree standing": _tree_standing, "leg at its limit": _leg_at_its_limit}


@pytest.mark.parametrize("scene", list(SCENES))
def test_step_jacobians_match_central_differences(scene):
    """Each of the six Jacobians against central differences of the step (contact, friction, the joint-limit
    barrier and, for the tree, the ball joint's and the hips' coupling through M): within 1e-6 of the largest
    entry."""
    world, q, v, tau = SCENES[scene]()
    J = world.step_jacobians(q, v, tau)
    assert world.last_step["active_pairs"] > 0 or world.joint_limits
    fd = _central_jacobians(world, q, v, tau)
    for name in NAMES:
        assert relative_error(getattr(J, name), fd[name]) < 1e-6, name


def test_step_vjp_and_rollout_backward_match_the_jacobians():
    """step_vjp is the transposed Jacobians times the cotangents; a recorded rollout's backward pass is the chain
    of the step Jacobians (the box on the cube, 4 steps)."""
    world, q, v, tau = _box_on_a_cube()
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=world.nv), rng.normal(size=world.nv)
    assert_vjp_is_transposed_jacobians(world, q, v, tau, a, b, 1e-12)
    assert_rollout_backward_is_chained_jacobians(world, q, v, np.tile(tau, (4, 1)), a, b)


@pytest.mark.parametrize("gyroscopic", ["explicit", "implicit"])
@pytest.mark.parametrize("make", [_box_skeleton, _tree])
def test_free_flight_jacobians_equal_the_lcp_steps(make, gyroscopic):
    """Without contact the barrier step is the lcp world's semi-implicit step (the gyroscopic term taken alike in
    both), so their Jacobians, taken in the same tangent convention, agree (to 1e-8 of the largest entry)."""
    barrier = rd.World(dt=1e-2, solver="barrier", newton_tolerance=1e-12, gyroscopic=gyroscopic)
    lcp = rd.World(dt=1e-2, gyroscopic=gyroscopic)
    lcp.add_skeleton(make())
    q = lcp.q
    q[:7] = np.concatenate([[0.1, -0.2, 1.0], _quaternion([0.3, -0.2, 0.5])])
    barrier.add_skeleton(make(), q=q)
    rng = np.random.default_rng(7)
    v, tau = rng.normal(size=lcp.nv), rng.normal(scale=0.3, size=lcp.nv)
    Jb, Jl = barrier.step_jacobians(q, v, tau), lcp.step_jacobians(q, v, tau)
    for name in NAMES:
        A, B = getattr(Jb, name), getattr(Jl, name)
        np.testing.assert_allclose(A, B, rtol=0, atol=1e-8 * np.abs(B).max(), err_msg=name)


@pytest.mark.parametrize("scene", ["box on an affine cube", "tree standing"])
def test_parameter_jacobians_match_central_differences(scene):
    """Every parameter (the links' mass, centre of mass and inertia, the joints' damping, stiffness and armature --
    a free joint's six dofs too --, the cube's density and stiffness, gravity, friction and dhat) against central
    differences of the step from the same state, each moved by set_parameters, q's change in the tangent (within
    1e-6 of the largest entry)."""
    world, q, v, tau = SCENES[scene]()
    J = world.step_jacobians(q, v, tau, wrt="all")
    p = world.parameters()
    assert J.parameter_names == p.names
    if scene == "box on an affine cube":
        assert {"base/mass", "root/damping_5", "root/armature_0", "cube/density", "gravity_z"} <= set(p.names)
    felt = [n for n in p.names if np.abs(J.dq_dp[:, J.parameter_names.index(n)]).max() > 0.0]
    # steps of 3e-9 of a column's scale at a zero parameter: a free joint's angular armature then stays well below the
    # box's smallest moment, which the implicit gyroscopic update's second half divides by (curved in it)
    fd = central_parameter_jacobians(world, q, v, tau, J, felt, change=lambda a, b: _change(world, a, b),
                                     zero_move=3e-9)
    assert_parameter_jacobians(J, fd)


def test_rollout_backward_matches_central_differences_of_rollouts():
    """The free box sliding and spinning on the ground for 8 steps: the gradient of its final position and yaw
    (a loss on q in the tangent) with respect to the start state and every step's torques, from the recorded
    rollout's backward pass, against central differences of whole rollouts (within 1e-6 of the largest entry)."""
    world, q, v, tau = _box_sliding_and_spinning()
    taus = np.tile(tau, (8, 1))
    w = np.array([1.0, 0.5, 0.0, 0.0, 0.0, 0.3])  # dL/dq_final in the tangent at the final state

    def loss(q0, v0, ts):
        Q, _ = world.rollout(q0, v0, ts)
        return w @ _change(world, final, Q[-1])  # the final state's move, measured in its tangent

    traj = world.rollout(q, v, taus, record=True)
    final = traj.q[-1]
    dL_dQ = np.zeros((9, world.nv))
    dL_dQ[-1] = w
    g = traj.backward(dL_dQ)
    fd_q, fd_v = np.empty(world.nv), np.empty(world.nv)
    for j in range(world.nv):
        e = np.zeros(world.nv)
        e[j] = EPS[0]
        fd_q[j] = (loss(_move(world, q, e), v, taus) - loss(_move(world, q, -e), v, taus)) / (2 * EPS[0])
        e[j] = EPS[1]
        fd_v[j] = (loss(q, v + e, taus) - loss(q, v - e, taus)) / (2 * EPS[1])
    fd_tau = np.empty(world.nv)
    for j in range(world.nv):
        d = np.zeros_like(taus)
        d[3, j] = EPS[2]
        fd_tau[j] = (loss(q, v, taus + d) - loss(q, v, taus - d)) / (2 * EPS[2])
    assert relative_error(g.q, fd_q) < 1e-6
    assert relative_error(g.v, fd_v) < 1e-6
    assert relative_error(g.tau[3], fd_tau) < 1e-6
