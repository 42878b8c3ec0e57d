"""rigidiff.testing: finite-difference step Jacobians, the Jacobian check and its report, and the
``rigidiff check-grad`` command."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from rdsupport import TREE, assert_close, build_skeleton, world_of

import rigidiff as rd
import rigidiff.testing as rdt
from rigidiff.cli import main

BLOCKS = ("dq_dq", "dq_dv", "dq_dtau", "dv_dq", "dv_dv", "dv_dtau")


@pytest.fixture(scope="module")
def case():
    """A floating-base tree with every joint type, damping, springs and armature; a random state."""
    sk = build_skeleton(TREE, 5)
    for body in sk.bodies:
        body.joint.damping[:] = 0.4
        body.joint.stiffness[:] = 3.0
        body.joint.armature[:] = 0.02
    world = world_of(sk, dt=5e-3)
    rng = np.random.default_rng(11)
    q = world.random_configuration(rng)
    v, tau = rng.normal(size=(2, world.nv))
    return world, q, v, tau


@pytest.fixture(scope="module")
def fd_both(case):
    world, q, v, tau = case
    return {m: rdt.finite_difference_jacobians(world, q, v, tau, method=m) for m in rdt.METHODS}


@pytest.mark.parametrize("method", rdt.METHODS)
def test_finite_differences_match_step_jacobians(case, fd_both, method):
    world, q, v, tau = case
    J = world.step_jacobians(q, v, tau)
    fd = fd_both[method]
    assert isinstance(fd, rd.StepJacobians)
    qn, vn = world.step(q, v, tau)
    np.testing.assert_array_equal(fd.q_next, qn)
    np.testing.assert_array_equal(fd.v_next, vn)
    assert fd.A.shape == (2 * world.nv, 2 * world.nv) and fd.B.shape == (2 * world.nv, world.nv)
    for name in BLOCKS:
        analytic, approx = getattr(J, name), getattr(fd, name)
        assert approx.shape == (world.nv, world.nv), name  # tangent space: nv columns, quaternions included
        assert not np.array_equal(analytic, approx), name
        assert_close(approx, analytic, rtol=1e-6, floor=1.0, what=f"{method} {name}")


def test_ridders_is_more_accurate_than_central(case, fd_both):
    world, q, v, tau = case
    J = world.step_jacobians(q, v, tau)
    err = {m: {n: np.abs(getattr(fd, n) - getattr(J, n)).max() for n in BLOCKS} for m, fd in fd_both.items()}
    assert all(err["ridders"][n] < 1e-8 for n in BLOCKS), err["ridders"]
    assert any(err["ridders"][n] < 0.1 * err["central"][n] for n in BLOCKS), err


def test_q_columns_are_tangent_directions(case):
    """Column k of the q blocks comes from steps at integrate(q, +-h e_k), q_next changes measured with
    difference (here an angular direction of the free base, whose quaternion has no single entry for it)."""
    world, q, v, tau = case
    k, h = 4, 1e-5
    fd = rdt.finite_difference_jacobians(world, q, v, tau, eps=h)
    e = np.zeros(world.nv)
    e[k] = h
    qp, vp = world.step(world.integrate(q, e), v, tau)
    qm, vm = world.step(world.integrate(q, -e), v, tau)
    np.testing.assert_array_equal(fd.dv_dq[:, k], (vp - vm) / (2 * h))
    assert_close(fd.dq_dq[:, k], world.difference(qm, qp) / (2 * h), rtol=1e-8, floor=1.0)


@pytest.mark.parametrize("method", rdt.METHODS)
def test_check_jacobians_passes_on_correct_jacobians(case, method):
    world, q, v, tau = case
    report = rdt.check_jacobians(world, q, v, tau, method=method)
    assert report.passed and report.failed == []
    assert [b.name for b in report.blocks] == list(BLOCKS)
    assert report.method == method and report.eps > 0
    assert 0 < report.max_abs_error < 1e-6
    assert report.max_abs_error == max(b.max_abs_error for b in report.blocks)
    for b in report.blocks:
        assert b.passed and b.n_failed == 0 and b.shape == (world.nv, world.nv)
        assert b.max_rel_error <= 2 * report.rtol  # passing implies rel. error <= 2 rtol (the documented rule)
    text = str(report)
    assert "passed" in text and "FAILED" not in text
    for name in BLOCKS:
        assert name in text
    report.raise_if_failed()


def test_check_jacobians_finds_a_wrong_entry(case):
    world, q, v, tau = case
    J = world.step_jacobians(q, v, tau)
    wrong_dv_dq = J.dv_dq.copy()
    wrong_dv_dq[3, 2] += 1e-3
    wrong = dataclasses.replace(J, dv_dq=wrong_dv_dq)
    report = rdt.check_jacobians(world, q, v, tau, analytic=wrong)
    assert not report.passed and report.failed == ["dv_dq"]
    block = report["dv_dq"]
    assert not block.passed and block.n_failed == 1
    row, col, analytic, fd = block.worst
    assert (row, col) == (3, 2)
    assert analytic == wrong_dv_dq[3, 2]
    assert fd == pytest.approx(J.dv_dq[3, 2], abs=1e-7)
    assert block.max_abs_error == pytest.approx(1e-3, rel=1e-3)
    assert all(report[n].passed for n in BLOCKS if n != "dv_dq")
    with pytest.raises(AssertionError, match="dv_dq") as info:
        report.raise_if_failed()
    assert "FAILED (1 of 6 blocks)" in str(info.value) and "(3, 2)" in str(info.value)


def test_check_jacobians_with_a_callable_and_a_subset(case):
    """A callable analytic (here: a sign error in dq_dv) and wrt restricted to v: only its two blocks."""
    world, q, v, tau = case

    def flipped(q_, v_, tau_):
        J = world.step_jacobians(q_, v_, tau_)
        return dataclasses.replace(J, dq_dv=-J.dq_dv)

    report = rdt.check_jacobians(world, q, v, tau, wrt="v", analytic=flipped, method="ridders")
    assert [b.name for b in report.blocks] == ["dq_dv", "dv_dv"]
    assert report.failed == ["dq_dv"]
    assert report["dq_dv"].n_failed > 0
    with pytest.raises(KeyError, match="dv_dq"):
        report["dv_dq"]
    report = rdt.check_jacobians(world, q, v, tau, wrt=("tau", "q", "tau"))
    assert [b.name for b in report.blocks] == ["dq_dtau", "dq_dq", "dv_dtau", "dv_dq"]


def test_non_finite_analytic_fails(case):
    world, q, v, tau = case
    J = world.step_jacobians(q, v, tau)
    bad = J.dv_dtau.copy()
    bad[1, 0] = np.nan
    report = rdt.check_jacobians(world, q, v, tau, wrt="tau", analytic=dataclasses.replace(J, dv_dtau=bad))
    assert report.failed == ["dv_dtau"]
    assert report["dv_dtau"].worst[:2] == (1, 0)
    assert report["dv_dtau"].max_abs_error == np.inf


def test_tolerances(case):
    world, q, v, tau = case
    J = world.step_jacobians(q, v, tau)
    off = dataclasses.replace(J, dv_dv=J.dv_dv * (1 + 1e-4))  # 1e-4 relative everywhere
    assert not rdt.check_jacobians(world, q, v, tau, wrt="v", analytic=off).passed
    assert rdt.check_jacobians(world, q, v, tau, wrt="v", analytic=off, rtol=1e-3).passed


@pytest.mark.parametrize("kwargs,match", [
    ({"wrt": ("q", "parameters")}, r"no parameter named 'parameters'.*groups"),
    ({"wrt": "contact"}, "contact"),
    ({"wrt": ()}, "wrt is empty"),
    ({"wrt": 3}, "wrt must be"),
    ({"method": "forward"}, "method must be one of"),
    ({"eps": 0.0}, "eps must be > 0"),
    ({"eps": -1e-6}, "eps must be > 0"),
    ({"rtol": 0.0}, "rtol must be > 0"),
    ({"atol": -1.0}, "atol must be >= 0"),
    ({"analytic": object()}, "analytic must be a StepJacobians"),
])
def test_check_jacobians_bad_arguments(case, kwargs, match):
    world, q, v, tau = case
    with pytest.raises(ValueError, match=match):
        rdt.check_jacobians(world, q, v, tau, **kwargs)


def test_bad_states_and_shapes(case):
    world, q, v, tau = case
    with pytest.raises(ValueError, match="q must have shape"):
        rdt.finite_difference_jacobians(world, q[:-1], v, tau)
    with pytest.raises(ValueError, match="tau must be finite"):
        rdt.finite_difference_jacobians(world, q, v, np.full(world.nv, np.nan))
    with pytest.raises(ValueError, match="method must be one of"):
        rdt.finite_difference_jacobians(world, q, v, tau, method="Ridders")
    with pytest.raises(ValueError, match="world must be a rigidiff.World"):
        rdt.finite_difference_jacobians("arm7", q, v, tau)
    J = world.step_jacobians(q, v, tau)
    small = dataclasses.replace(J, dv_dq=J.dv_dq[:2])
    with pytest.raises(ValueError, match=r"analytic.dv_dq must have shape"):
        rdt.check_jacobians(world, q, v, tau, analytic=small)


# ------------------------------------------------------------------------------------------ parameter steps


def test_parameter_steps_keep_the_bounds_and_match_the_analytic_columns(monkeypatch):
    """A thin rod (one principal moment 1e-6 of the others) and a joint without damping or armature: every
    value the differences set keeps the mass and the passive coefficients >= 0 (bounds the world
    enforces), an inertia may leave the physical set where the step stays defined (the rod's 4e-9
    moment about its length, which the hinge never turns), and the columns agree with the analytic ones
    to 1e-8 (a one-sided first-order difference extrapolated as if it were central was off by 1e-3)."""
    sk = rd.Skeleton("rod")
    sk.add_body("rod", joint=rd.RevoluteJoint("hinge", axis=(0, 1, 0)),
                inertia=rd.Inertia(mass=0.5, com=(0, 0, -0.3), rotational_inertia=np.diag([4e-3, 4e-3, 4e-9])))
    world = rd.World(dt=1e-3)
    world.add_skeleton(sk)
    q, v, tau = np.array([0.4]), np.array([1.5]), np.array([0.2])
    seen = []
    set_parameters = rd.World.set_parameters

    def recording(self, values, check_inertia=True):
        if isinstance(values, dict):
            seen.append(dict(values))
        return set_parameters(self, values, check_inertia)

    monkeypatch.setattr(rd.World, "set_parameters", recording)
    wrt = ["rod", "hinge/damping", "hinge/armature"]
    fd = rdt.finite_difference_jacobians(world, q, v, tau, method="ridders", parameters=wrt)
    values = {}
    for change in seen:
        ((name, value),) = change.items()
        values.setdefault(name, []).append(value)
    for name in ("rod/mass", "hinge/damping", "hinge/armature"):
        assert min(values[name]) >= 0.0, name
    assert min(values["rod/inertia_zz"]) < 0.0
    J = world.step_jacobians(q, v, tau, wrt=wrt)
    assert_close(fd.dv_dp, J.dv_dp, rtol=1e-8, floor=1.0, what="dv_dp")
    assert_close(fd.dq_dp, J.dq_dp, rtol=1e-8, floor=1e-3, what="dq_dp")


# ------------------------------------------------------------------------------------------ the command


def test_check_grad_command_on_arm7(capsys):
    rc = main(["check-grad", rd.models.path("arm7"), "--samples", "5", "--seed", "1"])
    out = capsys.readouterr().out
    assert rc == 0, out
    for name in BLOCKS:
        assert name in out
    assert "5/5" in out and "all 5 samples passed" in out


def test_check_grad_command_central_floating_base(capsys):
    rc = main(["check-grad", rd.models.path("quadruped"), "--floating-base", "--samples", "2", "--method",
               "central", "--dt", "2e-3"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "nv = 18" in out and "central differences" in out


def test_check_grad_command_with_parameters(capsys):
    rc = main(["check-grad", rd.models.path("double_pendulum"), "--samples", "2", "--parameters", "gravity",
               "link2", "joint1/damping"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "dv_dp" in out and "2x14" in out  # 3 gravity + 10 of link2 + 1 damping columns


def test_check_grad_command_reports_failures(capsys, monkeypatch):
    true_step_jacobians = rd.World.step_jacobians

    def wrong(self, q, v, tau):
        J = true_step_jacobians(self, q, v, tau)
        return dataclasses.replace(J, dv_dtau=2.0 * J.dv_dtau)

    monkeypatch.setattr(rd.World, "step_jacobians", wrong)
    rc = main(["check-grad", rd.models.path("arm7"), "--samples", "2"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "FAILED on 2 of 2 samples" in out
    assert "0/2" in out and "dv_dtau" in out


def test_check_grad_command_bad_arguments(capsys):
    assert main(["check-grad", rd.models.path("arm7"), "--samples", "0"]) == 2
    assert "--samples: must be >= 1" in capsys.readouterr().err
    assert main(["check-grad", "no/such/model.urdf"]) == 2
    assert main(["check-grad", rd.models.path("arm7"), "--method", "forward"]) == 2
    assert "invalid choice: 'forward'" in capsys.readouterr().err


ROUNDED_INERTIA_URDF = """<robot name="r">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0 0 -0.2"/><mass value="0.5"/>
    <inertia ixx="-5e-20" ixy="0" ixz="0" iyy="-5e-20" iyz="0" izz="0"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
</robot>"""


def test_an_inertia_moment_rounded_below_zero_is_moved(tmp_path):
    # a point mass whose zero moments are written as -5e-20 (as in some published URDFs): zero, not unphysical
    path = tmp_path / "arm.urdf"
    path.write_text(ROUNDED_INERTIA_URDF)
    world = rd.World(dt=1e-3)
    world.add_skeleton(rd.load_urdf(str(path)))
    q, v, tau = np.array([0.3]), np.array([0.5]), np.array([0.1])
    names = ["arm/inertia_xx", "arm/inertia_zz"]
    fd = rdt.finite_difference_jacobians(world, q, v, tau, method="ridders", parameters=names)
    J = world.step_jacobians(q, v, tau, wrt=names)
    np.testing.assert_allclose(J.dv_dp, fd.dv_dp, rtol=1e-5, atol=1e-9)
