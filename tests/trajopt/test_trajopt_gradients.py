"""The objectives the solvers see: shooting gradients and multiple-shooting cost gradients and defect
Jacobians against central differences, with initial states and parameters among the unknowns."""

import numpy as np
from rdsupport import tree_world
from trajopt_scenes import free_body_world

import rigidiff as rd
from rigidiff.trajopt.multiple_shooting import setup_multiple_shooting
from rigidiff.trajopt.shooting import ShootingVariables, _Objective


def central(f, z, h=1e-6):
    cols = []
    for i in range(len(z)):
        e = np.zeros_like(z)
        e[i] = h
        cols.append((np.asarray(f(z + e)) - np.asarray(f(z - e))) / (2 * h))
    return np.stack(cols, axis=-1)


def problem_with_every_unknown(world, T, seed):
    rng = np.random.default_rng(seed)
    q0 = world.random_configuration(rng)
    prob = rd.trajopt.Problem(world, T, q0, rng.normal(size=world.nv) * 0.3)
    prob.add_state_cost(q_target=world.random_configuration(rng), v_target=np.zeros(world.nv), q_weight=1.0,
                        v_weight=0.1)
    prob.add_body_target(world.body_names[-1], position=(0.2, 0.1, -0.3), weight=5.0, time="all")
    prob.add_control_cost(0.01)
    prob.set_initial_guess(rng.normal(size=(T, world.nv)))
    prob.optimize_initial_state()
    return prob, rng


def test_shooting_gradient_with_initial_state_and_parameters():
    world = tree_world(seed=2, dt=0.01)
    prob, rng = problem_with_every_unknown(world, 6, 0)
    names = world.parameters().names
    prob.optimize_parameters([n for n in names if n.endswith("/mass") or "damping" in n][:4] + ["gravity_z"])
    variables = ShootingVariables(prob)
    objective = _Objective(prob, variables)
    z = variables.start() + rng.normal(size=variables.size) * 0.05
    value, grad = objective(z)
    fd = central(lambda x: objective(x)[0], z)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())
    assert np.abs(grad[-len(prob.param_names):]).max() > 1e-3


def test_shooting_gradient_with_actuated_subset_on_a_free_body():
    world = free_body_world()
    prob, rng = problem_with_every_unknown(world, 5, 1)
    prob.set_actuated(["hinge"])
    variables = ShootingVariables(prob)
    objective = _Objective(prob, variables)
    assert variables.size == 5 * 1 + 2 * world.nv
    z = variables.start() + rng.normal(size=variables.size) * 0.05
    value, grad = objective(z)
    fd = central(lambda x: objective(x)[0], z)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-7 * np.abs(fd).max())


def test_multiple_shooting_cost_gradient_and_defect_jacobian():
    world = free_body_world()
    prob, rng = problem_with_every_unknown(world, 7, 2)
    prob.optimize_parameters(["base/mass", "arm/com_z", "gravity_z"])
    ev, z0, lo, hi = setup_multiple_shooting(prob, shot_length=3)
    assert ev.lay.K == 3
    z = z0 + rng.normal(size=z0.size) * 0.05
    value, grad = ev.cost(z)
    fd = central(lambda x: ev.cost(x)[0], z)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-7 * np.abs(fd).max())
    J = ev.defect_jacobian(z).toarray()
    fdJ = central(ev.defects, z)
    np.testing.assert_allclose(J, fdJ, atol=1e-7 * np.abs(fdJ).max())
    # the defects do not vanish away from a solution, and the Jacobian is sparse: each shot touches its own knots
    assert np.abs(ev.defects(z)).max() > 1e-3
    assert ev.defect_jacobian(z).nnz < 0.6 * J.size


def test_multiple_shooting_defects_vanish_on_a_rollout():
    world = free_body_world()
    prob, rng = problem_with_every_unknown(world, 6, 3)
    ev, z0, lo, hi = setup_multiple_shooting(prob, shot_length=2)
    np.testing.assert_allclose(ev.defects(z0), 0.0, atol=1e-12)
    Q, V = world.rollout(prob.q0, prob.v0, prob.torques(prob.initial_controls()))
    ev.evaluate(z0)
    np.testing.assert_allclose(ev.Q, Q, atol=1e-12)
    np.testing.assert_allclose(ev.V, V, atol=1e-12)
