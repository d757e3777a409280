"""Every figure reads at a glance: a title, axis titles, whole ticks on a count axis, a legend
entry for each labelled curve, no text cut by the figure's edge, and no legend over the data
(lines, markers, bands, bars and images, in display coordinates after a draw).

Each figure function is called on small synthetic inputs; the report modules' ``write_figures``
are run with ``save_figure`` wrapped so that the figures they save are checked too."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cbook import STEP_LOOKUP_MAP
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from frontierbo.experiments import plots

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# -- the check ------------------------------------------------------------------------------------
def _is_colorbar(ax) -> bool:
    return getattr(ax, "_colorbar", None) is not None


def _has_data(ax) -> bool:
    lines = [line for line in ax.get_lines() if np.asarray(line.get_xydata()).size]
    return bool(lines or ax.collections or ax.images)


def _is_picture(ax) -> bool:
    """An image shown as a picture (no ticks, no lines): it needs a title, not axis titles."""
    return bool(ax.images) and not ax.get_xticks().size and not ax.get_yticks().size


def _densify(points: np.ndarray, step: float = 1.0) -> np.ndarray:
    """Points every ``step`` pixels along the polyline ``points`` (display coordinates)."""
    if len(points) < 2:
        return points
    out = [points[:1]]
    for a, b in zip(points[:-1], points[1:], strict=True):
        n = int(min(max(np.hypot(*(b - a)) / step, 1), 5000))
        out.append(a + (b - a) * np.linspace(0, 1, n + 1)[1:, None])
    return np.concatenate(out)


def _inside(points: np.ndarray, box: Bbox, pad: float = 0.0) -> bool:
    if not len(points):
        return False
    x, y = points[:, 0], points[:, 1]
    return bool(
        np.any((x > box.x0 - pad) & (x < box.x1 + pad) & (y > box.y0 - pad) & (y < box.y1 + pad))
    )


def _covered(ax, legend_box: Bbox) -> str | None:
    """What data of ``ax`` lies under ``legend_box`` (None: nothing); data are clipped to
    the axes, so only the part of the legend inside the axes counts."""
    box = Bbox.intersection(legend_box, ax.get_window_extent())
    if box is None or box.width <= 0 or box.height <= 0:
        return None
    dpi = ax.figure.dpi
    for line in ax.get_lines():
        xy = np.asarray(line.get_xydata(), dtype=float)
        if not xy.size:
            continue
        xy = xy[np.all(np.isfinite(xy), axis=1)]
        if line.get_drawstyle() in STEP_LOOKUP_MAP and line.get_drawstyle() != "default":
            xy = np.column_stack(STEP_LOOKUP_MAP[line.get_drawstyle()](xy[:, 0], xy[:, 1]))
        points = line.get_transform().transform(xy)
        pad = line.get_markersize() * dpi / 72 / 2 if line.get_marker() not in ("", "None") else 0
        drawn = line.get_linestyle() not in ("None", "none", "")
        if _inside(_densify(points) if drawn else points, box, pad):
            return f"line {line.get_label()!r}"
    for coll in ax.collections:
        if isinstance(coll, PathCollection) and len(coll.get_offsets()):
            points = coll.get_offset_transform().transform(np.asarray(coll.get_offsets()))
            if _inside(points, box, np.sqrt(coll.get_sizes().max()) * dpi / 72 / 2):
                return "scatter"
            continue
        for path in coll.get_paths():
            vertices = coll.get_transform().transform(path.vertices)
            if _inside(_densify(vertices), box):
                return f"{type(coll).__name__} edge"
            if not isinstance(coll, LineCollection):  # a band: the legend may sit inside it
                outline = coll.get_transform().transform_path(path)
                corners = [(box.x0, box.y0), (box.x1, box.y1), (box.x0, box.y1), (box.x1, box.y0)]
                if any(
                    outline.contains_point(c) for c in [*corners, tuple(box.get_points().mean(0))]
                ):
                    return f"{type(coll).__name__} area"
    for image in ax.images:
        if image.get_window_extent().overlaps(box):
            return "image"
    return None


def _check_integer_ticks(ax) -> None:
    """An axis whose plotted line values are all whole numbers shows whole ticks only."""
    for col, axis, name in ((0, ax.xaxis, "x"), (1, ax.yaxis, "y")):
        if axis.get_scale() != "linear":
            continue
        values = [np.asarray(line.get_xydata(), dtype=float)[:, col] for line in ax.get_lines()]
        values = np.concatenate([v for v in values if v.size] or [np.zeros(0)])
        values = values[np.isfinite(values)]
        if not values.size or np.any(values != np.round(values)):
            continue
        lo, hi = sorted(axis.get_view_interval())
        ticks = axis.get_majorticklocs()
        ticks = ticks[(ticks >= lo - 1e-9 * abs(hi - lo)) & (ticks <= hi + 1e-9 * abs(hi - lo))]
        assert np.allclose(ticks, np.round(ticks)), (
            f"{ax.get_title()!r}: the {name} axis counts whole numbers but shows ticks {ticks}"
        )


def check_figure(fig: Figure) -> None:
    """Assert that ``fig`` reads at a glance (module doc)."""
    fig.canvas.draw()
    suptitle = fig._suptitle.get_text() if fig._suptitle is not None else ""
    charts = [ax for ax in fig.axes if _has_data(ax) and not _is_colorbar(ax)]
    assert charts or suptitle, "a figure with nothing drawn must say why in its title"
    for ax in charts:
        assert (ax.get_title() or suptitle).strip(), "an axes without a title"
        if _is_picture(ax):
            continue
        assert ax.get_xlabel().strip(), f"{ax.get_title()!r} has no x axis title"
        assert ax.get_ylabel().strip(), f"{ax.get_title()!r} has no y axis title"
        _check_integer_ticks(ax)
    for ax in fig.axes:
        if _is_colorbar(ax):
            assert (ax.get_ylabel() or ax.get_xlabel()).strip(), "a colour bar without a title"
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())  # inches
    width, height = fig.get_size_inches()
    inside = drawn.x0 > -0.02 and drawn.y0 > -0.02 and drawn.x1 < width + 0.02
    assert inside and drawn.y1 < height + 0.02, (
        f"{(suptitle or charts[0].get_title())!r}: text is cut by the figure's edge (drawn "
        f"from {drawn.x0:.2f}, {drawn.y0:.2f} to {drawn.x1:.2f}, {drawn.y1:.2f} in; the "
        f"figure is {width:.2f} x {height:.2f} in)"
    )
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    legends += list(fig.legends)
    shown = {text.get_text() for legend in legends for text in legend.get_texts()}
    for ax in charts:
        for label in ax.get_legend_handles_labels()[1]:
            assert label in shown, f"{label!r} has no legend entry"
    for legend in legends:
        box = legend.get_window_extent()
        for ax in charts:
            what = _covered(ax, box)
            assert what is None, f"the legend covers a {what} in {ax.get_title()!r}"


# -- the check catches what the issue saw -------------------------------------------------------
def _bare(figsize=(3.25, 2.3)):
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def test_check_figure_catches_a_legend_over_the_curves():
    fig, ax = _bare()
    ax.plot([0, 4, 8], [0.0, 0.5, 1.0], label="a")
    ax.fill_between([0, 4, 8], [-0.1, 0.4, 0.9], [0.1, 0.6, 1.1], alpha=0.2)
    ax.set(title="t", xlabel="x", ylabel="y")
    ax.legend(loc="center")
    with pytest.raises(AssertionError, match="legend covers"):
        check_figure(fig)


def test_check_figure_catches_a_legend_inside_a_band():
    fig, ax = _bare()
    ax.fill_between([0, 10], [-5, -5], [5, 5], alpha=0.2, label="band")
    ax.plot([0, 10], [-4.5, -4.5], label="low")
    ax.set(title="t", xlabel="x", ylabel="y", ylim=(-6, 6))
    ax.legend(loc="center")
    with pytest.raises(AssertionError, match="PolyCollection area"):
        check_figure(fig)


def test_check_figure_catches_half_ticks_on_a_count_and_missing_titles():
    fig, ax = _bare()
    ax.plot([0, 4, 8, 12, 16, 20], np.linspace(0, 1, 6))
    ax.set(title="t", xlabel="n", ylabel="y")
    ax.set_xticks([0, 2.5, 5, 7.5])
    with pytest.raises(AssertionError, match="whole numbers"):
        check_figure(fig)
    fig, ax = _bare()
    ax.plot([0.5, 1.5], [0.5, 1.5])
    ax.set(xlabel="x", ylabel="y")
    with pytest.raises(AssertionError, match="without a title"):
        check_figure(fig)
    fig, ax = _bare()
    ax.plot([0.5, 1.5], [0.5, 1.5], label="a")
    ax.set(title="t", xlabel="x")
    with pytest.raises(AssertionError, match="no y axis title"):
        check_figure(fig)
    fig, ax = _bare()
    ax.plot([0.5, 1.5], [0.5, 1.5], label="a")
    ax.set(title="t", xlabel="x", ylabel="y")
    with pytest.raises(AssertionError, match="no legend entry"):
        check_figure(fig)


def test_check_figure_catches_a_cut_axis_title():
    fig, ax = _bare(figsize=(3.25, 1.0))
    ax.plot([0.5, 1.5], [0.5, 1.5])
    ax.set(title="t", xlabel="x", ylabel="a very long axis title that does not fit (units)")
    with pytest.raises(AssertionError, match="cut by the figure's edge"):
        check_figure(fig)


# -- the shared figures ---------------------------------------------------------------------------
def _curves(k: int, T: int = 30) -> dict:
    t = np.arange(T)
    return {
        f"method number {i} (a long label)": (np.exp(-t / (5 + 3 * i)) + 0.02 * i, np.full(T, 0.05))
        for i in range(k)
    }


@pytest.mark.parametrize("k", [1, 4, 9])
@pytest.mark.parametrize("log_y", [False, True])
def test_regret_curves_read(k, log_y):
    fig = plots.build_regret_curves(
        _curves(k), "Synthetic", log_y=log_y, band="± 1 standard error over 20 runs"
    )
    check_figure(fig)
    texts = [t.get_text() for legend in fig.legends + [fig.axes[0].get_legend()] if legend
             for t in legend.get_texts()]  # fmt: skip
    assert "shaded: ± 1 standard error over 20 runs" in texts


def test_nine_methods_against_observations_read_with_whole_ticks():
    """fig_e1_simple_regret.png: nine methods at n = 0, 4, ..., 20 (the legend used to cover the
    curves, and the axis showed 2.5, 7.5)."""
    n = [0, 4, 8, 12, 16, 20]
    series = {f"ε-Macro-BO H={k} (a long label)": (n, np.linspace(0.1, 0.9, 6) + 0.01 * k,
                                                   np.full(6, 0.03)) for k in range(9)}  # fmt: skip
    fig = plots.build_metric_vs_param(series, "E1: regret", "observations n", "regret (units)")
    check_figure(fig)
    assert not fig.axes[0].get_legend() and len(fig.legends) == 1  # below the axes
    ticks = fig.axes[0].get_xticks()
    assert np.all(ticks == np.round(ticks))


@pytest.mark.parametrize("log_x", [False, True])
def test_metric_vs_param_reads(log_x):
    x = [0.5, 1.0, 2.0, 4.0]
    series = {"a": (x, [1.0, 0.8, 0.5, 0.2], [0.1] * 4), "b": (x, [0.2, 0.5, 0.8, 1.0], [0.0] * 4)}
    check_figure(plots.build_metric_vs_param(series, "t", "eps", "regret", log_x=log_x))
    one = {"a": ([3], [1.0], [0.1])}  # a single point (E6: one time per method)
    check_figure(plots.build_metric_vs_param(one, "t", "seconds", "regret", log_x=log_x))


def test_two_scales_share_one_legend_below_both_panels():
    x = np.arange(0, 2001, 100)
    curves = {f"method {k}": (x, np.sqrt(x) * (k + 1), 0.1 * np.sqrt(x)) for k in range(8)}
    curves["copy of method 0"] = curves["method 0"]  # identical curves: told apart by style
    fig = plots.build_two_scales(
        curves, "Synthetic", "oracle queries", "cumulative regret", zoom=("method 0",)
    )
    check_figure(fig)
    assert len(fig.legends) == 1 and not any(ax.get_legend() for ax in fig.axes)
    styles = {(line.get_color(), line.get_linestyle()) for line in fig.axes[0].get_lines()}
    assert len(styles) == len(curves)


def test_a_band_says_how_many_runs_it_is_over():
    assert plots.over([20, 20]) == "over 20 runs"
    assert plots.over([35, 10, 27], "realizations") == "over 10–35 realizations"
    assert plots.over([1], "trials") == "over 1 trial (zero: one trial)"


def test_plot_functions_keep_their_file_names(tmp_path):
    paths = [
        plots.plot_regret_curves(_curves(2), tmp_path / "a.png", "t"),
        plots.plot_metric_vs_param(
            {"a": ([1, 2], [1, 2], [0, 0])}, tmp_path / "b.png", "t", "x", "y"
        ),
        plots.plot_two_scales({"a": ([1, 2], [1, 2], [0, 0])}, tmp_path / "c.png", "t", "x", "y"),
    ]
    assert [p.name for p in paths] == ["a.png", "b.png", "c.png"]
    assert all(p.read_bytes()[:8] == PNG_MAGIC for p in paths)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "b.png", "c.png"]


# -- the systems' figures -------------------------------------------------------------------------
@pytest.fixture
def saved(monkeypatch):
    """Every figure the report modules save, checked as it is saved."""
    import frontierbo.attack.report as attack_report
    import frontierbo.macro.plots as macro_plots

    figures = []
    real = plots.save_figure

    def save(fig, path):
        figures.append(fig)
        return real(fig, path)

    for module in (plots, macro_plots, attack_report):
        monkeypatch.setattr(module, "save_figure", save)
    return figures


def test_trajectories_mark_their_buoy_and_keep_the_legend_off_the_map():
    from frontierbo.macro.plots import build_trajectory

    xs, ys = np.meshgrid(np.arange(6.0), np.arange(5.0), indexing="ij")
    inputs = np.column_stack([xs.ravel(), ys.ravel()])
    values = np.sin(inputs).sum(axis=1)
    fig = build_trajectory(
        inputs, values, {"a": [0, 1, 7, 13], "b": [0, 6, 12]}, "grid", xlabel="x (km)",
        ylabel="y (km)", marks={"buoy": 14},
    )  # fmt: skip
    check_figure(fig)
    buoy = [line for line in fig.axes[0].get_lines() if line.get_label() == "buoy"]
    assert len(buoy) == 1 and tuple(buoy[0].get_xydata()[0]) == tuple(inputs[14])
    scatter = build_trajectory(
        inputs[[0, 3, 8, 20]] + [[0, 0], [0.3, 0], [0, 0.7], [0.1, 0.2]], [1.0, 2, 3, 4],
        {"path": [0, 2, 3]}, edges=[[0, 1], [1, 2], [2, 3]],
    )  # fmt: skip
    check_figure(scatter)
    with pytest.raises(ValueError, match=r"marks\['buoy'\] must be a location index in \[0, 29\]"):
        build_trajectory(inputs, values, {"a": [0]}, marks={"buoy": 30})


def test_the_study_figure_reads(tmp_path):
    from frontierbo.study import create_study
    from frontierbo.study.plots import build_best_so_far

    X = np.random.default_rng(1).uniform(size=(40, 2))
    study = create_study(X, storage=str(tmp_path / "s.db"), algorithm="random", seed=0)
    for _ in range(12):
        trial = study.ask()
        study.tell(trial, float(np.sin(5 * trial.x).sum()))
    check_figure(build_best_so_far(study))


def _attack_result(successes: dict, examples=None) -> dict:
    from frontierbo.attack.summary import method_row

    tables = {}
    for dataset, by_method in successes.items():
        tables[dataset] = {}
        for method, queries in by_method.items():
            records = [{"success": q is not None, "queries": q or 100, "seconds": 1.0}
                       for q in queries]  # fmt: skip
            tables[dataset][method] = method_row(records)
    return {"budget": 100, "tables": tables, "examples": examples or {}}


def test_the_queries_cdf_tells_every_attack_apart(saved, tmp_path):
    """queries_cdf.png: four of six attacks broke nothing (flat at 0 %): each legend entry
    says how many instances it broke."""
    from frontierbo.attack.report import write_figures

    failed = [None, None, None]
    result = _attack_result({
        "mnist": {"bos2": [40, 70, None], "bayesopt": [35, None, None], "zoo": failed,
                  "autozoom": failed, "genattack": failed, "bos2-nostop": failed, "pgd": [1, 1, 1]},
        "cifar10": {"bos2": failed, "bayesopt": [90, None, None], "zoo": failed},
    })  # fmt: skip
    paths = write_figures(result, tmp_path)
    assert [p.name for p in paths] == ["queries_cdf.png", "adversarial_examples.png"]
    assert all(p.read_bytes()[:8] == PNG_MAGIC for p in paths)
    cdf, examples = saved
    check_figure(cdf)
    labels = [t.get_text() for t in cdf.legends[0].get_texts()]
    assert "ZOO (succeeded: mnist 0/3, cifar10 0/3)" in labels
    assert "BOS² (succeeded: mnist 2/3, cifar10 0/3)" in labels
    assert not any("PGD" in label for label in labels)  # white-box: no query counts
    styles = {(line.get_color(), line.get_linestyle()) for line in cdf.axes[0].get_lines()}
    assert len(styles) == 6
    # no example: the figure is still written, and says why
    check_figure(examples)
    assert "none for mnist, cifar10\n(no success within T = 100)" in examples._suptitle.get_text()


def test_a_single_dataset_cdf_names_its_counts_plainly(saved, tmp_path):
    from frontierbo.attack.report import cdf_figure

    fig = cdf_figure(_attack_result({"mnist": {"bos2": [10, None], "zoo": [None, None]}}))
    check_figure(fig)
    assert "ZOO (0/2 succeeded)" in [t.get_text() for t in fig.legends[0].get_texts()]


def test_the_macro_figures_read_and_the_report_says_what_the_bars_are(saved, tmp_path):
    from frontierbo.macro.report import figure_captions, write_figures

    n = [0, 4, 8, 12, 16, 20]

    def row(k, runs=10, **extra):
        curve = [list(np.linspace(0.1, 0.8, 6) + 0.02 * k), [0.03] * 6]
        return {"label": f"method {k} with a long label", "runs": runs, "n": n,
                "avg_output_curve": curve, "simple_regret_curve": curve,
                "avg_output": [0.8, 0.03], "simple_regret": [0.2, 0.02],
                "seconds_per_iteration": [10.0 ** (k - 4), 0.0], **extra}  # fmt: skip

    beta = {f"b{h}-{b}": row(h, beta=b, horizon=h, thesis={"avg_output": [0.5 + b / 10, 0.02]})
            for h in (2, 3) for b in (0.0, 0.5, 1.0, 2.0)}  # fmt: skip
    result = {
        "seed": 0,
        "experiments": {
            "e1": {"tables": {"main": {"rows": {f"r{k}": row(k) for k in range(9)}},
                              "beta": {"rows": beta}}},
            "e5": {"realization": 0, "trajectories": {
                "eps-h4-n1@k2-buoy": [1275, 1276, 1277, 1327, 1377],
                "db-gp-ucb@k2-buoy": [1275, 1225, 1175, 1176, 1177]}},
            "e6": {"tables": {"main": {"rows": {f"r{k}": row(k, runs=35 - k) for k in range(9)}}}},
        },
    }  # fmt: skip
    paths = write_figures(result, tmp_path)
    names = [p.name for p in paths]
    assert names == [
        "fig_e1_avg_output.png", "fig_e1_simple_regret.png", "fig_e1_beta.png",
        "fig_e5_trajectories.png", "fig_e6_avg_output.png", "fig_e6_simple_regret.png",
        "fig_e6_avg_output_vs_time.png", "fig_e6_simple_regret_vs_time.png",
    ]  # fmt: skip
    assert len(saved) == len(paths)
    for fig in saved:
        check_figure(fig)
    trajectories = saved[names.index("fig_e5_trajectories.png")]
    assert "buoy at cell (5, 5)" in trajectories.axes[0].get_title()
    buoy = [line for line in trajectories.axes[0].get_lines() if "buoy" in line.get_label()]
    assert len(buoy) == 1 and np.allclose(buoy[0].get_xydata()[0], [0.0, 0.0])  # cell (5, 5)
    captions = figure_captions(result)
    assert captions["fig_e1_simple_regret.png"] == (
        "Error bars: ± 1 standard error over 10 realizations."
    )
    assert captions["fig_e6_avg_output_vs_time.png"].endswith("over 27–35 realizations.")
    assert "fig_e5_trajectories.png" not in captions


def test_the_po_figures_read_and_the_report_says_what_the_bands_are(saved, tmp_path):
    from frontierbo.experiments.report import figure_lines
    from frontierbo.po.experiment import SETUPS, config_key, configurations
    from frontierbo.po.report import figure_captions, write_figures

    setup = SETUPS["synthetic"]
    T = setup.iterations + 1
    configs = {
        config_key(method, le, r): {
            "n_runs": 20,
            "mean": np.exp(-np.arange(T) / 10) + 0.01 * k,
            "stderr": np.full(T, 0.02),
        }
        for k, (method, le, r) in enumerate(configurations(setup))
    }
    result = {"datasets": {"synthetic": {"configs": configs}}}
    paths = write_figures(result, tmp_path)
    assert [p.name for p in paths] == [
        "fig_synthetic_eps_sweep.png", "fig_synthetic_r_sweep.png",
        "fig_synthetic_privacy_utility.png",
    ]  # fmt: skip
    for fig in saved:
        check_figure(fig)
    lines = figure_lines(paths, captions=figure_captions(result))
    assert lines[2:4] == [
        "- `fig_synthetic_eps_sweep.png`",
        "  - Shaded: ± 1 standard error over 20 runs.",
    ]
    assert lines[5] == "  - Error bars: ± 1 standard error over 20 runs."


def test_the_demo_figure_says_what_its_band_is(saved, tmp_path, monkeypatch):
    from frontierbo.po import demo as demo_module

    T = demo_module.DEMO.iterations + 1
    configs = {
        demo_module.config_key(method, le, r): {
            "mean": np.linspace(1, 0.1, T) + 0.05 * k,
            "stderr": np.full(T, 0.03),
            "branch": "if",
            "omega": 3.0,
        }  # fmt: skip
        for k, (method, le, r) in enumerate(
            [(demo_module.NON_PRIVATE, None, None)]
            + [
                (demo_module.PO, le, demo_module.DEMO.sweep_r)
                for le in demo_module.DEMO.sweep_log_eps
            ]
        )
    }
    summary = {"configs": configs, "sigma_min": 1.0}
    monkeypatch.setattr(demo_module, "run_dataset", lambda *args: summary)
    monkeypatch.setattr("frontierbo.po.problems.synthetic.synthetic_gp_grid", lambda seed: None)
    text = demo_module.demo(tmp_path / "demo", runs=7, progress=False)
    assert text.rstrip().endswith("NOT differentially private (see docs/privacy.md).")
    assert (tmp_path / "demo" / "demo_simple_regret.png").read_bytes()[:8] == PNG_MAGIC
    (fig,) = saved
    check_figure(fig)
    texts = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert "shaded: ± 1 standard error over 7 runs" in texts


def test_the_quantum_figures_read_with_one_legend(saved, tmp_path):
    from frontierbo.experiments.report import figure_lines
    from frontierbo.quantum.experiment import DEFAULT_METHODS, METHODS, SETTINGS
    from frontierbo.quantum.report import figure_captions, write_figures

    key = next(iter(SETTINGS))
    x = np.arange(0, 1001, 50)
    summary = {key: {m: {"label": METHODS[m].label, "runs": 5, "checkpoints": x,
                         "curve_mean": np.sqrt(x) * (1 + k), "curve_se": 0.1 * np.sqrt(x)}
                     for k, m in enumerate(DEFAULT_METHODS)}}  # fmt: skip
    result = {"summary": summary}
    (path,) = write_figures(result, tmp_path)
    assert path.name == f"fig_{key}.png"
    (fig,) = saved
    check_figure(fig)
    assert len(fig.legends) == 1
    lines = figure_lines([path], captions=figure_captions(result))
    assert lines[-1] == "  - Shaded: ± 1 standard error (ddof = 0) over 5 runs."


def test_the_ldp_figures_read_and_say_their_bars_are_standard_deviations(saved, tmp_path):
    from frontierbo.ldp.experiment import ALGORITHMS
    from frontierbo.ldp.report import figure_captions, write_figures

    cps = np.arange(100, 1001, 100)

    def algs(eps):
        return {a: {"label": ALGORITHMS[a][3], "checkpoints": cps, "n_trials": 4,
                    "curve_mean": 1 / np.sqrt(cps) * (1 + k) / eps, "curve_std": 0.01 / eps + 0 * cps,
                    "uniform_regret_mean": 0.5, "avg_regret_mean": 0.1 * (1 + k) / eps,
                    "avg_regret_stderr": 0.01} for k, a in enumerate(ALGORITHMS)}  # fmt: skip

    settings = {f"s{eps}": {"kind": "private", "problem": f"light-{eps}", "family": "light",
                            "eps": eps, "title": f"Light sensors, eps = {eps}",
                            "algorithms": algs(eps)} for eps in (0.5, 1.0, 2.0)}  # fmt: skip
    result = {"settings": settings, "parameters": {"epsilons": [0.5, 1.0, 2.0]},
              "datasets": ["light"]}  # fmt: skip
    paths = write_figures(result, tmp_path)
    assert [p.name for p in paths][-1] == "fig_privacy_cost_light.png" and len(paths) == 4
    for fig in saved:
        check_figure(fig)
    captions = figure_captions(result)
    assert captions[paths[0].name] == (
        "Error bars: ± 1 standard deviation over 4 trials (as the paper's Fig. 2)."
    )
    assert captions["fig_privacy_cost_light.png"] == (
        "Error bars: ± 1 standard error over 4 trials."
    )
