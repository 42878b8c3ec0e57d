"""example-robot-data's solo12 quadruped (a free-floating base, 12 joints, its shipped collision meshes: 50736
faces, closed and outward wound) in a barrier world, standing under a joint-space PD controller: the joints'
springs and dampers about the standing pose, which the step treats implicitly (explicit PD torques on its light
lower legs would need a far smaller dt). IPC Toolkit checks the states for intersections, independently of the
solver; the step Jacobians of the standing robot are checked against central differences."""

import numpy as np
import pytest

import rigidiff as rd
from ipc_checks import assert_intersection_free

ipctk = pytest.importorskip("ipctk")

DHAT = 1e-3
# hips abducted 0, thighs +-0.8 rad, knees -+1.6 rad: the feet under the hips, 0.239 m below the base's origin
STAND = np.array([0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6])
KP, KD = 20.0, 0.5  # N m / rad, N m s / rad


def _solo(robots_dir):
    solo = rd.load_urdf(str(robots_dir / "solo_description" / "robots" / "solo12.urdf"),
                        package_dirs=[str(robots_dir.parent)], load_geometry=True, floating_base=True, strict=False)
    joints = [b.joint for b in solo.bodies if b.joint.type == "revolute"]
    assert len(joints) == 12
    for joint, angle in zip(joints, STAND):  # the PD controller as joint springs about the standing pose
        joint.stiffness, joint.damping, joint.rest_position = np.array([KP]), np.array([KD]), np.array([angle])
    return solo


def _feet_depth(solo):
    """How far the lowest point of the standing solo lies below its base's origin."""
    probe = rd.World(dt=1e-2, solver="barrier")
    probe.add_skeleton(solo, q=np.concatenate([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], STAND]))
    return -probe.surfaces(probe.q)[0][:, 2].min()


def _patches(world, q):
    """One patch for the robot's link surfaces (they never collide with each other), one per body."""
    patches = [0] * sum(len(V) for _, V, _ in world._link_surfaces(q))
    for k, name in enumerate(world.body_names):
        patches += [k + 1] * len(world.surface(q, name)[0])
    return patches


def _stand(world, q, v, steps, check_every):
    """Steps the world, checking every check_every-th state with IPC Toolkit; returns the final state and the
    largest joint error from STAND after the first 0.3 s."""
    patches = _patches(world, q)
    worst = 0.0
    for t in range(steps):
        q, v = world.step(q, v)
        if t % check_every == check_every - 1:
            assert_intersection_free(ipctk, world, q, DHAT, ground_half_width=2.0, patches=patches)
        assert abs(np.linalg.norm(q[3:7]) - 1.0) < 1e-12
        if t >= 30:
            worst = max(worst, np.abs(q[7:19] - STAND).max())
    return q, v, worst


@pytest.mark.filterwarnings("ignore:.*URDF")
def test_solo12_stands_on_the_ground(robots_dir):
    """Dropped from 2 cm onto the ground (friction 0.8), solo12 lands on its four feet and stands for 1 s: its base
    settles level at the height its legs give it, its joints stay within 0.05 rad of the standing pose (the
    springs' sag under its weight), and it comes to rest. IPC Toolkit checks every tenth state (each check
    costs 0.3 s; the slow test checks every state)."""
    solo = _solo(robots_dir)
    depth = _feet_depth(solo)
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.8)
    world.add_ground()
    world.add_skeleton(solo, q=np.concatenate([[0.0, 0.0, depth + 0.02, 0.0, 0.0, 0.0, 1.0], STAND]))
    assert (world.nq, world.nv) == (19, 18)
    q, v, worst = _stand(world, world.q, world.v, 100, 10)
    assert worst < 0.05
    assert depth - 0.01 < q[2] < depth
    tilt = 2.0 * np.arcsin(min(1.0, np.linalg.norm(q[3:6])))
    assert tilt < 1e-3
    assert np.abs(v).max() < 5e-3
    V, _ = world.surfaces(q)
    assert 0.0 < V[:, 2].min() < DHAT


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.*URDF")
def test_solo12_lands_on_an_affine_box_and_stands(robots_dir):
    """solo12 dropped from 3 cm with a sideways push (0.2 m/s) and a yaw rate (0.5 rad/s) onto an affine box (0.5 x
    0.4 x 0.1 m, 10 kg) resting on the ground, friction 0.8: it lands on the box, stays on it and stands for 1 s,
    every state intersection-free by IPC Toolkit; the box carries it without leaving the ground."""
    solo = _solo(robots_dir)
    depth = _feet_depth(solo)
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.8)
    world.add_ground()
    world.add_affine_body(rd.Box((0.5, 0.4, 0.1)), density=500.0, pose=rd.Transform((0.0, 0.0, 0.05 + DHAT / 2)),
                          name="box")
    world.add_skeleton(solo, q=np.concatenate([[0.0, 0.0, 0.1 + depth + 0.03, 0.0, 0.0, 0.0, 1.0], STAND]))
    q, v = world.q, world.v
    v[0], v[5] = 0.2, 0.5
    q, v, worst = _stand(world, q, v, 100, 1)
    assert worst < 0.05
    assert 0.1 + depth - 0.01 < q[2] < 0.1 + depth + DHAT
    box = world.body_pose(q, "box")
    assert abs(box[2, 3] - 0.05) < DHAT
    V, _ = world.surfaces(q)
    assert V[:, 2].min() > 0.0
    assert np.abs(v).max() < 5e-2


def _standing_for_derivatives(robots_dir):
    """solo12 standing on the ground (48 pairs within dhat, friction 0.8) after 20 steps at a Newton tolerance of
    1e-12, and the torques of the differentiated step: (world, q, v, tau)."""
    solo = _solo(robots_dir)
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.8, newton_tolerance=1e-12,
                     max_newton_iterations=2000)
    world.add_ground()
    world.add_skeleton(solo, q=np.concatenate([[0.0, 0.0, _feet_depth(solo) + DHAT / 2, 0.0, 0.0, 0.0, 1.0], STAND]))
    q, v = world.q, world.v
    for _ in range(20):
        q, v = world.step(q, v)
    return world, q, v, np.r_[np.zeros(6), np.linspace(-0.2, 0.2, 12)]


@pytest.mark.filterwarnings("ignore:.*URDF")
def test_solo12_step_jacobians_match_central_differences(robots_dir):
    """solo12 standing on the ground: the six step Jacobians (18 x 18, in the tangent) against central differences
    of the step at a Newton tolerance of 1e-12, within 1e-6 of the largest entry; they cost about one step more
    (measured 4.2 against 3.8 ms)."""
    from step_differences import NAMES, relative_error
    from test_barrier_floating_derivatives import _central_jacobians

    world, q, v, tau = _standing_for_derivatives(robots_dir)
    J = world.step_jacobians(q, v, tau)
    assert world.last_step["active_pairs"] > 0
    fd = _central_jacobians(world, q, v, tau)
    for name in NAMES:
        assert relative_error(getattr(J, name), fd[name]) < 1e-6, name


@pytest.mark.filterwarnings("ignore:.*URDF")
def test_solo12_parameter_jacobians_match_central_differences(robots_dir):
    """solo12 standing on the ground: the derivatives with respect to its base's and a lower leg's mass, centre of
    mass and inertia, a knee's damping, stiffness and armature, the free joint's damping and armature (six dofs
    each) and gravity, against central differences of the step (each parameter moved by set_parameters, q's change
    in the tangent), within 1e-6 of each column's largest entry."""
    from step_differences import assert_parameter_jacobians, central_parameter_jacobians
    from test_barrier_floating_derivatives import _change

    world, q, v, tau = _standing_for_derivatives(robots_dir)
    free = world.skeleton_world().joint_names[0]
    wrt = ["base_link", "FL_LOWER_LEG", "FL_KFE", "gravity"] + [f"{free}/{f}_{k}" for f in ("damping", "armature")
                                                                 for k in range(6)]
    J = world.step_jacobians(q, v, tau, wrt=wrt)
    assert len(J.parameter_names) == 10 + 10 + 3 + 3 + 12
    fd = central_parameter_jacobians(world, q, v, tau, J, J.parameter_names, change=lambda a, b: _change(world, a, b))
    assert_parameter_jacobians(J, fd)
