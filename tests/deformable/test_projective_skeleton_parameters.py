"""The skeletons' own parameters in projective worlds: each link's 10 inertial parameters and each joint's damping,
stiffness and armature, named as the lcp world names them, listed by parameters(), set by set_parameters, and
differentiated by step_vjp and rollout_backward (checked against central differences of our own step and of a
short rollout, on a two-link arm rubbing on a soft block with friction, and a ball on a universal joint)."""

import numpy as np
import pytest
from test_projective_skeletons import _arm, _arm_start, _start, _world

import rigidiff as rd
from rigidiff.errors import UnknownNameError

# every joint parameter positive, so that central differences stay in the valid range
JOINTS = {"shoulder/damping": 0.1, "wrist/damping": 0.05, "shoulder/stiffness": 1.0, "wrist/stiffness": 2.0,
          "shoulder/armature": 0.01, "wrist/armature": 0.002}


def _arm_world():
    world = _world(friction=0.5)
    world.add_ground()
    world.add_skeleton(_arm())
    world.set_parameters(JOINTS)
    q, v, f = _arm_start(world)
    f[world.layout("arm").v] = (0.02, -0.01)
    return world, q, v, f


def _derivative(world, loss, name):
    """A central difference of loss() in the parameter, Richardson-extrapolated (error O(h^4), so that h can stay
    well above the solves' rounding): h is 1 % of the parameter's scale here (a mass, 5 cm for a centre of mass,
    3e-5 kg m^2 for an inertia, the value or 0.01 for a joint's coefficient)."""
    x = world.parameters()[name]
    field = name.rsplit("/", 1)[1]
    h = 1e-2 * (x if field == "mass" else 0.05 if field.startswith("com") else 3e-5 if field.startswith("inertia")
                else max(x, 0.01))

    def central(h):
        world.set_parameters({name: x + h})
        up = loss()
        world.set_parameters({name: x - h})
        down = loss()
        world.set_parameters({name: x})
        return (up - down) / (2 * h)

    return (4 * central(h / 2) - central(h)) / 3


def _skeleton_names(world):
    return [n for n in world.parameters().names if "/" in n]


def test_parameters_are_named_and_valued_as_in_the_lcp_world():
    world, *_ = _arm_world()
    lcp = rd.World(dt=1e-2)
    lcp.add_skeleton(_arm())
    lcp.set_parameters(JOINTS)
    reference = {n: v for n, v in lcp.parameters().as_dict().items() if not n.startswith(("gravity", "arm/"))
                 and not n.endswith(("/friction", "/restitution"))}
    p = world.parameters()
    assert _skeleton_names(world) == list(reference)
    assert all(p[n] == reference[n] for n in reference)
    assert p.names[-1] == "joint_limit_stiffness"
    assert p["upper/mass"] == pytest.approx(0.3) and p.lower[p.index("upper/mass")] == 0.0
    assert p["youngs_modulus:block"] == 3e4 and p["contact_stiffness"] == 2e4
    names = world.step_vjp(*_arm_world()[1:], np.zeros(world.nq), np.zeros(world.nv)).parameter_names
    assert set(p.names) <= set(names)


def test_set_parameters_changes_the_step_as_a_skeleton_built_so_would():
    world, q, v, f = _arm_world()
    before = world.step(q, v, f)[0]
    world.set_parameters({"tip/mass": 0.25, "wrist/armature": 0.01, "youngs_modulus:block": 4e4})
    after = world.step(q, v, f)[0]
    assert np.abs(after - before).max() > 1e-6
    sk = _arm()
    old = sk.bodies[1].inertia  # set_parameters keeps the centre of mass and the inertia about it
    sk.bodies[1].inertia = rd.Inertia(0.25, old.com, old.rotational_inertia)
    built = _world(friction=0.5)
    built.add_ground()
    built.add_skeleton(sk)
    built.set_material("block", rd.ProjectiveMaterial(4e4, 0.3, 1000.0, kind=("corotated", "volume")))
    built.set_parameters({**JOINTS, "wrist/armature": 0.01})
    assert np.allclose(built.step(q, v, f)[0], after, rtol=0, atol=1e-12)
    # a full vector round-trips
    world.set_parameters(world.parameters().values)
    assert np.array_equal(world.step(q, v, f)[0], after)


def test_bad_parameters_are_refused_by_name():
    world, *_ = _arm_world()
    with pytest.raises(UnknownNameError, match="upper/mas"):
        world.set_parameters({"upper/mas": 1.0})
    with pytest.raises(ValueError, match="upper.*mass"):
        world.set_parameters({"upper/mass": -1.0})
    with pytest.raises(ValueError, match="wrist/damping"):
        world.set_parameters({"wrist/damping": -0.1})
    with pytest.raises(ValueError, match="joint_limit_stiffness"):
        world.set_parameters({"joint_limit_stiffness": 0.0})
    with pytest.raises(ValueError, match="poisson_ratio"):
        world.set_parameters({"poisson_ratio:block": 0.5})
    with pytest.raises(ValueError, match="parameter values"):
        world.set_parameters(np.zeros(3))


def _check_step_gradients(world, q, v, f, names, seed=2, rel=1e-6):
    rng = np.random.default_rng(seed)
    wq, wv = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
    g = world.step_vjp(q, v, f, wq, wv)

    def loss():
        qn, vn = world.step(q, v, f)
        return wq @ qn + wv @ vn

    nonzero = 0
    for name in names:
        fd = _derivative(world, loss, name)
        assert g.parameter(name) == pytest.approx(fd, rel=rel, abs=1e-12), name
        nonzero += fd != 0.0
    return nonzero


def test_step_gradients_of_every_skeleton_parameter_match_central_differences():
    world, q, v, f = _arm_world()
    world.step(q, v, f)
    assert world.last_step["contacts"] >= 2  # the capsule and the ball rub on the block
    names = _skeleton_names(world)
    assert len(names) == 26
    assert _check_step_gradients(world, q, v, f, names) >= 18


def test_step_gradients_through_a_universal_joint():
    """The regressor's cotangent is assembled body by body, so a universal joint's turning axis is covered."""
    world = _world(friction=0.3)
    world.add_ground()
    sk = rd.Skeleton("universal")
    body = sk.add_body("bob", rd.UniversalJoint("u", axis1=(1, 0, 0), axis2=(0, 1, 0), damping=0.05),
                       joint_origin=rd.Transform((0.1 + 0.0195, 0.05, 0.15)),
                       inertia=rd.Inertia(0.2, (0.01, 0.0, -0.125), np.diag([3e-5, 4e-5, 5e-5])))
    body.add_shape(rd.Sphere(0.02), rd.Transform((0.0, 0.0, -0.125)))
    world.add_skeleton(sk)
    world.set_parameters({"u/stiffness_0": 0.5, "u/stiffness_1": 0.2, "u/armature_0": 0.003, "u/armature_1": 0.01,
                          "u/damping_1": 0.02})
    q, v, f = _start(world, seed=11)
    s = world.layout("universal")
    q[s.q], v[s.v] = (0.1, -0.2), (0.4, 0.3)
    world.step(q, v, f)
    assert world.last_step["contacts"] > 0
    names = _skeleton_names(world)
    assert "bob/inertia_xz" in names and "u/armature_0" in names
    assert _check_step_gradients(world, q, v, f, names, seed=12) >= 12


def test_rollout_backward_of_every_skeleton_parameter_matches_central_differences():
    world, q, v, f = _arm_world()
    forces = np.tile(f, (3, 1))
    Q, V = world.rollout(q, v, forces)
    rng = np.random.default_rng(4)
    dQ, dV = np.zeros_like(Q), np.zeros_like(V)
    dQ[-1], dV[-1] = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
    dQ[1] = rng.standard_normal(world.nq)
    g = world.rollout_backward(Q, V, forces, dQ, dV)

    def loss():
        Qh, Vh = world.rollout(q, v, forces)
        return np.sum(dQ * Qh) + np.sum(dV * Vh)

    nonzero = 0
    for name in _skeleton_names(world):
        fd = _derivative(world, loss, name)
        assert g.parameter(name) == pytest.approx(fd, rel=1e-6, abs=1e-12), name
        nonzero += fd != 0.0
    assert nonzero >= 18


def test_step_gradients_of_a_body_welded_to_a_link():
    """A weight welded to the arm's tip at an angle shares its joint's merged inertia: its own mass, centre of mass
    and inertia are mapped back from the joint's cotangents through its pose in the joint frame."""
    world = _world(friction=0.5)
    world.add_ground()
    sk = _arm()
    sk.add_body("weight", rd.FixedJoint("weld"), parent=sk.bodies[1],
                joint_origin=rd.Transform((0.01, 0.0, 0.02), rpy=(0.3, -0.2, 0.5)),
                inertia=rd.Inertia(0.05, (0.005, 0.01, -0.003), np.diag([2e-5, 3e-5, 4e-5])))
    world.add_skeleton(sk)
    world.set_parameters(JOINTS)
    q, v, f = _arm_start(world)
    world.step(q, v, f)
    assert world.last_step["contacts"] >= 2
    names = [n for n in _skeleton_names(world) if n.startswith("weight/")]
    assert len(names) == 10
    assert _check_step_gradients(world, q, v, f, names) >= 8
