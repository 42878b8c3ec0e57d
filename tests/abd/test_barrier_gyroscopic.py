"""The implicit gyroscopic update in barrier worlds (World(solver="barrier", gyroscopic=...)): without contact the
step is the lcp world's implicit step (a free box with armature, damping and a spring on its joint, a ball-joint top
under gravity), a torque-free spinning body keeps its angular momentum to round-off (the explicit option drifts),
the step's derivatives (state, torques, parameters, reverse mode, rollout backward) against central differences
with contact (a spinning free box landing on the ground, a ball-joint top on a fixed pivot touching an affine cube),
and the option's validation."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rigidiff as rd
from step_differences import (NAMES, assert_parameter_jacobians, assert_parameter_vjp_is_transposed_jacobians,
                              assert_rollout_backward_is_chained_jacobians, assert_vjp_is_transposed_jacobians,
                              central_parameter_jacobians, relative_error)
from test_barrier_floating_derivatives import _central_jacobians, _change

DHAT = 1e-3
INERTIA = np.diag([0.1, 0.2, 0.25])  # about the centre of mass: three distinct moments (the flip of the middle axis)
TOP = rd.Box((0.05, 0.03, 0.2))  # the top's body, hanging 0.1 below its pivot


def _spinner(shape=None, **joint):
    """A free body of mass 1 with INERTIA about its centre of mass, 2 cm off the joint's origin (and shape if given)."""
    sk = rd.Skeleton("spinner")
    inertia = rd.Inertia(1.0, com=(0.02, 0.0, 0.0), rotational_inertia=INERTIA)
    body = sk.add_body("body", rd.FreeJoint("root", **joint), inertia=inertia)
    if shape is not None:
        body.add_shape(shape)
    return sk


def _top(pivot=(0.0, 0.0, 0.0)):
    """A box hanging from a ball joint at pivot (its centre 0.1 below it, so that gravity turns it)."""
    sk = rd.Skeleton("top")
    at = rd.Transform((0.0, 0.0, -0.1))
    body = sk.add_body("body", rd.BallJoint("pivot"), joint_origin=rd.Transform(pivot),
                       inertia=rd.Inertia.from_shape(TOP, density=800.0, origin=at))
    body.add_shape(TOP, at)
    return sk


def _quaternion(rotvec):
    return Rotation.from_rotvec(rotvec).as_quat()  # (x, y, z, w), rigidiff's order


def _pair(make, gyroscopic="implicit", **barrier):
    """(barrier world, lcp world) holding make() each, the gyroscopic term taken alike."""
    world = rd.World(dt=1e-2, solver="barrier", newton_tolerance=1e-12, gyroscopic=gyroscopic, **barrier)
    lcp = rd.World(dt=1e-2, gyroscopic=gyroscopic)
    world.add_skeleton(make())
    lcp.add_skeleton(make())
    return world, lcp


SPINNERS = {
    "free box": lambda: _spinner(),
    # the joint's block A of M + dt D + dt^2 K differs from M's: the update's impulse acts through A^-1 as a force
    "free box with armature, damping, spring": lambda: _spinner(armature=0.05, damping=[0, 0, 0, 0.3, 0.3, 0.3], stiffness=[0, 0, 0, 2.0, 2.0, 2.0]),
    # dampers and springs on the linear dofs too: they must not resist the frame turn, which the lcp step adds
    # after its damped solve
    "free box with dampers and springs on every dof": lambda: _spinner(
        damping=[0.4, 0.5, 0.6, 0.3, 0.3, 0.3], stiffness=[1.0, 2.0, 3.0, 2.0, 2.0, 2.0]),
    "ball-joint top": _top,
}


@pytest.mark.parametrize("scene", list(SPINNERS))
def test_free_flight_equals_the_lcp_worlds_implicit_step(scene):
    """Without contact the barrier step is the lcp world's semi-implicit step with the implicit gyroscopic update: q
    and v agree to 1e-10 at each of 60 steps (spinning at up to 6 rad/s, torques on every dof, gravity on), and they
    leave the explicit step's path (so that the update is on)."""
    world, lcp = _pair(SPINNERS[scene])
    explicit = rd.World(dt=1e-2, gyroscopic="explicit")
    explicit.add_skeleton(SPINNERS[scene]())
    q = lcp.q
    q[-4:] = _quaternion([0.3, -0.2, 0.5])
    v = np.zeros(lcp.nv)
    v[-3:] = [2.0, -6.0, 3.0]
    if lcp.nv == 6:
        v[:3] = [0.5, -0.3, 1.0]
        q[:3] = [0.1, -0.2, 1.0]
    ql, vl, qe, ve = q.copy(), v.copy(), q.copy(), v.copy()
    rng = np.random.default_rng(1)
    for _ in range(60):
        tau = rng.normal(scale=0.1 if lcp.nv == 6 else 1e-3, size=lcp.nv)  # the top's spin inertia is 7e-5
        q, v = world.step(q, v, tau)
        ql, vl = lcp.step(ql, vl, tau)
        qe, ve = explicit.step(qe, ve, tau)
        np.testing.assert_allclose(q, ql, rtol=0, atol=1e-10)
        np.testing.assert_allclose(v, vl, rtol=0, atol=1e-10)
    assert np.abs(v - ve).max() > 1e-3


def _angular_momentum(q, v):
    """The spinner's angular momentum about its centre of mass in world axes, R Ic w (w in the body frame)."""
    return Rotation.from_quat(q[3:7]).apply(INERTIA @ v[3:6])


def test_torque_free_spin_keeps_its_angular_momentum():
    """A free body spinning torque-free about its middle axis (unstable: it flips) for 10 s at dt = 1e-2: with the
    implicit update its angular momentum in world axes stays within 1e-12 of the start (relative); the explicit
    option, today's step, drifts by more than 1 % (the property the update exists for)."""
    drift = {}
    for gyroscopic in ("implicit", "explicit"):
        world = rd.World(dt=1e-2, solver="barrier", gravity=(0.0, 0.0, 0.0), newton_tolerance=1e-12,
                         gyroscopic=gyroscopic)
        world.add_skeleton(_spinner())
        q, v = world.q, np.zeros(6)
        v[3:] = [0.05, 4.0, 0.1]
        L0 = _angular_momentum(q, v)
        worst, flipped = 0.0, False
        for _ in range(1000):
            q, v = world.step(q, v)
            worst = max(worst, np.linalg.norm(_angular_momentum(q, v) - L0) / np.linalg.norm(L0))
            flipped |= v[4] < -3.0  # the spin about the middle axis reversed (in the body frame)
        drift[gyroscopic] = worst
        assert flipped
    assert drift["implicit"] < 1e-12
    assert drift["explicit"] > 1e-2


def _landing_box(**joint):
    """The spinner with a box surface (0.2 x 0.12 x 0.08) just above the ground, falling and spinning: the step
    enters the barrier (friction 0.3). joint: the free joint's damping, stiffness, armature."""
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.3, newton_tolerance=1e-12,
                     max_newton_iterations=2000)
    world.add_ground()
    world.add_skeleton(_spinner(rd.Box((0.2, 0.12, 0.08)), **joint),
                       q=np.concatenate([[0.0, 0.0, 0.04 + 0.8 * DHAT], _quaternion([0.0, 0.0, 0.3])]))
    v = np.array([0.2, 0.0, -0.06, 1.0, -2.0, 4.0])
    return world, world.q, v, np.array([0.3, -0.2, 0.1, 0.01, -0.02, 0.03])


def _top_on_a_cube():
    """The top on a fixed pivot 0.2 above an affine cube (resting on the ground), its bottom within dhat of the
    cube's top, spinning about its axis and swinging (friction 0.3)."""
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.3, newton_tolerance=1e-12,
                     max_newton_iterations=2000)
    world.add_ground()
    world.add_affine_body(rd.Box((0.12, 0.12, 0.1)), density=300.0, stiffness=1e4,
                          pose=rd.Transform((0.0, 0.0, 0.05 + 0.5 * DHAT)), name="cube")
    world.add_skeleton(_top(pivot=(0.0, 0.0, 0.3 + 1.2 * DHAT)))
    q, v = world.q, world.v
    v[:3] = [0.3, -0.2, 8.0]
    tau = np.zeros(world.nv)
    tau[:3] = [0.01, 0.02, -0.01]
    return world, q, v, tau


SCENES = {"landing box": _landing_box, "top on a cube": _top_on_a_cube,
          "landing box with dampers and springs": lambda: _landing_box(damping=[0.4, 0.5, 0.6, 0.3, 0.3, 0.3],
                                                                       stiffness=[1.0, 2.0, 3.0, 2.0, 2.0, 2.0])}


@pytest.mark.parametrize("scene", list(SCENES))
def test_step_jacobians_match_central_differences(scene):
    """The six Jacobians of a step with contact and the implicit update against central differences of the step
    (within 1e-6 of the largest entry); the update moves them (they differ from the explicit step's)."""
    world, q, v, tau = SCENES[scene]()
    J = world.step_jacobians(q, v, tau)
    assert world.last_step["active_pairs"] > 0
    fd = _central_jacobians(world, q, v, tau)
    for name in NAMES:
        assert relative_error(getattr(J, name), fd[name]) < 1e-6, name
    world.gyroscopic = "explicit"
    assert np.abs(world.step_jacobians(q, v, tau).dv_dv - J.dv_dv).max() > 1e-3 * np.abs(J.dv_dv).max()


@pytest.mark.parametrize("scene", list(SCENES))
def test_parameter_jacobians_match_central_differences(scene):
    """Every parameter the step feels (the body's mass, centre of mass and inertia, which the update's impulse and
    its second half depend on, the joint's damping, stiffness and armature, the cube's, gravity, friction, dhat)
    against central differences of the step (within 1e-6 of the largest entry); the reverse mode's parameter
    gradient is the transposed Jacobians times the cotangents."""
    world, q, v, tau = SCENES[scene]()
    J = world.step_jacobians(q, v, tau, wrt="all")
    felt = [n for n in J.parameter_names if np.abs(J.dq_dp[:, J.parameter_names.index(n)]).max() > 0.0]
    assert {"body/inertia_xx", "body/inertia_xy", "body/inertia_zz"} <= set(felt)
    # steps of 3e-9 of a column's scale at a zero parameter: an armature's comes near the body's smallest moment
    fd = central_parameter_jacobians(world, q, v, tau, J, felt, change=lambda a, b: _change(world, a, b),
                                     zero_move=3e-9)
    assert_parameter_jacobians(J, fd)
    rng = np.random.default_rng(2)
    assert_parameter_vjp_is_transposed_jacobians(world, q, v, tau, rng.normal(size=world.nv),
                                                 rng.normal(size=world.nv))


def test_step_vjp_and_rollout_backward_match_the_jacobians():
    """On the top touching the cube: step_vjp is the transposed Jacobians times the cotangents, and a recorded
    rollout's backward pass (4 steps) is the chain of the step Jacobians, torques included."""
    world, q, v, tau = _top_on_a_cube()
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=world.nv), rng.normal(size=world.nv)
    assert_vjp_is_transposed_jacobians(world, q, v, tau, a, b, 1e-12)
    assert_rollout_backward_is_chained_jacobians(world, q, v, np.tile(tau, (4, 1)), a, b)


def test_the_option_is_validated_and_settable():
    """gyroscopic defaults to "implicit" as the lcp world's; TypeError / ValueError name the argument; setting it
    after the skeleton was added switches the step, and new parameters (set_parameters) keep it."""
    world, lcp = _pair(_spinner)
    assert rd.World(dt=1e-2, solver="barrier").gyroscopic == "implicit"
    with pytest.raises(TypeError, match="gyroscopic"):
        rd.World(dt=1e-2, solver="barrier", gyroscopic=1)
    with pytest.raises(ValueError, match="gyroscopic"):
        rd.World(dt=1e-2, solver="barrier", gyroscopic="semi")
    with pytest.raises(ValueError, match="gyroscopic"):
        world.gyroscopic = "Implicit"
    assert world.gyroscopic == "implicit"
    q, v = world.q, np.array([0.0, 0.0, 0.0, 1.0, 5.0, -2.0])
    world.gyroscopic = "explicit"
    lcp.gyroscopic = "explicit"
    np.testing.assert_allclose(world.step(q, v)[1], lcp.step(q, v, np.zeros(6))[1], rtol=0, atol=1e-12)
    world.gyroscopic = lcp.gyroscopic = "implicit"
    world.set_parameters({"body/inertia_xx": 0.12})
    lcp.set_parameters({"body/inertia_xx": 0.12})
    np.testing.assert_allclose(world.step(q, v)[1], lcp.step(q, v, np.zeros(6))[1], rtol=0, atol=1e-12)
