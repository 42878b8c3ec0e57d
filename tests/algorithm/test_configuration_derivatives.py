"""Jacobians of integrate and difference against Pinocchio's dIntegrate / dDifference on real robots
(free-flyer bases included), and against finite differences on every joint type."""

import numpy as np
import pytest
from rdsupport import ROBOTS, assert_close, build_skeleton, load_urdf_quiet, to_pin_q, world_of
from rdsupport import TREE as BASE_TREE

pin = pytest.importorskip("pinocchio")

# every joint type: the shared tree plus a universal joint carrying a translational one
TREE = BASE_TREE + [("wrist", "universal", "base"), ("wrist_tip", "translational", "wrist")]


@pytest.mark.parametrize("robot", [r for r in ROBOTS if r[0] in ("panda", "solo12", "talos")], ids=lambda r: r[0])
def test_against_pinocchio(robot, robots_dir):
    name, rel, floating = robot
    path = robots_dir / rel
    world = world_of(load_urdf_quiet(path, floating, package_dirs=[robots_dir]))
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(
        str(path))
    rng = np.random.default_rng(2)
    A0, A1 = pin.ArgumentPosition.ARG0, pin.ArgumentPosition.ARG1
    for _ in range(5):
        q0, q1 = world.random_configuration(rng), world.random_configuration(rng)
        dv = rng.normal(size=world.nv)
        p0, p1 = to_pin_q(world, q0), to_pin_q(world, q1)
        d_dq, d_ddv = world.integrate_jacobians(q0, dv)
        assert_close(d_dq, pin.dIntegrate(pm, p0, dv, A0), rtol=1e-9, floor=1.0)
        assert_close(d_ddv, pin.dIntegrate(pm, p0, dv, A1), rtol=1e-9, floor=1.0)
        e_dq0, e_dq1 = world.difference_jacobians(q0, q1)
        assert_close(e_dq0, pin.dDifference(pm, p0, p1, A0), rtol=1e-9, floor=1.0)
        assert_close(e_dq1, pin.dDifference(pm, p0, p1, A1), rtol=1e-9, floor=1.0)


def test_against_finite_differences_on_every_joint_type():
    world = world_of(build_skeleton(TREE, 4))
    rng = np.random.default_rng(0)
    n, h = world.nv, 1e-6
    q0, q1 = world.random_configuration(rng), world.random_configuration(rng)
    dv = rng.normal(size=n)
    d_dq, d_ddv = world.integrate_jacobians(q0, dv)
    e_dq0, e_dq1 = world.difference_jacobians(q0, q1)
    fd = {k: np.zeros((n, n)) for k in ("d_dq", "d_ddv", "e_dq0", "e_dq1")}
    base = world.integrate(q0, dv)
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        fd["d_dq"][:, k] = world.difference(world.integrate(world.integrate(q0, -e), dv),
                                            world.integrate(world.integrate(q0, e), dv)) / (2 * h)
        fd["d_ddv"][:, k] = world.difference(world.integrate(q0, dv - e), world.integrate(q0, dv + e)) / (2 * h)
        fd["e_dq0"][:, k] = (world.difference(world.integrate(q0, e), q1)
                             - world.difference(world.integrate(q0, -e), q1)) / (2 * h)
        fd["e_dq1"][:, k] = (world.difference(q0, world.integrate(q1, e))
                             - world.difference(q0, world.integrate(q1, -e))) / (2 * h)
    assert np.all(np.isfinite(base))
    for name, analytic in (("d_dq", d_dq), ("d_ddv", d_ddv), ("e_dq0", e_dq0), ("e_dq1", e_dq1)):
        assert not np.array_equal(analytic, fd[name])
        assert_close(analytic, fd[name], rtol=1e-6, floor=1.0, what=name)
