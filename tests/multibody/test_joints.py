"""Every joint type (revolute, prismatic, ball, free, planar, universal, translational, fixed) in small
hand-built trees: against Pinocchio built by hand, and against finite differences and identities.

Pinocchio counterparts: RevoluteUnaligned, PrismaticUnaligned, Spherical, FreeFlyer, Planar (q = (x, y,
cos, sin), ours (x, y, theta); its plane is the joint frame's xy, ours is normal to ``normal``, so the
Pinocchio joint frame is ours rotated by R0 = [e1 e2 normal]), Universal, Translation; fixed joints
append their body's inertia to the parent joint.
"""

import numpy as np
import pytest
from rdsupport import TREE as BASE_TREE
from rdsupport import (
    assert_close,
    build_skeleton,
    fd_along,
    random_inertia,
    random_origin,
    rotation_log,
    unit,
    world_of,
)
from scipy.spatial.transform import Rotation

import rigidiff as rd

pin = pytest.importorskip("pinocchio")


# every joint type: the shared tree plus a universal joint carrying a translational one
TREE = BASE_TREE + [("wrist", "universal", "base"), ("wrist_tip", "translational", "wrist")]
TYPES = ["revolute", "prismatic", "ball", "free", "planar", "universal", "translational"]


def single_joint_tree(kind):
    """The joint under test at the root (offset and rotated), a fixed body and a revolute child on it."""
    return [("root", kind, None), ("weld", "fixed", "root"), ("child", "revolute", "weld")]


# ------------------------------------------------------------------------------------------ Pinocchio
def planar_frame(normal):
    """R0 = [e1 e2 n] of a planar joint: e1 the axis least aligned with n (x first on ties), projected."""
    n = np.asarray(normal)
    k = 0
    for i in (1, 2):
        if abs(n[i]) < abs(n[k]) - 1e-12:
            k = i
    a = np.eye(3)[k]
    e1 = unit(a - a.dot(n) * n)
    return np.column_stack([e1, np.cross(n, e1), n])


def se3(T):
    return pin.SE3(np.array(T.rotation), np.array(T.translation))


def pin_joint_model(joint):
    t = joint.type
    if t == "revolute":
        return pin.JointModelRevoluteUnaligned(joint.axis)
    if t == "prismatic":
        return pin.JointModelPrismaticUnaligned(joint.axis)
    if t == "ball":
        return pin.JointModelSpherical()
    if t == "free":
        return pin.JointModelFreeFlyer()
    if t == "planar":
        return pin.JointModelPlanar()
    if t == "universal":
        return pin.JointModelUniversal(joint.axis1, joint.axis2)
    if t == "translational":
        return pin.JointModelTranslation()
    raise ValueError(t)


def pin_inertia(inertia, S):
    """Our body inertia, expressed in the Pinocchio joint frame where S places the body frame."""
    return pin.Inertia(inertia.mass, S.rotation @ inertia.com + S.translation,
                       S.rotation @ inertia.rotational_inertia @ S.rotation.T)


def build_pinocchio(sk):
    """Pinocchio model of a skeleton (bodies in depth-first order) and the frame id of each body."""
    pm = pin.Model()
    where = {}  # body -> (pin joint id, pose of the body frame in that joint's frame)
    fids = []
    for body in sk.ordered_bodies():
        pj, Sp = where[body.parent.name] if body.parent is not None else (0, pin.SE3.Identity())
        placement = Sp * se3(body.joint_origin)
        j = body.joint
        if j.type == "fixed":
            S = placement
            if body.inertia.mass > 0:
                pm.appendBodyToJoint(pj, pin_inertia(body.inertia, S), pin.SE3.Identity())
            jid = pj
        else:
            R0 = planar_frame(j.normal) if j.type == "planar" else np.eye(3)
            jid = pm.addJoint(pj, pin_joint_model(j), placement * pin.SE3(R0, np.zeros(3)), j.name)
            S = pin.SE3(R0.T, np.zeros(3))
            pm.appendBodyToJoint(jid, pin_inertia(body.inertia, S), pin.SE3.Identity())
        where[body.name] = (jid, S)
        fids.append(pm.addFrame(pin.Frame(body.name, jid, S, pin.FrameType.BODY)))
    return pm, fids


def to_pin(world, q):
    """Planar joints: (x, y, theta) -> (x, y, cos, sin)."""
    out = []
    k = 0
    for name in world.joint_names:
        info = world.joint(name)
        x = q[info.q_index:info.q_index + info.nq]
        out.extend([x[0], x[1], np.cos(x[2]), np.sin(x[2])] if info.type == "planar" else x)
        k += info.nq
    assert k == world.nq
    return np.array(out)


def from_pin(world, qp):
    out = []
    k = 0
    for name in world.joint_names:
        info = world.joint(name)
        if info.type == "planar":
            out.extend([qp[k], qp[k + 1], np.arctan2(qp[k + 3], qp[k + 2])])
            k += 4
        else:
            out.extend(qp[k:k + info.nq])
            k += info.nq
    return np.array(out)


# ------------------------------------------------------------------------------------------ fixtures
MODELS = {"tree": TREE, **{t: single_joint_tree(t) for t in TYPES}}


class Case:
    def __init__(self, tree, seed):
        self.sk = build_skeleton(tree, seed)
        self.world = world_of(self.sk)
        self.pm, self.fids = build_pinocchio(self.sk)
        self.pd = self.pm.createData()
        rng = np.random.default_rng(seed + 1)
        w = self.world
        self.states = [(w.random_configuration(rng), rng.normal(size=w.nv), rng.normal(size=w.nv),
                        rng.normal(scale=5.0, size=w.nv)) for _ in range(8)]


@pytest.fixture(scope="module", params=list(MODELS), ids=list(MODELS))
def case(request):
    return Case(MODELS[request.param], seed=len(request.param) * 7 + 3)


# ------------------------------------------------------------------------------------------ vs Pinocchio
def test_layout(case):
    w, pm = case.world, case.pm
    n_planar = sum(1 for n in w.joint_names if w.joint(n).type == "planar")
    assert w.nv == pm.nv and w.nq == pm.nq - n_planar
    assert w.nbodies == len(case.sk.bodies)
    assert list(w.joint_names) == list(pm.names[1:])


def test_dynamics_against_pinocchio(case):
    w, pm, pd = case.world, case.pm, case.pd
    for q, v, a, tau in case.states:
        qp = to_pin(w, q)
        assert_close(w.inverse_dynamics(q, v, a), pin.rnea(pm, pd, qp, v, a), 1e-10, what="rnea")
        assert_close(w.forward_dynamics(q, v, tau), pin.aba(pm, pd, qp, v, tau), 1e-10, what="aba")
        upper = np.triu(pin.crba(pm, pd, qp))
        assert_close(w.mass_matrix(q), upper + np.triu(upper, 1).T, 1e-10, what="crba")
        assert_close(w.bias_forces(q, v), pin.nonLinearEffects(pm, pd, qp, v), 1e-10, what="nle")


def test_kinematics_against_pinocchio(case):
    w, pm, pd = case.world, case.pm, case.pd
    for q, v, a, _ in case.states:
        qp = to_pin(w, q)
        pin.forwardKinematics(pm, pd, qp, v, a)
        pin.updateFramePlacements(pm, pd)
        poses = w.body_poses(q)
        V = w.body_velocities(q, v, "local")
        for i, (name, fid) in enumerate(zip(w.body_names, case.fids)):
            assert_close(poses[i], pd.oMf[fid].homogeneous, 1e-10, what=f"pose {name}")
            assert_close(V[i], pin.getFrameVelocity(pm, pd, fid, pin.LOCAL).vector, 1e-10, what=f"v {name}")
            for frame, rf in (("world", pin.LOCAL_WORLD_ALIGNED), ("local", pin.LOCAL)):
                J = pin.computeFrameJacobian(pm, pd, qp, fid, rf)
                assert_close(w.body_jacobian(q, name, frame), J, 1e-10, what=f"J {name} {frame}")


def test_integrate_and_difference_against_pinocchio(case):
    w, pm = case.world, case.pm
    rng = np.random.default_rng(3)
    for q, *_ in case.states:
        d = rng.normal(scale=0.3, size=w.nv)
        q1 = w.integrate(q, d)
        assert_close(to_pin(w, q1), pin.integrate(pm, to_pin(w, q), d), 1e-10, what="integrate")
        assert_close(w.difference(q, q1), pin.difference(pm, to_pin(w, q), to_pin(w, q1)), 1e-9, what="difference")
        # and back: Pinocchio's integrate read in our coordinates is ours (planar angles modulo 2 pi)
        assert_close(to_pin(w, from_pin(w, pin.integrate(pm, to_pin(w, q), d))), to_pin(w, q1), 1e-10,
                     what="integrate (our coordinates)")


# ------------------------------------------------------------------------------------------ identities
def test_difference_inverts_integrate(case):
    w = case.world
    rng = np.random.default_rng(4)
    for q, *_ in case.states:
        # rotations of ball and free joints below pi: beyond it, difference gives the shorter way round
        d = 0.5 * rng.normal(size=w.nv)
        assert_close(w.difference(q, w.integrate(q, d)), d, 1e-10, what="difference(q, integrate(q, d))")
        q1 = w.random_configuration(rng)
        q1_back = w.integrate(q, w.difference(q, q1))
        # quaternions may come back negated: compare the configurations through poses
        assert_close(w.body_poses(q1_back), w.body_poses(q1), 1e-10, what="integrate(q, difference(q, q1))")
        np.testing.assert_array_equal(w.difference(q, q), np.zeros(w.nv))


def test_inverse_dynamics_inverts_forward_dynamics(case):
    w = case.world
    rng = np.random.default_rng(5)
    for q, v, _, tau in case.states:
        F = rng.normal(size=(w.nbodies, 6))
        a = w.forward_dynamics(q, v, tau)
        assert_close(w.inverse_dynamics(q, v, a), tau, 1e-10, what="ID(FD(tau))")
        a = w.forward_dynamics(q, v, tau, F)
        assert_close(w.inverse_dynamics(q, v, a, F), tau, 1e-10, what="ID(FD(tau, f), f)")
        assert_close(a, w.mass_matrix_inverse(q) @ (tau - w.bias_forces(q, v) + sum(
            w.body_jacobian(q, i, "world").T @ F[i] for i in range(w.nbodies) if w.body(i).is_moving)),
            1e-10, what="a = M^-1 (tau - b + J^T f)")


def reference_step(w, q, v, tau):
    """Semi-implicit Euler as docs/conventions.md writes it: v~ = v + dt a, q' = integrate(q, dt v~), v' =
    v~; free joints instead: u~ = u + dt (du/dt + w x u) moves the origin in space, p' = p + dt R u~,
    R' = R exp(dt w~), and v' holds u~ in the new frame."""
    dt = w.dt
    vs = v + dt * w.forward_dynamics(q, v, tau)
    q1, v1 = w.integrate(q, dt * vs), vs.copy()
    for name in w.joint_names:
        info = w.joint(name)
        if info.type != "free":
            continue
        iq, iv = info.q_index, info.v_index
        u, om = v[iv:iv + 3], v[iv + 3:iv + 6]
        vs[iv:iv + 3] += dt * np.cross(om, u)
        R = Rotation.from_quat(q[iq + 3:iq + 7])
        turn = Rotation.from_rotvec(dt * vs[iv + 3:iv + 6])
        q1[iq:iq + 3] = q[iq:iq + 3] + dt * R.apply(vs[iv:iv + 3])
        quat = (R * turn).as_quat()
        q1[iq + 3:iq + 7] = quat if quat @ q[iq + 3:iq + 7] >= 0 else -quat
        v1[iv:iv + 3] = turn.inv().apply(vs[iv:iv + 3])
        v1[iv + 3:iv + 6] = vs[iv + 3:iv + 6]
    return q1, v1


def test_step_is_semi_implicit_euler(case):
    w = case.world
    for q, v, _, tau in case.states:
        q1, v1 = w.step(q, v, tau)
        q_ref, v_ref = reference_step(w, q, v, tau)
        assert_close(v1, v_ref, 1e-12, what="v'")
        assert_close(q1, q_ref, 1e-12, what="q'")
        np.testing.assert_allclose(w.step_acceleration(v, v1), w.forward_dynamics(q, v, tau), rtol=1e-9, atol=1e-9)


def test_pose_derivative_is_body_velocity(case):
    w = case.world
    for q, v, *_ in case.states[:4]:
        poses = w.body_poses(q)
        plus, minus = w.body_poses(w.integrate(q, 1e-6 * v)), w.body_poses(w.integrate(q, -1e-6 * v))
        Vw, Vl = w.body_velocities(q, v, "world"), w.body_velocities(q, v, "local")
        for i in range(w.nbodies):
            lin = (plus[i, :3, 3] - minus[i, :3, 3]) / 2e-6
            ang = rotation_log(plus[i, :3, :3] @ minus[i, :3, :3].T) / 2e-6
            assert_close(Vw[i], np.concatenate([lin, ang]), 1e-6, floor=1.0, what=f"world velocity {i}")
            R = poses[i, :3, :3]
            assert_close(Vl[i], np.concatenate([R.T @ lin, R.T @ ang]), 1e-6, floor=1.0, what=f"local velocity {i}")
            for frame, V in (("world", Vw), ("local", Vl)):
                assert_close(w.body_jacobian(q, i, frame) @ v, V[i], 1e-12, what=f"J v {i} {frame}")


@pytest.mark.parametrize("frame", ["world", "local"])
def test_jacobian_time_variation_is_dJ_dt(case, frame):
    w = case.world
    for q, v, *_ in case.states[:4]:
        for i in range(w.nbodies):
            fd = fd_along(w, lambda x, i=i: w.body_jacobian(x, i, frame), q, v)
            dJ = w.body_jacobian_time_variation(q, v, i, frame)
            assert_close(dJ, fd, 1e-6, floor=1.0, what=f"dJ/dt body {i} {frame}")


def test_body_acceleration_is_dJ_v_plus_J_a(case):
    w = case.world
    for q, v, a, _ in case.states[:4]:
        for frame in ("world", "local"):
            A = w.body_accelerations(q, v, a, frame)
            for i in range(w.nbodies):
                expected = w.body_jacobian_time_variation(q, v, i, frame) @ v + w.body_jacobian(q, i, frame) @ a
                if frame == "world":
                    # in world axes, d/dt of (R v_local) differs from R d/dt(v_local) by omega x (R v_local)
                    Vw = w.body_velocities(q, v, "world")[i]
                    expected = expected - np.concatenate([np.cross(Vw[3:], Vw[:3]), np.zeros(3)])
                assert_close(A[i], expected, 1e-10, floor=1.0, what=f"acceleration {i} {frame}")


def test_com_derivative_is_com_jacobian_times_v(case):
    w = case.world
    for q, v, *_ in case.states[:4]:
        assert_close(w.center_of_mass_jacobian(q) @ v, fd_along(w, w.center_of_mass, q, v), 1e-7, floor=1.0,
                     what="d com / dt")
    q = case.states[0][0]
    masses = [b.inertia.mass for b in case.sk.bodies]
    poses = w.body_poses(q)
    com = sum(m * (poses[w.body_index(b.name)][:3, :3] @ b.inertia.com + poses[w.body_index(b.name)][:3, 3])
              for m, b in zip(masses, case.sk.bodies)) / sum(masses)
    assert_close(w.center_of_mass(q), com, 1e-12, what="com")


def test_mass_matrix_is_sum_of_body_jacobians(case):
    """M = sum_b J_b^T I_b J_b with J_b the local Jacobian and I_b the spatial inertia in body axes."""
    w = case.world
    for q, v, *_ in case.states[:4]:
        M = sum(w.body_jacobian(q, b.name, "local").T @ b.inertia.spatial_matrix() @ w.body_jacobian(q, b.name, "local")
                for b in case.sk.bodies)
        assert_close(w.mass_matrix(q), M, 1e-12, what="M")
        assert w.kinetic_energy(q, v) == pytest.approx(0.5 * v @ M @ v, rel=1e-12)
        assert w.kinetic_energy(q, v) > 0


def test_potential_energy_and_gravity_forces(case):
    """g(q) is the gradient of the potential energy (in the tangent space)."""
    w = case.world
    for q, *_ in case.states[:4]:
        fd = np.array([fd_along(w, lambda x: np.array([w.potential_energy(x)]), q, e)[0] for e in np.eye(w.nv)])
        assert_close(w.gravity_forces(q), fd, 1e-7, floor=1.0, what="dU/dq")
        poses = w.body_poses(q)
        U = -sum(b.inertia.mass * w.gravity @ (poses[i][:3, :3] @ b.inertia.com + poses[i][:3, 3])
                 for i, b in enumerate(w.body(k) for k in range(w.nbodies)))
        assert w.potential_energy(q) == pytest.approx(U, rel=1e-12, abs=1e-12)


def test_universal_joint_with_oblique_axes_against_finite_differences():
    """Non-orthogonal universal axes (which Pinocchio does not promise to support): the bias term c = dS/dt
    qdot is checked through ID(q, v, 0) = finite difference of the momentum equation."""
    rng = np.random.default_rng(9)
    sk = rd.Skeleton("u")
    sk.add_body("u", joint=rd.UniversalJoint("uj", axis1=(1.0, 0.0, 0.0), axis2=unit((1.0, 1.0, 0.3))),
                joint_origin=random_origin(rng), inertia=random_inertia(rng))
    sk.add_body("c", joint=rd.RevoluteJoint("cj", axis=(0, 0, 1)), parent="u", joint_origin=random_origin(rng),
                inertia=random_inertia(rng))
    w = world_of(sk, gravity=(0.0, 0.0, 0.0))
    for _ in range(4):
        q, v = w.random_configuration(rng), rng.normal(size=w.nv)
        # Lagrange: C(q, v) v = dM/dt v - 1/2 d(v^T M v)/dq
        dM = fd_along(w, w.mass_matrix, q, v)
        dT = np.array([fd_along(w, lambda x, v=v: np.array([w.kinetic_energy(x, v)]), q, e)[0] for e in np.eye(w.nv)])
        assert_close(w.bias_forces(q, v), dM @ v - dT, 1e-7, floor=1.0, what="C(q, v) v")
        for frame in ("world", "local"):
            fd = fd_along(w, lambda x, frame=frame: w.body_jacobian(x, "c", frame), q, v)
            assert_close(w.body_jacobian_time_variation(q, v, "c", frame), fd, 1e-6, floor=1.0, what=frame)


@pytest.mark.parametrize("field", ["damping", "stiffness", "armature", "friction"])
def test_a_passive_coefficient_that_is_not_a_number_names_itself(field):
    # damping='x' used to give numpy's bare "could not convert string to float"
    with pytest.raises(ValueError, match=rf"joint 'j' {field} must be a real number.*'x'"):
        rd.RevoluteJoint("j", axis=(0, 0, 1), **{field: "x"})


@pytest.mark.parametrize("bad", ["0.5", 0.5 + 0.1j, [0.1, 0.2 + 1j, 0.3]], ids=["numeric-string", "complex", "complex-list"])
def test_a_passive_coefficient_or_limit_is_a_real_number_not_a_string_or_complex(bad):
    # "0.5" was read as 0.5, and a complex value lost its imaginary part
    with pytest.raises(ValueError, match=r"joint 'b' damping must be a real number"):
        rd.BallJoint("b", damping=bad)
    with pytest.raises(ValueError, match=r"joint 'r' lower must be a real number"):
        rd.RevoluteJoint("r", lower=bad if np.ndim(bad) == 0 else bad[1])
    with pytest.raises(ValueError, match=r"joint 'b' rest_position must be .*real-valued"):
        rd.BallJoint("b", rest_position=[0.0, 0.0, 0.0, 1.0 + 0j] if np.ndim(bad) else ["0", "0", "0", "1"])
