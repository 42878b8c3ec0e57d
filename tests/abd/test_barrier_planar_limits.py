"""Position limits on a planar joint's x and y in barrier worlds: the contact barrier on each gap, which is linear
in the configuration (x and y in the parent frame) but turns with the joint in the step's chart (x moves by
R(theta) delta_xy). A turned, spinning puck pushed into a corner of x and y limits rests within dhat of them and
never passes them; the step's derivatives there -- state, torques, every parameter, dhat's included -- against
central differences of the step, q perturbed as q (+) e."""

import numpy as np
import pytest

import rigidiff as rd
from step_differences import (assert_felt_parameter_jacobians, assert_parameter_vjp_is_transposed_jacobians,
                              assert_step_jacobians, assert_vjp_is_transposed_jacobians)
from test_barrier_floating_derivatives import _central_jacobians, _change
from test_barrier_planar import DHAT, _puck, _world

X_MAX, Y_MIN = 0.06, -0.03


def _limited_puck(upper_x=X_MAX, lower_y=Y_MIN):
    sk = _puck()
    joint = sk.bodies[0].joint
    joint.upper[0], joint.lower[1] = upper_x, lower_y
    return sk


def _push(q, force):
    """tau pushing the puck's joint origin by `force` (parent frame): the planar joint's forces are in its child
    frame, R(theta)^T force."""
    c, s = np.cos(q[2]), np.sin(q[2])
    return np.array([c * force[0] + s * force[1], -s * force[0] + c * force[1], 0.0])


def _parent_velocity(q, v):
    c, s = np.cos(q[2]), np.sin(q[2])
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def test_puck_pushed_into_x_and_y_limits_rests_within_dhat_of_them():
    """Turned by 0.6 rad, spinning, and driven at 1 m/s into the x limit (and down into the y limit) by a constant
    force: every step keeps x < upper and y > lower, and the puck comes to rest within dhat of both."""
    turned = np.array([[np.cos(0.6), np.sin(0.6)], [-np.sin(0.6), np.cos(0.6)]])  # R(0.6)^T
    v0 = np.r_[turned @ [1.0, -0.3], 2.0]
    ends = []
    for limits in (True, False):
        world = _world(friction=0.0)
        world.add_skeleton(_limited_puck(), q=[0.0, 0.0, 0.6])
        world.joint_limits = limits
        q, v = world.q, v0.copy()
        for _ in range(150 if limits else 20):
            q, v = world.step(q, v, _push(q, (2.0, -1.0)))
            if limits:
                assert q[0] < X_MAX and q[1] > Y_MIN
        ends.append((q, v))
    (q, v), (q_free, _) = ends
    assert X_MAX - q[0] < DHAT and q[1] - Y_MIN < DHAT
    assert np.abs(_parent_velocity(q, v)).max() < 1e-2
    # without the limits the same push carries it well past both
    assert q_free[0] > X_MAX + 0.05 and q_free[1] < Y_MIN - 0.01


def test_limits_on_x_and_y_refuse_a_state_beyond_them():
    world = _world()
    world.add_skeleton(_limited_puck(), q=[0.0, 0.0, 0.0])
    world.joint_limits = True
    q = world.q
    q[0] = X_MAX + 0.01
    with pytest.raises(ValueError, match=r"slide.*position limit \(q\[0\]"):
        world.step(q, world.v)
    q[0], q[1] = 0.0, Y_MIN
    with pytest.raises(ValueError, match=r"slide.*position limit \(q\[1\]"):
        world.step(q, world.v)


def _pressing_on_the_limit(limit):
    """(world, q, v, tau) at a step that ends within dhat/2 of the x upper limit ("x") or the y lower one ("y"), the
    puck turned and spinning (so that the limit's gradient turns with the joint), at a Newton tolerance of 1e-12."""
    world = _world(friction=0.0, tolerance=1e-12)
    world.add_skeleton(_limited_puck(lower_y=-1.0) if limit == "x" else _limited_puck(upper_x=1.0), q=[0.0, 0.0, 0.6])
    world.joint_limits = True
    q, v = world.q, world.v
    v[:3] = [0.8, -0.4, 3.0]
    force = (2.0, 0.3) if limit == "x" else (0.3, -2.0)
    for _ in range(60):
        tau = _push(q, force) + [0.0, 0.0, 0.004]
        q_next, v_next = world.step(q, v, tau)
        if (X_MAX - q_next[0] if limit == "x" else q_next[1] - Y_MIN) < 0.5 * DHAT:
            return world, q, v, tau
        q, v = q_next, v_next
    raise AssertionError(f"the puck never reached its {limit} limit")


@pytest.mark.parametrize("limit", ["x", "y"])
def test_step_jacobians_match_central_differences(limit):
    world, q, v, tau = _pressing_on_the_limit(limit)
    J = world.step_jacobians(q, v, tau)
    assert_step_jacobians(J, _central_jacobians(world, q, v, tau, eps=(1e-8, 1e-6, 1e-5)))
    # the limit is felt: without it the translation's response to the push differs
    world.joint_limits = False
    free = world.step_jacobians(q, v, tau).dq_dtau[:2, :2]
    assert np.abs(J.dq_dtau[:2, :2] - free).max() > 0.3 * np.abs(free).max()


@pytest.mark.parametrize("limit", ["x", "y"])
def test_parameter_jacobians_match_central_differences(limit):
    """Every parameter the step feels, dhat (the limit's barrier) among them, each moved by set_parameters."""
    world, q, v, tau = _pressing_on_the_limit(limit)
    assert_felt_parameter_jacobians(world, q, v, tau, ("dhat", "disc/mass", "disc/inertia_zz"),
                                    change=lambda a, b: _change(world, a, b))


def test_step_vjp_is_the_transposed_jacobians():
    world, q, v, tau = _pressing_on_the_limit("x")
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=world.nv), rng.normal(size=world.nv)
    assert_vjp_is_transposed_jacobians(world, q, v, tau, a, b, atol=1e-9)
    assert_parameter_vjp_is_transposed_jacobians(world, q, v, tau, a, b)
