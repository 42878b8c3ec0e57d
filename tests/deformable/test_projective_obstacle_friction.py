"""Friction between soft bodies and the balls and boxes of a projective world: a moving box drags a block
along (relative velocity), and the gradients of a step with friction against central differences of our
own step, through the state, the forces, the poses and mu."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from test_projective_obstacles import _attribute_difference, _pose_differences

import rigidiff as rd

DEPTH = 5e-4  # how far the lid presses into the block's top


def _world(friction, gravity=(0.0, 0.0, 0.0), friction_velocity=1e-3, tolerance=1e-12):
    world = rd.World(dt=1e-2, solver="projective", tolerance=tolerance, max_iterations=5000, friction=friction,
                     gravity=gravity, contact_stiffness=2e4, friction_velocity=friction_velocity)
    world.add_deformable(rd.HexMesh.box((0.1, 0.1, 0.05), (2, 2, 2)),
                         rd.ProjectiveMaterial(3e4, 0.3, 1000.0, kind=("corotated", "volume")), name="block")
    return world


def _lid_pose(x=0.05):
    """A wide box whose bottom face sits DEPTH inside the block's top (z = 0.05)."""
    return rd.Transform((x, 0.05, 0.05 + 0.02 - DEPTH))


def _drag(friction, speed, steps=15):
    """The block's x momentum after a lid pressing on it slides at `speed` for a number of steps."""
    world = _world(friction, tolerance=1e-7)
    lid = world.add_box((0.2, 0.2, 0.04), _lid_pose())
    q, v = world.q, world.v
    m = world.masses("block")
    for t in range(steps):
        world.set_obstacle_pose(lid, _lid_pose(0.05 + speed * world.dt * (t + 1)), velocity=(speed, 0, 0, 0, 0, 0))
        q, v = world.step(q, v)
    return m @ v.reshape(-1, 3)[:, 0], world


def test_a_sliding_lid_drags_the_block_by_friction():
    dragged, world = _drag(0.5, 0.05)
    assert dragged > 1e-4
    assert world.obstacle_velocity("box0")[0] == pytest.approx(0.05)
    # the same lid without friction, or a still lid, does not drag it
    assert abs(_drag(0.0, 0.05)[0]) < 1e-3 * dragged
    assert abs(_drag(0.5, 0.0)[0]) < 1e-3 * dragged


def test_gradients_with_friction_on_moving_obstacles_match_central_differences():
    # a wider static band (eps_v 1 cm/s) than the default: Newton meets fewer slips on its edge, which central
    # differences would straddle
    world = _world(0.4, gravity=(0.0, 0.0, -9.81), friction_velocity=1e-2)
    world.add_ground(-2e-4)  # the block's bottom 0.2 mm deep, away from the penalty's kink
    tilt = Rotation.from_rotvec([0.004, -0.003, 0.1]).as_matrix()  # every top vertex stays inside
    lid = world.add_box((0.2, 0.2, 0.04), rd.Transform((0.05, 0.05, 0.07 - DEPTH), tilt))
    ball = world.add_sphere((0.1 + 0.02, 0.05, 0.025), 0.0205)
    world.set_obstacle_pose(lid, world.obstacle_pose(lid), velocity=(0.05, -0.02, 0.01, 0.3, -0.2, 0.5))
    world.set_obstacle_pose(ball, world.obstacle_pose(ball), velocity=(-0.03, 0.02, 0.04, 1.0, 0.5, -2.0))
    rng = np.random.default_rng(0)
    q, v, f = world.q, 0.02 * rng.standard_normal(world.nv), 0.05 * rng.standard_normal(world.nv)
    wq, wv = rng.standard_normal(world.nq), rng.standard_normal(world.nv)

    def loss(q=q, v=v, f=f):
        qn, vn = world.step(q, v, f)
        return wq @ qn + wv @ vn

    g = world.step_vjp(q, v, f, wq, wv)
    assert world.last_step["contacts"] > 10
    h, rel = 1e-6, 1e-6
    scale = max(np.abs(g.q).max(), np.abs(g.v).max())
    for name, x, grad in (("q", q, g.q), ("v", v, g.v), ("f", f, g.tau)):
        for i in range(len(x)):
            e = np.zeros(len(x))
            e[i] = h
            fd = (loss(**{name: x + e}) - loss(**{name: x - e})) / (2 * h)
            assert grad[i] == pytest.approx(fd, rel=rel, abs=rel * scale), (name, i)
    pscale = np.abs(g.parameters).max()
    for name, components in ((lid, 6), (ball, 3)):
        for key, fd in _pose_differences(world, name, components, loss, h).items():
            assert g.parameter(key) == pytest.approx(fd, rel=rel, abs=rel * pscale), key
    for attr in ("friction", "contact_stiffness"):
        fd = _attribute_difference(world, attr, loss, h)
        assert g.parameter(attr) == pytest.approx(fd, rel=rel, abs=rel * pscale), attr


def test_bad_velocities_are_refused():
    world = _world(0.3)
    lid = world.add_box((0.2, 0.2, 0.04), _lid_pose())
    with pytest.raises(ValueError, match="velocity"):
        world.set_obstacle_pose(lid, _lid_pose(), velocity=(1.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="velocity"):
        world.set_obstacle_pose(lid, _lid_pose(), velocity=(np.nan, 0, 0, 0, 0, 0))
