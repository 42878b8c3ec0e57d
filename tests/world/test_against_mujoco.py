"""Contact-free trajectories against MuJoCo under the same integrator.

The same model is built twice, by hand in rigidiff and as MJCF for MuJoCo (Euler integrator, constraints
and contacts disabled, no damping, so MuJoCo's Euler is plain semi-implicit Euler like our step), and
simulated for 2 s at dt = 1e-3 from a non-trivial state.
"""

import numpy as np
import pytest
from rdsupport import world_of

import rigidiff as rd
from rigidiff.transform import matrix_to_quaternion, quaternion_to_matrix

mujoco = pytest.importorskip("mujoco")

DT = 1e-3
T_END = 2.0


def random_rotation(rng):
    q = rng.normal(size=4)
    return quaternion_to_matrix(q / np.linalg.norm(q))


def link_specs(n, seed, rotate_frames=True):
    """n hinge links in a chain: joint pose in the parent, axis, mass, com, rotational inertia (at the com)."""
    rng = np.random.default_rng(seed)
    specs = []
    for i in range(n):
        length = rng.uniform(0.2, 0.45)
        R_joint = random_rotation(rng) if (rotate_frames and i > 0) else np.eye(3)
        pos = np.zeros(3) if i == 0 else np.array([0.0, 0.0, -specs[-1]["length"]]) + rng.uniform(-0.05, 0.05, 3)
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        mass = rng.uniform(0.5, 2.0)
        com = np.array([0.0, 0.0, -0.5 * length]) + rng.uniform(-0.03, 0.03, 3)
        principal = np.sort(rng.uniform(0.005, 0.03, 3))
        principal[2] = min(principal[2], principal[0] + principal[1] - 1e-4)  # a physical body
        R_inertia = random_rotation(rng)
        inertia = R_inertia @ np.diag(principal) @ R_inertia.T
        specs.append(dict(length=length, pos=pos, R=R_joint, axis=axis, mass=mass, com=com, inertia=inertia,
                          principal=principal, R_inertia=R_inertia))
    return specs


def rigidiff_world(specs):
    sk = rd.Skeleton("chain")
    parent = None
    for i, s in enumerate(specs):
        parent = sk.add_body(f"b{i}", joint=rd.RevoluteJoint(f"j{i}", axis=s["axis"]), parent=parent,
                             joint_origin=rd.Transform(s["pos"], rotation=s["R"]),
                             inertia=rd.Inertia(s["mass"], s["com"], s["inertia"]))
    return world_of(sk, dt=DT)


def _wxyz(R):
    x, y, z, w = matrix_to_quaternion(R)
    return _vec([w, x, y, z])


def _vec(v):
    return " ".join(repr(float(x)) for x in v)


def mjcf(specs, full_inertia):
    """MJCF of the chain; the inertia as fullinertia, or as diaginertia in principal axes (inertial quat)."""
    xml, close = [], []
    for i, s in enumerate(specs):
        if full_inertia:
            I = s["inertia"]
            inertial = (f'<inertial pos="{_vec(s["com"])}" mass="{float(s["mass"])!r}" '
                        f'fullinertia="{_vec([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])}"/>')
        else:
            inertial = (f'<inertial pos="{_vec(s["com"])}" quat="{_wxyz(s["R_inertia"])}" mass="{float(s["mass"])!r}" '
                        f'diaginertia="{_vec(s["principal"])}"/>')
        xml.append(f'<body name="b{i}" pos="{_vec(s["pos"])}" quat="{_wxyz(s["R"])}">'
                   f'<joint name="j{i}" type="hinge" axis="{_vec(s["axis"])}" damping="0" armature="0"/>{inertial}')
        close.append("</body>")
    return f"""
<mujoco>
  <option integrator="Euler" timestep="{DT!r}" gravity="0 0 -9.81">
    <flag constraint="disable" contact="disable"/>
  </option>
  <worldbody>{''.join(xml)}{''.join(close)}</worldbody>
</mujoco>"""


def mujoco_trajectory(xml, q0, v0, steps):
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    data.qpos[:] = q0
    data.qvel[:] = v0
    Q, V = [q0.copy()], [v0.copy()]
    for _ in range(steps):
        mujoco.mj_step(model, data)
        Q.append(data.qpos.copy())
        V.append(data.qvel.copy())
    return model, np.array(Q), np.array(V)


@pytest.mark.parametrize("n,seed,full_inertia", [(2, 1, True), (2, 2, False), (7, 3, True), (7, 4, False)],
                         ids=["double_pendulum_full", "double_pendulum_diag", "chain7_full", "chain7_diag"])
def test_trajectory_matches_mujoco(n, seed, full_inertia):
    specs = link_specs(n, seed)
    world = rigidiff_world(specs)
    rng = np.random.default_rng(seed + 100)
    q0 = rng.uniform(-1.5, 1.5, n)
    v0 = rng.uniform(-2.0, 2.0, n)
    steps = int(round(T_END / DT))
    model, Qm, Vm = mujoco_trajectory(mjcf(specs, full_inertia), q0, v0, steps)
    assert model.nq == model.nv == n

    # the models agree before they are integrated
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:] = q0, v0
    mujoco.mj_forward(model, data)
    M_mj = np.zeros((n, n))
    mujoco.mj_fullM(model, data, M_mj)
    np.testing.assert_allclose(world.mass_matrix(q0), M_mj, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(world.bias_forces(q0, v0), data.qfrc_bias, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(world.forward_dynamics(q0, v0, np.zeros(n)), data.qacc, rtol=1e-9, atol=1e-12)

    Q, V = world.rollout(q0, v0, np.zeros((steps, n)))
    assert np.abs(Q - Qm).max() <= 1e-6, np.abs(Q - Qm).max()
    assert np.abs(V - Vm).max() <= 1e-6, np.abs(V - Vm).max()
    # the motion is not trivial: the chain swings through a large range
    assert np.ptp(Q, axis=0).max() > 1.0


def test_torques_match_mujoco_applied_forces():
    """A torque trajectory enters both engines the same way (MuJoCo: qfrc_applied)."""
    n = 3
    specs = link_specs(n, 7)
    world = rigidiff_world(specs)
    model = mujoco.MjModel.from_xml_string(mjcf(specs, True))
    data = mujoco.MjData(model)
    rng = np.random.default_rng(8)
    q0, v0 = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    steps = 1000
    taus = np.sin(np.linspace(0, 6, steps))[:, None] * rng.uniform(-2, 2, n)
    data.qpos[:], data.qvel[:] = q0, v0
    Qm = [q0.copy()]
    for t in range(steps):
        data.qfrc_applied[:] = taus[t]
        mujoco.mj_step(model, data)
        Qm.append(data.qpos.copy())
    Q, _ = world.rollout(q0, v0, taus)
    assert np.abs(Q - np.array(Qm)).max() <= 1e-6
    Q_free, _ = world.rollout(q0, v0, np.zeros_like(taus))
    assert np.abs(Q_free - Q).max() > 1e-2  # the torques mattered
