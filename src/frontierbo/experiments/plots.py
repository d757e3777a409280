"""Paper-style figures (ICML single column), written atomically as PNG.

Figures are built on an explicit Agg canvas instead of ``pyplot``, so plotting never touches
the global backend or pyplot's figure registry (safe in scripts, tests and worker processes).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from frontierbo._validation import check_vector
from frontierbo.experiments.store import atomic_output

__all__ = ["DPI", "STYLE", "plot_metric_vs_param", "plot_regret_curves", "plot_two_scales"]

# ICML column width is 3.25 in; 8 pt text matches the caption size when printed at 100 %.
# STYLE and DPI are public: a system's own figures (e.g. macro trajectories) share them.
_FIGSIZE = (3.25, 2.3)
STYLE = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "legend.fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "lines.linewidth": 1.2,
    "axes.linewidth": 0.6,
}
DPI = 300


def _check_series(mean, stderr, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate a (mean, stderr) pair of equal-length 1-D arrays with stderr >= 0."""
    mean = check_vector(mean, f"{name} mean")
    stderr = check_vector(stderr, f"{name} stderr", length=mean.shape[0])
    if np.any(stderr < 0):
        raise ValueError(f"{name} stderr must be in [0, inf) elementwise")
    return mean, stderr


def _new_axes() -> tuple[Figure, Axes]:
    fig = Figure(figsize=_FIGSIZE)
    FigureCanvasAgg(fig)  # attaches the Agg canvas to fig
    return fig, fig.add_subplot()


def _finish(fig: Figure, ax: Axes, path, title: str, xlabel: str, ylabel: str) -> Path:
    """Label, add a light grid and legend, and save ``fig`` atomically as PNG."""
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3, linewidth=0.5)
    ax.legend(frameon=False)
    fig.tight_layout(pad=0.3)
    with atomic_output(path) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI)  # format given: the temp name ends in .tmp
    return Path(path)


def plot_regret_curves(
    curves: Mapping[str, tuple],
    path: str | os.PathLike,
    title: str,
    xlabel: str = "iteration t",
    ylabel: str = "simple regret S_t",
    *,
    log_y: bool = False,
) -> Path:
    """One line per label with a shaded +-1 standard-error band; saves a PNG at ``path``.

    Args:
        curves: ``{label: (mean, stderr)}``, each a 1-D array of length T (may differ per
            label); point t - 1 is plotted at iteration t = 1..T.
        path: output PNG path (written atomically; parent directories are created).
        log_y: logarithmic y axis (useful when regret spans orders of magnitude).
    Returns the path.
    """
    if not curves:
        raise ValueError("curves must contain at least one (mean, stderr) series")
    with rc_context(STYLE):
        fig, ax = _new_axes()
        for label, (mean, stderr) in curves.items():
            mean, stderr = _check_series(mean, stderr, f"curves[{label!r}]")
            t = np.arange(1, mean.shape[0] + 1)
            (line,) = ax.plot(t, mean, label=label)
            ax.fill_between(
                t, mean - stderr, mean + stderr, color=line.get_color(), alpha=0.2, linewidth=0
            )
        if log_y:
            ax.set_yscale("log")
        return _finish(fig, ax, path, title, xlabel, ylabel)


def plot_metric_vs_param(
    series: Mapping[str, tuple],
    path: str | os.PathLike,
    title: str,
    xlabel: str,
    ylabel: str,
    *,
    log_x: bool = False,
    log_y: bool = False,
) -> Path:
    """A metric against a parameter with +-1 standard-error bars, e.g. final regret vs log eps.

    Args:
        series: ``{label: (x, mean, stderr)}``, three 1-D arrays of equal length (x: parameter
            values, in whatever unit ``xlabel`` states).
        path: output PNG path (written atomically; parent directories are created).
        log_x, log_y: logarithmic axes.
    Returns the path.
    """
    if not series:
        raise ValueError("series must contain at least one (x, mean, stderr) series")
    with rc_context(STYLE):
        fig, ax = _new_axes()
        for label, (x, mean, stderr) in series.items():
            mean, stderr = _check_series(mean, stderr, f"series[{label!r}]")
            x = check_vector(x, f"series[{label!r}] x", length=mean.shape[0])
            ax.errorbar(
                x,
                mean,
                yerr=stderr,
                label=label,
                marker="o",
                markersize=3,
                capsize=2,
                elinewidth=0.8,
            )
        if log_x:
            ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        return _finish(fig, ax, path, title, xlabel, ylabel)


def plot_two_scales(
    curves: Mapping[str, tuple],
    path: str | os.PathLike,
    title: str,
    xlabel: str,
    ylabel: str,
    *,
    zoom: tuple[str, ...] = (),
    titles: tuple[str, str] = ("paper scale", "all methods (symlog)"),
) -> Path:
    """The same curves in two panels, for curves that span orders of magnitude: left, a linear
    y axis up to 1.3 x the highest band of the ``zoom`` labels (other curves may leave the
    chart); right, every curve on a symlog axis, with the legend.

    Args:
        curves: ``{label: (x, mean, stderr)}``, three 1-D arrays of equal length; each curve is
            drawn with a shaded +-1 standard-error band.
        path: output PNG path (written atomically; parent directories are created).
        title: prefix of both panel titles (``"<title>: <titles[i]>"``).
    Returns the path.
    """
    if not curves:
        raise ValueError("curves must contain at least one (x, mean, stderr) series")
    fig = Figure(figsize=(9.5, 3.6))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2)
    top = 0.0
    for label, (x, mean, stderr) in curves.items():
        mean, stderr = _check_series(mean, stderr, f"curves[{label!r}]")
        x = check_vector(x, f"curves[{label!r}] x", length=mean.shape[0])
        if label in zoom:
            top = max(top, float(np.max(mean + stderr)))
        for ax in axes:
            (line,) = ax.plot(x, mean, label=label, linewidth=1.2)
            ax.fill_between(
                x, mean - stderr, mean + stderr, color=line.get_color(), alpha=0.2, linewidth=0
            )
    if top > 0:
        axes[0].set_ylim(0, 1.3 * top)
    axes[1].set_yscale("symlog", linthresh=1.0)
    for ax, panel in zip(axes, titles, strict=True):
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title}: {panel}", fontsize=8)
    axes[1].legend(fontsize=6.5, frameon=False, loc="lower right")
    fig.tight_layout()
    with atomic_output(path) as tmp:
        fig.savefig(tmp, format="png", dpi=120)  # format given: the temp name ends in .tmp
    return Path(path)
