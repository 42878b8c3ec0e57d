"""Analytic derivatives of inverse and forward dynamics: against Pinocchio's computeRNEADerivatives /
computeABADerivatives on real robots, and against central finite differences on every joint type."""

import numpy as np
import pytest
from rdsupport import ROBOTS, TREE, assert_close, build_skeleton, fd_tangent, load_urdf_quiet, to_pin_q, world_of

import rigidiff as rd

pin = pytest.importorskip("pinocchio")

STATES = 10


@pytest.fixture(scope="module", params=ROBOTS, ids=[r[0] for r in ROBOTS])
def robot(request, robots_dir):
    name, rel, floating = request.param
    path = robots_dir / rel
    world = world_of(load_urdf_quiet(path, floating, package_dirs=[robots_dir]))
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(
        str(path))
    return world, pm, pm.createData()


def test_rnea_and_aba_derivatives_match_pinocchio(robot):
    world, pm, pd = robot
    rng = np.random.default_rng(3)
    for _ in range(STATES):
        q = world.random_configuration(rng)
        v, a, tau = rng.normal(size=(3, world.nv))
        qp = to_pin_q(world, q)
        dq, dv = world.inverse_dynamics_derivatives(q, v, a)
        pq, pv, _ = pin.computeRNEADerivatives(pm, pd, qp, v, a)
        assert_close(dq, pq, rtol=1e-8, what="dtau_dq")
        assert_close(dv, pv, rtol=1e-8, what="dtau_dv")
        aq, av, at = world.forward_dynamics_derivatives(q, v, tau)
        pin.computeABADerivatives(pm, pd, qp, v, tau)
        Minv = np.triu(pd.Minv) + np.triu(pd.Minv, 1).T
        assert_close(aq, pd.ddq_dq, rtol=1e-8, what="da_dq")
        assert_close(av, pd.ddq_dv, rtol=1e-8, what="da_dv")
        assert_close(at, Minv, rtol=1e-8, what="da_dtau")


def fd_jacobian(world, f, q, v, x, wrt, h=1e-6):
    """Central differences of f(q, v, x) along each tangent direction of q, v or x."""
    n = world.nv
    cols = []
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        if wrt == "q":
            plus, minus = f(world.integrate(q, e), v, x), f(world.integrate(q, -e), v, x)
        elif wrt == "v":
            plus, minus = f(q, v + e, x), f(q, v - e, x)
        else:
            plus, minus = f(q, v, x + e), f(q, v, x - e)
        cols.append((plus - minus) / (2 * h))
    return np.column_stack(cols)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_derivatives_match_finite_differences_on_every_joint_type(seed):
    sk = build_skeleton(TREE, seed)
    for body in sk.bodies:
        body.joint.armature[:] = 0.05
    world = world_of(sk)
    rng = np.random.default_rng(seed + 10)
    q = world.random_configuration(rng)
    v, a, tau = rng.normal(size=(3, world.nv))
    dq, dv = world.inverse_dynamics_derivatives(q, v, a)
    checks = [
        (dq, fd_jacobian(world, world.inverse_dynamics, q, v, a, "q"), "dtau_dq"),
        (dv, fd_jacobian(world, world.inverse_dynamics, q, v, a, "v"), "dtau_dv"),
    ]
    aq, av, at = world.forward_dynamics_derivatives(q, v, tau)
    checks += [
        (aq, fd_jacobian(world, world.forward_dynamics, q, v, tau, "q"), "da_dq"),
        (av, fd_jacobian(world, world.forward_dynamics, q, v, tau, "v"), "da_dv"),
        (at, fd_jacobian(world, world.forward_dynamics, q, v, tau, "x"), "da_dtau"),
    ]
    for analytic, fd, what in checks:
        assert np.abs(analytic).max() > 1e-3, what  # a real, non-zero derivative
        assert not np.array_equal(analytic, fd), what  # not the same computation
        assert_close(analytic, fd, rtol=1e-6, floor=1.0, what=what)


def test_da_dtau_is_the_inverse_mass_matrix_and_dtau_da_relation():
    sk = build_skeleton(TREE, 5)
    world = world_of(sk)
    rng = np.random.default_rng(0)
    q = world.random_configuration(rng)
    v, tau = rng.normal(size=(2, world.nv))
    aq, av, at = world.forward_dynamics_derivatives(q, v, tau)
    assert_close(at @ world.mass_matrix(q), np.eye(world.nv), rtol=1e-9, floor=1.0)
    # d a / d q = -M^-1 d tau / d q at a = forward_dynamics(q, v, tau)
    dq, dv = world.inverse_dynamics_derivatives(q, v, world.forward_dynamics(q, v, tau))
    assert_close(aq, -at @ dq, rtol=1e-9, floor=1.0)
    assert_close(av, -at @ dv, rtol=1e-9, floor=1.0)


def test_universal_joint_with_oblique_axes_against_finite_differences():
    """Universal joints compile to two revolute core joints, so every derivative applies to them."""
    sk = rd.Skeleton("u")
    sk.add_body("b", joint=rd.UniversalJoint("cardan", axis1=(1, 0, 0), axis2=(0.6, 0.8, 0.0)),
                inertia=rd.Inertia(1.0, com=(0.1, 0.0, -0.3), rotational_inertia=np.diag([0.1, 0.2, 0.25])))
    world = world_of(sk)
    q, v, a = np.array([0.4, -0.7]), np.array([1.3, -0.5]), np.array([0.2, 0.9])
    dq, dv = world.inverse_dynamics_derivatives(q, v, a)
    assert_close(dq, fd_tangent(world, lambda x: world.inverse_dynamics(x, v, a), q), rtol=1e-7, floor=1.0)
    fd_v = np.stack([(world.inverse_dynamics(q, v + h, a) - world.inverse_dynamics(q, v - h, a)) / 2e-6
                     for h in 1e-6 * np.eye(2)], axis=-1)
    assert_close(dv, fd_v, rtol=1e-7, floor=1.0)
    assert np.abs(dq).max() > 0.1 and np.abs(dv).max() > 0.01


def test_bad_inputs_name_the_argument():
    world = world_of(build_skeleton(TREE, 0))
    q = world.neutral_configuration()
    z = np.zeros(world.nv)
    with pytest.raises(ValueError, match="a must have shape"):
        world.inverse_dynamics_derivatives(q, z, z[:-1])
    with pytest.raises(ValueError, match="tau"):
        world.forward_dynamics_derivatives(q, z, np.full(world.nv, np.nan))
