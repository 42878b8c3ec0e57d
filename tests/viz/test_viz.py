"""rigidiff.viz: pictures are written, not blank, and show the geometry where it is; plots; errors."""

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rigidiff as rd
import rigidiff.testing as rdt
import rigidiff.viz as viz
from rigidiff.viz import _scene

pytest.importorskip("matplotlib")
Image = pytest.importorskip("PIL.Image")
trimesh = pytest.importorskip("trimesh")


# ---------------------------------------------------------------------------------------------- helpers
def rgb(path_or_image) -> np.ndarray:
    im = Image.open(path_or_image) if not isinstance(path_or_image, Image.Image) else path_or_image
    return np.asarray(im.convert("RGB"), dtype=float)


def assert_picture(pixels: np.ndarray, min_colours: int = 8):
    """Not blank: the pixels vary and take several colours."""
    assert pixels.std() > 10.0, f"blank picture (pixel std {pixels.std():.2f})"
    colours = np.unique(pixels.reshape(-1, 3), axis=0)
    assert len(colours) >= min_colours, f"only {len(colours)} colours"


def gif_frames(path) -> list:
    im = Image.open(path)
    frames = []
    for k in range(im.n_frames):
        im.seek(k)
        frames.append(rgb(im.convert("RGB")))
    return frames


def blue_centroid(pixels: np.ndarray) -> np.ndarray:
    """(row, column) centroid of the bluish pixels (bodies; the background, the ground and the grey
    time label have no blue cast)."""
    mask = pixels[..., 2] - pixels[..., 0] > 40
    assert mask.sum() > 50, "no body drawn"
    return np.argwhere(mask).mean(axis=0)


def free_world(*shapes, ground=False) -> rd.World:
    """One free body per shape, all at the origin."""
    world = rd.World(dt=1e-2)
    sk = rd.Skeleton("things")
    for i, shape in enumerate(shapes):
        body = sk.add_body(f"b{i}", joint=rd.FreeJoint(f"free{i}"),
                           inertia=rd.Inertia(1.0, rotational_inertia=np.eye(3)))
        body.add_shape(shape)
    world.add_skeleton(sk)
    if ground:
        world.add_ground()
    return world


def at(world, *positions) -> np.ndarray:
    """A configuration of free_world with body i at positions[i]."""
    q = world.neutral_configuration()
    for i, p in enumerate(positions):
        q[7 * i:7 * i + 3] = p
    return q


@pytest.fixture(scope="module")
def quadruped():
    """The shipped quadruped standing on the ground, and 60 steps of it settling."""
    world = rd.World(dt=1e-3)
    world.add_skeleton(rd.load_urdf(rd.models.path("quadruped"), floating_base=True))
    world.add_ground(friction=0.8)
    q = world.neutral_configuration()
    q[2] = 0.36
    Q, _ = world.rollout(q, np.zeros(world.nv), np.zeros((60, world.nv)))
    return world, Q


@pytest.fixture(scope="module")
def sphere():
    return free_world(rd.Sphere(0.2))


# ---------------------------------------------------------------------------------------------- import
def test_importing_rigidiff_viz_does_not_import_matplotlib(tmp_path):
    code = "import sys, rigidiff, rigidiff.viz; assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    # the rigidiff these tests import (installed, or built in place), not a source tree in the working folder
    env = dict(os.environ, PYTHONPATH=str(Path(rd.__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr


def test_missing_matplotlib_says_how_to_install_it(monkeypatch, sphere, tmp_path):
    from rigidiff.demo import write_picture

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    with pytest.raises(ImportError, match=r"pip install rigidiff\[plot\]"):
        viz.draw_state(sphere, sphere.neutral_configuration())
    with pytest.raises(ImportError, match=r"pip install rigidiff\[plot\]"):
        viz.plot_costs([3.0, 2.0, 1.0])
    line = write_picture(sphere, sphere.neutral_configuration()[None], tmp_path / "x.png")  # the demo goes on
    assert line.startswith("picture skipped") and "rigidiff[plot]" in line
    assert not (tmp_path / "x.png").exists()


# ---------------------------------------------------------------------------------------------- pictures
def test_frame_strip_writes_frames_side_by_side(quadruped, tmp_path):
    world, Q = quadruped
    out = viz.frame_strip(world, Q, tmp_path / "strip.png", n_frames=3)
    assert out == tmp_path / "strip.png"
    pixels = rgb(out)
    h, w, _ = pixels.shape
    assert w == pytest.approx(3 * h, rel=0.02)
    assert_picture(pixels)
    for k in range(3):  # a body in every panel
        blue_centroid(pixels[:, k * w // 3:(k + 1) * w // 3])


def test_gif_has_one_frame_per_stride(sphere, tmp_path):
    Q, _ = sphere.rollout(sphere.neutral_configuration(), np.zeros(6), np.zeros((19, 6)))  # 20 rows, falling
    for stride in (1, 3, 20):
        out = viz.render_trajectory(sphere, Q, tmp_path / f"fall{stride}.gif", fps=20, stride=stride, title="fall")
        im = Image.open(out)
        assert im.n_frames == math.ceil(len(Q) / stride)
        assert im.info["duration"] == 50
    frames = gif_frames(tmp_path / "fall3.gif")
    assert_picture(frames[0])
    assert blue_centroid(frames[-1])[0] > blue_centroid(frames[0])[0] + 20  # it falls: lower in the picture


def test_a_still_trajectory_keeps_all_its_frames(sphere, tmp_path):
    Q = np.repeat(sphere.neutral_configuration()[None], 5, axis=0)  # identical poses: the time label differs
    assert Image.open(viz.render_trajectory(sphere, Q, tmp_path / "still.gif")).n_frames == 5


def test_a_recorded_trajectory_is_accepted(sphere, tmp_path):
    traj = sphere.rollout(sphere.neutral_configuration(), np.zeros(6), np.zeros((7, 6)), record=True)
    out = viz.render_trajectory(sphere, traj, tmp_path / "traj.gif", stride=2)
    assert Image.open(out).n_frames == 4


@pytest.mark.parametrize("axis, camera, moves", [
    (0, {"elevation": 90, "azimuth": -90}, (0, +1)),  # from above: +x is to the right
    (1, {"elevation": 90, "azimuth": -90}, (-1, 0)),  # from above: +y is up
    (2, {"elevation": 0, "azimuth": -90}, (-1, 0)),  # from -y: +z is up
    (0, {"elevation": 0, "azimuth": -90}, (0, +1)),  # from -y: +x is to the right
])
def test_the_sphere_is_drawn_where_it_is(sphere, tmp_path, axis, camera, moves):
    p = np.zeros(3)
    p[axis] = 1.0
    Q = np.array([at(sphere, (0, 0, 0)), at(sphere, p)])
    a, b = (blue_centroid(f) for f in gif_frames(viz.render_trajectory(sphere, Q, tmp_path / "m.gif", camera=camera)))
    shift = b - a
    for k in (0, 1):
        if moves[k]:
            assert moves[k] * shift[k] > 100, f"centroid moved by {shift}"
        else:
            assert abs(shift[k]) < 10, f"centroid moved by {shift}"


SHAPES = {
    "box": rd.Box((0.4, 0.2, 0.1)),
    "sphere": rd.Sphere(0.15),
    "capsule": rd.Capsule(0.08, 0.3),
    "cylinder": rd.Cylinder(0.1, 0.3),
    "mesh": rd.Mesh(trimesh.creation.annulus(0.1, 0.2, 0.1)),
    "big mesh": rd.Mesh(trimesh.creation.icosphere(subdivisions=5, radius=0.2)),  # 20480 triangles
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_every_shape_type_is_drawn(name, tmp_path):
    world = free_world(SHAPES[name], ground=True)
    ax = viz.draw_state(world, at(world, (0, 0, 0.3)))
    assert ax.name == "3d"
    ax.figure.savefig(tmp_path / "s.png")
    pixels = rgb(tmp_path / "s.png")
    assert_picture(pixels)
    blue_centroid(pixels)  # the body
    grey = (np.abs(pixels - 200).max(axis=-1) < 25) & (np.ptp(pixels, axis=-1) < 8)
    assert grey.sum() > 500  # the ground


def test_big_meshes_are_simplified_and_closed_shapes_face_out():
    polys = _scene.tessellate(SHAPES["big mesh"])
    assert len(polys) <= _scene.MAX_MESH_FACES
    assert np.abs(np.linalg.norm(polys, axis=-1) - 0.2).max() < 0.02  # still a sphere of radius 0.2
    for name in ("box", "sphere", "capsule", "cylinder", "big mesh"):
        p = _scene.tessellate(SHAPES[name])
        centre, normals = p.mean(axis=1), _scene._normals(p)
        assert np.all(np.einsum("ij,ij->i", centre, normals) > -1e-9), name  # outward (shapes centred at 0)


def test_a_tilted_plane_and_a_view_from_below(tmp_path):
    world = free_world(rd.Sphere(0.2))
    slope = rd.Skeleton("slope")
    slope.add_body("slope", joint=rd.FixedJoint("weld")).add_shape(rd.Plane((0.3, 0.0, 1.0), -0.4))
    world.add_skeleton(slope)
    for elevation in (30, -30):
        ax = viz.draw_state(world, world.neutral_configuration(), camera={"elevation": elevation})
        ax.figure.savefig(tmp_path / "p.png")
        assert_picture(rgb(tmp_path / "p.png"))


def test_urdf_robots_are_drawn_from_their_visual_shapes(tmp_path):
    world = rd.World()
    arm = world.add_skeleton(rd.load_urdf(rd.models.path("arm7")))  # boxes, cylinders and an STL hand
    hand = arm.body("hand")
    assert any(isinstance(s.shape, rd.Mesh) for s in _scene.drawn_shapes(hand))
    drawn = [s for i in range(world.nbodies) for s in _scene.drawn_shapes(world.body(i))]
    assert drawn and all(s.visual for s in drawn)
    out = viz.frame_strip(world, np.array([world.random_configuration(k) for k in range(3)]), tmp_path / "a.png")
    assert_picture(rgb(out))


def test_a_body_with_only_collision_shapes_shows_them():
    sk = rd.Skeleton("hidden")
    body = sk.add_body("b", joint=rd.FreeJoint("f"), inertia=rd.Inertia(1.0))
    body.add_shape(rd.Box((1, 1, 1)), visual=False)
    assert len(_scene.drawn_shapes(body)) == 1
    body.add_shape(rd.Sphere(0.1), collide=False)
    assert [type(s.shape) for s in _scene.drawn_shapes(body)] == [rd.Sphere]


def test_example_robot_data_meshes(robots_dir, tmp_path):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = rd.load_urdf(str(robots_dir / "solo_description/robots/solo12.urdf"), floating_base=True,
                          package_dirs=[str(robots_dir.parent.parent)])
    world = rd.World()
    world.add_skeleton(sk)
    world.add_ground()
    q = world.neutral_configuration()
    q[2] = 0.3
    ax = viz.draw_state(world, q, camera=viz.Camera(elevation=30, azimuth=-120, distance=1.5))
    ax.figure.savefig(tmp_path / "solo.png")
    assert_picture(rgb(tmp_path / "solo.png"))


def test_a_world_without_geometry_is_drawn_as_its_tree(tmp_path):
    world = rd.World()
    world.add_skeleton(rd.load_urdf(rd.models.path("double_pendulum"), load_geometry=False))
    Q = np.array([[0.0, 0.0], [0.5, 0.5], [1.0, -0.5]])
    out = viz.render_trajectory(world, Q, tmp_path / "tree.gif")
    assert Image.open(out).n_frames == 3
    assert_picture(gif_frames(out)[1], min_colours=4)


def test_camera_target_and_extent_set_the_view(sphere):
    ax = viz.draw_state(sphere, sphere.neutral_configuration(),
                        camera={"target": (1.0, 2.0, 3.0), "extent": 0.5, "distance": 3.0})
    for lim, c in zip((ax.get_xlim(), ax.get_ylim(), ax.get_zlim()), (1.0, 2.0, 3.0)):
        assert lim == pytest.approx((c - 0.5, c + 0.5))
    cam = viz.Camera(elevation=90)
    assert cam.eye_direction == pytest.approx([0, 0, 1], abs=1e-12)
    with pytest.raises(ValueError, match="unknown keys"):
        viz.draw_state(sphere, sphere.neutral_configuration(), camera={"zoom": 2})
    for bad in ({"distance": 0}, {"extent": -1}, {"target": (1, 2)}, {"elevation": float("nan")}):
        with pytest.raises(ValueError, match="camera"):
            viz.Camera(**bad)


def test_draw_state_into_a_given_axes(sphere):
    import matplotlib
    from matplotlib.figure import Figure

    backend = matplotlib.get_backend()
    fig = Figure()
    ax = fig.add_subplot(projection="3d")
    assert viz.draw_state(sphere, sphere.neutral_configuration(), ax=ax) is ax
    with pytest.raises(ValueError, match="3D matplotlib Axes"):
        viz.draw_state(sphere, sphere.neutral_configuration(), ax=fig.add_subplot(2, 2, 1))
    assert matplotlib.get_backend() == backend


# ---------------------------------------------------------------------------------------------- videos
def test_mp4_without_ffmpeg_says_how_to_get_one(monkeypatch, sphere, tmp_path):
    from rigidiff.viz import _render

    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)
    monkeypatch.setattr(_render.shutil, "which", lambda name: None)
    Q = sphere.neutral_configuration()[None]
    with pytest.raises(RuntimeError, match="imageio-ffmpeg") as info:
        viz.render_trajectory(sphere, Q, tmp_path / "v.mp4")
    assert "PATH" in str(info.value) and ".gif" in str(info.value)
    assert not (tmp_path / "v.mp4").exists()


def test_mp4_when_ffmpeg_is_available(sphere, tmp_path):
    try:
        viz.find_ffmpeg()
    except RuntimeError:
        pytest.skip("no ffmpeg program (pip install imageio-ffmpeg)")
    Q, _ = sphere.rollout(sphere.neutral_configuration(), np.zeros(6), np.zeros((9, 6)))
    out = viz.render_trajectory(sphere, Q, tmp_path / "v.mp4", fps=10)
    assert out.stat().st_size > 1000


# ---------------------------------------------------------------------------------------------- errors
def test_bad_arguments_are_named(sphere, tmp_path):
    q = sphere.neutral_configuration()
    with pytest.raises(ValueError, match=r"Q must be a trajectory of shape \(T, nq\) = \(T, 7\).*got shape \(7,\)"):
        viz.render_trajectory(sphere, q, tmp_path / "x.gif")
    with pytest.raises(ValueError, match=r"Q must be .*got shape \(4, 6\)"):
        viz.frame_strip(sphere, np.zeros((4, 6)), tmp_path / "x.png")
    bad = np.array([q, q])
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"Q must be finite: 1 entries .* index \(1, 2\)"):
        viz.frame_strip(sphere, bad, tmp_path / "x.png")
    with pytest.raises(ValueError, match=r"q must be one configuration of shape \(nq,\) = \(7,\)"):
        viz.draw_state(sphere, np.array([q]))
    with pytest.raises(ValueError, match="q must be finite"):
        viz.draw_state(sphere, np.full(7, np.inf))
    with pytest.raises(ValueError, match=r"\.gif or \.mp4"):
        viz.render_trajectory(sphere, q[None], tmp_path / "x.avi")
    with pytest.raises(ValueError, match="stride"):
        viz.render_trajectory(sphere, q[None], tmp_path / "x.gif", stride=0)
    with pytest.raises(ValueError, match="fps"):
        viz.render_trajectory(sphere, q[None], tmp_path / "x.gif", fps=0)
    with pytest.raises(ValueError, match="fps must be at least"):
        viz.render_trajectory(sphere, q[None], tmp_path / "x.gif", fps=1e-9)
    with pytest.raises(ValueError, match="matplotlib Axes"):
        viz.plot_costs([2.0, 1.0], ax="x")
    with pytest.raises(ValueError, match="n_frames"):
        viz.frame_strip(sphere, q[None], tmp_path / "x.png", n_frames=0)
    with pytest.raises(ValueError, match="rigidiff.World"):
        viz.draw_state("world", q)
    assert not list(tmp_path.iterdir())


# ---------------------------------------------------------------------------------------------- plots
def test_plot_costs(tmp_path):
    fig = viz.plot_costs(np.geomspace(10.0, 1e-3, 40), path=tmp_path / "c.png", label="cost")
    assert fig.axes[0].get_yscale() == "log"
    assert_picture(rgb(tmp_path / "c.png"))
    fig = viz.plot_costs({"total": [3.0, 1.0, 0.0], "terms": [2.0, -1.0]}, path=tmp_path / "d.png", label="runs")
    assert fig.axes[0].get_yscale() == "symlog" and fig.axes[0].get_title() == "runs"
    assert len(fig.axes[0].get_legend().get_texts()) == 2
    fig = viz.plot_costs([1.0, 2.0], log=False)
    assert fig.axes[0].get_yscale() == "linear"
    from matplotlib.figure import Figure

    ax = Figure().add_subplot()
    assert viz.plot_costs([1.0, 0.5], ax=ax) is ax.figure
    for bad, match in (([], "non-empty"), ([[1.0, 2.0]], r"shape \(n,\)"), ([1.0, np.nan], "finite"),
                       ({}, "empty dict"), ({"a": [1.0, np.inf]}, r"history\['a'\] must be finite")):
        with pytest.raises(ValueError, match=match):
            viz.plot_costs(bad)


@pytest.fixture(scope="module")
def cartpole_jacobians():
    world = rd.World(dt=1e-3)
    world.add_skeleton(rd.load_urdf(rd.models.path("cartpole")))
    q, v, tau = np.array([0.1, 0.4]), np.array([0.3, -0.2]), np.array([0.5, 0.0])
    return world, (q, v, tau), world.step_jacobians(q, v, tau), rdt.finite_difference_jacobians(world, q, v, tau)


def test_plot_jacobian_error_of_step_jacobians(cartpole_jacobians, tmp_path):
    world, state, analytic, fd = cartpole_jacobians
    fig = viz.plot_jacobian_error(analytic, fd, path=tmp_path / "j.png", title="cartpole")
    assert_picture(rgb(tmp_path / "j.png"))
    heat = fig.axes[0]
    assert [t.get_text() for t in heat.get_xticklabels()] == ["d/dq", "d/dv", "d/dtau"]
    assert heat.get_images()[0].get_array().shape == (4, 6)
    report = rdt.check_jacobians(world, *state)
    with pytest.raises(ValueError, match="finite_difference_jacobians"):
        viz.plot_jacobian_error(report, fd)


def test_plot_jacobian_error_of_arrays(tmp_path):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 9))
    F = A + 1e-8 * rng.normal(size=A.shape) * (rng.random(A.shape) < 0.7)  # some entries equal exactly
    fig = viz.plot_jacobian_error(A, F, path=tmp_path / "a.png")
    assert "equal exactly" in fig.axes[1].get_title()
    assert_picture(rgb(tmp_path / "a.png"))
    viz.plot_jacobian_error(A, A)  # no error at all
    with pytest.raises(ValueError, match=r"same shape, got \(6, 9\) and \(9, 6\)"):
        viz.plot_jacobian_error(A, F.T)
    F[0, 0] = np.nan
    with pytest.raises(ValueError, match="finite_difference must be finite"):
        viz.plot_jacobian_error(A, F)


# ---------------------------------------------------------------------------------------------- demo
def test_the_demo_draws_its_picture(tmp_path, capsys):
    from rigidiff.cli import main

    out_file = tmp_path / "demo.png"
    assert main(["demo", "--fast", "--picture", str(out_file)]) == 0
    out = capsys.readouterr().out
    assert "all 9 checks passed" in out and "quadruped falling onto the ground" in out and str(out_file) in out
    pixels = rgb(out_file)
    assert pixels.shape[1] == pytest.approx(4 * pixels.shape[0], rel=0.02)  # four frames
    assert_picture(pixels)
    width = pixels.shape[1] // 4
    first, last = pixels[:, :width].astype(float), pixels[:, 3 * width:4 * width].astype(float)
    assert np.abs(first - last).mean() > 1.0  # the robot moved between the first and the last frame
    assert main(["demo", "--fast", "--no-picture"]) == 0 and "picture" not in capsys.readouterr().out


def _decimate_by_rows(vertices, faces, max_faces):
    """Vertex clustering as _scene._decimate describes it, grouping the cells' integer triples row by row."""
    lo = vertices.min(axis=0)
    size = float(np.max(vertices.max(axis=0) - lo))
    cells = 2.0 * np.sqrt(max_faces)
    v, f = vertices, faces
    while len(f) > max_faces and cells >= 4:
        cell = np.floor((vertices - lo) / (size / cells)).astype(np.int64)
        _, cluster = np.unique(cell, axis=0, return_inverse=True)
        cluster = cluster.ravel()
        v = np.zeros((cluster.max() + 1, 3))
        np.add.at(v, cluster, vertices)
        v /= np.bincount(cluster)[:, None]
        f = cluster[faces]
        f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])]
        f = f[np.sort(np.unique(np.sort(f, axis=1), axis=0, return_index=True)[1])]
        cells *= 0.75
    return v, f


@pytest.mark.parametrize("subdivisions, max_faces", [(4, 800), (5, 800), (4, 200)])
def test_simplification_clusters_vertices_per_grid_cell(subdivisions, max_faces):
    """The clustering keys each vertex by its grid cell as one integer: the same clusters, means and
    surviving faces (in mesh order) as grouping the cells' integer triples row by row."""
    import trimesh

    tm = trimesh.creation.icosphere(subdivisions=subdivisions, radius=0.2)
    vertices = tm.vertices + np.random.default_rng(1).normal(scale=1e-3, size=tm.vertices.shape)
    faces = np.asarray(tm.faces)
    v, f = _scene._decimate(vertices, faces, max_faces)
    v_ref, f_ref = _decimate_by_rows(vertices, faces, max_faces)
    assert 0 < len(f) <= max_faces
    assert np.array_equal(f, f_ref) and np.array_equal(v, v_ref)
    cell = np.random.default_rng(2).integers(0, 60, size=(500, 3))
    keys = _scene._row_keys(cell)
    assert np.all(np.diff(keys[np.lexsort(cell.T[::-1])]) >= 0)  # ordered as the rows are
    assert len(np.unique(keys)) == len(np.unique(cell, axis=0))
