"""The same robot built by hand (rd.Skeleton) and loaded from a URDF string gives identical dynamics.

A 3-link arm with fixed links (a welded base, a sensor mount, a flange), joint offsets, rotated joint
frames, tilted axes and rotated inertial frames; one joint of each kind the URDF allows on an arm
(revolute with limits, continuous, prismatic).
"""

import numpy as np
import pytest
from rdsupport import assert_close, world_of

import rigidiff as rd

URDF = """<?xml version="1.0"?>
<robot name="arm3">
  <link name="base">
    <inertial><origin xyz="0 0 0.05" rpy="0 0 0"/><mass value="4.0"/>
      <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial>
  </link>
  <link name="link1">
    <inertial><origin xyz="0.01 0.02 0.15" rpy="0.1 -0.2 0.3"/><mass value="1.5"/>
      <inertia ixx="0.011" ixy="0.001" ixz="-0.0005" iyy="0.012" iyz="0.0002" izz="0.004"/></inertial>
  </link>
  <link name="sensor_mount">
    <inertial><origin xyz="0 0.03 0" rpy="0 0 0"/><mass value="0.2"/>
      <inertia ixx="0.0001" ixy="0" ixz="0" iyy="0.0002" iyz="0" izz="0.0002"/></inertial>
  </link>
  <link name="link2">
    <inertial><origin xyz="0.12 0 0.01" rpy="0.5 0.2 -0.4"/><mass value="1.1"/>
      <inertia ixx="0.003" ixy="0" ixz="0" iyy="0.009" iyz="0.0003" izz="0.008"/></inertial>
  </link>
  <link name="link3">
    <inertial><origin xyz="0 0 0.08" rpy="0 0.3 0"/><mass value="0.6"/>
      <inertia ixx="0.002" ixy="0" ixz="0.0001" iyy="0.002" iyz="0" izz="0.0005"/></inertial>
  </link>
  <link name="flange">
    <inertial><origin xyz="0 0 0.02" rpy="0 0 0"/><mass value="0.3"/>
      <inertia ixx="0.0003" ixy="0" ixz="0" iyy="0.0003" iyz="0" izz="0.0004"/></inertial>
  </link>
  <link name="tool"/>
  <joint name="a_shoulder" type="revolute">
    <parent link="base"/><child link="link1"/>
    <origin xyz="0 0 0.1" rpy="0 0 0.7"/><axis xyz="0 0 1"/>
    <limit lower="-2.5" upper="2.5" effort="30" velocity="3"/>
    <dynamics damping="0.2" friction="0.1"/>
  </joint>
  <joint name="b_mount" type="fixed">
    <parent link="link1"/><child link="sensor_mount"/>
    <origin xyz="0.05 0 0.2" rpy="1.5707963267948966 0 0"/>
  </joint>
  <joint name="c_elbow" type="continuous">
    <parent link="link1"/><child link="link2"/>
    <origin xyz="0.02 -0.01 0.3" rpy="0.3 -0.5 0.2"/><axis xyz="0.6 0 0.8"/>
    <limit effort="20" velocity="4"/>
  </joint>
  <joint name="d_slide" type="prismatic">
    <parent link="link2"/><child link="link3"/>
    <origin xyz="0.25 0 0" rpy="0 1.2 0"/><axis xyz="0 1 0"/>
    <limit lower="-0.1" upper="0.2" effort="50" velocity="0.5"/>
    <dynamics damping="1.5"/>
  </joint>
  <joint name="e_flange" type="fixed">
    <parent link="link3"/><child link="flange"/>
    <origin xyz="0 0 0.16" rpy="0.2 0.1 -0.3"/>
  </joint>
  <joint name="f_tool" type="fixed">
    <parent link="flange"/><child link="tool"/>
    <origin xyz="0.01 0.02 0.05" rpy="0 0 3.14159"/>
  </joint>
</robot>
"""


def inertial(mass, xyz, rpy, ixx, ixy, ixz, iyy, iyz, izz):
    """URDF inertial -> Inertia in link axes: the inertia tensor is given in the rotated <origin> frame."""
    R = rd.Transform(rpy=rpy).rotation
    I = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    return rd.Inertia(mass, xyz, R @ I @ R.T)


def hand_built():
    sk = rd.Skeleton("arm3")
    base = sk.add_body("base", joint=rd.FixedJoint("base_weld"),
                       inertia=inertial(4.0, (0, 0, 0.05), (0, 0, 0), 0.02, 0, 0, 0.02, 0, 0.03))
    link1 = sk.add_body("link1", parent=base,
                        joint=rd.RevoluteJoint("a_shoulder", axis=(0, 0, 1), lower=-2.5, upper=2.5, effort_limit=30,
                                               velocity_limit=3, damping=0.2, friction=0.1),
                        joint_origin=rd.Transform((0, 0, 0.1), rpy=(0, 0, 0.7)),
                        inertia=inertial(1.5, (0.01, 0.02, 0.15), (0.1, -0.2, 0.3), 0.011, 0.001, -0.0005, 0.012,
                                         0.0002, 0.004))
    sk.add_body("sensor_mount", parent=link1, joint=rd.FixedJoint("b_mount"),
                joint_origin=rd.Transform((0.05, 0, 0.2), rpy=(np.pi / 2, 0, 0)),
                inertia=inertial(0.2, (0, 0.03, 0), (0, 0, 0), 0.0001, 0, 0, 0.0002, 0, 0.0002))
    link2 = sk.add_body("link2", parent=link1,
                        joint=rd.RevoluteJoint("c_elbow", axis=(0.6, 0, 0.8), effort_limit=20, velocity_limit=4),
                        joint_origin=rd.Transform((0.02, -0.01, 0.3), rpy=(0.3, -0.5, 0.2)),
                        inertia=inertial(1.1, (0.12, 0, 0.01), (0.5, 0.2, -0.4), 0.003, 0, 0, 0.009, 0.0003, 0.008))
    link3 = sk.add_body("link3", parent=link2,
                        joint=rd.PrismaticJoint("d_slide", axis=(0, 1, 0), lower=-0.1, upper=0.2, effort_limit=50,
                                                velocity_limit=0.5, damping=1.5),
                        joint_origin=rd.Transform((0.25, 0, 0), rpy=(0, 1.2, 0)),
                        inertia=inertial(0.6, (0, 0, 0.08), (0, 0.3, 0), 0.002, 0, 0.0001, 0.002, 0, 0.0005))
    flange = sk.add_body("flange", parent=link3, joint=rd.FixedJoint("e_flange"),
                         joint_origin=rd.Transform((0, 0, 0.16), rpy=(0.2, 0.1, -0.3)),
                         inertia=inertial(0.3, (0, 0, 0.02), (0, 0, 0), 0.0003, 0, 0, 0.0003, 0, 0.0004))
    sk.add_body("tool", parent=flange, joint=rd.FixedJoint("f_tool"),
                joint_origin=rd.Transform((0.01, 0.02, 0.05), rpy=(0, 0, 3.14159)))
    return sk


@pytest.fixture(scope="module")
def worlds():
    return world_of(hand_built()), world_of(rd.load_urdf(URDF, load_geometry=False))


def states(world, n=10, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield (world.random_configuration(rng), rng.normal(size=world.nv), rng.normal(size=world.nv),
               rng.normal(scale=20.0, size=world.nv), rng.normal(size=(world.nbodies, 6)))


def test_same_layout(worlds):
    hand, urdf = worlds
    assert (hand.nq, hand.nv, hand.nbodies) == (urdf.nq, urdf.nv, urdf.nbodies) == (3, 3, 7)
    assert hand.body_names == urdf.body_names
    assert hand.joint_names == urdf.joint_names == ["a_shoulder", "c_elbow", "d_slide"]
    assert urdf.joint("c_elbow").type == "continuous" and urdf.joint("c_elbow").nq == 1
    assert hand.total_mass == pytest.approx(urdf.total_mass, rel=1e-15)
    for name in hand.joint_names:
        a, b = hand.joint(name), urdf.joint(name)
        for field in ("lower", "upper", "effort_limit", "velocity_limit", "damping", "friction"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_same_dynamics_and_kinematics(worlds):
    hand, urdf = worlds
    for q, v, a, tau, F in states(hand):
        assert_close(hand.body_poses(q), urdf.body_poses(q), 1e-12, what="poses")
        assert_close(hand.mass_matrix(q), urdf.mass_matrix(q), 1e-12, what="M")
        assert_close(hand.inverse_dynamics(q, v, a), urdf.inverse_dynamics(q, v, a), 1e-12, what="rnea")
        assert_close(hand.inverse_dynamics(q, v, a, F), urdf.inverse_dynamics(q, v, a, F), 1e-12, what="rnea fext")
        assert_close(hand.forward_dynamics(q, v, tau), urdf.forward_dynamics(q, v, tau), 1e-12, what="aba")
        assert_close(hand.bias_forces(q, v), urdf.bias_forces(q, v), 1e-12, what="bias")
        assert_close(hand.center_of_mass(q), urdf.center_of_mass(q), 1e-12, what="com")
        for body in hand.body_names:
            for frame in ("world", "local"):
                assert_close(hand.body_jacobian(q, body, frame), urdf.body_jacobian(q, body, frame), 1e-12,
                             what=f"J {body}")
        # the step uses damping and effort limits too
        for x, y in zip(hand.step(q, v, tau), urdf.step(q, v, tau)):
            assert_close(x, y, 1e-12, what="step")


def test_fixed_links_are_where_the_urdf_puts_them(worlds):
    """Welded links follow their parents exactly: T_flange = T_link3 @ origin(e_flange) for every q."""
    _, urdf = worlds
    names = urdf.body_names
    T_origin = rd.Transform((0, 0, 0.16), rpy=(0.2, 0.1, -0.3)).matrix
    for q, *_ in states(urdf, n=5, seed=3):
        P = urdf.body_poses(q)
        assert_close(P[names.index("flange")], P[names.index("link3")] @ T_origin, 1e-12, what="flange")
        np.testing.assert_allclose(P[names.index("base")], np.eye(4), atol=1e-15)  # welded to the world


def test_matches_pinocchio(worlds, tmp_path):
    """Pinocchio reads the same file (its continuous joint uses (cos, sin))."""
    pin = pytest.importorskip("pinocchio")
    from rdsupport import to_pin_q

    hand, _ = worlds
    path = tmp_path / "arm3.urdf"
    path.write_text(URDF)
    pm = pin.buildModelFromUrdf(str(path))
    pd = pm.createData()
    for q, v, a, tau, _ in states(hand, n=5, seed=7):
        qp = to_pin_q(hand, q)
        assert qp.shape == (pm.nq,)
        assert_close(hand.inverse_dynamics(q, v, a), pin.rnea(pm, pd, qp, v, a), 1e-10, what="rnea vs pin")
        assert_close(hand.forward_dynamics(q, v, tau), pin.aba(pm, pd, qp, v, tau), 1e-10, what="aba vs pin")
        pin.framesForwardKinematics(pm, pd, qp)
        for i, name in enumerate(hand.body_names):
            assert_close(hand.body_poses(q)[i], pd.oMf[pm.getFrameId(name, pin.FrameType.BODY)].homogeneous,
                         1e-10, what=name)
