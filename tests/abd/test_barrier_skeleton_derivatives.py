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
from step_differences import NAMES, central_jacobians, relative_error
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


def _with(make, field, value):
    return make(**{field: value})


# relative central-difference steps of the parameters
PARAMETER_STEPS = {"density": 1e-4, "stiffness": 1e-4, "friction": 3e-5, "dhat": 1e-5}


@pytest.mark.parametrize("scene", ["arm_pushes_cube", "prismatic_pusher", "skeleton_only", "joint_limit"])
def test_parameter_jacobians_match_central_differences(scene):
    make, start = SCENES[scene]
    world = make()
    q, v, tau = start(world)
    J = world.step_jacobians(q, v, tau, wrt="all")
    p = world.parameters()
    assert J.parameter_names == p.names
    for name in p.names:
        field = name.rsplit("/", 1)[-1]
        if field == "friction" and p[name] == 0.0:
            continue  # mu cannot go below 0
        h = PARAMETER_STEPS[field] * p[name]
        qp, vp = _with(make, field, p[name] + h).step(q, v, tau)
        qm, vm = _with(make, field, p[name] - h).step(q, v, tau)
        col = J.parameter_names.index(name)
        for analytic, fd in ((J.dq_dp[:, col], (qp - qm) / (2 * h)), (J.dv_dp[:, col], (vp - vm) / (2 * h))):
            err = relative_error(analytic, fd)
            assert err < 1e-6, f"{scene} {name}: relative error {err:.2e}"


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


def test_panda_pushing_a_block(robots_dir):
    """The Panda, gravity-compensated and driven by a joint-space velocity loop towards +x, pushes the block across
    the ground with friction 0.3; at a step where its hand presses on the block the Jacobians match central
    differences (19 coordinates, 2396 link faces)."""
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
    fd = central_jacobians(world, q, v, tau, eps=EPS)
    for name in NAMES:
        err = relative_error(getattr(J, name), fd[name])
        assert err < 1e-6, f"{name}: relative error {err:.2e}"
