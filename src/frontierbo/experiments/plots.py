"""Paper-style figures (ICML single column), written atomically as PNG.

Figures are built on an explicit Agg canvas instead of ``pyplot``, so plotting never touches
the global backend or pyplot's figure registry (safe in scripts, tests and worker processes).

Each figure has a ``build_*`` function that returns the :class:`~matplotlib.figure.Figure` and a
``plot_*`` function that builds it and saves it (:func:`save_figure`). Every figure has a title,
axis titles and a legend that covers no data (:func:`place_legend`): inside the axes where a
spot is free, else below them (the figure grows to hold it). A legend entry says what the
shaded bands or error bars are, and axes whose plotted values are all whole numbers get whole
ticks (:func:`integer_ticks`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cbook import STEP_LOOKUP_MAP
from matplotlib.collections import Collection, LineCollection, PathCollection
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.path import Path as MplPath
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import Bbox

from frontierbo._validation import check_vector
from frontierbo.experiments.store import atomic_output

__all__ = [
    "DPI",
    "LINESTYLES",
    "STANDARD_ERROR",
    "STYLE",
    "band_entry",
    "bars_entry",
    "build_metric_vs_param",
    "build_regret_curves",
    "build_two_scales",
    "integer_ticks",
    "legend_covers_data",
    "new_figure",
    "over",
    "place_legend",
    "plot_metric_vs_param",
    "plot_regret_curves",
    "plot_two_scales",
    "save_figure",
]

# ICML column width is 3.25 in; 8 pt text matches the caption size when printed at 100 %.
# STYLE and DPI are public: a system's own figures (e.g. macro trajectories) share them.
_FIGSIZE = (3.25, 2.3)
STYLE = {
    "font.size": 8,
    "axes.titlesize": 8,
    "figure.titlesize": 9,
    "axes.labelsize": 8,
    "legend.fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "lines.linewidth": 1.2,
    "axes.linewidth": 0.6,
}
DPI = 300
#: What a band or an error bar is when the caller does not say.
STANDARD_ERROR = "± 1 standard error"
#: Line styles cycled with the colours, so that curves drawn on top of each other stay visible.
LINESTYLES = ("-", "--", "-.", ":")
#: A legend of more entries than this goes below the axes, not inside them.
MAX_INSIDE = 4


def _check_series(mean, stderr, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate a (mean, stderr) pair of equal-length 1-D arrays with stderr >= 0."""
    mean = check_vector(mean, f"{name} mean")
    stderr = check_vector(stderr, f"{name} stderr", length=mean.shape[0])
    if np.any(stderr < 0):
        raise ValueError(f"{name} stderr must be in [0, inf) elementwise")
    return mean, stderr


def new_figure(figsize: tuple[float, float] = _FIGSIZE) -> Figure:
    """A figure on its own Agg canvas with the constrained layout (it makes room for titles,
    colour bars and a legend below the axes)."""
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)  # attaches the Agg canvas to fig
    fig.get_layout_engine().set(w_pad=0.02, h_pad=0.02)
    return fig


def save_figure(fig: Figure, path: str | os.PathLike) -> Path:
    """Write ``fig`` as a PNG at ``path`` atomically (parent directories are created)."""
    with atomic_output(path) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI)  # format given: the temp name ends in .tmp
    return Path(path)


def over(counts: Iterable[int], unit: str = "runs") -> str:
    """``"over 20 runs"``, ``"over 10–35 realizations"`` where the counts differ, or ``"over 1
    run (zero: one run)"``: the end of a band's or bar's description (``unit`` in the plural)."""
    counts = sorted({int(c) for c in counts})
    if not counts:
        return f"over no {unit}"
    if counts[-1] <= 1:
        one = unit[:-1] if unit.endswith("s") else unit
        return f"over {counts[-1]} {one} (zero: one {one})"
    if len(counts) == 1:
        return f"over {counts[0]} {unit}"
    return f"over {counts[0]}–{counts[-1]} {unit}"


def band_entry(text: str) -> Patch:
    """A legend entry for the shaded bands: ``"shaded: <text>"``."""
    return Patch(facecolor="0.5", alpha=0.3, linewidth=0, label=f"shaded: {text}")


def bars_entry(text: str) -> Line2D:
    """A legend entry for the error bars: ``"bars: <text>"``."""
    return Line2D(
        [], [], color="0.3", marker="|", markersize=7, linestyle="none", label=f"bars: {text}"
    )


def integer_ticks(ax: Axes) -> None:
    """Whole ticks (``MaxNLocator(integer=True)``, steps of 1, 2 or 5) on each linear axis of
    ``ax`` whose plotted line values are all whole numbers (iterations, observations, queries):
    no 2.5 on a count."""
    for col, axis in ((0, ax.xaxis), (1, ax.yaxis)):
        if axis.get_scale() != "linear":
            continue
        values = [np.asarray(line.get_xydata(), dtype=float)[:, col] for line in ax.get_lines()]
        values = [v[np.isfinite(v)] for v in values if v.size]
        if values and all(np.all(v == np.round(v)) for v in values):
            axis.set_major_locator(MaxNLocator(integer=True, steps=[1, 2, 5, 10], min_n_ticks=1))


def _label_axes(ax: Axes, title: str | None, xlabel: str, ylabel: str) -> None:
    if title is not None:
        ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3, linewidth=0.5)
    integer_ticks(ax)


# -- the legend -----------------------------------------------------------------------------------
def _line_geometry(line: Line2D):
    """(display path, points, pad in pixels) of a line, steps drawn as steps."""
    xy = np.asarray(line.get_xydata(), dtype=float)
    xy = xy[np.all(np.isfinite(xy), axis=1)] if xy.size else xy.reshape(0, 2)
    if xy.shape[0] == 0:
        return None
    step = STEP_LOOKUP_MAP.get(line.get_drawstyle())
    if step is not None and line.get_drawstyle() != "default" and xy.shape[0] > 1:
        xy = np.column_stack(step(xy[:, 0], xy[:, 1]))
    points = line.get_transform().transform(xy)
    has_marker = line.get_marker() not in (None, "None", "none", "", " ")
    pad = line.get_markersize() * line.figure.dpi / 72 / 2 if has_marker else 0.5
    drawn = line.get_linestyle() not in ("None", "none", "", " ")
    return (MplPath(points) if drawn and points.shape[0] > 1 else None), points, pad


def _any_inside(points: np.ndarray, box: Bbox, pad: float) -> bool:
    x, y = points[:, 0], points[:, 1]
    inside = (x > box.x0 - pad) & (x < box.x1 + pad) & (y > box.y0 - pad) & (y < box.y1 + pad)
    return bool(np.any(inside))


def legend_covers_data(legend: Legend, axes: Iterable[Axes]) -> bool:
    """Whether ``legend`` (once laid out) lies over any line, marker, band, bar or image drawn
    in ``axes``, within the axes' box (artists are clipped to it)."""
    box = legend.get_window_extent()
    for ax in axes:
        clip = Bbox.intersection(box, ax.get_window_extent())
        if clip is None or clip.width <= 0 or clip.height <= 0:
            continue
        for line in ax.get_lines():
            geometry = _line_geometry(line)
            if geometry is None:
                continue
            path, points, pad = geometry
            if path is not None and path.intersects_bbox(clip, filled=False):
                return True
            if _any_inside(points, clip, pad):
                return True
        for coll in ax.collections:
            if _collection_covered(coll, clip):
                return True
        if any(im.get_window_extent().overlaps(clip) for im in ax.images):
            return True
    return False


def _collection_covered(coll: Collection, clip: Bbox) -> bool:
    if isinstance(coll, PathCollection) and len(coll.get_offsets()):  # a scatter's markers
        points = coll.get_offset_transform().transform(np.asarray(coll.get_offsets()))
        sizes = coll.get_sizes()
        pad = np.sqrt(sizes.max() if len(sizes) else 36.0) * coll.figure.dpi / 72 / 2
        return _any_inside(points, clip, pad)
    filled = not isinstance(coll, LineCollection)
    transform = coll.get_transform()
    return any(
        transform.transform_path(path).intersects_bbox(clip, filled=filled)
        for path in coll.get_paths()
        if len(path.vertices)
    )


def _entries(axes: Sequence[Axes], extra: Sequence) -> tuple[list, list]:
    """Legend handles and labels of all ``axes`` (one per label, first seen) and ``extra``."""
    handles, labels = [], []
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    for handle in extra:
        handles.append(handle)
        labels.append(handle.get_label())
    return handles, labels


def place_legend(
    fig: Figure, axes: Axes | Sequence[Axes], extra: Sequence = (), *, inside: bool = True
) -> Legend | None:
    """One legend for ``axes`` (their labelled artists, one entry per label) plus the ``extra``
    handles, where it covers no data.

    With one axes, up to :data:`MAX_INSIDE` entries and ``inside``, matplotlib's ``"best"``
    spot inside the axes is kept if it covers nothing (:func:`legend_covers_data`); otherwise
    the legend goes below the axes, in as many columns as the figure's width holds, and the
    figure grows by the legend's height so that the axes keep theirs (and widens where one
    entry is wider than the figure). Returns the legend (None when there is nothing to label).
    """
    axes = [axes] if isinstance(axes, Axes) else list(axes)
    handles, labels = _entries(axes, extra)
    if not handles:
        return None
    if inside and len(axes) == 1 and len(handles) <= MAX_INSIDE:
        legend = axes[0].legend(handles, labels, loc="best", frameon=False)
        _lay_out(fig)
        if not legend_covers_data(legend, axes):
            return legend
        legend.remove()
    renderer = _lay_out(fig)
    legend = fig.legend(handles, labels, loc="outside lower center", ncol=1, frameon=False)
    # columns of the widest entry, as many as the figure's width holds
    size = legend.prop.get_size_in_points() * fig.dpi / 72
    spacing = (legend.handlelength + legend.handletextpad + legend.columnspacing) * size
    widest = max(text.get_window_extent(renderer).width for text in legend.get_texts())
    ncol = int(max(1, min(len(handles), 0.95 * fig.bbox.width // (widest + spacing))))
    while True:
        legend.remove()
        legend = fig.legend(handles, labels, loc="outside lower center", ncol=ncol, frameon=False)
        extent = legend.get_window_extent(renderer)
        if ncol == 1 or extent.width <= 0.98 * fig.bbox.width:
            break
        ncol -= 1
    if extent.width > 0.98 * fig.bbox.width:  # one entry wider than the figure: widen it
        fig.set_figwidth(extent.width / fig.dpi / 0.96)
    fig.set_figheight(fig.get_figheight() + extent.height / fig.dpi)
    return legend


def _lay_out(fig: Figure):
    """Run the figure's layout (no drawing) and return its renderer."""
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)
    return fig.canvas.get_renderer()


# -- the figures ----------------------------------------------------------------------------------
def build_regret_curves(
    curves: Mapping[str, tuple],
    title: str,
    xlabel: str = "iteration t",
    ylabel: str = "simple regret S_t",
    *,
    log_y: bool = False,
    band: str = STANDARD_ERROR,
) -> Figure:
    """One line per label with a shaded band; see :func:`plot_regret_curves`."""
    if not curves:
        raise ValueError("curves must contain at least one (mean, stderr) series")
    with rc_context(STYLE):
        fig = new_figure()
        ax = fig.add_subplot()
        shaded = False
        for k, (label, (mean, stderr)) in enumerate(curves.items()):
            mean, stderr = _check_series(mean, stderr, f"curves[{label!r}]")
            t = np.arange(1, mean.shape[0] + 1)
            # its own colour and line style: a curve under another one shows through the gaps
            style = LINESTYLES[k % len(LINESTYLES)]
            (line,) = ax.plot(t, mean, label=label, color=f"C{k % 10}", linestyle=style)
            ax.fill_between(
                t, mean - stderr, mean + stderr, color=line.get_color(), alpha=0.2, linewidth=0
            )
            shaded = shaded or bool(np.any(stderr > 0))
        if log_y:
            ax.set_yscale("log")
        _label_axes(ax, title, xlabel, ylabel)
        place_legend(fig, ax, [band_entry(band)] if shaded else [])
    return fig


def plot_regret_curves(
    curves: Mapping[str, tuple],
    path: str | os.PathLike,
    title: str,
    xlabel: str = "iteration t",
    ylabel: str = "simple regret S_t",
    *,
    log_y: bool = False,
    band: str = STANDARD_ERROR,
) -> Path:
    """One line per label with a shaded band (``band`` says what it is, in the legend:
    ``"± 1 standard error over 20 runs"``); saves a PNG at ``path``.

    Args:
        curves: ``{label: (mean, stderr)}``, each a 1-D array of length T (may differ per
            label); point t - 1 is plotted at iteration t = 1..T, shaded mean ± stderr.
        path: output PNG path (written atomically; parent directories are created).
        log_y: logarithmic y axis (useful when regret spans orders of magnitude).
    Returns the path.
    """
    fig = build_regret_curves(curves, title, xlabel, ylabel, log_y=log_y, band=band)
    return save_figure(fig, path)


def build_metric_vs_param(
    series: Mapping[str, tuple],
    title: str,
    xlabel: str,
    ylabel: str,
    *,
    log_x: bool = False,
    log_y: bool = False,
    bars: str = STANDARD_ERROR,
) -> Figure:
    """A metric against a parameter with error bars; see :func:`plot_metric_vs_param`."""
    if not series:
        raise ValueError("series must contain at least one (x, mean, stderr) series")
    with rc_context(STYLE):
        fig = new_figure()
        ax = fig.add_subplot()
        barred = False
        for k, (label, (x, mean, stderr)) in enumerate(series.items()):
            mean, stderr = _check_series(mean, stderr, f"series[{label!r}]")
            x = check_vector(x, f"series[{label!r}] x", length=mean.shape[0])
            ax.errorbar(
                x,
                mean,
                yerr=stderr,
                label=label,
                marker="osD^v<>ph*"[k % 10],
                markersize=3,
                capsize=2,
                elinewidth=0.8,
                color=f"C{k % 10}",
                linestyle=LINESTYLES[k % len(LINESTYLES)],  # see build_regret_curves
            )
            barred = barred or bool(np.any(stderr > 0))
        if log_x:
            ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        _label_axes(ax, title, xlabel, ylabel)
        place_legend(fig, ax, [bars_entry(bars)] if barred else [])
    return fig


def plot_metric_vs_param(
    series: Mapping[str, tuple],
    path: str | os.PathLike,
    title: str,
    xlabel: str,
    ylabel: str,
    *,
    log_x: bool = False,
    log_y: bool = False,
    bars: str = STANDARD_ERROR,
) -> Path:
    """A metric against a parameter with error bars, e.g. final regret vs log eps (``bars``
    says what they are, in the legend: ``"± 1 standard deviation over 10 trials"``).

    Args:
        series: ``{label: (x, mean, err)}``, three 1-D arrays of equal length (x: parameter
            values, in whatever unit ``xlabel`` states; bars at mean ± err).
        path: output PNG path (written atomically; parent directories are created).
        log_x, log_y: logarithmic axes.
    Returns the path.
    """
    fig = build_metric_vs_param(series, title, xlabel, ylabel, log_x=log_x, log_y=log_y, bars=bars)
    return save_figure(fig, path)


def build_two_scales(
    curves: Mapping[str, tuple],
    title: str,
    xlabel: str,
    ylabel: str,
    *,
    zoom: tuple[str, ...] = (),
    titles: tuple[str, str] = ("paper scale", "all methods (symlog)"),
    band: str = STANDARD_ERROR,
) -> Figure:
    """The same curves in two panels; see :func:`plot_two_scales`."""
    if not curves:
        raise ValueError("curves must contain at least one (x, mean, stderr) series")
    with rc_context(STYLE):
        fig = new_figure((6.75, 2.6))
        axes = fig.subplots(1, 2)
        top, shaded = 0.0, False
        for k, (label, (x, mean, stderr)) in enumerate(curves.items()):
            mean, stderr = _check_series(mean, stderr, f"curves[{label!r}]")
            x = check_vector(x, f"curves[{label!r}] x", length=mean.shape[0])
            if label in zoom:
                top = max(top, float(np.max(mean + stderr)))
            # one colour and line style per label in both panels: equal curves stay visible
            style = {"color": f"C{k % 10}", "linestyle": LINESTYLES[k % len(LINESTYLES)]}
            for ax in axes:
                ax.plot(x, mean, label=label, **style)
                ax.fill_between(
                    x, mean - stderr, mean + stderr, color=style["color"], alpha=0.2, linewidth=0
                )
            shaded = shaded or bool(np.any(stderr > 0))
        if top > 0:
            axes[0].set_ylim(0, 1.3 * top)
        axes[1].set_yscale("symlog", linthresh=1.0)
        fig.suptitle(title)
        for ax, panel in zip(axes, titles, strict=True):
            _label_axes(ax, panel, xlabel, ylabel)
        place_legend(fig, list(axes), [band_entry(band)] if shaded else [], inside=False)
    return fig


def plot_two_scales(
    curves: Mapping[str, tuple],
    path: str | os.PathLike,
    title: str,
    xlabel: str,
    ylabel: str,
    *,
    zoom: tuple[str, ...] = (),
    titles: tuple[str, str] = ("paper scale", "all methods (symlog)"),
    band: str = STANDARD_ERROR,
) -> Path:
    """The same curves in two panels, for curves that span orders of magnitude: left, a linear
    y axis up to 1.3 x the highest band of the ``zoom`` labels (other curves may leave the
    chart); right, every curve on a symlog axis. One legend below both panels; each label has
    its own colour and line style in both.

    Args:
        curves: ``{label: (x, mean, stderr)}``, three 1-D arrays of equal length; each curve is
            drawn with a shaded band at mean ± stderr (``band`` says what it is, in the legend).
        path: output PNG path (written atomically; parent directories are created).
        title: the figure's title; ``titles`` are the panels'.
    Returns the path.
    """
    fig = build_two_scales(curves, title, xlabel, ylabel, zoom=zoom, titles=titles, band=band)
    return save_figure(fig, path)
