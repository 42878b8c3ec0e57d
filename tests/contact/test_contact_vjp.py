"""The reverse mode through contact without the step's Jacobians (world/contact_step_vjp.hpp): step_vjp
without parameters equals J^T g of step_jacobians on the contact scenes, a pushed pile of particles,
free boxes on the ground and bounces, and a recorded rollout's backward equals the chained Jacobians."""

import copy

import numpy as np
import pytest
from contact_scenes import (
    GEOMETRY_PAIRS,
    PAIR_VARIANTS,
    arm_against_wall,
    block_on_ground,
    bouncing_block,
    box_on_offset_box,
    cartpole_on_ground,
    cylinder_on_ground,
    double_pendulum_limit_and_friction,
    geometry_pair,
    multigroup,
    pendulum_at_limit,
    pendulum_joint_friction,
    plank_over_edge,
    quadrupeds_on_ground,
    sliding_reverse_pendulum,
    sphere_stack,
    two_blocks,
)
from test_particle_contacts import pile_world, pushed_pile

import rigidiff as rd

REL = 1e-10

SCENES = {
    "block_static": lambda: block_on_ground("static"),
    "block_slipping": lambda: block_on_ground("slipping"),
    "block_planar_slipping": lambda: block_on_ground("slipping", joint="planar"),
    "block_damped_spring": lambda: block_on_ground("static", damping=1.0, stiffness=5.0),
    "sphere_stack": sphere_stack,
    "two_blocks": two_blocks,
    "bouncing_block": bouncing_block,
    "sliding_reverse_pendulum": sliding_reverse_pendulum,
    "multigroup": lambda: multigroup(4),
    "arm_against_wall": arm_against_wall,
    "cartpole_sliding": lambda: cartpole_on_ground(cart_speed=0.3),
    "pendulum_at_limit": pendulum_at_limit,
    "pendulum_joint_friction": pendulum_joint_friction,
    "double_pendulum_limit_and_friction": double_pendulum_limit_and_friction,
    "plank_over_edge": plank_over_edge,
    "box_on_offset_box": box_on_offset_box,
    "cylinder_tilted_slipping": lambda: cylinder_on_ground("tilted", "slipping"),
}


def model_parameters(world):
    """Every parameter name but the contact coefficients (friction, restitution: the dense path)."""
    return [n for n in world.parameters().names if not n.endswith(("/friction", "/restitution"))]


def assert_vjp_is_transposed_jacobian(world, q, v, tau, seed=0, wrt=None):
    """step_vjp (the factored path: no contact coefficients in wrt) against J^T g of step_jacobians, to
    REL of the largest entry of each gradient."""
    rng = np.random.default_rng(seed)
    gq, gv = rng.normal(size=world.nv), rng.normal(size=world.nv)
    jac = world.step_jacobians(q, v, tau, wrt=wrt)
    g = world.step_vjp(q, v, tau, gq, gv, wrt=wrt)
    pairs = [(g.q, jac.dq_dq.T @ gq + jac.dv_dq.T @ gv), (g.v, jac.dq_dv.T @ gq + jac.dv_dv.T @ gv),
             (g.tau, jac.dq_dtau.T @ gq + jac.dv_dtau.T @ gv)]
    if wrt is not None:
        pairs.append((g.parameters, jac.dq_dp.T @ gq + jac.dv_dp.T @ gv))
    for got, want in pairs:
        np.testing.assert_allclose(got, want, rtol=0, atol=REL * max(1.0, np.abs(want).max()))
    np.testing.assert_array_equal(g.q_next, jac.q_next)
    return jac


@pytest.mark.parametrize("scene", list(SCENES))
def test_step_vjp_equals_the_transposed_step_jacobians_on_the_contact_scenes(scene):
    world, q, v, tau = SCENES[scene]()
    jac = assert_vjp_is_transposed_jacobian(world, q, v, tau)
    assert jac.contacts is not None and len(jac.contacts.row_classes) > 0


@pytest.mark.parametrize("scene", ["block_damped_spring", "sphere_stack", "bouncing_block", "arm_against_wall",
                                   "pendulum_joint_friction", "box_on_offset_box"])
def test_step_vjp_with_respect_to_the_model_parameters(scene):
    """Masses, inertias, damping, stiffness, armature and gravity through the factored reverse mode."""
    world, q, v, tau = SCENES[scene]()
    names = model_parameters(world)
    assert any(n.endswith("/mass") for n in names) and "gravity_z" in names
    assert_vjp_is_transposed_jacobian(world, q, v, tau, seed=10, wrt=names)


@pytest.mark.parametrize("scene", ["block_slipping", "block_planar_slipping", "bouncing_block", "two_blocks",
                                   "cartpole_sliding", "box_on_offset_box"])
def test_step_vjp_with_respect_to_every_parameter_and_contact_coefficient(scene):
    """The shapes' friction (rows at a friction bound) and restitution (bouncing rows) with the rest."""
    world, q, v, tau = SCENES[scene]()
    names = list(world.parameters().names)
    assert any(n.endswith("/friction") for n in names) and any(n.endswith("/restitution") for n in names)
    assert_vjp_is_transposed_jacobian(world, q, v, tau, seed=12, wrt=names)


def test_rollout_backward_with_respect_to_the_model_parameters(pushed):
    world, q0, v0, tau = pushed
    names = model_parameters(world)
    T = 15
    traj = world.rollout(q0, v0, np.tile(tau, (T, 1)), record=True)
    rng = np.random.default_rng(11)
    GQ, GV = rng.normal(size=(T + 1, world.nv)), rng.normal(size=(T + 1, world.nv))
    grads = traj.backward(GQ, GV, wrt=names)
    cq, cv, gp = GQ[T].copy(), GV[T].copy(), 0.0
    for t in reversed(range(T)):
        jac = world.step_jacobians(traj.q[t], traj.v[t], traj.tau[t], wrt=names)
        gp = gp + jac.dq_dp.T @ cq + jac.dv_dp.T @ cv
        cq, cv = GQ[t] + jac.dq_dq.T @ cq + jac.dv_dq.T @ cv, GV[t] + jac.dq_dv.T @ cq + jac.dv_dv.T @ cv
    np.testing.assert_allclose(grads.parameters, gp, rtol=0, atol=1e-9 * np.abs(gp).max())
    np.testing.assert_allclose(grads.v, cv, rtol=0, atol=1e-9 * np.abs(cv).max())


@pytest.mark.parametrize("scene", ["block_static", "pendulum_at_limit"])
def test_step_vjp_with_the_penetration_correction(scene):
    """erp on, no allowance: the contacts' and the limit's targets are corrections (their own G_q terms)."""
    world, q, v, tau = SCENES[scene]()
    world.contact_options(erp=0.5, penetration_allowance=0.0, speculative=False)
    assert_vjp_is_transposed_jacobian(world, q, v, tau, seed=9)


@pytest.mark.parametrize("variant", PAIR_VARIANTS)
@pytest.mark.parametrize("kind", list(GEOMETRY_PAIRS))
def test_step_vjp_equals_the_transposed_step_jacobians_for_every_feature_pair(kind, variant):
    """Free bodies pressed together through each feature pair, in separate skeletons and in
    self-collision (free joints: frame turn and re-expression in the reverse mode)."""
    world, q, v, tau = geometry_pair(kind, variant)
    assert_vjp_is_transposed_jacobian(world, q, v, tau, seed=7)


@pytest.mark.parametrize("slide", [0.0, 0.3])
def test_step_vjp_with_two_quadrupeds_standing_and_sliding(robots_dir, slide):
    world, q, v, tau = quadrupeds_on_ground(robots_dir, ("solo12", "anymal"), slide)
    assert_vjp_is_transposed_jacobian(world, q, v, tau, seed=8)


def test_a_bounce_takes_the_factored_path_with_its_impact_time_terms():
    """Two elastic particles meeting head-on: the bounce correction changes the q' rows, and the
    factored reverse mode carries it (dq2'/dq1 is not the plain step's)."""
    world = rd.World(dt=1e-3)
    world.add_particles([[0.0, 0.0, 0.0], [0.2, 0.0, 0.0]], masses=[1.0, 2.0], radius=0.1, friction=0.0,
                        restitution=1.0)
    world.gravity = (0.0, 0.0, 0.0)
    q = np.array([0.0, 0.0, 0.0, 0.2 - 2e-4, 0.0, 0.0])
    v = np.array([1.0, 0.1, 0.0, -0.5, 0.0, 0.0])
    jac = assert_vjp_is_transposed_jacobian(world, q, v, np.zeros(6), wrt=model_parameters(world))
    assert "clamping" in jac.contacts.row_classes


@pytest.fixture(scope="module")
def pushed():
    world = pile_world(particles_first=False)
    return (world, *pushed_pile(world))


def test_step_vjp_through_a_pile_of_particles_pushed_by_a_paddle(pushed):
    world, q, v, tau = pushed
    jac = assert_vjp_is_transposed_jacobian(world, q, v, tau, seed=1)
    assert "paddle" in jac.contacts.body_a + jac.contacts.body_b


def boxes_on_ground(n=3):
    """n free boxes resting on the ground, sliding and turning at different speeds."""
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.7)
    for i in range(n):
        sk = rd.Skeleton(f"box{i}")
        body = sk.add_body(f"box{i}", joint=rd.FreeJoint(f"free{i}"),
                           inertia=rd.Inertia(1.0 + i, rotational_inertia=np.diag([0.01, 0.012, 0.015])))
        body.add_shape(rd.Box((0.2, 0.16, 0.1)))
        world.add_skeleton(sk)
    q0 = world.neutral_configuration()
    for i in range(n):
        q0[world.layout(f"box{i}").q][:3] = [0.5 * i, 0.1 * i, 0.05]
    Q, V = world.rollout(q0, np.zeros(world.nv), np.zeros((100, world.nv)))
    q, v = Q[-1], V[-1].copy()
    for i in range(n):
        v[world.layout(f"box{i}").v] = [0.3 * (i + 1), -0.2, 0.0, 0.0, 0.0, 1.5 - i]
    return world, q, v


def test_step_vjp_with_free_boxes_sliding_and_turning_on_the_ground():
    world, q, v = boxes_on_ground()
    tau = np.zeros(world.nv)
    tau[world.layout("box0").v] = [0.5, 0.2, 0.0, 0.0, 0.0, 0.05]
    jac = assert_vjp_is_transposed_jacobian(world, q, v, tau, seed=2, wrt=model_parameters(world))
    assert "clamping" in jac.contacts.row_classes


def chained_backward(world, traj, GQ, GV):
    """The rollout's gradients from its step Jacobians, chained by hand."""
    T = len(traj)
    cq, cv = GQ[T].copy(), GV[T].copy()
    gtaus = np.zeros((T, world.nv))
    for t in reversed(range(T)):
        jac = world.step_jacobians(traj.q[t], traj.v[t], traj.tau[t])
        gtaus[t] = jac.dq_dtau.T @ cq + jac.dv_dtau.T @ cv
        cq, cv = GQ[t] + jac.dq_dq.T @ cq + jac.dv_dq.T @ cv, GV[t] + jac.dq_dv.T @ cq + jac.dv_dv.T @ cv
    return cq, cv, gtaus


@pytest.mark.parametrize("scene", ["pile", "boxes"])
def test_rollout_backward_equals_the_chained_step_jacobians(scene, pushed):
    if scene == "pile":
        world, q0, v0, tau = pushed
    else:
        world, q0, v0 = boxes_on_ground(2)
        tau = np.zeros(world.nv)
    T = 20
    taus = np.tile(tau, (T, 1))
    traj = world.rollout(q0, v0, taus, record=True)
    assert len(traj.constrained_steps) == T
    rng = np.random.default_rng(4)
    GQ, GV = rng.normal(size=(T + 1, world.nv)), rng.normal(size=(T + 1, world.nv))
    grads = traj.backward(GQ, GV)
    cq, cv, gtaus = chained_backward(world, traj, GQ, GV)
    for got, want in ((grads.q, cq), (grads.v, cv), (grads.tau, gtaus)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * max(1.0, np.abs(want).max()))


def swept_grid_world(side=10, r=0.02):
    """A grid of side^2 particles with gaps between them, beside a paddle that sweeps into it."""
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.6)
    sk = rd.Skeleton("paddle")
    body = sk.add_body("paddle", joint=rd.RevoluteJoint("hinge", axis=(0.0, 0.0, 1.0)),
                       inertia=rd.Inertia(2.0, com=(0.125, 0.0, 0.0), rotational_inertia=np.diag([1e-3, 0.05, 0.05])))
    body.add_shape(rd.Box((0.25, 0.02, 0.03)), origin=rd.Transform(translation=(0.125, 0.0, 0.016)), friction=0.3)
    world.add_skeleton(sk)
    ij = np.array([(i, j) for i in range(side) for j in range(side)], dtype=float)
    pos = np.column_stack([0.02 + r + 2.5 * r * ij[:, 0] - 0.125, 0.03 + r + 2.5 * r * ij[:, 1], np.full(len(ij), r)])
    world.add_particles(pos, masses=0.01, radius=r, friction=0.5, name="grid")
    tau = np.zeros(world.nv)
    tau[world.layout("paddle").v] = 2.0
    return world, tau


def test_step_vjp_when_the_pushed_group_needs_a_decomposition_of_its_own():
    """After 0.2 s the paddle pushes a group of about 40 particles whose LCP solve leaves no
    standardised clamping system: the reverse mode decomposes that island's block alone."""
    world, tau = swept_grid_world()
    Q, V = world.rollout(world.neutral_configuration(), np.zeros(world.nv), np.tile(tau, (200, 1)))
    jac = assert_vjp_is_transposed_jacobian(world, Q[-1], V[-1], tau, seed=5)
    pushed = {b for a, b in zip(jac.contacts.body_a, jac.contacts.body_b) if a == "paddle"}
    assert len(pushed) >= 3


def test_the_recorded_contact_modes_give_the_gradients_of_the_rerun_rollout(pushed):
    """rollout(record=True) keeps each step's row keys, classes and impulses, so the reverse pass does not rerun
    the rollout to find them: the gradients equal those of the rerun, and a changed world still raises."""
    world, q0, v0, tau = pushed
    T = 30
    traj = world.rollout(q0, v0, np.tile(tau, (T, 1)), record=True)
    rows, (keys, classes, impulses) = traj._modes
    assert len(rows) == T and len(keys) == len(classes) == len(impulses) == rows.sum() > 0
    rng = np.random.default_rng(6)
    GQ, GV = rng.normal(size=(T + 1, world.nv)), rng.normal(size=(T + 1, world.nv))
    rerun = copy.copy(traj)
    rerun._modes = None
    a, b = traj.backward(GQ, GV), rerun.backward(GQ, GV)
    np.testing.assert_array_equal(a.tau, b.tau)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.v, b.v)
    # a record without impulses (classes alone) still replays this pile, whose solutions are unique
    classes_only = copy.copy(traj)
    classes_only._modes = (rows, (keys, classes))
    np.testing.assert_array_equal(classes_only.backward(GQ, GV).tau, a.tau)
    moved = copy.copy(traj)
    moved.v = traj.v.copy()
    moved.v[T // 2] += 0.1
    with pytest.raises(RuntimeError, match="does not follow from step"):
        moved.backward(GQ, GV)


def test_recorded_modes_that_do_not_fit_the_rollout_are_refused(pushed):
    world, q0, v0, tau = pushed
    traj = world.rollout(q0, v0, np.tile(tau, (5, 1)), record=True)
    rows, (keys, classes, impulses) = traj._modes
    traj._modes = (rows, (keys[:-1], classes[:-1], impulses[:-1]))
    with pytest.raises(ValueError, match="recorded contact modes"):
        traj.backward(np.zeros((6, world.nv)))
    traj._modes = (rows, (keys, classes, impulses[:-1]))  # one impulse short
    with pytest.raises(ValueError, match="recorded contact modes"):
        traj.backward(np.zeros((6, world.nv)))
    traj._modes = (rows, (keys, classes, np.where(np.arange(len(impulses)) == 0, np.nan, impulses)))
    with pytest.raises(ValueError, match="impulses must be finite"):
        traj.backward(np.zeros((6, world.nv)))
