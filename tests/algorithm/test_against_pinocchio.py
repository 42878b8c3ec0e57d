"""The articulated-body algorithms against Pinocchio on example-robot-data robots.

Each robot is loaded once (module fixtures) and compared at 20 random states: RNEA, ABA (both also with
external wrenches), CRBA, M^-1, bias and gravity forces, body poses, Jacobians and their time variation
in both frames, body velocities and accelerations, centre of mass and its Jacobian, energies, integrate
and difference. Errors are measured relative to the magnitude of Pinocchio's value (rdsupport.assert_close).
"""

import numpy as np
import pytest
from rdsupport import ROBOTS, assert_close, fext_to_pin, from_pin_q, load_urdf_quiet, pin_frame_ids, to_pin_q, world_of

pin = pytest.importorskip("pinocchio")

N_STATES = 20
RTOL = 1e-9
FRAMES = [("world", "LOCAL_WORLD_ALIGNED"), ("local", "LOCAL")]


class Robot:
    """Our world and Pinocchio's model of the same URDF, plus 20 random states."""

    def __init__(self, robots_dir, rel, floating, seed):
        path = robots_dir / rel
        self.world = world_of(load_urdf_quiet(path, floating, package_dirs=[robots_dir]))
        self.pm = (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating
                   else pin.buildModelFromUrdf(str(path)))
        self.pd = self.pm.createData()
        self.fids = pin_frame_ids(self.world, self.pm, pin)
        w, rng = self.world, np.random.default_rng(seed)
        self.states = []
        for _ in range(N_STATES):
            self.states.append(dict(
                q=w.random_configuration(rng),
                q1=w.random_configuration(rng),
                v=rng.normal(size=w.nv),
                a=rng.normal(size=w.nv),
                tau=rng.normal(scale=10.0, size=w.nv),
                dv=rng.normal(scale=0.5, size=w.nv),
                F=rng.normal(scale=5.0, size=(w.nbodies, 6)),
            ))

    def pq(self, q):
        return to_pin_q(self.world, q)

    def pin_fext(self, q, F):
        pin.framesForwardKinematics(self.pm, self.pd, self.pq(q))
        return fext_to_pin(self.pm, self.pd, self.fids, F, pin)


@pytest.fixture(scope="module", params=ROBOTS, ids=[r[0] for r in ROBOTS])
def robot(request, robots_dir):
    name, rel, floating = request.param
    return Robot(robots_dir, rel, floating, seed=sum(map(ord, name)))


def test_layout_and_names(robot):
    w, pm = robot.world, robot.pm
    assert w.nv == pm.nv
    assert w.nq == pm.nq - len([n for n in w.joint_names if w.joint(n).type == "continuous"])
    assert list(w.joint_names) == list(pm.names[1:])
    for name, fid in zip(w.body_names, robot.fids):
        assert pm.frames[fid].name == name


def test_inverse_dynamics(robot):
    w, pm, pd = robot.world, robot.pm, robot.pd
    for s in robot.states:
        expected = pin.rnea(pm, pd, robot.pq(s["q"]), s["v"], s["a"])
        assert_close(w.inverse_dynamics(s["q"], s["v"], s["a"]), expected, RTOL, what="rnea")


def test_inverse_dynamics_with_external_wrenches(robot):
    w, pm, pd = robot.world, robot.pm, robot.pd
    for s in robot.states:
        fext = robot.pin_fext(s["q"], s["F"])
        expected = pin.rnea(pm, pd, robot.pq(s["q"]), s["v"], s["a"], fext)
        assert_close(w.inverse_dynamics(s["q"], s["v"], s["a"], s["F"]), expected, RTOL, what="rnea fext")
        # the wrenches matter: without them the torques differ
        assert np.abs(w.inverse_dynamics(s["q"], s["v"], s["a"]) - expected).max() > 1e-3


def test_external_wrench_dict_equals_array(robot):
    w = robot.world
    s = robot.states[0]
    names = w.body_names
    as_dict = {names[i]: s["F"][i] for i in range(len(names))}
    np.testing.assert_array_equal(w.inverse_dynamics(s["q"], s["v"], s["a"], as_dict),
                                  w.inverse_dynamics(s["q"], s["v"], s["a"], s["F"]))
    np.testing.assert_array_equal(w.forward_dynamics(s["q"], s["v"], s["tau"], as_dict),
                                  w.forward_dynamics(s["q"], s["v"], s["tau"], s["F"]))


def test_forward_dynamics(robot):
    w, pm, pd = robot.world, robot.pm, robot.pd
    for s in robot.states:
        expected = pin.aba(pm, pd, robot.pq(s["q"]), s["v"], s["tau"])
        assert_close(w.forward_dynamics(s["q"], s["v"], s["tau"]), expected, RTOL, what="aba")


def test_forward_dynamics_with_external_wrenches(robot):
    w, pm, pd = robot.world, robot.pm, robot.pd
    for s in robot.states:
        fext = robot.pin_fext(s["q"], s["F"])
        expected = pin.aba(pm, pd, robot.pq(s["q"]), s["v"], s["tau"], fext)
        assert_close(w.forward_dynamics(s["q"], s["v"], s["tau"], s["F"]), expected, RTOL, what="aba fext")


def test_mass_matrix(robot):
    w, pm, pd = robot.world, robot.pm, robot.pd
    for s in robot.states:
        upper = np.triu(pin.crba(pm, pd, robot.pq(s["q"])))  # Pinocchio fills the upper triangle only
        expected = upper + np.triu(upper, 1).T
        M = w.mass_matrix(s["q"])
        assert_close(M, expected, RTOL, what="crba")
        assert_close(M, M.T, 1e-14, what="symmetry")


def test_mass_matrix_inverse(robot):
    w, pm, pd = robot.world, robot.pm, robot.pd
    for s in robot.states:
        upper = np.triu(pin.computeMinverse(pm, pd, robot.pq(s["q"])))
        expected = upper + np.triu(upper, 1).T
        Minv = w.mass_matrix_inverse(s["q"])
        assert_close(Minv, expected, RTOL, what="Minv")
        assert_close(Minv @ w.mass_matrix(s["q"]), np.eye(w.nv), 1e-8, floor=1.0, what="Minv M")


def test_bias_and_gravity_forces(robot):
    w, pm, pd = robot.world, robot.pm, robot.pd
    for s in robot.states:
        qp = robot.pq(s["q"])
        assert_close(w.bias_forces(s["q"], s["v"]), pin.nonLinearEffects(pm, pd, qp, s["v"]), RTOL, what="nle")
        assert_close(w.gravity_forces(s["q"]), pin.computeGeneralizedGravity(pm, pd, qp), RTOL, what="gravity")


def test_body_poses(robot):
    w, pm, pd = robot.world, robot.pm, robot.pd
    for s in robot.states:
        pin.framesForwardKinematics(pm, pd, robot.pq(s["q"]))
        expected = np.array([pd.oMf[f].homogeneous for f in robot.fids])
        poses = w.body_poses(s["q"])
        assert_close(poses, expected, RTOL, what="body poses")
        assert_close(w.body_pose(s["q"], w.body_names[-1]), expected[-1], RTOL, what="body_pose")


@pytest.mark.parametrize("ours,theirs", FRAMES, ids=[f[0] for f in FRAMES])
def test_body_jacobians(robot, ours, theirs):
    w, pm, pd = robot.world, robot.pm, robot.pd
    rf = getattr(pin.ReferenceFrame, theirs)
    for s in robot.states:
        qp = robot.pq(s["q"])
        for name, fid in zip(w.body_names, robot.fids):
            expected = pin.computeFrameJacobian(pm, pd, qp, fid, rf)
            assert_close(w.body_jacobian(s["q"], name, ours), expected, RTOL, what=f"J {name} {ours}")


@pytest.mark.parametrize("ours,theirs", FRAMES, ids=[f[0] for f in FRAMES])
def test_body_jacobian_time_variations(robot, ours, theirs):
    w, pm, pd = robot.world, robot.pm, robot.pd
    rf = getattr(pin.ReferenceFrame, theirs)
    for s in robot.states:
        pin.computeJointJacobiansTimeVariation(pm, pd, robot.pq(s["q"]), s["v"])
        pin.updateFramePlacements(pm, pd)
        for name, fid in zip(w.body_names, robot.fids):
            expected = pin.getFrameJacobianTimeVariation(pm, pd, fid, rf)
            assert_close(w.body_jacobian_time_variation(s["q"], s["v"], name, ours), expected, RTOL,
                         what=f"dJ {name} {ours}")


@pytest.mark.parametrize("ours,theirs", FRAMES, ids=[f[0] for f in FRAMES])
def test_body_velocities_and_accelerations(robot, ours, theirs):
    w, pm, pd = robot.world, robot.pm, robot.pd
    rf = getattr(pin.ReferenceFrame, theirs)
    for s in robot.states:
        pin.forwardKinematics(pm, pd, robot.pq(s["q"]), s["v"], s["a"])
        pin.updateFramePlacements(pm, pd)
        V = w.body_velocities(s["q"], s["v"], ours)
        A = w.body_accelerations(s["q"], s["v"], s["a"], ours)
        assert V.shape == A.shape == (w.nbodies, 6)
        for i, fid in enumerate(robot.fids):
            assert_close(V[i], pin.getFrameVelocity(pm, pd, fid, rf).vector, RTOL, what=f"velocity {i} {ours}")
            assert_close(A[i], pin.getFrameAcceleration(pm, pd, fid, rf).vector, RTOL,
                         what=f"acceleration {i} {ours}")


def test_classical_acceleration_as_documented(robot):
    """body_accelerations' docstring: classical acceleration of the origin = linear part + omega x v."""
    w, pm, pd = robot.world, robot.pm, robot.pd
    for s in robot.states[:5]:
        pin.forwardKinematics(pm, pd, robot.pq(s["q"]), s["v"], s["a"])
        pin.updateFramePlacements(pm, pd)
        for frame, rf in (("world", pin.LOCAL_WORLD_ALIGNED), ("local", pin.LOCAL)):
            V = w.body_velocities(s["q"], s["v"], frame)
            A = w.body_accelerations(s["q"], s["v"], s["a"], frame)
            classical = A[:, :3] + np.cross(V[:, 3:], V[:, :3])
            for i, fid in enumerate(robot.fids):
                expected = pin.getFrameClassicalAcceleration(pm, pd, fid, rf).linear
                assert_close(classical[i], expected, RTOL, what=f"classical acceleration {i} {frame}")


def test_center_of_mass_and_jacobian(robot):
    """Ours counts the bodies welded to the world (Pinocchio's model.inertias[0]); Pinocchio's does not."""
    w, pm, pd = robot.world, robot.pm, robot.pd
    m0, c0 = pm.inertias[0].mass, pm.inertias[0].lever
    M_moving = sum(pm.inertias[i].mass for i in range(1, pm.njoints))
    assert w.total_mass == pytest.approx(M_moving + m0, rel=1e-12)
    for s in robot.states:
        qp = robot.pq(s["q"])
        com_pin = pin.centerOfMass(pm, pd, qp)
        expected = (M_moving * com_pin + m0 * c0) / (M_moving + m0)
        assert_close(w.center_of_mass(s["q"]), expected, RTOL, what="com")
        J_pin = pin.jacobianCenterOfMass(pm, pd, qp)
        assert_close(w.center_of_mass_jacobian(s["q"]), J_pin * M_moving / (M_moving + m0), RTOL, what="Jcom")


def test_energies(robot):
    w, pm, pd = robot.world, robot.pm, robot.pd
    m0, c0 = pm.inertias[0].mass, pm.inertias[0].lever
    g = pm.gravity.linear
    for s in robot.states:
        qp = robot.pq(s["q"])
        assert_close(w.kinetic_energy(s["q"], s["v"]), pin.computeKineticEnergy(pm, pd, qp, s["v"]), RTOL, what="KE")
        expected = pin.computePotentialEnergy(pm, pd, qp) - m0 * g @ c0  # plus the welded bodies
        assert_close(w.potential_energy(s["q"]), expected, RTOL, what="PE")


def test_integrate(robot):
    w, pm = robot.world, robot.pm
    for s in robot.states:
        expected = from_pin_q(w, pin.integrate(pm, robot.pq(s["q"]), s["dv"]))
        out = w.integrate(s["q"], s["dv"])
        # a quaternion and its negative are the same rotation: compare the rotations of q through Pinocchio
        assert_close(to_pin_q(w, out), to_pin_q(w, expected), RTOL, what="integrate")


def test_difference(robot):
    w, pm = robot.world, robot.pm
    for s in robot.states:
        expected = pin.difference(pm, robot.pq(s["q"]), robot.pq(s["q1"]))
        assert_close(w.difference(s["q"], s["q1"]), expected, RTOL, what="difference")
