"""Figures of ε-Macro-BO: agents' trajectories over a field (``run macro-bo``, Fig. 4.12).

Built like :mod:`frontierbo.experiments.plots` (an explicit Agg canvas, never ``pyplot``; its
style, layout and resolution; saved atomically as PNG), with the legend below the map so that it
never hides a path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib import rc_context
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from frontierbo._validation import check_matrix, check_vector
from frontierbo.experiments.plots import STYLE, new_figure, place_legend, save_figure
from frontierbo.macro.domains import grid_layout

__all__ = ["build_trajectory", "plot_trajectory"]

_FIGSIZE = (4.2, 3.6)
_LINESTYLES = ("-", "--", ":", "-.")
_MARKS = ("X", "P", "D", "s")


def _check_trajectories(trajectories: Mapping[str, Sequence[int]], n: int) -> dict:
    if not trajectories:
        raise ValueError("trajectories must contain at least one {label: location indices} entry")
    out = {}
    for label, locations in trajectories.items():
        idx = np.asarray(locations)
        if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(
                f"trajectories[{label!r}] must be a non-empty sequence of integer location "
                f"indices, got {locations!r}"
            )
        if idx.min() < 0 or idx.max() >= n:
            raise ValueError(
                f"trajectories[{label!r}] must hold location indices in [0, {n - 1}], got values "
                f"from {idx.min()} to {idx.max()}"
            )
        out[str(label)] = idx.astype(np.int64)
    return out


def _check_marks(marks: Mapping[str, int] | None, n: int) -> dict[str, int]:
    out = {}
    for label, location in (marks or {}).items():
        if isinstance(location, bool) or not isinstance(location, (int, np.integer)):
            raise ValueError(f"marks[{label!r}] must be a location index, got {location!r}")
        if not 0 <= location < n:
            raise ValueError(
                f"marks[{label!r}] must be a location index in [0, {n - 1}], got {location}"
            )
        out[str(label)] = int(location)
    return out


def _draw_field(fig: Figure, ax, inputs: np.ndarray, values: np.ndarray, label: str) -> None:
    """The field as an image when the inputs form a full regular grid, else a scatter."""
    layout = grid_layout(inputs[:, 0], inputs[:, 1])
    distinct = np.unique(inputs, axis=0).shape[0] == inputs.shape[0]
    if distinct and not isinstance(layout, str) and min(layout.shape) > 1:
        image = np.full(layout.shape[::-1], np.nan)  # rows of the image: y; columns: x
        image[layout.col, layout.row] = values
        (dx, dy) = layout.spacing
        extent = (
            layout.xs[0] - dx / 2,
            layout.xs[-1] + dx / 2,
            layout.ys[0] - dy / 2,
            layout.ys[-1] + dy / 2,
        )
        mappable = ax.imshow(
            image, origin="lower", extent=extent, cmap="viridis", interpolation="nearest"
        )
    else:
        mappable = ax.scatter(inputs[:, 0], inputs[:, 1], c=values, cmap="viridis", s=14)
    span = np.ptp(inputs, axis=0)
    if np.all(span > 0) and 0.2 <= span[1] / span[0] <= 5:
        ax.set_aspect("equal", adjustable="box")  # same units on both axes: keep the geometry
    fig.colorbar(mappable, ax=ax, label=label, shrink=0.85)


def build_trajectory(
    inputs,
    values,
    trajectories: Mapping[str, Sequence[int]],
    title: str = "",
    edges=None,
    *,
    xlabel: str = "x",
    ylabel: str = "y",
    value_label: str = "value",
    marks: Mapping[str, int] | None = None,
) -> Figure:
    """The figure of :func:`plot_trajectory` (same arguments but ``path``), unsaved."""
    inputs = check_matrix(inputs, "inputs", n_cols=2)
    n = inputs.shape[0]
    values = check_vector(values, "values", length=n)
    paths = _check_trajectories(trajectories, n)
    marked = _check_marks(marks, n)
    pairs = None
    if edges is not None:
        pairs = np.asarray(edges)
        if pairs.size == 0:
            pairs = np.zeros((0, 2), dtype=np.int64)
        if pairs.ndim != 2 or pairs.shape[1] != 2 or not np.issubdtype(pairs.dtype, np.integer):
            raise ValueError(f"edges must be an (m, 2) integer array, got shape {pairs.shape}")
        if pairs.size and (pairs.min() < 0 or pairs.max() >= n):
            raise ValueError(f"edges must hold location indices in [0, {n - 1}]")

    with rc_context(STYLE):
        fig = new_figure(_FIGSIZE)
        ax = fig.add_subplot()
        _draw_field(fig, ax, inputs, values, value_label)
        if pairs is not None and pairs.size:
            segments = inputs[pairs]  # (m, 2 ends, 2 coordinates)
            ax.add_collection(LineCollection(segments, colors="0.6", linewidths=0.4, zorder=1))
        for k, (label, idx) in enumerate(paths.items()):
            xy = inputs[idx]
            width = max(2.0 - 0.4 * k, 0.8)  # earlier paths wider: an identical later one
            (line,) = ax.plot(  # drawn on top stays visible inside it
                xy[:, 0],
                xy[:, 1],
                linestyle=_LINESTYLES[k % len(_LINESTYLES)],
                linewidth=width,
                marker="o",
                markersize=2.5 + width,
                label=label,
                zorder=3 + k,
            )
            ax.plot(
                xy[0, 0],
                xy[0, 1],
                marker="*",
                markersize=12,
                color=line.get_color(),
                markeredgecolor="black",
                markeredgewidth=0.6,
                linestyle="none",
                zorder=10,
            )
        ax.plot(  # one legend entry for every start, after the paths
            [],
            [],
            marker="*",
            markersize=9,
            color="white",
            markeredgecolor="black",
            markeredgewidth=0.6,
            linestyle="none",
            label="start",
        )
        for k, (label, location) in enumerate(marked.items()):
            ax.plot(
                inputs[location, 0],
                inputs[location, 1],
                marker=_MARKS[k % len(_MARKS)],
                markersize=8,
                color="white",
                markeredgecolor="red",
                markeredgewidth=1.4,
                linestyle="none",
                label=label,
                zorder=11,
            )
        ax.set_title(title or "trajectories")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        place_legend(fig, ax, inside=False)  # the map is all data: below it
    return fig


def plot_trajectory(
    inputs,
    values,
    trajectories: Mapping[str, Sequence[int]],
    path: str | os.PathLike,
    title: str = "",
    edges=None,
    *,
    xlabel: str = "x",
    ylabel: str = "y",
    value_label: str = "value",
    marks: Mapping[str, int] | None = None,
) -> Path:
    """Agents' paths over a field; saves a PNG at ``path`` (atomically, parents created).

    Args:
        inputs: (n, 2) location coordinates (column 0 on the horizontal axis).
        values: (n,) the field's value at each location (colour).
        trajectories: ``{label: location indices}`` in visiting order (indices into ``inputs``),
            e.g. ``MacroRun.locations``; each drawn as a line with markers, its first location
            marked as the start. Several labels share the axes (Fig. 4.12: myopic vs
            nonmyopic); line styles differ so that overlapping paths stay visible.
        title: figure title (``"trajectories"`` when empty).
        edges: optional (m, 2) pairs of location indices, drawn as thin grey lines (a graph
            domain's moves).
        xlabel, ylabel: axis titles (with their unit, e.g. ``"x (km)"``); ``value_label``: the
            colour bar's.
        marks: optional ``{label: location index}``, locations to point out (e.g. a buoy whose
            reading the agents start with), each a red-edged marker with its legend entry.

    The field is an image when ``inputs`` form a full regular grid (every combination of the
    distinct, equally spaced coordinates exactly once), else a scatter coloured by value. The
    legend is below the map, so that it never hides a path.

    Returns the path.
    """
    fig = build_trajectory(
        inputs, values, trajectories, title, edges, xlabel=xlabel, ylabel=ylabel,
        value_label=value_label, marks=marks,
    )  # fmt: skip
    return save_figure(fig, path)
