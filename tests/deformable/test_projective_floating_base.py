"""Floating bases (free and ball joints) in projective worlds: free flight against the barrier world's step (the
same incremental potential in the same chart), the linear momentum of a free box thrown at a soft block, a free
box dropped onto a soft block coming to rest, a free box sliding on the ground pushing a soft block at Coulomb's
acceleration, a ball-jointed capsule resting on one, solo12 standing on a soft
mattress (its feet as spheres), and bad input (a turn of pi per step, quaternions, derivatives)."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rigidiff as rd

BOX = (0.08, 0.06, 0.04)


def _box_skeleton(name="box", offset=(0.0, 0.0, 0.0), mass=0.2):
    """One box on a free root joint; its centre of mass `offset` from the joint's origin."""
    sk = rd.Skeleton(name)
    inertia = rd.Inertia.from_shape(rd.Box(BOX), mass=mass, origin=rd.Transform(offset))
    body = sk.add_body("base", rd.FreeJoint("root"), inertia=inertia)
    body.add_shape(rd.Box(BOX))
    return sk


def _block(world, size=(0.2, 0.2, 0.05), cells=(4, 4, 2), origin=(-0.1, -0.1, 0.0), fixed_bottom=True, name="block",
           material=(2e4, 0.3, 1000.0)):
    mesh = rd.HexMesh.box(size, cells, origin=origin)
    fixed = np.flatnonzero(mesh.vertices[:, 2] < origin[2] + 1e-9) if fixed_bottom else None
    return world.add_deformable(mesh, rd.ProjectiveMaterial(*material), name=name, fixed=fixed)


def _quaternion(rotvec):
    return Rotation.from_rotvec(rotvec).as_quat()  # (x, y, z, w), rigidiff's order


def test_free_flight_matches_the_barrier_world_step():
    """Away from any contact the projective step of a spinning, tumbling free box (centre of mass off its joint's
    origin, so that M couples the linear and angular parts) is the barrier world's with gyroscopic="explicit": both
    minimise the same incremental potential in the lcp world's step chart."""
    skeleton = _box_skeleton(offset=(0.01, 0.005, 0.0))
    q0 = np.concatenate([[0.0, 0.0, 1.0], _quaternion([0.3, -0.2, 0.5])])
    v0 = np.array([0.4, -0.1, 0.8, 3.0, -5.0, 2.0])
    Q, worst_q, worst_v = beside_the_barrier_world(skeleton, q0, v0, 20, gyroscopic="explicit")
    assert Q.shape == (20, 7)
    assert np.abs(np.linalg.norm(Q[:, 3:7], axis=1) - 1.0).max() < 1e-12
    assert worst_q < 1e-9 and worst_v < 1e-7
    assert Q[-1, 2] < 1.0 + 20 * 0.01 * 0.8  # gravity acts


def test_free_flight_with_dampers_and_springs_matches_the_barrier_world_step():
    """Dampers and springs on every dof of the free joint (its linear ones too) do not resist the frame turn in
    either world: both steps are the lcp world's, and agree."""
    skeleton = rd.Skeleton("box")
    inertia = rd.Inertia.from_shape(rd.Box(BOX), mass=0.2, origin=rd.Transform((0.01, 0.005, 0.0)))
    body = skeleton.add_body("base", rd.FreeJoint("root", damping=[0.4, 0.5, 0.6, 0.01, 0.01, 0.01],
                                                  stiffness=[1.0, 2.0, 3.0, 0.02, 0.02, 0.02]), inertia=inertia)
    body.add_shape(rd.Box(BOX))
    q0 = np.concatenate([[0.0, 0.0, 1.0], _quaternion([0.3, -0.2, 0.5])])
    v0 = np.array([0.4, -0.1, 0.8, 3.0, -5.0, 2.0])
    _, worst_q, worst_v = beside_the_barrier_world(skeleton, q0, v0, 20, gyroscopic="explicit")
    assert worst_q < 1e-9 and worst_v < 1e-7


def beside_the_barrier_world(skeleton, q0, v0, steps, **barrier_options):
    """Step `skeleton` alone (a soft block far away: no contact) from (q0, v0) in a projective world and in a barrier
    world (newton_tolerance 1e-12, the options given); return the projective skeleton's configurations (steps, nq)
    and the largest differences of q and v over the steps."""
    projective = rd.World(dt=1e-2, solver="projective", tolerance=1e-12, max_iterations=200)
    _block(projective, origin=(5.0, 5.0, 0.0))
    projective.add_skeleton(skeleton, q=q0)
    barrier = rd.World(dt=1e-2, solver="barrier", newton_tolerance=1e-12, **barrier_options)
    barrier.add_skeleton(skeleton, q=q0)
    s = projective.layout(skeleton.name)
    qp, vp = projective.q, projective.v
    vp[s.v] = v0
    qb, vb = barrier.q, np.array(v0, dtype=float)
    worst_q = worst_v = 0.0
    Q = []
    for _ in range(steps):
        qp, vp = projective.step(qp, vp)
        qb, vb = barrier.step(qb, vb)
        worst_q = max(worst_q, np.abs(qp[s.q] - qb).max())
        worst_v = max(worst_v, np.abs(vp[s.v] - vb).max())
        Q.append(qp[s.q])
    return np.array(Q), worst_q, worst_v


def _world_linear_momentum(world, q, v, box_mass):
    """The block's and the box's linear momentum (the box's centre of mass at its joint's origin)."""
    layout = world.layout("block")
    masses = world.masses("block")
    p = masses @ v[layout.v].reshape(-1, 3)
    s = world.layout("box")
    R = Rotation.from_quat(q[s.q][3:7]).as_matrix()
    return p + box_mass * R @ v[s.v][:3]


def test_a_free_box_thrown_at_a_floating_soft_block_keeps_the_linear_momentum():
    """Without gravity or ground, a tumbling free box hits a soft block: their penalty forces are internal, so the
    linear momentum of both is the start's at every step (the contact's generalised force carried into the
    step's chart exactly, and the new velocity re-expressed in the box's new frame)."""
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-12, max_iterations=500, gravity=(0.0, 0.0, 0.0),
                     contact_stiffness=2e4)
    _block(world, fixed_bottom=False)
    world.add_skeleton(_box_skeleton(), q=np.concatenate([[0.0, 0.0, 0.08], _quaternion([0.2, 0.1, 0.0])]))
    s = world.layout("box")
    q, v = world.q, world.v
    v[s.v] = [0.1, 0.0, -1.0, 1.0, -2.0, 0.5]
    start = _world_linear_momentum(world, q, v, 0.2)
    touched = 0
    for _ in range(15):
        q, v = world.step(q, v)
        touched += world.last_step["contacts"] > 0
        assert np.abs(_world_linear_momentum(world, q, v, 0.2) - start).max() < 1e-8
    assert touched >= 5
    # the block was pushed down
    assert world.positions(q, "block")[:, 2].mean() < 0.025 - 1e-3


def test_a_free_box_dropped_onto_a_soft_block_comes_to_rest():
    """Dropped tilted from 2 cm above a soft block fixed at its bottom, a free box lands, settles on its face,
    presses into the block by a millimetre or two and comes to rest. The block's surface vertices 1.7 cm apart
    (the links touch the soft bodies' vertices, not their faces: a box's face over too coarse a mesh can balance
    on a vertex, tip and slip between them)."""
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-8, max_iterations=500, friction=0.5)
    _block(world, cells=(12, 12, 2))
    world.add_skeleton(_box_skeleton(), q=np.concatenate([[0.0, 0.0, 0.05 + 0.02 + 0.02],
                                                         _quaternion([0.15, 0.0, 0.0])]))
    s = world.layout("box")
    q, v = world.q, world.v
    for _ in range(60):
        q, v = world.step(q, v)
        assert abs(np.linalg.norm(q[s.q][3:7]) - 1.0) < 1e-12
        assert world.last_step["converged"]
    base = q[s.q]
    tilt = Rotation.from_quat(base[3:7]).magnitude()
    assert tilt < 0.02  # settled on its face
    # the box's bottom (half height 0.02) rests in the block's top surface, pressed in by millimetres
    assert 0.05 - 0.005 < base[2] - 0.02 < 0.05
    assert np.abs(v[s.v]).max() < 0.02
    assert np.abs(v[world.layout("block").v]).max() < 0.02


def test_a_free_box_sliding_on_the_ground_pushes_a_soft_block_at_coulombs_acceleration():
    """A free 1 kg box standing on the ground (friction mu) against a loose soft block is pushed along x with three
    times the friction of both: the ground rubs on the box's corners (the links' lagged friction) and on the
    block's bottom vertices, the box pushes the block through their penalty contact, and both slide together at
    (F - mu (M + m) g) / (M + m), flat on the ground."""
    mu, g, box_mass = 0.4, 9.81, 1.0
    world = rd.World(dt=5e-3, solver="projective", friction=mu, contact_stiffness=2e4, tolerance=1e-9)
    world.add_ground()
    _block(world, size=(0.1, 0.1, 0.05), origin=(0.0, 0.0, 0.0), fixed_bottom=False, material=(5e4, 0.3, 1000.0))
    pusher = rd.Skeleton("pusher")
    body = pusher.add_body("box", rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(rd.Box(BOX), mass=box_mass))
    body.add_shape(rd.Box(BOX))
    world.add_skeleton(pusher, q=np.array([-0.5 * BOX[0] - 1e-3, 0.05, 0.5 * BOX[2], 0.0, 0.0, 0.0, 1.0]))
    s, m = world.layout("pusher"), world.masses("block")
    total = box_mass + m.sum()
    q, v = world.q, world.v
    for _ in range(20):  # both settle on the ground
        q, v = world.step(q, v)
    force = np.zeros(world.nv)
    force[s.v.start] = 3.0 * mu * total * g  # along x in the box's frame, which stays level
    box, block = [], []
    for _ in range(80):
        q, v = world.step(q, v, force)
        assert world.last_step["converged"]
        box.append(q[s.q.start])
        block.append(m @ world.positions(q, "block")[:, 0] / m.sum())
    t = np.arange(1, 81) * world.dt
    expected = 2.0 * mu * g  # (F - mu (M + m) g) / (M + m)
    for path in (box, block):  # a parabola over the second half, once the contact has built up
        assert 2.0 * np.polyfit(t[40:], np.array(path)[40:], 2)[0] == pytest.approx(expected, rel=0.01)
    assert Rotation.from_quat(q[s.q][3:7]).magnitude() < 0.02  # flat on the ground
    assert world.positions(q, "block")[:, 2].min() > -1e-3  # on the ground, not through it
    assert abs(q[s.q.start + 2] - 0.5 * BOX[2]) < 1e-3


def test_a_ball_jointed_capsule_swings_down_onto_a_soft_block():
    """A capsule hanging from a ball joint above the block's corner, let go horizontal and tilted, swings down and
    rests on the block, its quaternion of unit norm."""
    sk = rd.Skeleton("arm")
    link = rd.Capsule(0.015, 0.12)
    body = sk.add_body("link", rd.BallJoint("shoulder", damping=0.01),
                       joint_origin=rd.Transform((-0.12, 0.0, 0.08)),
                       inertia=rd.Inertia.from_shape(link, mass=0.1, origin=rd.Transform((0.0, 0.0, 0.06))))
    body.add_shape(link, rd.Transform((0.0, 0.0, 0.06)))
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-8, max_iterations=500)
    _block(world)
    # the capsule's axis (its z) along +x, tilted a little about x
    turn = Rotation.from_rotvec([0.1, 0.0, 0.0]) * Rotation.from_rotvec([0.0, np.pi / 2, 0.0])
    q_arm = turn.as_quat()
    world.add_skeleton(sk, q=q_arm)
    s = world.layout("arm")
    assert s.q.stop - s.q.start == 4 and s.v.stop - s.v.start == 3
    q, v = world.q, world.v
    for _ in range(80):
        q, v = world.step(q, v)
        assert abs(np.linalg.norm(q[s.q]) - 1.0) < 1e-12
    tip = Rotation.from_quat(q[s.q]).apply([0.0, 0.0, 0.135]) + [-0.12, 0.0, 0.08]
    # the tip rests on the block's top (z = 0.05) at the capsule's radius, pressed in a little
    assert 0.05 < tip[2] < 0.05 + 0.015
    assert np.abs(v[s.v]).max() < 0.05
    assert world.last_step["contacts"] > 0


def test_bad_floating_input_is_refused():
    world = rd.World(dt=1e-2, solver="projective")
    _block(world)
    with pytest.raises(ValueError, match="q must have shape"):
        world.add_skeleton(_box_skeleton(), q=np.zeros(6))
    assert world.skeletons == []
    with pytest.raises(ValueError, match="quaternion|norm"):
        world.add_skeleton(_box_skeleton(), q=[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0])
    assert world.skeletons == [] and world.nq == world.nv
    world.add_skeleton(_box_skeleton(), q=[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    s = world.layout("box")
    # a step's chart holds turns below pi: |w| dt of pi or more is refused, naming the joint
    q, v = world.q, world.v
    v[s.v.start + 5] = 320.0
    with pytest.raises(ValueError, match=r"joint 'box/root' would turn by 3.2 rad.*smaller dt"):
        world.step(q, v)
    v[s.v.start + 5] = 300.0  # 3 rad: stepped
    assert np.isfinite(world.step(q, v)[0]).all()
    bad = world.q
    bad[s.q.start + 6] = 1.5
    with pytest.raises(ValueError, match="quaternion|norm"):
        world.step(bad, world.v)
    # the derivatives take q's cotangents in the tangent (nv entries)
    with pytest.raises(ValueError, match="dL_dq_next"):
        world.step_vjp(world.q, world.v, None, np.zeros(world.nq), np.zeros(world.nv))
    with pytest.raises(ValueError, match="dL_dQ"):
        world.rollout_backward(np.tile(world.q, (2, 1)), np.tile(world.v, (2, 1)), np.zeros((1, world.nv)),
                               np.zeros((2, world.nq)), np.zeros((2, world.nv)))


# solo12's standing pose (hips 0, thighs +-0.8 rad, knees -+1.6 rad) held by joint springs: a PD controller
STAND = np.array([0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6])


@pytest.mark.filterwarnings("ignore:.*URDF")
def test_solo12_stands_on_a_soft_mattress(robots_dir):
    """example-robot-data's solo12 on its free base, a 2 cm sphere on each foot (the mattress's surface vertices
    2.5 cm apart: a foot cannot slip between them), dropped from 1 cm onto a soft mattress glued to the floor: it
    never sinks through, lands level on its four feet and stands, pressing the mattress in by millimetres
    (examples/solo12_on_a_soft_mattress.py runs it longer, on a mattress of two layers)."""
    solo = rd.load_urdf(str(robots_dir / "solo_description" / "robots" / "solo12.urdf"),
                        package_dirs=[str(robots_dir.parent)], load_geometry=False, floating_base=True, strict=False)
    for joint, angle in zip([b.joint for b in solo.bodies if b.joint.type == "revolute"], STAND):
        joint.stiffness, joint.damping, joint.rest_position = np.array([20.0]), np.array([0.5]), np.array([angle])
    feet = [b for b in solo.bodies if b.name.endswith("_FOOT")]
    assert len(feet) == 4
    for body in feet:
        body.add_shape(rd.Sphere(0.02))
    world = rd.World(dt=5e-3, solver="projective", friction=0.8, tolerance=1e-6, max_iterations=500,
                     contact_stiffness=2e4)
    _block(world, size=(0.5, 0.4, 0.06), cells=(20, 16, 1), origin=(-0.25, -0.2, 0.0), name="mattress",
           material=(5e4, 0.3, 300.0))
    world.add_skeleton(solo, q=np.concatenate([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], STAND]))
    s = world.layout(solo.name).q
    lcp = world.skeleton_world()
    reach = 1.0 - min(lcp.body_pose(world.q[s], b.name)[2, 3] for b in feet) + 0.02  # base to the feet's bottom
    q = world.q
    q[s.start + 2] = 0.06 + reach + 0.01
    v = world.v
    top = np.flatnonzero(world.positions(q, "mattress")[:, 2] > 0.06 - 1e-9)
    for _ in range(60):
        q, v = world.step(q, v)
        assert world.last_step["converged"]
        lowest = min(lcp.body_pose(q[s], b.name)[2, 3] for b in feet) - 0.02
        assert lowest > 0.03  # well above the floor: never through the 6 cm mattress
    base = q[s]
    assert 0.06 + reach - 0.02 < base[2] < 0.06 + reach
    assert Rotation.from_quat(base[3:7]).magnitude() < 1e-3
    assert np.abs(base[7:] - STAND).max() < 0.05
    dent = 0.06 - world.positions(q, "mattress")[top, 2].min()
    assert 1e-3 < dent < 0.02
