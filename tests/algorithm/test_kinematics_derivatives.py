"""Derivatives of body velocities and accelerations, Jacobian products and the centre-of-mass velocity:
against central differences (q perturbed through integrate) on every joint type, and against
Pinocchio's getFrameVelocityDerivatives / getFrameAccelerationDerivatives on real robots."""

import numpy as np
import pytest
from rdsupport import assert_close, fd_tangent, robot_world, to_pin_q, tree_world

pin = pytest.importorskip("pinocchio")


def fd_plain(f, x, h=1e-6):
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("frame", ["world", "local"])
@pytest.mark.parametrize("seed", [0, 1])
def test_velocity_and_acceleration_derivatives_match_finite_differences(seed, frame):
    world = tree_world(seed)
    rng = np.random.default_rng(seed)
    q = world.random_configuration(rng)
    v, a = rng.normal(size=(2, world.nv))
    for body in ("tip", "table", "gantry", "weld", "turret"):
        check_body(world, q, v, a, body, frame)


def check_body(world, q, v, a, body, frame):
    b = world.body_index(body)
    dv_dq, dv_dv = world.body_velocity_derivatives(q, v, body, frame)

    def vel(qq):
        return world.body_velocities(qq, v, frame)[b]

    def acc(qq, vv):
        return world.body_accelerations(qq, vv, a, frame)[b]

    assert_close(dv_dq, fd_tangent(world, vel, q), rtol=1e-7, floor=1.0, what=f"{body} dv_dq")
    np.testing.assert_allclose(dv_dv, world.body_jacobian(q, body, frame), rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(world.body_jacobian_derivative_product(q, body, v, frame), dv_dq)
    da_dq, da_dv, da_da = world.body_acceleration_derivatives(q, v, a, body, frame)
    assert_close(da_dq, fd_tangent(world, lambda x: acc(x, v), q), rtol=1e-7, floor=1.0, what="da_dq")
    assert_close(da_dv, fd_plain(lambda x: acc(q, x), v), rtol=1e-7, floor=1.0, what="da_dv")
    np.testing.assert_allclose(da_da, dv_dv, rtol=1e-12, atol=1e-14)
    if body != "turret":
        assert np.abs(dv_dq).max() > 1e-3 and np.abs(da_dq).max() > 1e-3


def test_center_of_mass_velocity_derivatives():
    world = tree_world(2)
    rng = np.random.default_rng(2)
    q = world.random_configuration(rng)
    v = rng.normal(size=world.nv)
    dq, dv = world.center_of_mass_velocity_derivatives(q, v)
    vcom = lambda x: world.center_of_mass_jacobian(x) @ v  # noqa: E731
    assert_close(dq, fd_tangent(world, vcom, q), rtol=1e-7, floor=1.0)
    np.testing.assert_array_equal(dv, world.center_of_mass_jacobian(q))
    assert np.abs(dq).max() > 1e-3


@pytest.mark.parametrize("robot", ["panda", "solo12"])
@pytest.mark.parametrize("frame", ["world", "local"])
def test_against_pinocchio(robot, frame, robots_dir):
    world = robot_world(robots_dir, robot)
    rng = np.random.default_rng(3)
    q = world.random_configuration(rng)
    v, a = rng.normal(size=(2, world.nv))
    from rdsupport import ROBOTS

    _, rel, floating = next(r for r in ROBOTS if r[0] == robot)
    model = pin.buildModelFromUrdf(str(robots_dir / rel), pin.JointModelFreeFlyer()) if floating else \
        pin.buildModelFromUrdf(str(robots_dir / rel))
    data = model.createData()
    qp = to_pin_q(world, q)
    pin.computeForwardKinematicsDerivatives(model, data, qp, v, a)
    ref = pin.LOCAL if frame == "local" else pin.LOCAL_WORLD_ALIGNED
    body = world.body_names[-1]
    fid = model.getFrameId(body)
    pv = pin.getFrameVelocityDerivatives(model, data, fid, ref)
    pa = pin.getFrameAccelerationDerivatives(model, data, fid, ref)
    dv_dq, dv_dv = world.body_velocity_derivatives(q, v, body, frame)
    da_dq, da_dv, da_da = world.body_acceleration_derivatives(q, v, a, body, frame)
    pin_dv_dq, pin_da_dq = pv[0].copy(), pa[1].copy()
    if frame == "world":
        # Pinocchio's LOCAL_WORLD_ALIGNED q-derivatives hold the frame origin still; ours follow it (they
        # are the derivatives of body_velocities / body_accelerations): they differ by w x dp/dq
        J = world.body_jacobian(q, body, "world")
        w = world.body_velocities(q, v, "world")[world.body_index(body), 3:]
        wa = world.body_accelerations(q, v, a, "world")[world.body_index(body), 3:]
        pin_dv_dq[:3] += np.cross(w, J[:3].T).T
        pin_da_dq[:3] += np.cross(wa, J[:3].T).T
    assert_close(dv_dq, pin_dv_dq, rtol=1e-8, floor=1.0, what="dv_dq")
    assert_close(dv_dv, pv[1], rtol=1e-8, floor=1.0, what="dv_dv")
    assert_close(da_dq, pin_da_dq, rtol=1e-8, floor=1.0, what="da_dq")
    assert_close(da_dv, pa[2], rtol=1e-8, floor=1.0, what="da_dv")
    assert_close(da_da, pa[3], rtol=1e-8, floor=1.0, what="da_da")
