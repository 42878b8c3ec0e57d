"""Cost terms of rd.trajopt: values and tangent-space gradients against central differences."""

import numpy as np
import pytest
from rdsupport import fd_tangent, tree_world
from trajopt_scenes import free_body_world

import rigidiff as rd
from rigidiff.trajopt.costs import right_jacobian_inverse, rotation_log


def random_trajectory(world, T, seed):
    rng = np.random.default_rng(seed)
    Q = np.stack([world.random_configuration(rng) for _ in range(T + 1)])
    V = rng.normal(size=(T + 1, world.nv))
    TAU = rng.normal(size=(T, world.nv))
    return Q, V, TAU


def check_gradients(prob, Q, V, TAU, tol=1e-6):
    """Every gradient of prob's cost against central differences (q along the manifold)."""
    world = prob.world
    acc = prob.costs(Q, V, TAU)
    for t in range(prob.T + 1):
        def f(q, t=t):
            Qp = Q.copy()
            Qp[t] = q
            return prob.costs(Qp, V, TAU, derivatives=False).value

        fd = fd_tangent(world, f, Q[t], h=1e-6)
        np.testing.assert_allclose(acc.gq[t], fd, atol=tol * max(1.0, np.abs(fd).max()))
    h = 1e-6
    for arr, grad in ((V, acc.gv), (TAU, acc.gtau)):
        fd = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            old = arr[idx]
            arr[idx] = old + h
            fp = prob.costs(Q, V, TAU, derivatives=False).value
            arr[idx] = old - h
            fm = prob.costs(Q, V, TAU, derivatives=False).value
            arr[idx] = old
            fd[idx] = (fp - fm) / (2 * h)
        np.testing.assert_allclose(grad, fd, atol=tol * max(1.0, np.abs(fd).max()))
    return acc


def test_state_and_control_costs_on_every_joint_type():
    world = tree_world(seed=3)
    T = 3
    Q, V, TAU = random_trajectory(world, T, 1)
    rng = np.random.default_rng(5)
    prob = rd.trajopt.Problem(world, T, Q[0])
    W = rng.normal(size=(world.nv, world.nv))
    prob.add_state_cost(q_target=world.random_configuration(rng), v_target=rng.normal(size=world.nv),
                        q_weight=W @ W.T, v_weight=rng.uniform(0.5, 2, world.nv))
    prob.add_state_cost(q_target=np.stack([world.random_configuration(rng) for _ in range(T + 1)]),
                        q_weight=2.0, final_only=True)
    prob.add_control_cost(rng.uniform(0.1, 1.0, world.nv), tau_target=rng.normal(size=world.nv))
    acc = check_gradients(prob, Q, V, TAU)
    assert acc.value > 0 and np.abs(acc.gq).max() > 0.1


def test_body_targets_position_point_and_orientation():
    world = free_body_world()
    T = 2
    Q, V, TAU = random_trajectory(world, T, 2)
    prob = rd.trajopt.Problem(world, T, Q[0])
    prob.add_body_target("arm", position=(0.3, -0.2, 0.5), weight=[1.0, 2.0, 3.0], time="all", point=(0, 0, -0.4))
    prob.add_body_target("base", orientation=rd.Transform(rpy=(0.3, -0.5, 1.0)).quaternion, orientation_weight=2.0,
                         time=[0, -1])
    prob.add_body_target("base", position=(1, 0, 0), orientation=np.eye(3), time=1)
    check_gradients(prob, Q, V, TAU)


def test_gauss_newton_hessian_of_a_linear_residual_is_exact():
    world = tree_world(seed=1)
    T = 2
    Q, V, TAU = random_trajectory(world, T, 3)
    prob = rd.trajopt.Problem(world, T, Q[0])
    Wv = np.diag(np.arange(1.0, world.nv + 1))
    prob.add_state_cost(v_target=np.zeros(world.nv), v_weight=Wv)
    prob.add_control_cost(0.5)
    acc = prob.costs(Q, V, TAU, hessians=True)
    nv = world.nv
    for t in range(T + 1):
        np.testing.assert_allclose(acc.hxx[t, nv:, nv:], Wv)
        assert not np.any(acc.hxx[t, :nv])
    np.testing.assert_allclose(acc.huu, np.broadcast_to(0.5 * np.eye(nv), (T, nv, nv)))


def test_user_cost_coordinate_gradients_become_tangent_gradients():
    world = free_body_world()
    T = 2
    Q, V, TAU = random_trajectory(world, T, 4)

    def height_and_quaternion(Qs, Vs, TAUs):
        # depends on a quaternion coordinate, so the coordinate gradient must be mapped to the tangent space
        value = np.sum(Qs[:, 2] ** 2) + np.sum(Qs[:, 3]) + 0.5 * np.sum(Vs**2) + np.sum(TAUs[:, 0])
        dQ = np.zeros_like(Qs)
        dQ[:, 2] = 2 * Qs[:, 2]
        dQ[:, 3] = 1.0
        dT = np.zeros_like(TAUs)
        dT[:, 0] = 1.0
        return value, dQ, Vs.copy(), dT

    prob = rd.trajopt.Problem(world, T, Q[0])
    prob.add_cost(height_and_quaternion)
    check_gradients(prob, Q, V, TAU)


def test_rotation_log_and_its_jacobian():
    rng = np.random.default_rng(0)
    for angle in (0.0, 1e-8, 0.7, 2.5, np.pi - 1e-6):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        R = rd.Transform(rotation=_axis_angle_quaternion(axis, angle)).rotation
        r = rotation_log(R)
        np.testing.assert_allclose(r, axis * angle, atol=1e-6)
        if 1e-3 < angle < 3.0:
            # d log(R exp(h e_i)) / dh = Jr^-1 e_i
            h = 1e-6
            fd = np.stack([(rotation_log(R @ _exp(h * e)) - rotation_log(R @ _exp(-h * e))) / (2 * h)
                           for e in np.eye(3)], axis=1)
            np.testing.assert_allclose(right_jacobian_inverse(r), fd, atol=1e-7)


def _axis_angle_quaternion(axis, angle):
    return np.concatenate([np.sin(angle / 2) * axis, [np.cos(angle / 2)]])


def _exp(w):
    angle = np.linalg.norm(w)
    return rd.Transform(rotation=_axis_angle_quaternion(w / angle, angle)).rotation


@pytest.mark.parametrize("kwargs, match", [
    (dict(q_weight=np.ones((2, 3))), "q_weight"),
    (dict(q_weight=-1.0), "positive semi-definite"),
    (dict(q_target=np.ones(5)), "q_target"),
    (dict(q_target=[0.0, np.nan]), "finite"),
    (dict(q_target=[1e300, 0.0]), "beyond double precision"),
    (dict(v_target=[0.0, 1e200], v_weight=10.0), "v_target and v_weight"),
])
def test_bad_state_costs_are_named(kwargs, match):
    world = rd.World(dt=0.05)
    world.add_skeleton(rd.models.load("cartpole"))
    prob = rd.trajopt.Problem(world, 5, [0.0, 0.0])
    kwargs.setdefault("q_target", [0.0, 0.0])
    with pytest.raises(ValueError, match=match):
        prob.add_state_cost(**kwargs)


def test_state_cost_target_quaternions_are_checked_when_added():
    world = free_body_world()
    q0 = world.neutral_configuration()
    prob = rd.trajopt.Problem(world, 4, q0)
    bad = q0.copy()
    bad[3:7] = [0.0, 0.0, 0.0, 2.0]
    with pytest.raises(ValueError, match=r"^q_target\[3:7\], the quaternion .* norm 2"):
        prob.add_state_cost(q_target=bad)
    per_knot = np.tile(q0, (5, 1))
    per_knot[3] = bad
    with pytest.raises(ValueError, match=r"^q_target\[3\]\[3:7\]"):
        prob.add_state_cost(q_target=per_knot)
    prob.add_state_cost(q_target=np.tile(q0, (5, 1)))  # unit quaternions pass


def test_bad_body_targets_and_user_costs_are_named():
    world = free_body_world()
    with pytest.raises(ValueError, match="quaternion"):
        rd.trajopt.Problem(world, 4, np.r_[0, 0, 0, 0, 0, 0, 2.0, 0])
    prob = rd.trajopt.Problem(world, 4, world.neutral_configuration())
    with pytest.raises(IndexError):
        prob.add_body_target("no_such_body", position=(0, 0, 0))
    with pytest.raises(ValueError, match="outside"):
        prob.add_body_target("arm", position=(0, 0, 0), time=7)
    with pytest.raises(ValueError, match="position, an orientation"):
        prob.add_body_target("arm")
    with pytest.raises(ValueError, match="rotation"):
        prob.add_body_target("arm", orientation=np.ones((3, 3)))
    with pytest.raises(TypeError, match="callable"):
        prob.add_cost(3.0)
    prob.add_cost(lambda Q, V, T: 1.0)
    Q = np.repeat(world.neutral_configuration()[None], 5, axis=0)
    with pytest.raises(TypeError, match="value, dQ, dV, dTAU"):
        prob.costs(Q, np.zeros((5, world.nv)), np.zeros((4, world.nv)))
