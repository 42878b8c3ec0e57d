"""rigidiff.testing: steps that adapt to the model (torque clips, parameter scales, steps where the
step function is defined) and the finite differences' own error in the comparison."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import rigidiff as rd
import rigidiff.testing as rdt


def pendulum(effort_limit):
    sk = rd.Skeleton("pendulum")
    sk.add_body("link", joint=rd.RevoluteJoint("hinge", axis=(0, 1, 0), effort_limit=effort_limit),
                inertia=rd.Inertia(mass=1.0, com=(0, 0, -0.5), rotational_inertia=np.diag([0.02, 0.02, 1e-3])))
    world = rd.World(dt=1e-3)
    world.add_skeleton(sk)
    return world


@pytest.mark.parametrize("tau", [-30.03, 29.97], ids=["clipped", "just-inside"])
def test_torque_steps_do_not_cross_the_effort_clip(tau):
    """A torque 0.03 from its limit of 30: Ridders' first step of 0.3 straddled the clip's kink (a
    clipped torque's zero column came out as 1.5e-3)."""
    world = pendulum(30.0)
    q, v, tau = np.array([0.3]), np.array([0.5]), np.array([tau])
    report = rdt.check_jacobians(world, q, v, tau, wrt="tau", method="ridders", fd_noise=False)
    assert report.passed, str(report)
    fd = rdt.finite_difference_jacobians(world, q, v, tau, method="ridders")
    if abs(tau[0]) > 30.0:
        assert np.all(fd.dv_dtau == 0.0) and np.all(fd.dq_dtau == 0.0)
    else:
        assert fd.dv_dtau[0, 0] > 1e-3


def free_disc():
    """A free body with principal moments 1, 1 and 1e-6."""
    sk = rd.Skeleton("disc")
    sk.add_body("disc", joint=rd.FreeJoint("free"),
                inertia=rd.Inertia(mass=0.5, rotational_inertia=np.diag([1.0, 1.0, 1e-6])))
    world = rd.World(dt=1e-3)
    world.add_skeleton(sk)
    return world


def test_an_inertia_step_is_scaled_by_the_inertia_its_dofs_move():
    """The disc's smallest moment (1e-6) changes the dynamics at its own scale, not at the mean of its
    moments (0.67), which made a step of 7e-3 on it, one-sided and off by 100 %."""
    world = free_disc()
    q = world.neutral_configuration()
    v = np.array([0.1, 0.2, -0.1, 0.3, -0.2, 0.5])
    tau = np.array([0.1, 0.0, 0.2, 0.01, 0.02, 1e-7])
    report = rdt.check_jacobians(world, q, v, tau, wrt=("inertia",), method="ridders", fd_noise=False)
    assert report.passed, str(report)
    scales = rdt._parameter_scales(world, world.parameters(), ["disc/inertia_zz", "disc/inertia_xx"], q)
    assert scales["disc/inertia_zz"] == pytest.approx(1e-6)
    assert scales["disc/inertia_xx"] <= 1e-5  # the spin about z weighs xx at least by 0.1


def point_mass_neck():
    """A head on three neck joints, the middle link a point mass on the axes (zero moments written as
    3e-20, as in iCub's URDF), so it has no radius of gyration to scale its centre of mass by."""
    sk = rd.Skeleton("neck")
    sk.add_body("neck_1", joint=rd.RevoluteJoint("pitch", axis=(0, 1, 0)),
                inertia=rd.Inertia(mass=0.2, com=(0, 0, 0.02), rotational_inertia=np.diag([1e-4, 1e-4, 5e-5])))
    sk.add_body("neck_2", parent="neck_1", joint=rd.RevoluteJoint("roll", axis=(1, 0, 0)),
                joint_origin=rd.Transform(translation=(0, 0, 0.05)),
                inertia=rd.Inertia(mass=0.1, rotational_inertia=np.diag([3e-20, 3e-20, 3e-20])))
    sk.add_body("head", parent="neck_2", joint=rd.RevoluteJoint("yaw", axis=(0, 0, 1)),
                inertia=rd.Inertia(mass=1.3, com=(0.02, -0.1, 0.05), rotational_inertia=np.diag([4e-3, 3e-3, 4e-3])))
    world = rd.World(dt=1e-3)
    world.add_skeleton(sk)
    return world


def test_a_point_mass_com_step_is_scaled_by_the_joints_that_turn_it():
    world = point_mass_neck()
    q, v, tau = np.array([0.3, -0.2, 0.4]), np.array([0.5, -1.0, 0.7]), np.array([0.1, 0.0, -0.05])
    names = ["neck_2/com_x", "neck_2/com_y", "neck_2/com_z"]
    scales = rdt._parameter_scales(world, world.parameters(), names, q)
    assert all(scales[n] > 1e-3 for n in names)  # not sqrt(1.5 * 3e-20 / 0.1) = 7e-10
    report = rdt.check_jacobians(world, q, v, tau, wrt=names, method="ridders", fd_noise=False)
    assert report.passed, str(report)


def test_a_parameter_step_shrinks_or_turns_one_sided_where_the_step_is_undefined():
    """``_parameter_difference`` with a stand-in for "the step is defined": central from the largest
    of h, h / 4, ... defined on both sides, else second-order one-sided into the defined side, else a
    ValueError naming the parameter."""
    world = pendulum(np.inf)
    p = world.parameters()
    name = "link/inertia_zz"  # 1e-3
    _, stride, step = rdt._parameter_difference(p, name, 1e-2, lambda value: value > 0.0)
    assert stride == 2 and step == pytest.approx(1e-2 / 16)  # 1e-2 and 2.5e-3 reach below zero
    difference, stride, step = rdt._parameter_difference(p, name, 1e-2, lambda value: value >= 1e-3)
    assert stride == 1 and step == pytest.approx(1e-2)
    assert difference(lambda x: 3.0 * x**2, 1e-4) == pytest.approx(6e-3, rel=1e-9)  # exact on quadratics
    with pytest.raises(ValueError, match="link/inertia_zz"):
        rdt._parameter_difference(p, name, 1e-2, lambda value: value == 1e-3)
    # a bound the world enforces is kept: an armature of 0 is differenced one-sided upwards, a mass of 1
    # asked a step of 10 centrally by 0.9 (a mass of 1e-4 welded to 43 kg was one-sided by 0.43, 3e-4 off)
    _, stride, _ = rdt._parameter_difference(p, "hinge/armature", 1e-2, lambda value: True)
    assert stride == 1
    _, stride, step = rdt._parameter_difference(p, "link/mass", 10.0, lambda value: True)
    assert stride == 2 and step == pytest.approx(0.9)


def hand(finger_mass=2e-4, finger_moment=1e-9):
    """Two tiny finger links on a 30 kg floating base: columns of the fingers' parameters span 1e5 from
    the fingers' rows to the base's."""
    sk = rd.Skeleton("hand")
    sk.add_body("base", joint=rd.FreeJoint("root"),
                inertia=rd.Inertia(mass=30.0, rotational_inertia=np.diag([1.0, 1.2, 0.8])))
    parent, origin = "base", (0.3, 0.1, 0.5)
    for i, axis in enumerate([(0, 1, 0), (1, 0, 0)]):
        sk.add_body(f"f{i}", parent=parent, joint=rd.RevoluteJoint(f"k{i}", axis=axis),
                    joint_origin=rd.Transform(translation=origin),
                    inertia=rd.Inertia(mass=finger_mass, com=(0.01, 0, 0),
                                       rotational_inertia=np.diag([1, 2, 1]) * finger_moment))
        parent, origin = f"f{i}", (0.02, 0, 0)
    world = rd.World(dt=1e-3)
    world.add_skeleton(sk)
    q = world.neutral_configuration()
    q[2], q[7], q[8] = 1.0, 0.3, -0.2
    return world, q, np.random.default_rng(0).normal(size=world.nv), np.zeros(world.nv)


def test_entries_within_the_finite_differences_own_error_pass():
    """The outer finger's armature of 0 (one-sided differences) moves its own velocity far more than the
    base's: the base's entries are off by 2.5e-3 in round-off, which the plain rule fails and the
    finite differences' error estimate covers, counted as such."""
    world, q, v, tau = hand()
    wrt = ("k1/armature",)
    plain = rdt.check_jacobians(world, q, v, tau, wrt=wrt, method="ridders", fd_noise=False)
    assert not plain.passed
    report = rdt.check_jacobians(world, q, v, tau, wrt=wrt, method="ridders")
    assert report.passed, str(report)
    assert report["dv_dp"].n_within_noise > 0 and "within fd noise" in str(report)


def test_the_noise_allowance_still_catches_wrong_columns():
    """The allowance never exceeds rtol times the column's largest entry: a column 1e-3 off, or a small
    entry off by more than that, still fails."""
    world, q, v, tau = hand()
    wrt = ("k1/armature",)
    J = world.step_jacobians(q, v, tau, wrt=list(wrt))
    scaled = dataclasses.replace(J, dv_dp=J.dv_dp * (1 + 1e-3))
    assert not rdt.check_jacobians(world, q, v, tau, wrt=wrt, method="ridders", analytic=scaled).passed
    small = int(np.argmin(np.abs(J.dv_dp[:, 0])))
    shifted = J.dv_dp.copy()
    shifted[small, 0] += 2e-5 * np.abs(J.dv_dp).max()
    report = rdt.check_jacobians(world, q, v, tau, wrt=wrt, method="ridders",
                                 analytic=dataclasses.replace(J, dv_dp=shifted))
    assert report.failed == ["dv_dp"] and report["dv_dp"].worst[0] == small


def test_fd_noise_must_be_a_bool():
    world = pendulum(np.inf)
    with pytest.raises(TypeError, match="fd_noise"):
        rdt.check_jacobians(world, np.zeros(1), np.zeros(1), np.zeros(1), fd_noise="yes")


def test_a_step_too_small_to_change_the_outputs_claims_no_accuracy():
    """Identical differences at every step (an output that a tiny step leaves bit for bit unchanged) make
    a Ridders tableau claim an error of 0; the round-off of the outputs over the step kept bounds it."""
    flat = lambda step: np.array([0.0, 1.0])  # noqa: E731
    _, err = rdt._ridders_column(None, None, None, 0, 1e-3, None, central=flat)
    assert np.all(err == 0.0)
    _, err = rdt._ridders_column(None, None, None, 0, 1e-3, None, central=flat, roundoff=np.full(2, 1e-16))
    assert np.all(err >= 1e-13)


def test_a_world_without_joint_names_is_differenced_without_effort_limits():
    """check_jacobians needs only step, integrate, difference, nq and nv of the world it checks."""
    world = pendulum(np.inf)

    class Bare:
        nq, nv = world.nq, world.nv
        step, integrate, difference = world.step, world.integrate, world.difference

    q, v, tau = np.array([0.3]), np.array([0.5]), np.array([0.2])
    report = rdt.check_jacobians(Bare(), q, v, tau, wrt="tau", method="ridders",
                                 analytic=world.step_jacobians(q, v, tau))
    assert report.passed, str(report)
