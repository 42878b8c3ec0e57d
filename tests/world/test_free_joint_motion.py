"""The step moves free joints on R^3 x SO(3) (docs/conventions.md): rolling bodies keep their height and
roll at the closed-form accelerations, a free body keeps its velocity in space, and every Jacobian of the
step (state, torques, parameters, reverse mode) matches finite differences of the step itself."""

import numpy as np
import pytest
from rdsupport import assert_close
from scipy.spatial.transform import Rotation

import rigidiff as rd
from rigidiff.testing import check_jacobians

G = 9.81


def world_velocity(q, v):
    """Linear velocity of a free body's origin in the world, from its q (7,) and v (6,) (child frame)."""
    return Rotation.from_quat(q[3:7]).as_matrix() @ v[:3]


def rolling_world(shape, mass=1.0, friction=0.8, gravity=(0.0, 0.0, -G), dt=1e-3, origin=None):
    world = rd.World(dt=dt, gravity=gravity)
    sk = rd.Skeleton("roller")
    body = sk.add_body("body", joint=rd.FreeJoint("free"),
                       inertia=rd.Inertia.from_shape(shape, mass=mass, origin=origin))
    body.add_shape(shape, origin=origin, friction=friction)
    world.add_skeleton(sk)
    world.add_ground(friction=friction)
    return world


def test_a_ball_rolls_on_level_ground_for_10_s_without_sinking_or_speeding_up():
    r = 0.1
    world = rolling_world(rd.Sphere(r))
    q0 = np.r_[0.0, 0.0, r, 0.0, 0.0, 0.0, 1.0]
    v0 = np.r_[2.0, 0.0, 0.0, 0.0, 2.0 / r, 0.0]  # rolling without slipping
    Q, V = world.rollout(q0, v0, np.zeros((10_000, 6)))
    assert np.abs(Q[:, 2] - r).max() < 1e-6
    speeds = np.array([world_velocity(q, v) for q, v in zip(Q[::100], V[::100])])
    assert np.abs(speeds[:, 0] - 2.0).max() < 1e-4
    assert np.abs(speeds[:, 1:]).max() < 1e-6
    assert Q[-1, 0] == pytest.approx(20.0, rel=1e-4)  # it did roll: 10 s at 2 m/s


def test_a_spinning_ball_thrown_in_the_air_keeps_its_velocity_in_space():
    """No gravity, no contact: the origin's world velocity is constant whatever the spin (under the SE(3)
    exponential of a constant body twist it would move on a helix)."""
    world = rolling_world(rd.Sphere(0.1), gravity=(0.0, 0.0, 0.0))
    q0 = np.r_[0.0, 0.0, 5.0, Rotation.from_rotvec([0.3, -0.2, 0.5]).as_quat()]
    v0 = np.r_[1.0, -2.0, 0.5, 3.0, 7.0, -4.0]
    Q, V = world.rollout(q0, v0, np.zeros((2000, 6)))
    w0 = world_velocity(q0, v0)
    for q, v in zip(Q[::50], V[::50]):
        np.testing.assert_allclose(world_velocity(q, v), w0, atol=1e-12)
    np.testing.assert_allclose(Q[-1, :3], q0[:3] + 2.0 * w0, atol=1e-9)


@pytest.mark.parametrize("shape, factor", [(rd.Sphere(0.1), 5.0 / 7.0), ("cylinder", 2.0 / 3.0)],
                         ids=["sphere", "cylinder"])
def test_bodies_roll_down_a_20_degree_incline_at_the_closed_form_acceleration(shape, factor):
    """The incline is the ground under gravity tilted by 20 degrees: a = factor g sin(theta) along it."""
    theta = np.radians(20.0)
    origin = None
    if shape == "cylinder":  # its axis along y, across the slope
        shape, origin = rd.Cylinder(radius=0.1, length=0.3), rd.Transform(rotation=Rotation.from_euler(
            "x", 90, degrees=True).as_matrix())
    world = rolling_world(shape, gravity=(G * np.sin(theta), 0.0, -G * np.cos(theta)), origin=origin)
    q0 = np.r_[0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 1.0]
    Q, V = world.rollout(q0, np.zeros(6), np.zeros((1000, 6)))
    t = 1000 * world.dt
    acceleration = world_velocity(Q[-1], V[-1])[0] / t
    assert acceleration == pytest.approx(factor * G * np.sin(theta), rel=2e-3)
    assert np.abs(Q[:, 2] - 0.1).max() < 1e-6  # rolling, not sinking
    assert Q[-1, 0] > 1.0  # it went down the slope


def car_world():
    """A box chassis on a free joint with four cylinder wheels on revolute joints about y."""
    world = rd.World(dt=1e-3)
    sk = rd.Skeleton("car")
    chassis = sk.add_body("chassis", joint=rd.FreeJoint("base"),
                          inertia=rd.Inertia.from_shape(rd.Box((0.6, 0.3, 0.1)), mass=4.0))
    chassis.add_shape(rd.Box((0.6, 0.3, 0.1)))
    wheel = rd.Cylinder(radius=0.08, length=0.04)
    turn = rd.Transform(rotation=Rotation.from_euler("x", 90, degrees=True).as_matrix())
    for name, (x, y) in {"fl": (0.25, 0.18), "fr": (0.25, -0.18), "rl": (-0.25, 0.18), "rr": (-0.25, -0.18)}.items():
        b = sk.add_body(name, parent=chassis, joint=rd.RevoluteJoint(f"{name}_axle", axis=(0.0, 1.0, 0.0)),
                        joint_origin=rd.Transform(translation=(x, y, -0.05)),
                        inertia=rd.Inertia.from_shape(wheel, mass=0.3, origin=turn))
        b.add_shape(wheel, origin=turn, friction=1.0)
    world.add_skeleton(sk)
    world.add_ground(friction=1.0)
    return world


def test_a_car_driving_on_the_ground_keeps_its_height():
    world = car_world()
    q = np.r_[0.0, 0.0, 0.13, 0.0, 0.0, 0.0, 1.0, np.zeros(4)]
    v = np.zeros(world.nv)
    idle = np.zeros(world.nv)
    for _ in range(300):  # settle on the wheels
        q, v = world.step(q, v, idle)
    settled = q[2]
    drive = np.r_[np.zeros(6), np.full(4, 0.05)]
    heights = []
    for _ in range(2000):
        q, v = world.step(q, v, drive)
        heights.append(q[2])
    assert q[0] > 0.5  # it drove forward
    assert np.abs(np.array(heights) - settled).max() < 1e-4
    assert abs(q[1]) < 1e-6 and np.abs(q[3:6]).max() < 1e-3  # straight and level


def free_body_world(contact):
    shape = rd.Box((0.2, 0.3, 0.1))
    world = rd.World(dt=5e-3)
    sk = rd.Skeleton("body")
    b = sk.add_body("box", joint=rd.FreeJoint("free"),
                    inertia=rd.Inertia.from_shape(shape, mass=1.3, origin=rd.Transform(translation=(0.02, -0.01, 0.03))))
    b.add_shape(shape, friction=0.6)
    world.add_skeleton(sk)
    if contact:
        world.add_ground(friction=0.6)
    return world


def test_step_jacobians_of_a_spinning_free_body_match_finite_differences():
    world = free_body_world(contact=False)
    q = np.r_[0.1, -0.2, 1.0, Rotation.from_rotvec([0.4, 0.1, -0.3]).as_quat()]
    v = np.r_[0.7, -0.4, 1.1, 2.0, -3.0, 4.0]
    tau = np.r_[0.3, 0.1, -0.2, 0.05, -0.02, 0.01]
    report = check_jacobians(world, q, v, tau, wrt=("q", "v", "tau", "gravity", "box/mass"), method="ridders")
    report.raise_if_failed()
    J = world.step_jacobians(q, v, tau)
    # the re-expression of the linear velocity couples it to the angular one: not the SE(3) step's Jacobian
    assert np.abs(J.dv_dv[:3, 3:]).max() > 1e-3


@pytest.mark.parametrize("slip", [0.0, 0.6], ids=["rolling", "skidding"])
def test_step_jacobians_of_a_ball_rolling_or_skidding_on_the_ground_match_finite_differences(slip):
    """One contact (no redundant rows): sticking while it rolls, at the friction bound while it skids and
    spins about the vertical."""
    r = 0.1
    world = rolling_world(rd.Sphere(r), friction=0.3, origin=rd.Transform(translation=(0.01, 0.0, -0.005)))
    q = np.r_[0.0, 0.0, r - 1e-4, Rotation.from_rotvec([0.2, -0.1, 0.4]).as_quat()]
    R = Rotation.from_quat(q[3:]).as_matrix()
    w = np.array([0.0, 1.5 / r - slip / r, 3.0 * slip])
    v = np.r_[R.T @ np.array([1.5, 0.0, 0.0]), R.T @ w]
    tau = np.zeros(6)
    world.step(q, v, tau)
    assert len(world.last_contacts()) == 1
    report = check_jacobians(world, q, v, tau, wrt=("q", "v", "tau"), method="central", eps=1e-7, rtol=1e-5)
    report.raise_if_failed()


def test_step_vjp_of_a_free_body_equals_the_transposed_jacobians():
    for contact in (False, True):
        world = free_body_world(contact)
        q = np.r_[0.0, 0.0, 0.0499 if contact else 1.0, Rotation.from_rotvec([0.0, 0.0, 0.3]).as_quat()]
        v = np.r_[0.5, 0.2, 0.0, 0.3, -0.2, 2.0]
        tau = np.r_[0.1, 0.0, 0.2, 0.0, 0.01, 0.0]
        rng = np.random.default_rng(3)
        gq, gv = rng.normal(size=(2, 6))
        J = world.step_jacobians(q, v, tau)
        g = world.step_vjp(q, v, tau, gq, gv)
        assert_close(g.q, J.dq_dq.T @ gq + J.dv_dq.T @ gv, rtol=1e-10, floor=1.0, what="g_q")
        assert_close(g.v, J.dq_dv.T @ gq + J.dv_dv.T @ gv, rtol=1e-10, floor=1.0, what="g_v")
        assert_close(g.tau, J.dq_dtau.T @ gq + J.dv_dtau.T @ gv, rtol=1e-10, floor=1.0, what="g_tau")


def test_integrate_keeps_the_group_exponential():
    """world.integrate is Pinocchio's: a free joint moves on SE(3) (the screw of the twist), unlike the step."""
    world = free_body_world(contact=False)
    q = np.r_[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    d = np.r_[1.0, 0.0, 0.0, 0.0, np.pi / 2, 0.0]  # a quarter turn about y while moving along x
    qn = world.integrate(q, d)
    # on SE(3) the origin moves on a circle arc: (2/pi, 0, 1 - 2/pi) from (0, 0, 1)
    np.testing.assert_allclose(qn[:3], [2.0 / np.pi, 0.0, 1.0 - 2.0 / np.pi], atol=1e-12)


def test_step_acceleration_recovers_the_dynamics_from_a_recorded_rollout():
    world = free_body_world(contact=False)
    q0 = np.r_[0.0, 0.0, 1.0, Rotation.from_rotvec([0.4, 0.1, -0.3]).as_quat()]
    v0 = np.r_[0.7, -0.4, 1.1, 2.0, -3.0, 4.0]
    rng = np.random.default_rng(5)
    taus = rng.normal(size=(20, 6))
    Q, V = world.rollout(q0, v0, taus)
    A = world.step_acceleration(V[:-1], V[1:])
    expected = np.array([world.forward_dynamics(q, v, t) for q, v, t in zip(Q[:-1], V[:-1], taus)])
    np.testing.assert_allclose(A, expected, rtol=1e-9, atol=1e-9)
    naive = (V[1:] - V[:-1]) / world.dt  # what it would be without the re-expression
    assert np.abs(naive - expected).max() > 1.0
    with pytest.raises(ValueError, match="v_next"):
        world.step_acceleration(V[0], V[1:3])
    with pytest.raises(ValueError, match="shape"):
        world.step_acceleration(np.zeros(5), np.zeros(5))
