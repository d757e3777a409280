"""The figure of a study: every told value and the best so far, against the trials told."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from matplotlib import rc_context
from matplotlib.figure import Figure

from frontierbo.experiments.plots import STYLE, integer_ticks, new_figure, place_legend, save_figure


def build_best_so_far(study) -> Figure:
    """The figure of :func:`plot_best_so_far`, unsaved."""
    done = sorted(
        (t for t in study.trials if t.state == "complete"), key=lambda t: (t.told_at, t.number)
    )
    if not done:
        raise ValueError(f"study {study.name!r} has no told trial yet: nothing to plot")
    values = np.array([t.value for t in done])
    steps = np.arange(1, values.size + 1)
    with rc_context(STYLE):
        fig = new_figure()
        ax = fig.add_subplot()
        ax.plot(steps, values, ".", color="0.6", markersize=3, label="told value")
        ax.step(steps, study.best_so_far(), where="post", label=f"best so far ({study.direction})")
        ax.set_title(f"study {study.name} ({study.direction})")
        ax.set_xlabel("trials told")
        ax.set_ylabel("objective value (the study's units)")
        ax.grid(True, alpha=0.3, linewidth=0.5)
        integer_ticks(ax)
        place_legend(fig, ax)
    return fig


def plot_best_so_far(study, path: str | os.PathLike) -> Path:
    """PNG of ``study``'s told values (dots) and best value so far (line), in telling order."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"--out must be a PNG file path, got the directory {str(path)!r}")
    if not path.parent.exists():
        raise FileNotFoundError(f"--out: the folder of {str(path)!r} does not exist")
    return save_figure(build_best_so_far(study), path)
