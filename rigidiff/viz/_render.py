"""Pictures of configurations: one state in a 3D Axes, a strip of frames (PNG), an animation (GIF or MP4)."""

from __future__ import annotations

import math
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from rigidiff.viz._common import (
    as_camera,
    as_configuration,
    as_trajectory,
    check_world,
    figure_rgb,
    new_figure,
    positive_int,
    require_matplotlib,
)
from rigidiff.viz._scene import Scene

_ANIMATION_SIZE = 4.8  # inches, at 100 dpi: 480 x 480 pixels
_PANEL_SIZE = 2.4  # inches per frame of a strip


def _axes3d(fig, rect):
    import mpl_toolkits.mplot3d  # noqa: F401  (registers the "3d" projection on old matplotlib)

    ax = fig.add_axes(rect, projection="3d")
    ax.set_axis_off()
    return ax


def _time_format(step: float):
    """A formatter of times that tells apart frames ``step`` seconds apart."""
    digits = 0 if step <= 0 else min(max(0, math.ceil(-math.log10(step) - 1e-9)), 9)
    return lambda t: f"t = {t:.{digits}f} s"


def draw_state(world, q, ax=None, camera=None):
    """Draw one configuration ``q`` of ``world`` into a 3D matplotlib Axes and return the Axes.

    Args:
        world: a rigidiff.World.
        q: (nq,) configuration.
        ax: a 3D Axes (``fig.add_subplot(projection="3d")``); None: a new off-screen figure of its own
            (``ax.figure.savefig(...)`` writes it).
        camera: a :class:`Camera`, a dict of its fields, or None for the default view.

    The Axes gets the limits, equal aspect and view of the camera; a new Axes has its axis lines hidden.

    Raises:
        ValueError: q not of shape (nq,) or not finite; ax not a 3D Axes; a bad camera.
        ImportError: matplotlib is not installed (``pip install rigidiff[plot]``).
    """
    check_world(world)
    q = as_configuration(world, q)
    cam = as_camera(camera)
    require_matplotlib()
    if ax is None:
        ax = _axes3d(new_figure((_ANIMATION_SIZE, _ANIMATION_SIZE)), (0.0, 0.0, 1.0, 1.0))
    elif getattr(ax, "name", None) != "3d":
        raise ValueError(f"ax must be a 3D matplotlib Axes (projection='3d'), got {type(ax).__name__}")
    drawing = Scene(world, q[None], cam).attach(ax)
    drawing.show(world.body_poses(q), q)
    return ax


def frame_strip(world, Q, path, n_frames: int = 6, camera=None) -> Path:
    """Write ``n_frames`` configurations of the trajectory ``Q``, evenly spaced from first to last, side
    by side into one picture (PNG, or any format matplotlib writes, by the extension of ``path``).

    Args:
        world: a rigidiff.World.
        Q: (T, nq) configurations, one per row (e.g. ``world.rollout(...)[0]``), or a rigidiff.Trajectory.
        path: the file to write.
        n_frames: number of frames (at most T).
        camera: a :class:`Camera`, a dict of its fields, or None. Every frame has the same view.

    Returns:
        the path written, as a pathlib.Path.
    """
    check_world(world)
    Q, dt = as_trajectory(world, Q)
    n = positive_int(n_frames, "n_frames")
    cam = as_camera(camera)
    require_matplotlib()
    path = Path(path)
    rows = np.unique(np.round(np.linspace(0, len(Q) - 1, min(n, len(Q)))).astype(int))
    scene = Scene(world, Q, cam)
    label = _time_format(dt * (rows[1] - rows[0]) if len(rows) > 1 else dt)
    fig = new_figure((_PANEL_SIZE * len(rows), _PANEL_SIZE))
    for k, row in enumerate(rows):
        drawing = scene.attach(_axes3d(fig, (k / len(rows), 0.0, 1.0 / len(rows), 1.0)))
        drawing.show(world.body_poses(Q[row]), Q[row])
        drawing.set_label(label(row * dt))
    fig.savefig(path, format=path.suffix[1:].lower() or "png", facecolor="white")
    return path


def render_trajectory(world, Q, path, fps: float = 30, stride: int = 1, camera=None, title=None) -> Path:
    """Write an animation of the trajectory ``Q``: an animated GIF, or an MP4 video, by the extension of
    ``path`` (``.gif`` or ``.mp4``).

    Args:
        world: a rigidiff.World.
        Q: (T, nq) configurations, one per row (e.g. ``world.rollout(...)[0]``), or a rigidiff.Trajectory.
        path: the file to write.
        fps: frames per second of the animation (real time: ``fps = 1 / (stride * world.dt)``).
        stride: draw every stride-th row of Q; the animation has ceil(T / stride) frames.
        camera: a :class:`Camera`, a dict of its fields, or None. The view is fitted once, over the whole
            trajectory, so that the scene does not jump.
        title: a line of text at the top of every frame.

    Each frame shows its time, row * world.dt (the Trajectory's dt for a Trajectory). An MP4 needs an
    ffmpeg program: that of the imageio-ffmpeg package if it is installed (``pip install
    rigidiff[plot]`` installs it), else ``ffmpeg`` on the PATH.

    Returns:
        the path written, as a pathlib.Path.

    Raises:
        ValueError: a wrong shape or non-finite Q, fps <= 0 or below 0.001, stride < 1, another extension.
        RuntimeError: MP4 without an ffmpeg program (says how to get one), or ffmpeg failed.
        ImportError: matplotlib is not installed.
    """
    check_world(world)
    Q, dt = as_trajectory(world, Q)
    if isinstance(fps, bool) or not isinstance(fps, (int, float, np.integer, np.floating)) \
            or not math.isfinite(fps) or fps <= 0:
        raise ValueError(f"fps must be a positive number, got {fps!r}")
    if fps < 1e-3:  # a GIF stores each frame's duration in centiseconds, as a 16-bit integer
        raise ValueError(f"fps must be at least 0.001 (a frame shown for at most 1000 s), got {fps!r}")
    stride = positive_int(stride, "stride")
    cam = as_camera(camera)
    path = Path(path)
    kind = path.suffix.lower()
    if kind not in (".gif", ".mp4"):
        raise ValueError(f"path must end in .gif or .mp4 (the format is chosen by the extension), got {str(path)!r}")
    require_matplotlib()
    ffmpeg = find_ffmpeg() if kind == ".mp4" else None
    scene = Scene(world, Q, cam)
    fig = new_figure((_ANIMATION_SIZE, _ANIMATION_SIZE))
    drawing = scene.attach(_axes3d(fig, (0.0, 0.0, 1.0, 1.0)))
    if title is not None:
        fig.text(0.5, 0.97, str(title), ha="center", va="top", fontsize=11)
    label = _time_format(dt * stride)

    def frames():
        for row in range(0, len(Q), stride):
            drawing.show(world.body_poses(Q[row]), Q[row])
            drawing.set_label(label(row * dt))
            yield figure_rgb(fig)

    if kind == ".gif":
        _write_gif(frames(), path, float(fps))
    else:
        _write_mp4(frames(), path, float(fps), ffmpeg)
    return path


# ------------------------------------------------------------------------------------------ writers


def _write_gif(frames, path: Path, fps: float) -> None:
    from PIL import Image  # a dependency of matplotlib

    adaptive = getattr(Image, "Palette", Image).ADAPTIVE
    images = [Image.fromarray(f).convert("P", palette=adaptive, colors=256) for f in frames]
    # every frame differs (its time label), so Pillow keeps one GIF frame per image
    images[0].save(path, format="GIF", save_all=True, append_images=images[1:], loop=0,
                   duration=max(1, round(1000.0 / fps)))


_FFMPEG_HELP = ("writing an MP4 needs an ffmpeg program and none was found; install one with "
                "`pip install imageio-ffmpeg` (included in `pip install rigidiff[plot]`), or put ffmpeg on "
                "the PATH (e.g. `apt install ffmpeg`, `brew install ffmpeg`, `conda install ffmpeg`); "
                "or write a .gif instead")


def find_ffmpeg() -> str:
    """Path of an ffmpeg program: imageio-ffmpeg's if that package is installed, else ``ffmpeg`` on the
    PATH; RuntimeError saying how to get one otherwise."""
    try:
        import imageio_ffmpeg
    except ImportError:
        imageio_ffmpeg = None
    if imageio_ffmpeg is not None:
        try:
            return imageio_ffmpeg.get_ffmpeg_exe()
        except RuntimeError:
            pass
    exe = shutil.which("ffmpeg")
    if exe is None:
        raise RuntimeError(_FFMPEG_HELP)
    return exe


def _video_codec(exe: str) -> str:
    """libx264 (H.264, plays everywhere) when this ffmpeg has it, else ffmpeg's own mpeg4."""
    try:
        out = subprocess.run([exe, "-hide_banner", "-encoders"], capture_output=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "mpeg4"
    return "libx264" if b"libx264" in out else "mpeg4"


def _write_mp4(frames, path: Path, fps: float, exe: str) -> None:
    codec = _video_codec(exe)
    proc = None
    with tempfile.TemporaryFile() as log:
        try:
            for frame in frames:
                if proc is None:
                    h, w = frame.shape[:2]
                    cmd = [exe, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}",
                           "-r", f"{fps:g}", "-i", "-", "-an", "-c:v", codec, "-pix_fmt", "yuv420p",
                           "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", str(path)]
                    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log)
                proc.stdin.write(np.ascontiguousarray(frame).tobytes())
        except BrokenPipeError:
            pass  # ffmpeg stopped early: its exit code and log say why
        finally:
            if proc is not None:
                try:
                    proc.stdin.close()
                except BrokenPipeError:
                    pass
                code = proc.wait()
        if proc is not None and code != 0:
            log.seek(0)
            message = log.read().decode(errors="replace").strip()[-2000:]
            raise RuntimeError(f"ffmpeg ({exe}) failed with exit code {code} writing {path}: {message}")
