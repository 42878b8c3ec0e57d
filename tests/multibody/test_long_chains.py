"""Chains of thousands of bodies, built by hand or loaded from a URDF, compile, step and print: nothing on
the Python side recurses once per body (a 1,000-link chain used to raise RecursionError)."""

import numpy as np

import rigidiff as rd

N = 2000  # twice Python's default recursion limit


def test_a_long_chain_built_by_hand_compiles_steps_and_prints():
    sk = rd.Skeleton("rope")
    parent = None
    for i in range(N):
        parent = sk.add_body(f"l{i}", parent=parent, joint=rd.RevoluteJoint(f"j{i}", axis=(0.0, 1.0, 0.0)),
                             joint_origin=rd.Transform(translation=(0.0, 0.0, -0.01)) if i else None,
                             inertia=rd.Inertia(0.01, com=(0.0, 0.0, -0.005), rotational_inertia=np.eye(3) * 1e-6))
    assert [b.name for b in sk.ordered_bodies()][:3] == ["l0", "l1", "l2"]
    assert sk.ordered_bodies()[-1].name == f"l{N - 1}"
    summary = sk.summary()
    assert summary.count("\n") == N and f"{'  ' * N}- l{N - 1} " in summary  # indented by its depth
    world = rd.World(dt=1e-3)
    world.add_skeleton(sk)
    assert world.nv == N
    q = np.zeros(N)
    q[0] = 0.1
    qn, vn = world.step(q, np.zeros(N), np.zeros(N))
    assert np.all(np.isfinite(qn)) and abs(vn[0]) > 0.0  # the tilted rope starts to swing


def test_a_long_chain_loads_from_urdf():
    inertial = ('<inertial><mass value="0.01"/><inertia ixx="1e-6" iyy="1e-6" izz="1e-6" ixy="0" ixz="0" '
                'iyz="0"/></inertial>')
    links = "".join(f'<link name="l{i}">{inertial}</link>' for i in range(N))
    joints = "".join(f'<joint name="j{i}" type="continuous"><parent link="l{i - 1}"/><child link="l{i}"/>'
                     f'<origin xyz="0 0 -0.01"/><axis xyz="0 1 0"/></joint>' for i in range(1, N))
    sk = rd.load_urdf(f'<robot name="rope">{links}{joints}</robot>')
    world = rd.World()
    world.add_skeleton(sk)
    assert world.nv == N - 1
    qn, _ = world.step(np.full(N - 1, 0.01), np.zeros(N - 1), np.zeros(N - 1))
    assert np.all(np.isfinite(qn))
