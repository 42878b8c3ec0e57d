"""Step derivatives of barrier worlds that hold articulated skeletons (implicit function theorem at the converged
step, with the exact Hessian: the surfaces' pose-map curvature, the RNEA derivatives of the start state, the
friction frames of link surfaces): against central differences of the step itself with the Newton tolerance
tightened, for the state, the torques and every parameter; the reverse mode against the transposed Jacobians;
a recorded rollout's backward pass against the chained step Jacobians and central differences of the rollout;
example-robot-data's Panda pushing a block."""

import re
import warnings

import numpy as np
import pytest

import rigidiff as rd
from step_differences import (NAMES, assert_parameter_jacobians, central_jacobians, central_parameter_jacobians,
                              relative_error)
from test_barrier_skeleton import _arm, _limited_pendulum, _pendulum, _pushing_state

DHAT = 1e-3
# central-difference steps (q, v, tau): at a Newton tolerance of 1e-12 their error falls as the step squared down
# to 1e-8 relative here (at q steps of 1e-7 the arm pushing the cube is 1.6e-6 off, at 1e-8 1.4e-8)
EPS = (1e-8, 1e-6, 1e-5)


def _world(friction, dhat):
    return rd.World(dt=1e-2, solver="barrier", dhat=dhat, friction=friction, newton_tolerance=1e-12,
                    max_newton_iterations=2000)


def _arm_and_cube(friction=0.3, dhat=DHAT, density=200.0, stiffness=1e4):
    """The two-link arm of test_barrier_skeleton.py and its cube on the ground (a soft cube, kappa = 1e4 Pa, so that
    its stiffness moves the step by more than the solve's noise)."""
    world = _world(friction, dhat)
    world.add_ground()
    world.add_skeleton(_arm())
    world.add_affine_body(rd.Box((0.1, 0.1, 0.1)), density=density, stiffness=stiffness,
                          pose=rd.Transform((0.32, 0.12, 0.05 + 0.5 * DHAT)), name="cube")
    return world


def _arm_pressing_on_the_cube(world):
    """The state where the arm, driven by a PD torque, presses on the cube (with friction 0.3 on everything)."""
    _, q, v = _pushing_state(14, friction=0.3)
    return q, v, np.r_[0.7, -0.2, np.zeros(12)]


def _prismatic_pusher(friction=0.3, dhat=DHAT, density=200.0, stiffness=1e4):
    """A box on a damped prismatic joint along x, 5 cm above the ground, pushing a cube across it."""
    ram = rd.Skeleton("ram")
    head = rd.Box((0.1, 0.06, 0.06))
    body = ram.add_body("head", rd.PrismaticJoint("slide", axis=(1, 0, 0), damping=0.5),
                        joint_origin=rd.Transform((0.0, 0.0, 0.05)), inertia=rd.Inertia.from_shape(head, mass=0.8))
    body.add_shape(head)
    world = _world(friction, dhat)
    world.add_ground()
    world.add_skeleton(ram)
    world.add_affine_body(rd.Box((0.1, 0.1, 0.1)), density=density, stiffness=stiffness,
                          pose=rd.Transform((0.1 + 0.5 * DHAT, 0.01, 0.05 + 0.5 * DHAT)), name="cube")
    return world


def _driven(world, tau, steps):
    q, v = world.q, world.v
    for _ in range(steps):
        q, v = world.step(q, v, tau)
    return q, v, tau


def _pendulum_on_ground(friction=0.4, dhat=DHAT):
    """A skeleton-only world: the double pendulum (damped, sprung, effort limit 1.5 N m) hanging down with its lower
    sphere within dhat of the ground, swinging across it with friction; the elbow's torque of 3 N m is clipped."""
    world = _world(friction, dhat)
    world.add_skeleton(_pendulum(damping=0.3, stiffness=2.0, effort_limit=1.5))
    V, _ = world.surfaces(_HANGING)
    world.add_ground(height=V[:, 2].min() - 0.5 * DHAT)
    return world


_HANGING = np.array([np.pi / 2 - 0.05, 0.05])


def _pendulum_at_its_limit(friction=0.0, dhat=DHAT):
    """A pendulum 0.6 dhat from its upper joint limit, moving towards it: the joint-limit barrier acts."""
    world = _world(friction, dhat)
    world.add_skeleton(_limited_pendulum())
    world.joint_limits = True
    return world


def _arm_against_a_wall(friction=0.3, dhat=DHAT):
    """The arm turned into a static box beside its second link (within dhat of it), sliding along it."""
    world = _world(friction, dhat)
    world.add_ground()
    world.add_skeleton(_arm())
    world.add_static_mesh(rd.Box((0.1, 0.1, 0.1)), pose=rd.Transform((0.3, 0.07 + 0.5 * DHAT, 0.05)), name="wall")
    return world


# name: (builder taking the parameters, the start (q, v, tau) of a world it built)
SCENES = {
    "arm_pushes_cube": (_arm_and_cube, _arm_pressing_on_the_cube),
    "prismatic_pusher": (_prismatic_pusher, lambda w: _driven(w, np.r_[2.0, np.zeros(12)], 5)),
    "skeleton_only": (_pendulum_on_ground, lambda w: (_HANGING, np.array([0.3, -0.2]), np.array([0.2, 3.0]))),
    "joint_limit": (_pendulum_at_its_limit, lambda w: (np.array([0.5 - 0.6 * DHAT]), np.array([0.3]), np.array([0.1]))),
    "link_on_static_mesh": (_arm_against_a_wall, lambda w: _driven(w, np.r_[0.5, 0.1, np.zeros(12)], 5)),
}


@pytest.mark.parametrize("scene", SCENES)
def test_step_jacobians_match_central_differences(scene):
    make, start = SCENES[scene]
    world = make()
    q, v, tau = start(world)
    J = world.step_jacobians(q, v, tau)
    if scene != "joint_limit":
        assert world.last_step["active_pairs"] > 0
    fd = central_jacobians(world, q, v, tau, eps=EPS)
    for name in NAMES:
        err = relative_error(getattr(J, name), fd[name])
        assert err < 1e-6, f"{name}: relative error {err:.2e}"


def test_clipped_torque_has_no_derivative():
    world = _pendulum_on_ground()
    q, v, tau = SCENES["skeleton_only"][1](world)
    J = world.step_jacobians(q, v, tau)
    assert not J.dq_dtau[:, 1].any() and not J.dv_dtau[:, 1].any()  # the elbow's 3 N m, beyond its 1.5
    assert np.abs(J.dq_dtau[:, 0]).min() > 0.0


def test_static_mesh_columns_push_the_arm():
    """The wall's coordinates are inputs, not unknowns: its rows are q' = q, v' = 0, and its columns (how moving it
    pushes the link touching it) match central differences."""
    world = _arm_against_a_wall()
    q, v, tau = SCENES["link_on_static_mesh"][1](world)
    wall, arm = world.layout("wall").q, world.layout("arm").q
    J = world.step_jacobians(q, v, tau, wrt="all")
    np.testing.assert_array_equal(J.dq_dq[wall, wall], np.eye(12))
    assert not J.dq_dq[wall, arm].any() and not J.dv_dq[wall].any() and not J.dq_dp[wall].any()
    assert np.abs(J.dq_dq[arm, wall]).max() > 1e-2
    fd = central_jacobians(world, q, v, tau, eps=EPS)
    assert relative_error(J.dq_dq[arm, wall], fd["dq_dq"][arm, wall]) < 1e-6


@pytest.mark.parametrize("scene", ["arm_pushes_cube", "prismatic_pusher", "skeleton_only", "joint_limit"])
def test_parameter_jacobians_match_central_differences(scene):
    """Every parameter (the links' mass, centre of mass and inertia, the joints' damping, stiffness and armature,
    the cube's density and stiffness, gravity, friction, dhat) against central differences of the step, each moved
    by set_parameters."""
    make, start = SCENES[scene]
    world = make()
    q, v, tau = start(world)
    J = world.step_jacobians(q, v, tau, wrt="all")
    p = world.parameters()
    assert J.parameter_names == p.names
    names = [n for n in p.names if not (n == "friction" and p[n] == 0.0)]  # mu cannot go below 0
    # a parameter the scene does not feel (gravity along the pendulum's axis; a stiffness of 0 or a damping in a
    # scene at rest) has a zero column both ways
    felt = [n for n in names if np.abs(J.dq_dp[:, J.parameter_names.index(n)]).max() > 0.0]
    fd = central_parameter_jacobians(world, q, v, tau, J, felt)
    assert_parameter_jacobians(J, fd)
    unfelt = central_parameter_jacobians(world, q, v, tau, J, [n for n in names if n not in felt])
    assert all(np.abs(d).max() < 1e-9 for d, _ in unfelt.values())


def test_set_parameters_steps_as_a_world_built_with_them():
    """A link's mass and centre of mass and a joint's damping and armature set by set_parameters step exactly as a
    world whose skeleton was built with them; a bad value (a negative mass) raises ValueError naming it and
    changes nothing, not even the parameters set with it."""
    world = _arm_and_cube()
    q, v, tau = _arm_pressing_on_the_cube(world)
    names = world.parameters().names
    link, joint = names[0].split("/")[0], names[20].split("/")[0]
    changes = {f"{link}/mass": 1.3, f"{link}/com_x": 0.11, f"{joint}/damping": 0.2, f"{joint}/armature": 0.01}
    before = world.parameters()
    with pytest.raises(ValueError, match=f"{link}"):
        world.set_parameters({**changes, f"{link}/mass": -1.0, "cube/density": 300.0})
    np.testing.assert_array_equal(world.parameters().values, before.values)
    world.set_parameters(changes)
    built = _arm_and_cube()
    built.skeleton_world().set_parameters(changes)  # writes them into the (new) skeleton's bodies and joints
    other = _world(0.3, DHAT)
    other.add_ground()
    other.add_skeleton(built.skeletons[0])
    other.add_affine_body(rd.Box((0.1, 0.1, 0.1)), density=200.0, stiffness=1e4,
                          pose=rd.Transform((0.32, 0.12, 0.05 + 0.5 * DHAT)), name="cube")
    np.testing.assert_array_equal(other.parameters().values, world.parameters().values)
    for a, b in zip(world.step(q, v, tau), other.step(q, v, tau)):
        np.testing.assert_array_equal(a, b)
    assert world.step(q, v, tau)[0][0] != built.step(q, v, tau)[0][0]  # the parameters change the step
    # the world's own parameters beside the skeletons': gravity is the barrier world's, not its inner lcp world's
    world.set_parameters({"gravity_z": -5.0, "friction": 0.1})
    assert world.parameters()["gravity_z"] == -5.0 == world.gravity[2] and world.parameters()["friction"] == 0.1
    assert world.parameters().lower[world.parameters().index("gravity_z")] == -np.inf


@pytest.mark.parametrize("scene", ["arm_pushes_cube", "link_on_static_mesh"])
def test_step_vjp_is_the_transposed_jacobians(scene):
    make, start = SCENES[scene]
    world = make()
    q, v, tau = start(world)
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=world.nq), rng.normal(size=world.nv)
    J = world.step_jacobians(q, v, tau, wrt="all")
    g = world.step_vjp(q, v, tau, a, b, wrt="all")
    for got, want in ((g.q, J.dq_dq.T @ a + J.dv_dq.T @ b), (g.v, J.dq_dv.T @ a + J.dv_dv.T @ b),
                      (g.tau, J.dq_dtau.T @ a + J.dv_dtau.T @ b), (g.parameters, J.dq_dp.T @ a + J.dv_dp.T @ b)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
    np.testing.assert_array_equal(g.q_next, J.q_next)


def test_rollout_backward_is_the_chained_step_jacobians():
    """Ten steps of the arm sweeping into the cube under PD torques: the recorded rollout's reverse pass equals the
    step Jacobians chained backwards, and a directional central difference of the whole rollout in v0."""
    world = _arm_and_cube()
    T = 10
    taus = np.zeros((T, world.nv))
    taus[:, 0] = np.linspace(2.0, 0.5, T)
    taus[:, 1] = -0.3
    traj = world.rollout(world.q, world.v, taus, record=True)
    rng = np.random.default_rng(4)
    dL_dQ, dL_dV = np.zeros_like(traj.q), np.zeros_like(traj.v)
    dL_dQ[-1], dL_dV[-1], dL_dQ[T // 2] = rng.normal(size=(3, world.nq))
    g = traj.backward(dL_dQ, dL_dV, wrt="all")
    gq, gv, gp = dL_dQ[-1].copy(), dL_dV[-1].copy(), np.zeros(len(world.parameters().names))
    gtaus = np.zeros_like(taus)
    for t in range(T - 1, -1, -1):
        J = world.step_jacobians(traj.q[t], traj.v[t], taus[t], wrt="all")
        np.testing.assert_array_equal(J.q_next, traj.q[t + 1])
        gtaus[t] = J.dq_dtau.T @ gq + J.dv_dtau.T @ gv
        gp += J.dq_dp.T @ gq + J.dv_dp.T @ gv
        gq, gv = J.dq_dq.T @ gq + J.dv_dq.T @ gv + dL_dQ[t], J.dq_dv.T @ gq + J.dv_dv.T @ gv + dL_dV[t]
    for got, want in ((g.q, gq), (g.v, gv), (g.tau, gtaus), (g.parameters, gp)):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-8 * np.abs(want).max())
    assert np.abs(traj.q[-1, 2:5] - traj.q[0, 2:5]).max() > 1e-3  # the arm moved the cube

    def loss(v0):
        Q, V = world.rollout(world.q, v0, taus)
        return np.sum(dL_dQ * Q) + np.sum(dL_dV * V)

    d, h = rng.normal(size=world.nv), 1e-6
    fd = (loss(world.v + h * d) - loss(world.v - h * d)) / (2 * h)
    assert abs(g.v @ d - fd) < 1e-6 * max(abs(fd), np.abs(g.v).max())


def _panda_and_block(robots_dir):
    """example-robot-data's Panda (collision meshes, fingers welded shut, base welded to the world: a static
    participant) with its hand 4.5 cm above the ground pointing down, and a 8 cm block on the ground ahead of it."""
    text = (robots_dir / "panda_description/urdf/panda.urdf").read_text()
    text = re.sub(r'(<joint\s+name="panda_finger_joint\d"\s+type=")prismatic(")', r"\1fixed\2", text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the second finger's mimic tag, moot once welded
        panda = rd.load_urdf(text, package_dirs=[robots_dir], load_geometry=True)
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.3, newton_tolerance=1e-4,
                     max_newton_iterations=2000)
    world.add_ground()
    world.add_skeleton(panda)
    world.add_affine_body(rd.Box((0.08, 0.08, 0.08)), density=300.0, pose=rd.Transform((0.56, 0.0, 0.04 + 0.5 * DHAT)),
                          name="block")
    return world


def _hand_down_at(arm, q, target):
    """q of the Panda with its hand's tool frame at target, pointing down (damped least squares from q)."""
    down = np.diag([1.0, -1.0, -1.0])
    for _ in range(300):
        T = arm.body_pose(q, "panda_hand_tcp")
        R = down @ T[:3, :3].T
        err = np.concatenate([target - T[:3, 3], 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])])
        if np.linalg.norm(err) < 1e-12:
            return q
        J = arm.body_jacobian(q, "panda_hand_tcp")
        step = J.T @ np.linalg.solve(J @ J.T + 1e-10 * np.eye(6), err)
        q = q + step * min(1.0, 0.2 / np.abs(step).max())
    raise AssertionError("no hand pose")


def _panda_pressing_on_the_block(robots_dir):
    """The Panda, gravity-compensated and driven by a joint-space velocity loop towards +x, pushes the block across
    the ground with friction 0.3: (world, q, v, tau, J) at the first step where its hand presses on the block at
    the end (J its step Jacobians), the Newton tolerance tightened to 1e-12."""
    world = _panda_and_block(robots_dir)
    arm, block = world.skeleton_world(), world.layout("block").q
    q = np.r_[_hand_down_at(arm, np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]), np.array([0.45, 0.0, 0.045])),
              world.q[7:]]
    v = np.zeros(world.nv)
    push = np.array([0.4, 0.0, 0.0, 0.0, 0.0, 0.0])  # the hand's velocity the loop asks for
    v[:7] = np.linalg.lstsq(arm.body_jacobian(q[:7], "panda_hand_tcp"), push, rcond=None)[0]
    for k in range(40):
        tau = np.zeros(world.nv)
        wanted = np.linalg.lstsq(arm.body_jacobian(q[:7], "panda_hand_tcp"), push, rcond=None)[0]
        tau[:7] = arm.gravity_forces(q[:7]) + 5.0 * (wanted - v[:7])
        if k >= 12:  # the hand reached the block: differentiate the first step where it touches it at the end
            world.newton_tolerance = 1e-12
            J = world.step_jacobians(q, v, tau)
            if np.abs(J.dq_dq[block, :7]).max() > 1e-2:  # the hand moves the block
                break
            world.newton_tolerance = 1e-4
        q, v = world.step(q, v, tau)
    assert world.body_pose(q, "block")[0, 3] > 0.561  # pushed along x (from 0.56)
    assert world.newton_tolerance == 1e-12
    return world, q, v, tau, J


def test_panda_pushing_a_block(robots_dir):
    """At a step where the Panda's hand presses on the block the Jacobians match central differences (19
    coordinates, 2396 link faces)."""
    world, q, v, tau, J = _panda_pressing_on_the_block(robots_dir)
    fd = central_jacobians(world, q, v, tau, eps=EPS)
    for name in NAMES:
        err = relative_error(getattr(J, name), fd[name])
        assert err < 1e-6, f"{name}: relative error {err:.2e}"


def test_panda_pushing_a_block_parameter_jacobians(robots_dir):
    """The parameters of the Panda's hand (welded to link 7: they reach the core through its placement there), of
    its elbow's joint, the block's density (its stiffness of 1e8 Pa moves the step by less than the solve's noise)
    and gravity's vertical, at the step where the hand presses on the block, against central differences of the
    step."""
    world, q, v, tau, _ = _panda_pressing_on_the_block(robots_dir)
    P = world.step_jacobians(q, v, tau, wrt=["panda_hand", "panda_joint4", "block/density", "gravity_z"])
    assert len(P.parameter_names) == 10 + 3 + 1 + 1
    # steps that move the state by 1e-7: the Panda's larger scene makes the solve's noise 5e-7 relative at 1e-8
    assert_parameter_jacobians(P, central_parameter_jacobians(world, q, v, tau, P, P.parameter_names, zero_move=1e-7))
