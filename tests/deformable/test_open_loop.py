"""rd.OpenLoopControl: the travel of a body under a parametric muscle schedule and its gradient."""

from __future__ import annotations

import numpy as np
import pytest

import rigidiff as rd


def crawler(tolerance: float = 1e-11):
    """A bar of 4 x 1 x 1 cubes of 2 cm on a ground with friction, its front and back halves two muscles along x."""
    world = rd.World(dt=5e-3, solver="projective", tolerance=tolerance, friction=0.6)
    world.add_ground()
    mesh = rd.HexMesh.box((0.08, 0.02, 0.02), (4, 1, 1))
    world.add_deformable(mesh, rd.ProjectiveMaterial(2e4, 0.3, 1000.0, kind=("corotated", "volume")), name="bar",
                         pose=rd.Transform((0.0, 0.0, 1e-4)))
    centres = mesh.vertices[mesh.elements].mean(axis=1)
    world.add_muscle("bar", np.flatnonzero(centres[:, 0] > 0.04), (1.0, 0.0, 0.0), 2e4, name="front")
    world.add_muscle("bar", np.flatnonzero(centres[:, 0] < 0.04), (1.0, 0.0, 0.0), 2e4, name="back")
    return world


def schedule(x, times):
    """front = 1 - x0 sin(40 t), back = 1 - x1 sin(40 t + x2), with their derivatives."""
    s0, s1, c1 = np.sin(40 * times), np.sin(40 * times + x[2]), np.cos(40 * times + x[2])
    acts = np.stack([1 - x[0] * s0, 1 - x[1] * s1], axis=1)
    zero = np.zeros_like(times)
    d = np.stack([np.stack([-s0, zero], 1), np.stack([zero, -s1], 1), np.stack([zero, -x[1] * c1], 1)])
    return acts, d


def test_travel_gradient_matches_central_differences():
    control = rd.OpenLoopControl(crawler(), "bar", schedule, steps=20)
    x = np.array([0.3, 0.2, 1.0])
    travel, gradient, Q = control.travel_and_gradient(x)
    assert travel == pytest.approx(control.travel(x), abs=1e-15)
    assert Q.shape == (21, control.world.nq)
    assert abs(travel) > 1e-5  # the muscles move it: the test is not about a body at rest
    h = 1e-6
    fd = np.array([(control.travel(x + h * e) - control.travel(x - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(gradient, fd, rtol=1e-5, atol=1e-6 * np.abs(fd).max())
    slope, difference = control.check_gradient(x, np.array([1.0, -1.0, 0.5]), h=1e-6)
    assert slope == pytest.approx(gradient @ [1.0, -1.0, 0.5], rel=1e-12)
    assert difference == pytest.approx(fd @ [1.0, -1.0, 0.5], rel=1e-6)
    assert control.check_gradient(x, [1.0, 0.0, 0.0], h=1e-6, gradient=[2.0, 0.0, 0.0])[0] == 2.0  # as given


def test_direction_and_centre():
    world = crawler()
    along_x = rd.OpenLoopControl(world, "bar", schedule, steps=10)
    along_y = rd.OpenLoopControl(world, "bar", schedule, steps=10, direction=(0.0, 2.0, 0.0))
    x = np.array([0.3, 0.2, 1.0])
    Q, _ = along_x.rollout(x)
    shift = along_x.centre(Q[-1]) - along_x.centre(world.q)
    assert along_x.travel(x) == pytest.approx(shift[0], abs=1e-15)
    assert along_y.travel(x) == pytest.approx(shift[1], abs=1e-15)  # the direction is normalised
    np.testing.assert_allclose(along_x.centre(world.q), (0.04, 0.01, 0.0101), atol=1e-12)


def test_maximise_goes_farther_than_its_start():
    control = rd.OpenLoopControl(crawler(tolerance=1e-8), "bar", schedule, steps=15)
    x0 = np.array([0.1, 0.1, 0.0])
    result = control.maximise(x0, bounds=[(0.0, 0.4), (0.0, 0.4), (-np.pi, np.pi)], iterations=3)
    assert result["travels"][0] == result["travel_start"] == pytest.approx(control.travel(x0), abs=1e-15)
    assert result["travel"] == max(result["travels"]) > result["travel_start"]
    assert result["travel"] == pytest.approx(control.travel(result["x"]), abs=1e-12)
    assert result["gradient_start"].shape == (3,) and result["Q"].shape == result["Q_start"].shape


def test_bad_arguments():
    world = crawler()
    with pytest.raises(TypeError, match="world"):
        rd.OpenLoopControl(rd.World(dt=1e-2), "bar", schedule, 5)
    with pytest.raises(TypeError, match="schedule"):
        rd.OpenLoopControl(world, "bar", "wave", 5)
    with pytest.raises(ValueError, match="steps"):
        rd.OpenLoopControl(world, "bar", schedule, 0)
    with pytest.raises(ValueError, match="direction"):
        rd.OpenLoopControl(world, "bar", schedule, 5, direction=(0.0, 0.0, 0.0))
    with pytest.raises(rd.UnknownNameError):
        rd.OpenLoopControl(world, "leg", schedule, 5)
    short = rd.OpenLoopControl(world, "bar", lambda x, t: (np.ones((len(t), 1)), np.zeros((1, len(t), 1))), 5)
    with pytest.raises(ValueError, match="schedule must return activations of shape"):
        short.travel(np.zeros(1))
    with pytest.raises(ValueError, match="x must be a 1-D array"):
        rd.OpenLoopControl(world, "bar", schedule, 5).travel(np.zeros((3, 1)))


def test_height_weight_adds_the_rise_and_its_gradient():
    world = crawler()
    plain = rd.OpenLoopControl(world, "bar", schedule, steps=20)
    upright = rd.OpenLoopControl(world, "bar", schedule, steps=20, height_weight=0.3)
    x = np.array([0.3, 0.2, 1.0])
    Q, _ = plain.rollout(x)
    shift = plain.centre(Q[-1]) - plain.centre(world.q)
    assert abs(shift[2]) > 1e-7  # the muscles move the centre up or down: the weight matters
    assert upright.travel(x) == pytest.approx(shift[0] + 0.3 * shift[2], abs=1e-15)
    travel, gradient, _ = upright.travel_and_gradient(x)
    h = 1e-6
    fd = np.array([(upright.travel(x + h * e) - upright.travel(x - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(gradient, fd, rtol=1e-5, atol=1e-6 * np.abs(fd).max())
    assert not np.allclose(gradient, plain.travel_and_gradient(x)[1], rtol=1e-3)
    with pytest.raises(ValueError, match="height_weight must be finite"):
        rd.OpenLoopControl(world, "bar", schedule, steps=5, height_weight=float("nan"))
