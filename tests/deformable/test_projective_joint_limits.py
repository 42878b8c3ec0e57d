"""Joint position limits in projective worlds: a penalty on each coordinate beyond its limit, a term of the step's
potential. A pendulum falling onto its limit rests there (and swings past without limits), its energy never grows,
a state beyond a limit is pushed back, and the gradients of steps and rollouts match central differences of our
own step with a joint in its limit at the start and entering it during the step."""

import numpy as np
import pytest
from test_projective_skeletons import _arm, _arm_start, _check_vjp, _pusher, _world, _x_momentum

import rigidiff as rd

MASS, LENGTH, UPPER = 1.0, 0.3, 0.5
G = 9.81


def _pendulum(damping=0.0, upper=UPPER):
    """A point-like bob on a revolute joint about y, level with the pivot (along +x) at s = 0; s > 0 lowers it."""
    sk = rd.Skeleton("pendulum")
    sk.add_body("bob", rd.RevoluteJoint("pivot", axis=(0, 1, 0), lower=-np.pi, upper=upper, damping=damping),
                joint_origin=rd.Transform((1.0, 0.0, 1.0)),
                inertia=rd.Inertia(MASS, (LENGTH, 0.0, 0.0), 1e-4 * np.eye(3)))
    return sk


def _pendulum_world(limits=True, stiffness=1e4, gravity=(0.0, 0.0, -G), damping=0.0):
    # the soft block lies far from the pendulum, which carries no shape: only the joint and its limit act
    world = _world(tolerance=1e-10, gravity=gravity)
    world.add_ground()
    world.add_skeleton(_pendulum(damping))
    world.joint_limits = limits
    world.joint_limit_stiffness = stiffness
    return world


def test_limits_are_off_by_default_and_validated():
    world = _world()
    assert world.joint_limits is False and world.joint_limit_stiffness == 1e4
    with pytest.raises(TypeError, match="joint_limits"):
        world.joint_limits = 1
    with pytest.raises(ValueError, match="joint_limit_stiffness"):
        world.joint_limit_stiffness = 0.0
    world.joint_limits = True
    world.add_skeleton(_pendulum())  # the setting holds for skeletons added later
    assert world.joint_limits and world.parameters()["joint_limit_stiffness"] == 1e4


@pytest.mark.parametrize("stiffness", [1e4, 1e8])
def test_a_pendulum_falls_onto_its_limit_and_rests_there(stiffness):
    world = _pendulum_world(damping=0.5, stiffness=stiffness)
    s = world.layout("pendulum")
    q, v = world.q, world.v
    for _ in range(300):
        q, v = world.step(q, v)
    # at rest the penalty holds gravity's torque: k depth = m g L cos(limit + depth)
    depth = 0.0
    for _ in range(20):
        depth = MASS * G * LENGTH * np.cos(UPPER + depth) / stiffness
    # (at 1e8 the depth, 2.6e-8 rad, is resolved to the rounding of s itself: 1e-12 rad)
    assert q[s.q][0] - UPPER == pytest.approx(depth, rel=1e-6 if stiffness < 1e6 else 0.0, abs=1e-12)
    assert abs(v[s.v][0]) < 1e-5
    free = _pendulum_world(limits=False, damping=0.5)
    q, v = free.q, free.v
    peak = 0.0
    for _ in range(60):
        q, v = free.step(q, v)
        peak = max(peak, q[s.q][0])
    assert peak > UPPER + 0.5  # without limits it swings on down


def _mechanical_energy(s, u, k):
    inertia = MASS * LENGTH**2 + 1e-4
    beyond = max(0.0, s - UPPER)
    return 0.5 * inertia * u**2 - MASS * G * LENGTH * np.sin(s) + 0.5 * k * beyond**2


def test_energy_never_grows_and_the_bob_comes_back_no_higher_than_released():
    """Without damping, implicit Euler only dissipates: the bob's kinetic, gravitational and penalty energy
    never grows across a step, also while it bounces on its limit."""
    k = 2e3
    world = _pendulum_world(stiffness=k)
    s = world.layout("pendulum")
    q, v = world.q, world.v
    energy = _mechanical_energy(0.0, 0.0, k)
    deepest, bounced = 0.0, False
    for _ in range(80):
        q, v = world.step(q, v)
        e = _mechanical_energy(q[s.q][0], v[s.v][0], k)
        assert e <= energy + 1e-9
        energy = e
        deepest = max(deepest, q[s.q][0])
        bounced = bounced or (deepest > UPPER and v[s.v][0] < 0.0)
        assert q[s.q][0] >= -1e-9  # never above where it was released
    assert bounced and UPPER < deepest < UPPER + 0.1


def test_a_state_beyond_the_limit_is_pushed_back():
    world = _pendulum_world(gravity=(0.0, 0.0, 0.0), damping=2.0)
    s = world.layout("pendulum")
    q, v = world.q, world.v
    q[s.q] = UPPER + 0.2
    q1, v1 = world.step(q, v)
    assert q1[s.q][0] < UPPER + 0.2 and v1[s.v][0] < 0.0
    for _ in range(100):
        q1, v1 = world.step(q1, v1)
    assert q1[s.q][0] <= UPPER + 1e-9


@pytest.mark.parametrize("case", ["inside", "entering"])
def test_gradients_with_a_joint_in_its_limit_match_central_differences(case):
    world = _world(friction=0.5)
    world.add_ground()
    sk = _arm()
    sk.bodies[0].joint.upper = np.array([0.002 - 0.004 if case == "inside" else 0.002 + 0.5 * 1e-2 * 0.05])
    sk.bodies[1].joint.lower = np.array([-1.0])
    world.add_skeleton(sk)
    world.joint_limits = True
    world.joint_limit_stiffness = 50.0
    q, v, f = _arm_start(world)
    s = world.layout("arm")
    qn = world.step(q, v, f)[0]
    upper = sk.bodies[0].joint.upper[0]
    assert qn[s.q][0] > upper  # the shoulder ends the step in its limit
    free = _world(friction=0.5)
    free.add_ground()
    free.add_skeleton(_arm())
    assert free.step(q, v, f)[0][s.q][0] > qn[s.q][0]  # which holds it back
    g = _check_vjp(world, q, v, f, seed=2, parameters=(("friction", lambda x: setattr(world, "friction", x), 0.5),))
    # k_l's own gradient is small beside the others': its central difference is Richardson-extrapolated from steps
    # of 1 % (error O(h^4)), so that it holds to 1e-6 relative on its own
    rng = np.random.default_rng(2)
    wq, wv = rng.standard_normal(world.nq), rng.standard_normal(world.nv)

    def central(h):
        out = []
        for k in (50.0 + h, 50.0 - h):
            world.joint_limit_stiffness = k
            qn, vn = world.step(q, v, f)
            out.append(wq @ qn + wv @ vn)
        world.joint_limit_stiffness = 50.0
        return (out[0] - out[1]) / (2 * h)

    fd = (4 * central(0.25) - central(0.5)) / 3
    assert fd != 0.0 and g.parameter("joint_limit_stiffness") == pytest.approx(fd, rel=1e-6, abs=0.0)


@pytest.mark.parametrize("start", ["inside", "entering"])
def test_jacobians_and_rollout_backward_through_a_limit(start):
    world = _pendulum_world(stiffness=2e3)
    s = world.layout("pendulum")
    q, v = world.q, world.v
    # beyond its limit and going deeper, or reaching it within the first step
    q[s.q], v[s.v] = (UPPER + 0.003, 0.5) if start == "inside" else (UPPER - 0.01, 1.5)
    f = np.zeros(world.nv)
    J = world.step_jacobians(q, v, f)
    h = 1e-6
    for name, dq, dv in (("q", J.dq_dq, J.dv_dq), ("v", J.dq_dv, J.dv_dv)):
        e = np.zeros(world.nv)
        e[s.v.start] = h
        args_up = (q + e, v) if name == "q" else (q, v + e)
        args_down = (q - e, v) if name == "q" else (q, v - e)
        (qu, vu), (qd, vd) = world.step(*args_up, f), world.step(*args_down, f)
        col = s.v.start
        # the block's rows are zero: their differences are the solves' rounding, below 1e-6 of the column's scale
        assert dq[:, col] == pytest.approx((qu - qd) / (2 * h), rel=1e-6, abs=1e-6 * np.abs(dq[:, col]).max())
        assert dv[:, col] == pytest.approx((vu - vd) / (2 * h), rel=1e-6, abs=1e-6 * np.abs(dv[:, col]).max())
        assert dq[col, col] != 0.0
    forces = np.zeros((4, world.nv))
    Q, V = world.rollout(q, v, forces)
    assert Q[-1][s.q][0] > UPPER
    dQ, dV = np.zeros_like(Q), np.zeros_like(V)
    dQ[-1][s.q], dV[-1][s.v] = 1.0, 0.3
    g = world.rollout_backward(Q, V, forces, dQ, dV)

    def loss(q0=q, v0=v, k=2e3):
        world.joint_limit_stiffness = k
        Qh, Vh = world.rollout(q0, v0, forces)
        world.joint_limit_stiffness = 2e3
        return Qh[-1][s.q][0] + 0.3 * Vh[-1][s.v][0]

    e = np.zeros(world.nv)
    e[s.v.start] = h
    assert g.q[s.q][0] == pytest.approx((loss(q0=q + e) - loss(q0=q - e)) / (2 * h), rel=1e-6)
    assert g.v[s.v][0] == pytest.approx((loss(v0=v + e) - loss(v0=v - e)) / (2 * h), rel=1e-6)
    dk = 2e3 * 1e-6
    assert g.parameter("joint_limit_stiffness") == pytest.approx((loss(k=2e3 + dk) - loss(k=2e3 - dk)) / (2 * dk),
                                                                 rel=1e-6)


def test_a_pusher_stopped_by_its_limit_balances_momentum_with_the_limit_force():
    """A box on a prismatic rail pushes the soft block on frictionless ground into its upper limit (N/m units):
    each step, the x momentum of block and pusher grows by (tau - k_l (s' - upper)) dt, the limit's force at the
    step's end being the only external one along x; the pusher ends held at the limit."""
    world = _world(tolerance=1e-10)
    world.add_ground()
    sk = _pusher(("x",))
    upper = 0.004
    sk.bodies[0].joint.upper = np.array([upper])
    world.add_skeleton(sk)
    world.joint_limits = True
    k = world.joint_limit_stiffness = 5e3
    s = world.layout("pusher")
    q, v = world.q, world.v
    tau = 2.0
    f = np.zeros(world.nv)
    f[s.v] = tau
    momentum = _x_momentum(world)
    reached = False
    for _ in range(40):
        p = momentum(v)
        q, v = world.step(q, v, f)
        limit_force = -k * max(0.0, q[s.q][0] - upper)
        reached = reached or limit_force < 0.0
        assert momentum(v) == pytest.approx(p + (tau + limit_force) * world.dt, rel=1e-6, abs=1e-9)
    assert reached and upper < q[s.q][0] < upper + 2 * tau / k
