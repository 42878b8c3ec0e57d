"""System identification (rigidiff.sysid.fit): both methods recover the parameters that made a recording,
on a slider, an arm, a real robot and a box sliding on the ground; inputs are checked."""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from rdsupport import robot_world, tree_world

import rigidiff as rd
import rigidiff.sysid as sysid


# ---------------------------------------------------------------------------------------------- models
def slider(mass=2.5, dt=0.1, damping=0.0):
    """A box on a prismatic joint along x, without gravity."""
    world = rd.World(dt=dt, gravity=(0.0, 0.0, 0.0))
    sk = rd.Skeleton("slider")
    sk.add_body("box", joint=rd.PrismaticJoint("slide", axis=(1.0, 0.0, 0.0), damping=damping),
                inertia=rd.Inertia.from_shape(rd.Box((0.1, 0.1, 0.1)), mass=mass))
    world.add_skeleton(sk)
    return world


def arm(dt=1e-2):
    """Three links: a vertical hinge, then two horizontal ones, with joint damping and gravity."""
    world = rd.World(dt=dt)
    sk = rd.Skeleton("arm")
    parent = None
    for i, axis in enumerate([(0, 0, 1), (0, 1, 0), (0, 1, 0)]):
        parent = sk.add_body(f"link{i + 1}", joint=rd.RevoluteJoint(f"joint{i + 1}", axis=axis, damping=0.1),
                             parent=parent, joint_origin=rd.Transform(translation=(0.0, 0.0, 0.3 if i else 0.1)),
                             inertia=rd.Inertia(1.0 - 0.2 * i, com=(0.05, 0.01, 0.15),
                                                rotational_inertia=np.diag([0.02, 0.025, 0.01])))
    world.add_skeleton(sk)
    return world


ARM_TRUE = {"link1/mass": 1.2, "link2/mass": 0.9, "link2/inertia_yy": 0.03, "link3/mass": 0.5, "link3/com_x": 0.08,
            "joint1/damping": 0.3, "joint2/damping": 0.2, "joint3/damping": 0.05}


def record(world, q0, v0, taus):
    Q, V = world.rollout(q0, v0, taus)
    return Q, V, np.asarray(taus, dtype=float)


def arm_recording(seed=1, steps=150, values=ARM_TRUE):
    world = arm()
    world.set_parameters(values)
    rng = np.random.default_rng(seed)
    return record(world, rng.uniform(-1.0, 1.0, 3), rng.normal(size=3), rng.normal(scale=2.0, size=(steps, 3)))


def box_on_ground(mass=2.0, friction=0.3, dt=1e-2):
    """A 20 cm box on the ground; the box's own friction is 1 and the "min" rule makes the ground's count."""
    world = rd.World(dt=dt)
    world.add_ground(friction=friction)
    sk = rd.Skeleton("box")
    body = sk.add_body("box", joint=rd.FreeJoint("free"),
                       inertia=rd.Inertia.from_shape(rd.Box((0.2, 0.2, 0.2)), mass=mass))
    body.add_shape(rd.Box((0.2, 0.2, 0.2)), friction=1.0, name="box")
    world.add_skeleton(sk)
    world.contact_options(friction_combine="min")
    return world


def pushed_box_recording(steps=40, seed=0):
    """The true box settles on the ground, then a varying push along x makes it slide."""
    world = box_on_ground()
    q = world.neutral_configuration()
    q[2] = 0.1
    Q, V = world.rollout(q, np.zeros(6), np.zeros((20, 6)))
    taus = np.zeros((steps, 6))
    taus[:, 0] = np.random.default_rng(seed).uniform(8.0, 14.0, steps)
    traj = world.rollout(Q[-1], V[-1], taus, record=True)
    assert len(traj.constrained_steps) == steps  # in contact throughout
    assert traj.v[-1, 0] > 0.1  # and sliding
    return traj.q, traj.v, taus


def errors(res, true) -> dict:
    return {n: abs(res.values[n] - v) for n, v in true.items()}


# ---------------------------------------------------------------------------------------------- recovery
@pytest.mark.parametrize("method", ["regressor", "rollout"])
def test_recover_mass_of_a_pushed_slider(method):
    """Nimble's RECOVER_MASS: a 2.5 kg box pushed by 0.1 N for 12 steps of 0.1 s, fitted from 0.5 kg."""
    Q, V, taus = record(slider(2.5), [0.0], [0.0], np.full((12, 1), 0.1))
    world = slider(0.5)
    res = sysid.fit(world, Q, V, taus, params=["box/mass"], method=method)
    assert res.method == method and res.success
    assert abs(res.values["box/mass"] - 2.5) < 1e-6
    assert res.start == {"box/mass": 0.5}
    assert res.initial_residual > 1e-3 and res.residual < 1e-10
    assert world.parameters()["box/mass"] == 0.5  # the given world is left as it was
    assert res.world is not world and res.world.parameters()["box/mass"] == pytest.approx(2.5, abs=1e-6)
    np.testing.assert_allclose(res.world.rollout(Q[0], V[0], taus)[0], Q, atol=1e-9)
    if method == "regressor":
        assert res.iterations <= 2  # one Gauss-Newton step solves a problem linear in the names


def test_arm_inertial_parameters_and_damping_by_the_regressor():
    Q, V, taus = arm_recording()
    world = arm()
    res = sysid.fit(world, Q, V, taus, params=list(ARM_TRUE))  # "auto": no contact, every name linear enough
    assert res.method == "regressor" and res.success, res.message
    assert list(res.values) == [n for n in world.parameters().names if n in ARM_TRUE]
    worst = max(errors(res, ARM_TRUE).values())
    assert worst < 1e-6, errors(res, ARM_TRUE)
    assert res.residual < 1e-9 < res.initial_residual
    # com_x enters nonlinearly: Gauss-Newton needs more than one step but few
    assert 2 < res.iterations < 15
    assert world.parameters()["link3/com_x"] == 0.05
    Q_fit, V_fit = res.world.rollout(Q[0], V[0], taus)
    np.testing.assert_allclose(V_fit, V, atol=1e-8)


def test_particle_masses_next_to_a_pendulum_by_the_regressor():
    # the regressor's columns of a particle are its mass alone: a fit from wrong starts recovers every mass
    truth = rd.World(dt=1e-2)
    truth.add_skeleton(rd.models.load("double_pendulum"))
    truth.add_particles(np.array([[0.0, 1.0, 1.0], [1.0, 1.0, 1.0]]), masses=[0.5, 5.0], name="grains")
    rng = np.random.default_rng(2)
    taus = rng.normal(size=(40, truth.nv))
    q0 = truth.neutral_configuration()
    Q, V = truth.rollout(q0, np.zeros(truth.nv), taus)
    names = [n for n in truth.parameters().names if n.endswith("/mass")]
    true = {n: truth.parameters()[n] for n in names}
    res = sysid.fit(truth, Q, V, taus, params=names, start={n: 2.0 * v + 1.0 for n, v in true.items()})
    assert res.method == "regressor" and res.success, res.message
    for n, v in true.items():
        assert res.values[n] == pytest.approx(v, rel=1e-8), n


def test_rollout_agrees_with_the_regressor_on_the_arm():
    Q, V, taus = arm_recording(steps=60)
    res = sysid.fit(arm(), Q, V, taus, params=list(ARM_TRUE), method="rollout", shot_length=15)
    assert res.method == "rollout" and res.success
    assert max(errors(res, ARM_TRUE).values()) < 1e-6, errors(res, ARM_TRUE)


def test_groups_body_names_start_values_and_gravity():
    true = {"joint1/damping": 0.3, "joint2/damping": 0.2, "joint3/damping": 0.05, "gravity_z": -9.81,
            "link3/mass": 0.5}
    Q, V, taus = arm_recording(steps=80, values=true)
    world = arm()
    world.gravity = (0.0, 0.0, -5.0)
    res = sysid.fit(world, Q, V, taus, params=["damping", "gravity_z", "link3/mass"], start={"link3/mass": 1.5})
    assert set(res.values) == set(true)
    assert res.start["link3/mass"] == 1.5 and res.start["gravity_z"] == -5.0
    assert max(errors(res, true).values()) < 1e-6, errors(res, true)
    np.testing.assert_allclose(res.world.gravity, [0.0, 0.0, -9.81], atol=1e-6)
    # a body name stands for all ten of its inertial parameters
    res = sysid.fit(world, Q, V, taus, params=["link3"], method="regressor", max_iterations=1)
    assert list(res.values) == [n for n in world.parameters().names if n.startswith("link3/")]


def test_passive_terms_of_every_joint_type_by_the_regressor():
    """Damping, springs (quaternion joints included) and armature of every joint type, a welded body's mass,
    a centre of mass and gravity: the discrete equations of the step hold exactly."""
    world = tree_world(dt=1e-2)
    p = world.parameters()
    names = [n for n in p.names if n.split("/")[-1].split("_")[0] in ("damping", "stiffness", "armature")]
    names += ["weld/mass", "arm/com_x", "gravity_z"]
    true = {n: p[n] for n in names}
    assert min(true[n] for n in names if "stiffness" in n) > 0  # the springs act
    rng = np.random.default_rng(0)
    Q, V, taus = record(world, world.random_configuration(rng), 0.3 * rng.normal(size=world.nv),
                        rng.normal(size=(60, world.nv)))
    world.set_parameters({n: (-8.0 if n == "gravity_z" else 1.3 * true[n] + 0.05) for n in names})
    res = sysid.fit(world, Q, V, taus, params=names)
    assert res.method == "regressor" and res.success
    assert max(errors(res, true).values()) < 1e-9, errors(res, true)


def test_real_robot_link_masses(robots_dir):
    world = robot_world(robots_dir, "panda")
    world.dt = 1e-3
    names = [f"panda_link{i}/mass" for i in range(1, 8)]
    true = {n: world.parameters()[n] for n in names}
    rng = np.random.default_rng(2)
    q0 = world.random_configuration(rng)
    noise = rng.normal(scale=3.0, size=(100, world.nv)) * np.r_[np.ones(7), 0.01, 0.01]
    Q, V, taus = record(world, q0, np.zeros(world.nv), world.gravity_forces(q0) + noise)
    world.set_parameters({n: 1.5 * m + 0.2 for n, m in true.items()})
    res = sysid.fit(world, Q, V, taus, params=names, method="regressor")
    assert res.success
    for n, m in true.items():
        assert abs(res.values[n] - m) < 1e-6 * max(1.0, m), (n, res.values[n], m)


@pytest.mark.parametrize("shot_length", [10, None])
def test_mass_and_friction_of_a_box_sliding_on_the_ground(shot_length):
    Q, V, taus = pushed_box_recording()
    world = box_on_ground(mass=1.0, friction=0.8)
    res = sysid.fit(world, Q, V, taus, params=["box/mass", "ground/plane/friction"], shot_length=shot_length)
    assert res.method == "rollout" and res.success, res.message  # "auto": contacts and a friction name
    assert abs(res.values["box/mass"] - 2.0) < 1e-6
    assert abs(res.values["ground/plane/friction"] - 0.3) < 1e-6
    assert res.residual < 1e-10 < res.initial_residual
    assert world.parameters()["ground/plane/friction"] == 0.8
    assert res.world.parameters()["ground/plane/friction"] == pytest.approx(0.3, abs=1e-6)
    # the regressor refuses both the contact steps and the friction name
    with pytest.raises(ValueError, match=r"steps without constraints.*recording 0: steps 0, 1, 2"):
        sysid.fit(world, Q, V, taus, params=["box/mass"], method="regressor")
    with pytest.raises(ValueError, match="ground/plane/friction.*act only through contacts"):
        sysid.fit(world, Q, V, taus, params=["ground/plane/friction"], method="regressor")


def test_several_recordings():
    recs = [arm_recording(seed=s, steps=50) for s in (3, 4)]
    Qs, Vs, Ts = ([r[k] for r in recs] for k in range(3))
    for method in ("regressor", "rollout"):
        res = sysid.fit(arm(), Qs, Vs, Ts, params=list(ARM_TRUE), method=method)
        assert max(errors(res, ARM_TRUE).values()) < 1e-6, (method, errors(res, ARM_TRUE))
    # a bad second recording is named as such
    with pytest.raises(ValueError, match=r"tau\[1\] must have shape \(T, nv\) = \(50, 3\), got \(49, 3\)"):
        sysid.fit(arm(), Qs, Vs, [Ts[0], Ts[1][:-1]], params=["link1/mass"])


# ---------------------------------------------------------------------------------------------- limits
def test_unidentifiable_parameters_warn_and_stay_at_their_start():
    """Without gravity or rotation, the centre of mass of the slider leaves no trace in the data."""
    Q, V, taus = record(slider(2.5), [0.0], [0.0], np.full((12, 1), 0.1))
    with pytest.warns(UserWarning, match="only 1 of the 2 parameters are identifiable"):
        res = sysid.fit(slider(0.5), Q, V, taus, params=["box/mass", "box/com_y"], method="regressor")
    assert abs(res.values["box/mass"] - 2.5) < 1e-6 and res.values["box/com_y"] == 0.0
    assert "identifiable" in res.message


def test_bounds_hold_where_the_data_would_cross_them():
    """Undamped data whose torques read low in proportion to the velocity: the unconstrained damping
    estimate is -0.05; the fit keeps the damping at its bound 0."""
    rng = np.random.default_rng(0)
    Q, V, taus = record(slider(2.5, dt=0.01), [0.0], [0.0], rng.normal(size=(200, 1)))
    biased = taus - 0.05 * V[1:]
    res = sysid.fit(slider(1.0, dt=0.01), Q, V, biased, params=["box/mass", "slide/damping"], method="regressor")
    assert 0.0 <= res.values["slide/damping"] < 1e-9 and "bounds" in res.message
    assert abs(res.values["box/mass"] - 2.5) < 0.05
    free = sysid.fit(slider(1.0, dt=0.01), Q, V, biased, params=["box/mass"], method="regressor")
    assert free.residual > 1e-4  # the data are not those of the model


def test_the_tutorial_example_runs_and_a_constant_push_is_not_enough():
    text = (Path(__file__).resolve().parents[2] / "docs" / "sysid.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    ns: dict = {}
    exec(compile(blocks[-1], "docs/sysid.md", "exec"), ns)  # noqa: S102 - our own documentation
    res = ns["res"]
    assert res.method == "rollout"
    assert abs(res.values["box/mass"] - 2.0) < 1e-9 and abs(res.values["ground/plane/friction"] - 0.3) < 1e-9
    # under a constant push only F/m - mu g shows: the rollout fit says so
    Q, V, taus = ns["Q"], ns["V"], ns["taus"]
    taus = np.zeros_like(taus)
    taus[:, 0] = 12.0
    true = ns["box_world"](2.0, 0.3)
    settled = true.rollout(ns["q0"], np.zeros(6), np.zeros((20, 6)))
    Q, V = true.rollout(settled[0][-1], settled[1][-1], taus)
    with pytest.warns(UserWarning, match="only 1 of the 2 parameters are identifiable"):
        res = sysid.fit(ns["box_world"](1.0, 0.8), Q, V, taus, params=["box/mass", "ground/plane/friction"])
    # the fit lands somewhere on the line of parameters that reproduce the data (where, depends on the
    # optimiser's path): a world with the fitted values replays the recorded motion
    assert res.residual < 1e-10
    other = ns["box_world"](res.values["box/mass"], res.values["ground/plane/friction"])
    np.testing.assert_allclose(other.rollout(Q[0], V[0], taus)[0], Q, atol=1e-9)


def _bad_inputs():
    Q, V, taus = record(slider(), [0.0], [0.0], np.full((4, 1), 0.1))
    bad_v = V.copy()
    bad_v[2, 0] = np.nan
    return Q, V, taus, [
        (dict(q=Q[:, None, :]), ValueError, r"q must have shape \(T\+1, nq\) = \(T\+1, 1\), got \(5, 1, 1\)"),
        (dict(q=np.zeros((5, 2))), ValueError, r"q must have shape .* got \(5, 2\)"),
        (dict(v=V[:-1]), ValueError, r"v must have shape \(T\+1, nv\) = \(5, 1\), got \(4, 1\)"),
        (dict(tau=taus[:-1]), ValueError, r"tau must have shape \(T, nv\) = \(4, 1\), got \(3, 1\)"),
        (dict(q=Q[:1], v=V[:1], tau=taus[:0]), ValueError, "at least 2 states"),
        (dict(v=bad_v), ValueError, "v must be finite, got nan at row 2"),
        (dict(params=["box/mas"]), KeyError, r"no parameter named 'box/mas'.*did you mean.*box/mass"),
        (dict(params=[]), ValueError, "params selects no parameter"),
        (dict(params=None), ValueError, "params must be a list"),
        (dict(params=[3]), ValueError, "entries must be strings"),
        (dict(method="newton"), ValueError, "method must be one of"),
        (dict(start={"box/com_x": 1.0}), ValueError, r"start names \['box/com_x'\] are not among"),
        (dict(start={"box/mass": -1.0}), ValueError, "mass must be >= 0"),
        (dict(shot_length=0), ValueError, "shot_length must be a positive integer"),
        (dict(weights=(1.0, -1.0)), ValueError, "weights must be"),
        (dict(max_iterations=0), ValueError, "max_iterations"),
        (dict(q=[Q], v=V), ValueError, "all arrays .* or all lists"),
        (dict(q=[Q, Q], v=[V], tau=[taus]), ValueError, "as many recordings: got 2, 1 and 1"),
        (dict(world="slider"), ValueError, "world must be a rigidiff.World"),
    ]


@pytest.mark.parametrize("case", range(len(_bad_inputs()[3])))
def test_bad_input_is_named(case):
    Q, V, taus, cases = _bad_inputs()
    changes, exc, match = cases[case]
    kwargs = dict(world=slider(0.5), q=Q, v=V, tau=taus, params=["box/mass"])
    kwargs.update(changes)
    with pytest.raises(exc, match=match):
        sysid.fit(**kwargs)


def test_the_given_world_is_never_modified():
    Q, V, taus = pushed_box_recording(steps=10)
    world = box_on_ground(mass=1.0, friction=0.8)
    world.q = Q[3]
    before = (world.parameters().values.copy(), world.q, world.contact_options())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sysid.fit(world, Q, V, taus, params=["box/mass", "friction"], max_iterations=3)
    np.testing.assert_array_equal(world.parameters().values, before[0])
    np.testing.assert_array_equal(world.q, before[1])
    assert world.contact_options() == before[2] == res.world.contact_options()
    np.testing.assert_array_equal(res.world.q, before[1])
    assert res.iterations <= 3
