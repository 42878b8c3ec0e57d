"""A pile whose clamping system has many solutions keeps, at each step, the solution nearest the previous
step's impulses (docs/contact.md), so a warm start is its rows' classes *and* impulses: a restored
WarmStart and the reverse pass of a recorded rollout must bring both back to re-solve a step exactly as
it was solved. The scene: a paddle on a hinge sweeps into a grid of 25 particles, which pile up against
it with friction (from about step 100 on, a redundant system with friction at its bounds)."""

import pickle

import numpy as np
import pytest

import rigidiff as rd

R, SPACING, PADDLE, STEPS = 0.02, 0.05, 0.25, 200


def push_world(n=25):
    """n particles on a grid in the sweep of a paddle driven by 2 N m, inside four walls."""
    side = int(np.ceil(np.sqrt(n)))
    half = 0.5 * side * SPACING + 0.1
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.6)
    walls = rd.Skeleton("walls")
    body = walls.add_body("walls", joint=rd.FixedJoint("walls_weld"))
    for x, y, sx, sy in ((2 * half + 0.02, 0.0, 0.02, 2 * half), (-2 * half - 0.02, 0.0, 0.02, 2 * half),
                         (0.0, 2 * half + 0.02, 2 * half, 0.02), (0.0, -2 * half - 0.02, 2 * half, 0.02)):
        body.add_shape(rd.Box((2 * sx, 2 * sy, 0.1)), origin=rd.Transform(translation=(x, y, 0.05)), friction=0.3)
    world.add_skeleton(walls)
    paddle = rd.Skeleton("paddle")
    link = paddle.add_body("paddle", joint=rd.RevoluteJoint("hinge", axis=(0.0, 0.0, 1.0)),
                           inertia=rd.Inertia(2.0, com=(0.5 * PADDLE, 0.0, 0.0),
                                              rotational_inertia=np.diag([1e-3, 0.05, 0.05])))
    link.add_shape(rd.Box((PADDLE, 0.02, 0.03)), origin=rd.Transform(translation=(0.5 * PADDLE, 0.0, 0.016)),
                   friction=0.3)
    world.add_skeleton(paddle)
    ij = np.array([(i, j) for i in range(side) for j in range(side)][:n], dtype=float)
    pos = np.column_stack([0.02 + R + ij[:, 0] * SPACING - 0.5 * PADDLE, 0.03 + R + ij[:, 1] * SPACING,
                           np.full(n, R)])
    world.add_particles(pos, masses=0.01, radius=R, friction=0.5, name="pile")
    tau = np.zeros(world.nv)
    tau[world.layout("paddle").v] = 2.0
    return world, world.neutral_configuration(), np.zeros(world.nv), np.tile(tau, (STEPS, 1))


@pytest.fixture(scope="module")
def pushed():
    world, q0, v0, taus = push_world()
    return world, world.rollout(q0, v0, taus, record=True), taus


def test_restored_warm_start_reproduces_every_step(pushed):
    """Stepping along the rollout and restoring each step's WarmStart before the next one gives the
    rollout's states bit for bit, and a WarmStart pickles with its impulses."""
    world, traj, taus = pushed
    world.clear_warm_start()
    q, v = traj.q[0], traj.v[0]
    saved = []
    for t in range(STEPS):
        q, v = world.step(q, v, taus[t])
        saved.append(world.warm_start())
    np.testing.assert_array_equal(q, traj.q[-1])
    redundant = 0
    for t in range(1, STEPS):
        world.clear_warm_start()
        world.set_warm_start(pickle.loads(pickle.dumps(saved[t - 1])))
        qn, vn = world.step(traj.q[t], traj.v[t], taus[t])
        np.testing.assert_array_equal(vn, traj.v[t + 1], err_msg=f"step {t}")
        # the classes alone pick another of the many solutions on the pile's steps
        stripped = rd.WarmStart(saved[t - 1]._keys, saved[t - 1]._classes, saved[t - 1]._state,
                                saved[t - 1]._model)
        world.set_warm_start(stripped)
        redundant += not np.array_equal(world.step(traj.q[t], traj.v[t], taus[t])[1], traj.v[t + 1])
    assert redundant >= 10


def test_recorded_rollout_backward_replays_its_impulses(pushed):
    """The reverse pass re-solves each step with the recorded impulses (it raised on this rollout when it
    restored the classes alone) and matches central differences of the rollout."""
    world, traj, taus = pushed
    rng = np.random.default_rng(3)
    GV = np.zeros((STEPS + 1, world.nv))
    GV[-1] = rng.normal(size=world.nv)
    grads = traj.backward(np.zeros((STEPS + 1, world.nv)), GV)
    assert np.all(np.isfinite(grads.tau)) and np.abs(grads.tau).max() > 0.0
    # the last torque on the paddle, through the last step only: the step's own v-Jacobian column
    last = world.step_jacobians(traj.q[-2], traj.v[-2], taus[-1])
    np.testing.assert_allclose(grads.tau[-1], last.dv_dtau.T @ GV[-1], rtol=1e-6, atol=1e-9)

