"""rd.mpc.MPC: a receding-horizon controller that balances the cartpole under pushes."""

import numpy as np
import pytest
from trajopt_scenes import cartpole_world

import rigidiff as rd


def balance_setup(prob):
    prob.add_state_cost(q_target=[0.0, 0.0], v_target=[0.0, 0.0], q_weight=[1.0, 10.0], v_weight=0.1)
    prob.add_control_cost(1e-3)
    prob.set_control_bounds(-20, 20)
    prob.set_actuated(["slider"])


def run_loop(mpc, steps, push_every=50, push=15.0, seed=0):
    plant = cartpole_world(dt=0.02)
    pole = plant.body_index("pole")
    rng = np.random.default_rng(seed)
    q, v = np.array([0.0, 0.2]), np.zeros(2)
    angles, forces = [], []
    for i in range(steps):
        tau = mpc(q, v)
        forces.append(tau)
        f_ext = np.zeros((plant.nbodies, 6))
        if push_every and i % push_every == push_every // 2:
            f_ext[pole, 0] = rng.choice([-push, push])
        q, v = plant.step(q, v, tau, f_ext=f_ext)
        angles.append(q[1])
    return np.array(angles), np.array(forces), q, v


@pytest.mark.parametrize("replan_every", [1, 3])
def test_mpc_keeps_the_cartpole_upright_under_random_pushes(replan_every):
    mpc = rd.mpc.MPC(cartpole_world(dt=0.02), horizon=30, setup=balance_setup, iterations=2,
                     replan_every=replan_every)
    angles, forces, q, v = run_loop(mpc, 200)
    assert np.abs(angles[20:]).max() < 0.15            # upright after the first correction and under pushes
    assert abs(q[0]) < 0.5 and np.abs(v).max() < 0.5      # the cart stays near its start
    assert np.all(np.abs(forces[:, 0]) <= 20 + 1e-9) and not np.any(forces[:, 1])
    assert len(mpc.replan_times) == int(np.ceil(200 / replan_every))
    if replan_every > 1:
        assert mpc.last_result.feedback is not None   # the plan is played with iLQR's gains between replans


def test_without_control_the_pole_falls():
    # the same pushes and start without a controller: the test above would fail without MPC
    class Zero:
        def __call__(self, q, v):
            return np.zeros(2)

    angles, *_ = run_loop(Zero(), 100)
    assert np.abs(angles).max() > 1.0


def test_warm_start_carries_the_plan_and_reset_forgets_it():
    mpc = rd.mpc.MPC(cartpole_world(dt=0.02), horizon=20, setup=balance_setup, iterations=1)
    q, v = np.array([0.0, 0.1]), np.zeros(2)
    mpc(q, v)
    first = mpc.last_result
    assert first.iterations > 1                        # the first solve runs first_iterations
    mpc(q, v)
    assert mpc.last_result.iterations == 1
    mpc.reset()
    assert mpc.plan is None and mpc.replan_times == [] and mpc.time == 0.0


def test_multiple_shooting_mpc_and_bad_arguments():
    mpc = rd.mpc.MPC(cartpole_world(dt=0.02), horizon=15, setup=balance_setup, method="multiple_shooting",
                     iterations=3, shot_length=5)
    tau = mpc([0.0, 0.1], [0.0, 0.0])
    assert tau.shape == (2,) and tau[0] != 0.0
    world = cartpole_world(dt=0.02)
    with pytest.raises(TypeError, match="setup"):
        rd.mpc.MPC(world, 10, setup=None)
    with pytest.raises(ValueError, match="horizon"):
        rd.mpc.MPC(world, 0, setup=balance_setup)
    with pytest.raises(ValueError, match="replan_every"):
        rd.mpc.MPC(world, 5, setup=balance_setup, replan_every=6)
    with pytest.raises(ValueError, match="q"):
        rd.mpc.MPC(world, 5, setup=balance_setup)([0.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="method"):
        rd.mpc.MPC(world, 5, setup=balance_setup, method="newton")
    with pytest.raises(TypeError, match="shot_length"):
        rd.mpc.MPC(world, 5, setup=balance_setup, method="ilqr", shot_length=2)
