"""Physical parameters: the named vector, setting it, the inverse-dynamics regressor and the parameter
blocks of the step Jacobians against central differences of the step."""

import numpy as np
import pytest
from rdsupport import ROBOTS, assert_close, robot_world, tree_world, with_passive_terms, world_of

import rigidiff as rd
import rigidiff.testing as rdt


# ---------------------------------------------------------------------------------------------- the vector
def test_names_values_and_bounds_follow_the_model():
    world = tree_world()
    p = world.parameters()
    moving = [b for b in world.body_names if b != "pedestal"]  # the pedestal is welded to the world
    assert p.names[:10] == tuple(f"base/{f}" for f in ("mass", "com_x", "com_y", "com_z", "inertia_xx", "inertia_xy",
                                                       "inertia_xz", "inertia_yy", "inertia_yz", "inertia_zz"))
    assert [n.split("/")[0] for n in p.names[:10 * len(moving):10]] == moving
    assert "head_joint/damping_2" in p.names and "arm_joint/stiffness" in p.names
    assert p.names[-3:] == ("gravity_x", "gravity_y", "gravity_z")
    assert len(p) == 10 * len(moving) + 3 * world.nv + 3
    arm = world.body("arm").inertia
    assert p["arm/mass"] == arm.mass and p["arm/com_y"] == arm.com[1]
    assert p["arm/inertia_xz"] == arm.rotational_inertia[0, 2]
    assert p["head_joint/armature_1"] == world.joint("head_joint").armature[1]
    assert p["gravity_z"] == -9.81
    assert p.lower[p.index("arm/mass")] == 0 and p.lower[p.index("arm/inertia_yy")] == 0
    assert p.lower[p.index("arm/inertia_xy")] == -np.inf and p.lower[p.index("arm/com_x")] == -np.inf
    assert p.lower[p.index("gravity_x")] == -np.inf and np.all(p.upper == np.inf)
    with pytest.raises(KeyError, match="did you mean"):
        p.index("arm/mas")


def test_set_parameters_updates_skeleton_model_and_keeps_the_state():
    world = tree_world()
    rng = np.random.default_rng(3)
    world.q = world.random_configuration(rng)
    q_before = world.q
    world.set_parameters({"tip/mass": 2.5, "tip/com_x": 0.05, "head_joint/damping_1": 0.7, "gravity_x": 1.0})
    np.testing.assert_array_equal(world.q, q_before)
    assert world.body("tip").inertia.mass == 2.5 and world.body("tip").inertia.com[0] == 0.05
    assert world.joint("head_joint").damping[1] == 0.7
    np.testing.assert_array_equal(world.gravity, [1.0, 0.0, -9.81])
    # the model agrees with one compiled from scratch out of the edited skeletons
    fresh = world_of(*world.skeletons, gravity=world.gravity)
    q, v, tau = world.random_configuration(rng), rng.normal(size=world.nv), rng.normal(size=world.nv)
    np.testing.assert_allclose(world.step(q, v, tau)[1], fresh.step(q, v, tau)[1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(world.mass_matrix(q), fresh.mass_matrix(q), rtol=1e-12, atol=1e-14)


def test_set_parameters_vector_round_trip_and_welded_bodies():
    world = tree_world()
    p = world.parameters()
    # 'weld' hangs on a fixed joint under 'slider': its parameters reach the merged inertia of 'slider'
    values = p.values.copy()
    values[p.index("weld/mass")] *= 3.0
    rng = np.random.default_rng(0)
    q, v, tau = world.random_configuration(rng), rng.normal(size=world.nv), rng.normal(size=world.nv)
    before = world.step(q, v, tau)[1]
    world.set_parameters(values)
    assert not np.allclose(world.step(q, v, tau)[1], before)
    world.set_parameters(p.values)
    np.testing.assert_array_equal(world.step(q, v, tau)[1], before)
    np.testing.assert_array_equal(world.parameters().values, p.values)


@pytest.mark.parametrize("name", ["tree", "panda", "talos"])
def test_set_parameters_gives_bitwise_the_model_a_fresh_compile_gives(name, robots_dir):
    """The core sums each joint's bodies (its own, then those welded to it) again when one changes, in the
    order and arithmetic of the compile: a world whose parameters were set steps bit for bit as one
    compiled from its edited skeletons, welded bodies made massless, heavier or restored included."""
    world = tree_world() if name == "tree" else robot_world(robots_dir, name)
    p = world.parameters()
    layout = world._parameter_layout()
    welded = [world._param_bodies[s].name for s in range(len(world._param_bodies))
              if world._param_bodies[s].joint.nv == 0]
    assert welded, "the model should have bodies welded to moving ones"
    rng = np.random.default_rng(7)
    q, v, tau = world.random_configuration(rng), rng.normal(size=world.nv), rng.normal(size=world.nv)
    moving = [n.split("/")[0] for n in p.names[:10 * len(layout.body_joint):10]]
    edits = [{f"{moving[0]}/mass": 2.0 * p[f"{moving[0]}/mass"] + 0.1}]
    for b in welded[:3]:
        edits.append({f"{b}/mass": 0.0, f"{b}/inertia_xx": 0.0, f"{b}/inertia_yy": 0.0, f"{b}/inertia_zz": 0.0,
                      f"{b}/inertia_xy": 0.0, f"{b}/inertia_xz": 0.0, f"{b}/inertia_yz": 0.0})
        edits.append({f"{b}/mass": 1.5, f"{b}/com_y": 0.02, f"{b}/inertia_xx": 0.01, f"{b}/inertia_yy": 0.01,
                      f"{b}/inertia_zz": 0.01})
    for edit in edits + [dict(zip(p.names, p.values))]:
        world.set_parameters(edit)
        fresh = world._copy()
        np.testing.assert_array_equal(world.mass_matrix(q), fresh.mass_matrix(q))
        np.testing.assert_array_equal(world.step(q, v, tau)[1], fresh.step(q, v, tau)[1])
    np.testing.assert_array_equal(world.parameters().values, p.values)


@pytest.mark.parametrize("update,match", [
    ({"arm/mas": 1.0}, "no parameter named 'arm/mas'.*arm/mass"),
    ({"arm/mass": -1.0}, "mass must be >= 0"),
    ({"arm/mass": np.nan}, "must be finite"),
    ({"arm/mass": "heavy"}, "must be a real number"),
    ({"arm/inertia_xx": -1.0}, "body 'arm'.*positive semi-definite"),
    ({"arm_joint/damping": -0.1}, "must be >= 0"),
])
def test_set_parameters_rejects_bad_values_and_changes_nothing(update, match):
    world = tree_world()
    before = world.parameters().values.copy()
    with pytest.raises(ValueError, match=match):
        world.set_parameters(update)
    np.testing.assert_array_equal(world.parameters().values, before)


def test_set_parameters_wrong_length():
    world = tree_world()
    with pytest.raises(ValueError, match="parameter values must have shape"):
        world.set_parameters(np.zeros(3))


# ---------------------------------------------------------------------------------------------- regressor
@pytest.mark.parametrize("robot", [r[0] for r in ROBOTS])
def test_regressor_reproduces_inverse_dynamics(robot, robots_dir):
    world = with_passive_terms(robot_world(robots_dir, robot))
    rng = np.random.default_rng(5)
    theta = world.regressor_parameters()
    for _ in range(3):
        q = world.random_configuration(rng)
        v, a = rng.normal(size=(2, world.nv))
        Y = world.inverse_dynamics_regressor(q, v, a)
        assert Y.shape == (world.nv, len(theta))
        assert_close(Y @ theta.values, world.inverse_dynamics(q, v, a), rtol=1e-10, floor=1.0, what=robot)


def test_regressor_of_a_world_with_particles_holds_their_masses_alone():
    # a particle is a point mass on three sliding dofs: one regressor column, its mass, and no armature columns
    world = rd.World(dt=1e-3)
    world.add_skeleton(rd.models.load("double_pendulum"))
    world.add_particles(np.array([[0.0, 1.0, 1.0], [1.0, 1.0, 1.0]]), masses=[0.5, 2.0], name="grains")
    theta = world.regressor_parameters()
    assert [n for n in theta.names if n.startswith("p")] == ["p0/mass", "p1/mass"]  # the particles' bodies
    assert [theta["p0/mass"], theta["p1/mass"]] == [0.5, 2.0]
    armature = [n for n in theta.names if n.endswith("armature")]
    assert len(armature) == world.nv - 6  # the pendulum's dofs
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = world.random_configuration(rng)
        v, a = rng.normal(size=(2, world.nv))
        Y = world.inverse_dynamics_regressor(q, v, a)
        assert Y.shape == (world.nv, len(theta))
        assert_close(Y @ theta.values, world.inverse_dynamics(q, v, a), rtol=1e-12, floor=1.0)


def test_regressor_parameters_are_the_standard_ones():
    world = tree_world()
    theta = world.regressor_parameters()
    I = world.body("arm").inertia
    assert theta["arm/mass"] == I.mass
    np.testing.assert_allclose([theta[f"arm/first_moment_{c}"] for c in "xyz"], I.mass * I.com)
    np.testing.assert_allclose(theta["arm/inertia_origin_yz"], I.inertia_about_origin()[1, 2])
    assert theta["arm_joint/armature"] == world.joint("arm_joint").armature[0]


# ---------------------------------------------------------------------------------------------- step Jacobians
def check_parameter_blocks(world, q, v, tau, wrt="all", rtol=2e-6):
    J = world.step_jacobians(q, v, tau, wrt=wrt)
    before = world.parameters().values.copy()
    fd = rdt.finite_difference_jacobians(world, q, v, tau, parameters=wrt)
    np.testing.assert_array_equal(world.parameters().values, before)  # restored exactly
    assert J.parameter_names == fd.parameter_names
    assert J.P.shape == (2 * world.nv, len(J.parameter_names))
    for name in ("dq_dp", "dv_dp"):
        analytic, expected = getattr(J, name), getattr(fd, name)
        assert np.abs(analytic).max() > 1e-6, name
        assert not np.array_equal(analytic, expected), name
        assert_close(analytic, expected, rtol=rtol, floor=1.0, what=name)
    # the state blocks are those of the call without parameters
    np.testing.assert_array_equal(J.A, world.step_jacobians(q, v, tau).A)
    return J


@pytest.mark.parametrize("seed,dt", [(0, 1e-3), (1, 1e-2)])
def test_parameter_jacobians_on_every_joint_type(seed, dt):
    world = tree_world(seed, dt)
    rng = np.random.default_rng(seed)
    q = world.random_configuration(rng)
    v, tau = rng.normal(size=(2, world.nv))
    J = check_parameter_blocks(world, q, v, tau)
    names = world.parameters().names
    for group in ("inertia", "damping", "stiffness", "armature", "gravity"):
        cols = [J.parameter_names.index(names[i]) for i in world._resolve_wrt(group)]
        assert np.abs(J.dv_dp[:, cols]).max() > 1e-8, group


@pytest.mark.parametrize("robot", ["panda", "solo12"])
def test_parameter_jacobians_on_real_robots(robot, robots_dir):
    world = with_passive_terms(robot_world(robots_dir, robot), seed=2)
    rng = np.random.default_rng(6)
    q = world.random_configuration(rng)
    v, tau = 0.5 * rng.normal(size=(2, world.nv))
    check_parameter_blocks(world, q, v, tau)


def test_wrt_selection_orders_columns_as_the_parameter_names():
    world = tree_world()
    rng = np.random.default_rng(2)
    q = world.random_configuration(rng)
    v, tau = rng.normal(size=(2, world.nv))
    full = world.step_jacobians(q, v, tau, wrt="all")
    some = world.step_jacobians(q, v, tau, wrt=["gravity_z", "tip", "arm_joint/damping"])
    names = world.parameters().names
    assert list(some.parameter_names) == sorted(some.parameter_names, key=names.index)
    assert len(some.parameter_names) == 12 and "tip/inertia_zz" in some.parameter_names
    for c, n in enumerate(some.parameter_names):
        np.testing.assert_allclose(some.P[:, c], full.P[:, full.parameter_names.index(n)], rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="no parameter named 'tipp'"):
        world.step_jacobians(q, v, tau, wrt="tipp")
    with pytest.raises(ValueError, match="wrt entries must be strings"):
        world.step_jacobians(q, v, tau, wrt=[3])


def test_check_jacobians_reports_parameter_blocks():
    world = tree_world()
    rng = np.random.default_rng(4)
    q = world.random_configuration(rng)
    v, tau = rng.normal(size=(2, world.nv))
    report = rdt.check_jacobians(world, q, v, tau, wrt=("v", "gravity", "tip/mass"))
    assert [b.name for b in report.blocks] == ["dq_dv", "dv_dv", "dq_dp", "dv_dp"]
    assert report.passed, str(report)
    assert report["dv_dp"].shape == (world.nv, 4)
