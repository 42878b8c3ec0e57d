"""rd.viz draws a projective world (its deformable bodies' surfaces posed by q at every frame, its ground
planes and its static balls) and a barrier world (its affine bodies' surfaces)."""

import numpy as np
import pytest

import rigidiff as rd
from rigidiff.deformable.obstacles import fan_triangles
from rigidiff.viz import _scene

pytest.importorskip("matplotlib")
Image = pytest.importorskip("PIL.Image")


@pytest.fixture(scope="module")
def dropped():
    world = rd.World(dt=5e-3, solver="projective")
    world.add_ground()
    world.add_sphere((0.3, 0.0, 0.0), 0.05)
    block = rd.HexMesh.box((0.1, 0.1, 0.1), (2, 2, 2))
    world.add_deformable(block, rd.ProjectiveMaterial(5e4, 0.3, 800.0), name="block",
                         pose=rd.Transform((0.0, 0.0, 0.3)))
    Q, _ = world.rollout(world.q, world.v, np.zeros((40, world.nv)))
    return world, Q


def drawn_triangles(polys):
    return {tuple(np.round(p[:3], 9).ravel()) for p in polys}


def test_the_surfaces_follow_q(dropped):
    """The polygons drawn at q are the block's boundary triangles posed by q (those facing the camera: a
    closed surface hides the others) and the ball's; the block falls, the ball stays."""
    world, Q = dropped
    scene = _scene.Scene(world, Q, _scene.Camera())
    ball = fan_triangles(_scene.tessellate(rd.Sphere(0.05))) + (0.3, 0.0, 0.0)  # its quadrilaterals, halved
    for q in (Q[0], Q[-1]):
        polys, colors = scene.bodies(world.body_poses(q), q)
        x, tri = world.surface(q, "block")
        surface = drawn_triangles(x[tri]) | drawn_triangles(ball)
        drawn = drawn_triangles(polys)
        assert drawn <= surface and len(drawn) > len(tri) / 4
        assert colors.shape == (len(polys), 3) and np.all((colors >= 0) & (colors <= 1))
    first, _ = scene.bodies(world.body_poses(Q[0]), Q[0])
    last, _ = scene.bodies(world.body_poses(Q[-1]), Q[-1])
    block_first = [p for p in first if p[:, 2].min() > 0.1]  # above the ball, which reaches 0.05
    block_last = [p for p in last if p[:, 2].max() < 0.2]
    assert block_first and len(block_last) >= len(block_first)  # the block fell below 0.2 m
    assert len(scene._planes) == 1 and scene._planes[0][0] is None  # the ground, in the world's frame


def test_a_barrier_world_is_drawn_by_its_bodies_surfaces(tmp_path):
    world = rd.World(dt=1e-2, solver="barrier")
    world.add_ground()
    world.add_affine_body(rd.Box((0.2, 0.2, 0.2)), density=500.0, pose=rd.Transform((0, 0, 0.3)), name="cube")
    Q, _ = world.rollout(world.q, world.v, np.zeros((20, world.nv)))
    scene = _scene.Scene(world, Q, _scene.Camera())
    polys, _ = scene.bodies(world.body_poses(Q[-1]), Q[-1])
    V, F = world.surface(Q[-1], "cube")
    assert 0 < len(polys) < len(F) and drawn_triangles(polys) <= drawn_triangles(V[F])
    assert rd.viz.frame_strip(world, Q, tmp_path / "cube.png", n_frames=2).is_file()


def test_frame_strip_and_draw_state_of_a_projective_world(dropped, tmp_path):
    world, Q = dropped
    path = rd.viz.frame_strip(world, Q, tmp_path / "strip.png", n_frames=3)
    with Image.open(path) as img:
        assert img.width > 2 * img.height
        pixels = np.asarray(img.convert("RGB"), dtype=float)
    assert np.std(pixels) > 10  # not blank
    ax = rd.viz.draw_state(world, Q[-1])
    assert len(ax.collections) >= 2  # the ground and the bodies


def test_a_projective_world_has_no_rigid_body(dropped):
    world, Q = dropped
    assert world.nbodies == 0 and world.body_poses(Q[0]).shape == (0, 4, 4)
    with pytest.raises(rd.UnknownNameError, match="no rigid body"):
        world.body(0)
