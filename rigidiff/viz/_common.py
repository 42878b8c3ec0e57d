"""Shared parts of rigidiff.viz: the matplotlib import, off-screen figures, the Camera and argument checks."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

_INSTALL_HINT = "pip install rigidiff[plot]"


def require_matplotlib():
    """The matplotlib module, or ImportError saying how to install it."""
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError(f"rigidiff.viz draws with matplotlib, which is not installed: {_INSTALL_HINT} "
                          f"(or pip install matplotlib)") from exc
    return matplotlib


def new_figure(figsize, dpi: float = 100.0, layout=None):
    """A matplotlib Figure drawn by the Agg canvas: no display and no change to the pyplot backend."""
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=dpi, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def figure_rgb(fig) -> np.ndarray:
    """(H, W, 3) uint8 pixels of a figure drawn by the Agg canvas."""
    fig.canvas.draw()
    return np.array(fig.canvas.buffer_rgba())[..., :3]


@dataclass(frozen=True)
class Camera:
    """Where the pictures of :mod:`rigidiff.viz` look from.

    Args:
        elevation: angle of the eye above the x-y plane, in degrees (90: looking straight down).
        azimuth: angle of the eye around the z axis from the x axis, in degrees (matplotlib's ``azim``;
            -60 looks from the front right, -90 from -y with x pointing right).
        distance: distance of the eye from the target, in metres: sets the strength of the perspective.
            None: an orthographic view, as if from very far away. The framing does not change with it.
        target: (3,) world point at the centre of the picture. None: the centre of the scene.
        extent: half the side of the cube of space shown, in metres. None: fitted to the scene, the
            configurations of the whole trajectory included, so that the framing stays fixed.

    A dict with these keys is accepted wherever a Camera is.
    """

    elevation: float = 20.0
    azimuth: float = -60.0
    distance: float | None = None
    target: tuple | None = None
    extent: float | None = None

    def __post_init__(self):
        for name in ("elevation", "azimuth"):
            object.__setattr__(self, name, _finite(getattr(self, name), f"camera {name}"))
        for name in ("distance", "extent"):
            value = getattr(self, name)
            if value is not None:
                value = _finite(value, f"camera {name}")
                if value <= 0:
                    raise ValueError(f"camera {name} must be > 0 or None, got {value}")
                object.__setattr__(self, name, value)
        if self.target is not None:
            t = np.asarray(self.target, dtype=float) if _is_numeric(self.target) else None
            if t is None or t.shape != (3,) or not np.all(np.isfinite(t)):
                raise ValueError(f"camera target must be a finite (3,) point or None, got {self.target!r}")
            object.__setattr__(self, "target", tuple(float(x) for x in t))

    @property
    def eye_direction(self) -> np.ndarray:
        """(3,) unit vector from the target towards the eye."""
        e, a = math.radians(self.elevation), math.radians(self.azimuth)
        return np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])


def _is_numeric(x) -> bool:
    try:
        np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return False
    return True


def _finite(x, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)) or not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number, got {x!r}")
    return float(x)


def as_camera(camera) -> Camera:
    """A Camera from None (the default view), a Camera or a dict of Camera fields."""
    if camera is None:
        return Camera()
    if isinstance(camera, Camera):
        return camera
    if isinstance(camera, dict):
        allowed = ("elevation", "azimuth", "distance", "target", "extent")
        unknown = sorted(set(camera) - set(allowed))
        if unknown:
            raise ValueError(f"camera has unknown keys {unknown}; allowed: {list(allowed)}")
        return Camera(**camera)
    raise ValueError(f"camera must be a rigidiff.viz.Camera, a dict or None, got {type(camera).__name__}")


def check_world(world) -> None:
    if not all(hasattr(world, name) for name in ("body_poses", "nq", "nbodies", "body")):
        raise ValueError(f"world must be a rigidiff.World, got {type(world).__name__}")


def as_configuration(world, q, name: str = "q") -> np.ndarray:
    """q as a finite (nq,) float array, or ValueError naming the argument and its shape."""
    arr = _float_array(q, name)
    if arr.shape != (world.nq,):
        raise ValueError(f"{name} must be one configuration of shape (nq,) = ({world.nq},), got shape {arr.shape}")
    _check_finite(arr, name)
    return arr


def as_trajectory(world, Q, name: str = "Q") -> tuple[np.ndarray, float]:
    """(Q as a finite (T, nq) float array, time between rows). ``Q`` may be a rigidiff.Trajectory."""
    dt = float(getattr(world, "dt", 0.0))
    if hasattr(Q, "q") and hasattr(Q, "tau") and hasattr(Q, "dt"):  # a recorded rollout
        Q, dt = Q.q, float(Q.dt)
    arr = _float_array(Q, name)
    if arr.ndim != 2 or arr.shape[1] != world.nq or arr.shape[0] == 0:
        raise ValueError(f"{name} must be a trajectory of shape (T, nq) = (T, {world.nq}) with T >= 1, one "
                         f"configuration per row, got shape {arr.shape}")
    _check_finite(arr, name)
    return arr, dt


def _float_array(x, name: str) -> np.ndarray:
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of numbers: {exc}") from None


def _check_finite(arr: np.ndarray, name: str) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        where = np.argwhere(bad)[0]
        raise ValueError(f"{name} must be finite: {int(bad.sum())} entries are NaN or infinite, the first at "
                         f"index {tuple(int(i) for i in where)}")


def positive_int(x, name: str) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1:
        raise ValueError(f"{name} must be a positive integer, got {x!r}")
    return int(x)
