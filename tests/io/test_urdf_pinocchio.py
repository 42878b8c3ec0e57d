"""load_urdf against Pinocchio on example-robot-data robots: q/v layout, kinematics, inertias, limits."""

import warnings

import numpy as np
import pytest

from rigidiff.io.urdf import load_urdf
from rigidiff.transform import Transform

pin = pytest.importorskip("pinocchio")

ROBOTS = [
    "panda_description/urdf/panda.urdf",
    "ur_description/urdf/ur5_robot.urdf",
    "solo_description/robots/solo12.urdf",
    "anymal_b_simple_description/robots/anymal.urdf",
    "talos_data/robots/talos_reduced.urdf",
    "double_pendulum_description/urdf/double_pendulum.urdf",
]


def _load(robots_dir, rel, floating):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mimic joints, placeholder inertias
        sk = load_urdf(robots_dir / rel, floating_base=floating, package_dirs=[robots_dir])
    path = str(robots_dir / rel)
    model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    return sk, model


def _moving(sk):
    return [b for b in sk.ordered_bodies() if b.joint.nv > 0]


def _n_continuous(sk):
    return sum(1 for b in _moving(sk) if b.joint.type == "revolute" and b.joint.continuous)


def _axis_rotation(axis, angle):
    k = np.asarray(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def _joint_motion(joint, q):
    if joint.type == "fixed":
        return Transform()
    if joint.type == "revolute":
        return Transform(rotation=_axis_rotation(joint.axis, q[0]))
    if joint.type == "prismatic":
        return Transform(joint.axis * q[0])
    if joint.type == "free":
        return Transform(q[:3], rotation=q[3:7])
    raise NotImplementedError(joint.type)


def _poses(sk, q_of):
    """World pose of every body for per-joint coordinates ``q_of[joint name]``."""
    poses = {}
    for b in sk.ordered_bodies():
        parent = poses[b.parent.name] if b.parent is not None else Transform()
        poses[b.name] = parent @ b.joint_origin @ _joint_motion(b.joint, q_of.get(b.joint.name))
    return poses


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("rel", ROBOTS)
def test_layout_matches_pinocchio(robots_dir, rel, floating):
    sk, model = _load(robots_dir, rel, floating)
    assert [b.joint.name for b in _moving(sk)] == list(model.names[1:])
    assert sk.nv == model.nv
    assert sk.nq == model.nq - _n_continuous(sk)  # Pinocchio: continuous joints use (cos, sin)
    if floating:
        root = sk.ordered_bodies()[0]
        assert root.joint.type == "free" and root.joint.name == "root_joint" and root.parent is None


@pytest.mark.parametrize("rel", ROBOTS)
def test_total_mass_matches_pinocchio(robots_dir, rel):
    sk, model = _load(robots_dir, rel, floating=True)
    assert sk.total_mass == pytest.approx(pin.computeTotalMass(model), rel=1e-12)


@pytest.mark.parametrize("rel", ROBOTS)
def test_forward_kinematics_matches_pinocchio(robots_dir, rel):
    sk, model = _load(robots_dir, rel, floating=True)
    rng = np.random.default_rng(0)
    q_pin = np.zeros(model.nq)
    q_of = {}
    for i in range(1, model.njoints):
        name, iq, nq = model.names[i], model.idx_qs[i], model.nqs[i]
        joint = sk.joint(name)
        if joint.type == "free":
            quat = rng.normal(size=4)
            quat /= np.linalg.norm(quat)
            q = np.concatenate([rng.normal(size=3), quat])
            q_pin[iq:iq + 7] = q
        else:
            q = rng.uniform(-1.0, 1.0, size=1)
            q_pin[iq:iq + nq] = [np.cos(q[0]), np.sin(q[0])] if nq == 2 else q
        q_of[name] = q
    data = model.createData()
    pin.forwardKinematics(model, data, q_pin)
    poses = _poses(sk, q_of)
    for i in range(1, model.njoints):
        body = next(b for b in sk.bodies if b.joint.name == model.names[i])
        np.testing.assert_allclose(poses[body.name].rotation, data.oMi[i].rotation, atol=1e-12)
        np.testing.assert_allclose(poses[body.name].translation, data.oMi[i].translation, atol=1e-12)
    # every link frame, fixed ones included, against Pinocchio's body frames
    pin.updateFramePlacements(model, data)
    for b in sk.bodies:
        if model.existBodyName(b.name):
            f = model.getBodyId(b.name)
            np.testing.assert_allclose(poses[b.name].matrix, data.oMf[f].homogeneous, atol=1e-12)


@pytest.mark.parametrize("rel", ROBOTS)
def test_merged_inertias_match_pinocchio(robots_dir, rel):
    """Merging fixed links into their moving ancestor gives Pinocchio's per-joint inertias."""
    sk, model = _load(robots_dir, rel, floating=True)
    merged = {}
    for b in sk.ordered_bodies():
        anchor, T = b, Transform()
        while anchor.joint.nv == 0:
            T = anchor.joint_origin @ T
            anchor = anchor.parent
        part = b.inertia.transformed(T)
        merged[anchor.name] = merged[anchor.name] + part if anchor.name in merged else part
    for i in range(1, model.njoints):
        body = next(b for b in sk.bodies if b.joint.name == model.names[i])
        ours, ref = merged[body.name], model.inertias[i]
        assert ours.mass == pytest.approx(ref.mass, rel=1e-12, abs=1e-14)
        np.testing.assert_allclose(ours.com, ref.lever, atol=1e-10)
        np.testing.assert_allclose(ours.rotational_inertia, ref.inertia, atol=1e-10)


@pytest.mark.parametrize("rel", ROBOTS)
def test_limits_match_pinocchio(robots_dir, rel):
    sk, model = _load(robots_dir, rel, floating=False)
    for i in range(1, model.njoints):
        joint = sk.joint(model.names[i])
        iq, iv = model.idx_qs[i], model.idx_vs[i]
        if joint.type == "revolute" and joint.continuous:
            continue  # Pinocchio stores (cos, sin) bounds
        if joint.has_position_limits:
            assert joint.lower[0] == pytest.approx(model.lowerPositionLimit[iq])
            assert joint.upper[0] == pytest.approx(model.upperPositionLimit[iq])
        if np.isfinite(joint.effort_limit[0]):
            assert joint.effort_limit[0] == pytest.approx(model.effortLimit[iv])
        if np.isfinite(joint.velocity_limit[0]):
            assert joint.velocity_limit[0] == pytest.approx(model.velocityLimit[iv])
        assert joint.damping[0] == pytest.approx(model.damping[iv])
        assert joint.friction[0] == pytest.approx(model.friction[iv])


def test_sibling_order_is_pinocchio_order(tmp_path):
    """urdfdom sorts the children of a link by joint name; load_urdf follows (joint_order='file' does not)."""
    inertial = '<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>'
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
    links = "".join(f'<link name="{n}">{inertial}</link>' for n in ("base", "a", "b", "c", "d"))
    joints = (f'<joint name="zz" type="revolute"><parent link="base"/><child link="a"/>{limit}</joint>'
              f'<joint name="mm" type="continuous"><parent link="c"/><child link="d"/></joint>'
              f'<joint name="aa" type="revolute"><parent link="base"/><child link="b"/>{limit}</joint>'
              f'<joint name="BB" type="prismatic"><parent link="base"/><child link="c"/>{limit}</joint>')
    path = tmp_path / "siblings.urdf"
    path.write_text(f'<robot name="s">{links}{joints}</robot>')
    model = pin.buildModelFromUrdf(str(path))
    sk = load_urdf(path)
    assert [b.joint.name for b in _moving(sk)] == list(model.names[1:]) == ["BB", "mm", "aa", "zz"]
    assert [b.name for b in sk.ordered_bodies()] == ["base", "c", "d", "b", "a"]
    sk_file = load_urdf(path, joint_order="file")
    assert [b.joint.name for b in _moving(sk_file)] == ["zz", "aa", "BB", "mm"]


def test_world_root_matches_pinocchio(tmp_path):
    inertial = '<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>'
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
    path = tmp_path / "world.urdf"
    path.write_text(
        f'<robot name="w"><link name="world"/><link name="base">{inertial}</link><link name="a">{inertial}</link>'
        f'<link name="b">{inertial}</link>'
        f'<joint name="weld" type="fixed"><parent link="world"/><child link="base"/><origin xyz="0 0 1"/></joint>'
        f'<joint name="j1" type="revolute"><parent link="base"/><child link="a"/>{limit}</joint>'
        f'<joint name="j0" type="prismatic"><parent link="world"/><child link="b"/>{limit}</joint></robot>')
    for floating in (False, True):
        sk = load_urdf(path, floating_base=floating)
        model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating else \
            pin.buildModelFromUrdf(str(path))
        assert [b.joint.name for b in _moving(sk)] == list(model.names[1:])
        assert sk.nq == model.nq
