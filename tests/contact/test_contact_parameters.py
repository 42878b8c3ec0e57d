"""Friction and restitution of every colliding shape as parameters: names, values, validation, and their
step Jacobians against central differences."""

import numpy as np
import pytest

import rigidiff as rd


def shape_on_ground(shape, mu_ground=0.6, mu_body=0.3, e_ground=0.0, e_body=0.0, gravity=(0.0, 0.0, -9.81)):
    world = rd.World(dt=1e-3, gravity=gravity)
    ground = rd.Skeleton("ground")
    ground.add_body("ground", joint=rd.FixedJoint("weld")).add_shape(rd.Plane(), friction=mu_ground,
                                                                     restitution=e_ground, name="floor")
    world.add_skeleton(ground)
    sk = rd.Skeleton("thing")
    body = sk.add_body("thing", joint=rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(shape, mass=1.3))
    body.add_shape(shape, friction=mu_body, restitution=e_body)
    world.add_skeleton(sk)
    return world


def parameter_fd(world, q, v, tau, names, eps=1e-6, bounce_correction=False):
    """Central differences of (q_next, v_next) for each named parameter, in the Jacobian's column order."""
    p0 = world.parameters()
    cols_q, cols_v = [], []
    for name in names:
        out = []
        for s in (1.0, -1.0):
            world.set_parameters({name: p0[name] + s * eps})
            out.append(world.step(q, v, tau))
        world.set_parameters({name: p0[name]})
        cols_q.append(world.difference(out[1][0], out[0][0]) / (2 * eps))
        cols_v.append((out[0][1] - out[1][1]) / (2 * eps))
    return np.array(cols_q).T, np.array(cols_v).T


def test_names_values_bounds_and_validation():
    world = shape_on_ground(rd.Box((0.2, 0.3, 0.1)), e_ground=0.25)
    p = world.parameters()
    assert p["floor/friction"] == 0.6 and p["thing/shape0/friction"] == 0.3
    assert p["floor/restitution"] == 0.25 and p["thing/shape0/restitution"] == 0.0
    i = p.index("floor/restitution")
    assert p.lower[i] == 0.0 and p.upper[i] == 1.0
    world.set_parameters({"floor/friction": 0.9, "thing/shape0/restitution": 0.4})
    assert world.skeletons[0].bodies[0].shapes[0].friction == 0.9
    assert world.parameters()["thing/shape0/restitution"] == 0.4
    with pytest.raises(ValueError, match="floor/friction"):
        world.set_parameters({"floor/friction": -0.1})
    with pytest.raises(ValueError, match="restitution"):
        world.set_parameters({"floor/restitution": 1.5})
    assert world.step_jacobians(world.neutral_configuration(), np.zeros(6), np.zeros(6),
                                wrt="friction").parameter_names == ("floor/friction", "thing/shape0/friction")


def test_friction_changes_the_physics_it_is_a_parameter_of():
    world = shape_on_ground(rd.Box((0.2, 0.2, 0.2)), mu_ground=0.5, mu_body=0.5)
    q = world.neutral_configuration()
    q[2] = 0.1
    v = np.array([2.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    taus = np.zeros((300, 6))
    x_half = world.rollout(q, v, taus)[0][-1, 0]
    world.set_parameters({"thing/shape0/friction": 0.125})  # sqrt(0.5 * 0.125) = 0.25
    x_quarter = world.rollout(q, v, taus)[0][-1, 0]
    assert x_quarter > x_half + 0.1


@pytest.mark.parametrize("combine", ["geometric_mean", "min", "max", "mean"])
def test_friction_jacobian_of_a_sliding_box(combine):
    world = shape_on_ground(rd.Box((0.2, 0.3, 0.1)), mu_ground=0.6, mu_body=0.3)
    world.contact_options(friction_combine=combine)
    q = world.neutral_configuration()
    q[2] = 0.05 - 1e-4
    v = np.array([1.0, 0.2, 0.0, 0.0, 0.0, 0.3])
    tau = np.array([0.3, -0.2, 0.0, 0.0, 0.0, 0.01])
    jac = world.step_jacobians(q, v, tau, wrt="friction")
    assert {"lower_bound", "upper_bound"} & set(jac.contacts.row_classes)  # sliding
    fq, fv = parameter_fd(world, q, v, tau, jac.parameter_names)
    assert np.abs(fv).max() > 1e-3
    np.testing.assert_allclose(jac.dv_dp, fv, atol=1e-8)
    np.testing.assert_allclose(jac.dq_dp, fq, atol=1e-10)


def test_sticking_friction_does_not_depend_on_its_coefficient():
    world = shape_on_ground(rd.Box((0.2, 0.3, 0.1)), mu_ground=1.0, mu_body=1.0)
    q = world.neutral_configuration()
    q[2] = 0.05 - 1e-4
    jac = world.step_jacobians(q, np.zeros(6), np.array([0.3, 0.0, 0.0, 0.0, 0.0, 0.0]), wrt="friction")
    assert set(jac.contacts.row_classes) <= {"clamping", "separating"}
    assert np.abs(jac.P).max() == 0.0


@pytest.mark.parametrize("combine", ["max", "mean"])
def test_restitution_jacobian_of_a_bouncing_ball(combine):
    # frictionless: the ball does not start spinning, so v' is the velocity that moved q (a spinning
    # free body's v' holds its linear velocity re-expressed in its new frame, docs/conventions.md)
    world = shape_on_ground(rd.Sphere(0.1), mu_ground=0.0, mu_body=0.0, e_ground=0.5, e_body=0.7)
    world.contact_options(restitution_combine=combine, bounce_correction=False)
    q = world.neutral_configuration()
    q[2] = 0.1 - 1e-5
    v = np.array([0.3, 0.0, -2.0, 0.0, 0.0, 0.0])
    tau = np.zeros(6)
    jac = world.step_jacobians(q, v, tau, wrt="restitution")
    fq, fv = parameter_fd(world, q, v, tau, jac.parameter_names)
    assert np.abs(fv).max() > 0.5
    np.testing.assert_allclose(jac.dv_dp, fv, atol=1e-8)
    np.testing.assert_allclose(jac.dq_dp, fq, atol=1e-10)
    # with the bounce correction q' also moves by -t_c dv', t_c = -d / vn = -(-1e-5) / (-2) the time of
    # impact (before the step)
    world.contact_options(bounce_correction=True)
    jac2 = world.step_jacobians(q, v, tau, wrt="restitution")
    np.testing.assert_allclose(jac2.dv_dp, jac.dv_dp, atol=1e-12)
    np.testing.assert_allclose(jac2.dq_dp, jac.dq_dp + 0.5e-5 * jac.dv_dp, atol=1e-10)
