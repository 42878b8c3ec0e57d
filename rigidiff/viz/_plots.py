"""Plots of numbers: cost histories of optimisations and the error of a Jacobian against finite differences."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from rigidiff.viz._common import _check_finite, _float_array, new_figure, require_matplotlib


def _save(fig, path) -> None:
    path = Path(path)
    fig.savefig(path, format=path.suffix[1:].lower() or "png", facecolor="white")


# ------------------------------------------------------------------------------------------ costs


def _curve(x, name: str) -> np.ndarray:
    arr = _float_array(x, name)
    if arr.ndim != 1 or len(arr) == 0:
        raise ValueError(f"{name} must be a non-empty sequence of numbers (shape (n,)), got shape {arr.shape}")
    _check_finite(arr, name)
    return arr


def plot_costs(history, path=None, ax=None, log: bool = True, label=None):
    """Plot cost against iteration, for one optimisation or several.

    Args:
        history: a sequence of costs, or a dict {name: sequence of costs} for several curves (e.g. the
            cost and its terms, or runs to compare); sequences may differ in length.
        path: write the figure there (PNG, or any format matplotlib writes, by the extension); None: don't.
        ax: a matplotlib Axes to draw into; None: a new off-screen figure.
        log: a logarithmic cost axis (symmetric-logarithmic when a cost is zero or negative).
        label: the legend entry of a single sequence; with a dict, the title of the plot.

    Returns:
        the matplotlib Figure.

    Raises:
        ValueError: an empty history, a sequence that is not 1-D, a NaN or infinite cost, an ax that is not
            a matplotlib Axes.
        ImportError: matplotlib is not installed.
    """
    if isinstance(history, Mapping):
        if not history:
            raise ValueError("history is an empty dict; give {name: sequence of costs}")
        curves = [(str(k), _curve(v, f"history[{k!r}]")) for k, v in history.items()]
        title = label
    else:
        curves = [(label, _curve(history, "history"))]
        title = None
    require_matplotlib()
    if ax is None:
        fig = new_figure((6.0, 4.0), layout="constrained")
        ax = fig.add_subplot()
    else:
        if not hasattr(ax, "figure") or not hasattr(ax, "plot"):
            raise ValueError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
        fig = ax.figure
    for name, y in curves:
        ax.plot(np.arange(len(y)), y, label=name, marker="." if len(y) <= 50 else None)
    values = np.concatenate([y for _, y in curves])
    if log and np.all(values > 0):
        ax.set_yscale("log")
    elif log:
        small = np.abs(values[values != 0])
        ax.set_yscale("symlog", linthresh=float(small.min()) if small.size else 1.0)
    ax.set_xlabel("iteration")
    ax.set_ylabel("cost")
    ax.grid(True, which="major", alpha=0.3)
    if any(name is not None for name, _ in curves):
        ax.legend()
    if title is not None:
        ax.set_title(str(title))
    if path is not None:
        _save(fig, path)
    return fig


# ------------------------------------------------------------------------------------------ Jacobians

_STATE_BLOCKS = ("q", "v", "tau")


def _jacobian(x, name: str):
    """(dense matrix, row groups, column groups) of a Jacobian: groups are (label, size) or None."""
    if hasattr(x, "blocks") and hasattr(x, "max_rel_error") and not hasattr(x, "dq_dq"):
        raise ValueError(f"{name} is a JacobianReport, which keeps only the error summary of each block; pass "
                         f"the Jacobians themselves: world.step_jacobians(q, v, tau) and "
                         f"rigidiff.testing.finite_difference_jacobians(world, q, v, tau)")
    if hasattr(x, "dq_dq"):  # a StepJacobians (analytic, or finite differences from rigidiff.testing)
        rows = [[getattr(x, f"d{y}_d{w}") for w in _STATE_BLOCKS] for y in ("q", "v")]
        matrix = np.block([[_float_array(b, name) for b in row] for row in rows])
        n = matrix.shape[0] // 2
        return matrix, [("q_next", n), ("v_next", n)], [(f"d/d{w}", n) for w in _STATE_BLOCKS]
    arr = _float_array(x, name)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array or a StepJacobians, got shape {arr.shape}")
    return arr, None, None


def _parameter_block(x):
    dq_dp = getattr(x, "dq_dp", None)
    return None if dq_dp is None else np.vstack([dq_dp, x.dv_dp])


def plot_jacobian_error(analytic, finite_difference, path=None, title=None):
    """Heat map of |analytic - finite_difference| entry by entry (logarithmic colours) and a histogram.

    Args:
        analytic, finite_difference: two arrays of one 2-D shape, or two StepJacobians: e.g.
            ``world.step_jacobians(q, v, tau)`` and ``rigidiff.testing.finite_difference_jacobians(world,
            q, v, tau)``, drawn as the (2 nv, 3 nv) matrix [[dq_dq, dq_dv, dq_dtau], [dv_dq, dv_dv,
            dv_dtau]] with its blocks marked (and the parameter columns dq_dp, dv_dp when both have them).
        path: write the figure there (PNG, or any format matplotlib writes, by the extension); None: don't.
        title: the title of the figure (default: the largest error).

    Entries that agree exactly are white in the heat map and counted apart from the histogram.
    ``rigidiff.testing.check_jacobians`` returns a JacobianReport, which holds the errors of each block
    but not the matrices: pass the two StepJacobians it compares.

    Returns:
        the matplotlib Figure.

    Raises:
        ValueError: the two do not have one shape, a NaN or infinite entry, a JacobianReport.
        ImportError: matplotlib is not installed.
    """
    A, row_groups, col_groups = _jacobian(analytic, "analytic")
    F, _, f_cols = _jacobian(finite_difference, "finite_difference")
    if (col_groups is None) != (f_cols is None):
        raise ValueError("analytic and finite_difference must both be StepJacobians or both be arrays")
    if col_groups is not None:
        pa, pf = _parameter_block(analytic), _parameter_block(finite_difference)
        if pa is not None and pf is not None and pa.shape == pf.shape and pa.shape[1] > 0:
            A, F = np.hstack([A, pa]), np.hstack([F, pf])
            col_groups = [*col_groups, ("d/dp", pa.shape[1])]
    if A.shape != F.shape:
        raise ValueError(f"analytic and finite_difference must have the same shape, got {A.shape} and {F.shape}")
    _check_finite(A, "analytic")
    _check_finite(F, "finite_difference")
    require_matplotlib()
    import matplotlib
    from matplotlib.colors import LogNorm

    err = np.abs(A - F)
    positive = err[err > 0]
    vmax = float(positive.max()) if positive.size else 1.0
    vmin = max(float(positive.min()), vmax * 1e-14) if positive.size else 1e-16
    fig = new_figure((10.0, 4.2), layout="constrained")
    heat, hist = fig.subplots(1, 2, gridspec_kw={"width_ratios": (1.5, 1.0)})
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="white")
    image = heat.imshow(np.ma.masked_equal(err, 0.0), norm=LogNorm(vmin=vmin, vmax=vmax), cmap=cmap,
                        interpolation="nearest", aspect="auto")
    fig.colorbar(image, ax=heat, label="|analytic - finite difference|")
    if col_groups is not None:
        _mark_blocks(heat, row_groups, col_groups)
    else:
        heat.set_xlabel("column")
        heat.set_ylabel("row")
    if positive.size:
        logs = np.log10(positive)
        lo, hi = np.floor(logs.min()), np.ceil(logs.max())
        hist.hist(logs, bins=np.linspace(lo, hi if hi > lo else lo + 1.0, 41), color="C0")
        hist.axvline(np.log10(vmax), color="C3", linestyle="--", label=f"max {vmax:.2e}")
        hist.legend()
    zeros = err.size - positive.size
    note = f"{zeros} of {err.size} entries equal exactly" if zeros else f"{err.size} entries"
    hist.set_title(note, fontsize=10)
    hist.set_xlabel("log10 |analytic - finite difference|")
    hist.set_ylabel("entries")
    fig.suptitle(str(title) if title is not None else f"Jacobian error: max {vmax if positive.size else 0.0:.2e}, "
                 f"median {np.median(err):.2e}")
    if path is not None:
        _save(fig, path)
    return fig


def _mark_blocks(ax, row_groups, col_groups) -> None:
    """Lines between the blocks of a StepJacobians matrix, and the blocks' names as tick labels."""
    for groups, line, set_ticks in ((row_groups, ax.axhline, ax.set_yticks), (col_groups, ax.axvline, ax.set_xticks)):
        edges = np.cumsum([0] + [size for _, size in groups])
        for e in edges[1:-1]:
            line(e - 0.5, color="black", linewidth=1.0)
        set_ticks(0.5 * (edges[:-1] + edges[1:]) - 0.5)
    ax.set_yticklabels([name for name, _ in row_groups])
    ax.set_xticklabels([name for name, _ in col_groups])
