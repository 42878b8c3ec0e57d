"""A projective step whose forces overflow at its start is refused, never "converged" on a NaN residual."""

import numpy as np
import pytest

import rigidiff as rd


def _block():
    w = rd.World(dt=1e-2, solver="projective")
    w.add_ground()
    mesh = rd.HexMesh.box((0.1, 0.1, 0.1), (2, 2, 2), origin=(0.0, 0.0, 0.002))
    w.add_deformable(mesh, rd.ProjectiveMaterial(1e5, 0.3, 1000.0), name="block")
    return w


def test_a_vertex_too_far_away_is_refused_by_every_call():
    w = _block()
    q = w.q.copy()
    q[14] = 1e300
    with pytest.raises(ValueError, match="forces overflow at its start"):
        w.step(q, w.v)
    with pytest.raises(ValueError, match="forces overflow at its start"):
        w.step_vjp(q, w.v, None, np.ones(w.nq), np.ones(w.nv))
    with pytest.raises(ValueError, match=r"rollout step 0 \(from q0, v0, forces\[0\]\)"):
        w.rollout(q, w.v, np.zeros((2, w.nv)))
    with pytest.raises(ValueError, match="q: the energy or its gradient overflows"):
        w.energy(q)


def test_a_ball_too_large_for_double_precision_is_named():
    w = _block()
    w.add_sphere((0.2, 0.05, 0.05), 6e198, name="ball")
    with pytest.raises(ValueError, match="radius"):
        w.step(w.q, w.v)


def test_badly_typed_inputs_are_named():
    w = _block()
    with pytest.raises(ValueError, match="forces must be"):
        w.rollout(w.q, w.v, np.zeros((2, w.nv), dtype=complex))
    with pytest.raises(ValueError, match="q must have shape"):
        w.energy(np.zeros(3))
    with pytest.raises(ValueError, match="vertices must be"):
        rd.TetMesh(np.zeros((4, 3), dtype=complex), np.array([[0, 1, 2, 3]]))
    with pytest.raises(ValueError, match=r"its vertices \[0, 1, 2, 3\]"):
        rd.TetMesh(np.zeros((4, 3)), np.array([[0, 1, 2, 3]]))


def test_a_world_with_a_robot_refuses_overflowing_states_too():
    w = _block()
    box = rd.Box((0.04, 0.06, 0.06))
    sk = rd.Skeleton("pusher")
    paddle = sk.add_body("paddle", rd.PrismaticJoint("slide", axis=(1, 0, 0)),
                         joint_origin=rd.Transform((-0.03, 0.05, 0.03)), inertia=rd.Inertia.from_shape(box, mass=0.5))
    paddle.add_shape(box)
    w.add_skeleton(sk)
    w.step(w.q, w.v)  # a valid start steps
    for index in (14, w.nq - 1):  # a vertex, the joint
        q = w.q.copy()
        q[index] = 1e300
        with pytest.raises(ValueError, match="forces overflow at its start"):
            w.step(q, w.v)
    f = np.zeros(w.nv)
    f[-1] = 1e300  # the joint's force
    with pytest.raises(ValueError, match="forces overflow at its start"):
        w.step(w.q, w.v, f)


def test_a_joint_limit_stiffness_too_large_for_double_precision_is_named():
    w = _block()
    sk = rd.Skeleton("arm")
    link = sk.add_body("link", rd.RevoluteJoint("hinge", axis=(0, 1, 0), lower=-1.0, upper=1.0),
                       joint_origin=rd.Transform((0.3, 0.0, 0.3)),
                       inertia=rd.Inertia.from_shape(rd.Capsule(0.02, 0.1), mass=0.3))
    link.add_shape(rd.Capsule(0.02, 0.1))
    w.add_skeleton(sk)
    w.joint_limits = True
    w.joint_limit_stiffness = 1e300
    q = w.q.copy()
    q[-1] = 5.0  # 4 rad beyond the upper limit: a penalty force of 4e300
    with pytest.raises(ValueError, match="forces overflow at its start.*the joint limits'"):
        w.step(q, w.v)
    w.joint_limit_stiffness = 1e4
    q_next, _ = w.step(q, w.v)  # a sane stiffness pushes it back
    assert q_next[-1] < q[-1]


def _neohookean_block(with_robot=False, kind="neohookean"):
    w = rd.World(dt=1e-2, solver="projective")
    mesh = rd.HexMesh.box((0.1, 0.1, 0.1), (2, 2, 2))
    w.add_deformable(mesh, rd.ProjectiveMaterial(1e5, 0.3, 1000.0, kind=kind), name="block")
    if with_robot:
        sk = rd.Skeleton("arm")
        sk.add_body("link", rd.RevoluteJoint("hinge", axis=(0, 0, 1)), joint_origin=rd.Transform((1.0, 0.0, 0.0)),
                    inertia=rd.Inertia.from_shape(rd.Box((0.1, 0.1, 0.1)), mass=1.0))
        w.add_skeleton(sk)
    return w


@pytest.mark.parametrize("with_robot", [False, True])
def test_an_inverted_neohookean_element_is_named_not_called_an_overflow(with_robot):
    w = _neohookean_block(with_robot)
    q = w.q.copy()
    q[:3] += 0.2  # the corner vertex 0 pushed through its element: element 0 turns inside out
    with pytest.raises(ValueError, match=r"deformable block: element 0 is inverted in q \(det F = -.*neo-Hookean"):
        w.step(q, w.v)
    with pytest.raises(ValueError, match="element 0 is inverted"):
        w.step_vjp(q, w.v, None, np.ones(w.nq), np.ones(w.nv))
    w = _neohookean_block(with_robot, kind="corotated")
    q_next, _ = w.step(q, w.v)  # the corotated energy is finite there and pushes the element back
    assert np.isfinite(q_next).all()


def test_a_pose_too_far_for_double_precision_is_refused_before_the_body_is_added():
    w = rd.World(dt=1e-2, solver="projective")
    mesh = rd.HexMesh.box((0.1, 0.1, 0.1), (2, 2, 2))
    with pytest.raises(ValueError, match=r"deformable 'far': at this pose .* round-off moves its vertices"):
        w.add_deformable(mesh, rd.ProjectiveMaterial(1e5, 0.3, 1000.0), name="far", pose=rd.Transform((1e17, 0, 0)))
    assert w.nq == 0  # nothing half-added
    w.add_deformable(mesh, rd.ProjectiveMaterial(1e5, 0.3, 1000.0), name="far", pose=rd.Transform((1e6, 0, 0)))
    assert w.volume(w.q, "far") == pytest.approx(1e-3, rel=1e-6)  # a million metres away keeps the cube
