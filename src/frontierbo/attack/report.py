"""``frontierbo reproduce bos2``: the attack experiments of :mod:`frontierbo.attack.experiment` on
the shared tail (:mod:`frontierbo.experiments.report`): Tables 5.1-5.4 with the thesis's numbers
beside ours, the orderings of those tables on our runs, a figure of the queries-to-success CDFs
and one of adversarial examples."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from frontierbo.attack.experiment import (
    DATASETS,
    DEFAULTS,
    DELTA_MAX,
    METHOD_LABELS,
    PUBLISHED,
    QUICK,
    build_specs,
    check_options,
    run_worker,
    unavailable,
)
from frontierbo.attack.summary import (
    DIFFICULTY_LABEL,
    ORDERING_LABELS,
    published_row,
    summarise,
)
from frontierbo.experiments.plots import DPI, STYLE
from frontierbo.experiments.report import Reproduction, figure_lines
from frontierbo.experiments.store import atomic_output
from frontierbo.io import markdown_table

NOTES = [
    "ASR: % of instances with a target-class input inside the L_inf ball within the budget; "
    "max / mean / median: queries to success over the successful instances. The 30 initial "
    "queries of BOS² and BayesOpt count (Algorithm 5 leaves this open) unless "
    "count_init_in_budget is False.",
    "Victims: MNIST, the C&W architecture trained here on the first 10 000 training images "
    "(the thesis's was trained on all 60 000); CIFAR-10, the pretrained Keras CNN of the "
    "cifar-10-model wheel ported to torch (not the C&W architecture; raw 0-255 input, ReLU "
    "on the logits). The attack space is pixel/255 - 0.5 for both.",
    "CIFAR-10 instances are the 20 real test images that ship in foolbox, as the thesis "
    "attacked 20 images; the thesis's CIFAR text claims a 9.54 % smaller mean than BayesOpt, "
    "which its own Table 5.3 contradicts (253.5 vs 247.49); the table's numbers are used.",
    "White-box PGD (reference) is not a black-box attack: it reads the victim's gradients "
    "(six starts of 200 sign steps on the logit margin, cross-entropy and (5.2), projected "
    "onto the image box) in the same ball and range mode, and its one checked query "
    "proves an instance reachable. Its ASR bounds what the black-box attacks can be expected "
    "to reach on this victim; it has no query counts.",
]
CSV_HEADER = (
    "dataset", "method", "instances", "asr", "max", "mean", "median",
    "thesis_asr", "thesis_max", "thesis_mean", "thesis_median",
)  # fmt: skip


def reproduce(out, **options) -> dict:
    """``frontierbo reproduce bos2``: :meth:`Reproduction.reproduce
    <frontierbo.experiments.report.Reproduction.reproduce>` of :data:`REPRODUCTION`.

    Own options: ``budget`` (T, 900), ``targets`` (per image, 9), ``methods`` (subset of
    bos2, genattack, zoo, autozoom, bayesopt, bos2-nostop, pgd), ``profile`` (``paper``,
    ``scalable`` or ``fast``), ``count_init_in_budget`` (True) and ``range_mode`` (``clip`` or
    ``rescale``); ``quick``: one image, two targets, T = 100
    and the fast profile.
    """
    return REPRODUCTION.reproduce(out, **options)


def _fmt(value, digits: int = 2) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


def csv_rows(result: dict):
    for dataset, rows in result["tables"].items():
        for method, row in rows.items():
            thesis = published_row(dataset, method) or {}
            yield (
                dataset, method, row["instances"], row["asr"], row["max"], row["mean"],
                row["median"], thesis.get("asr"), thesis.get("max"), thesis.get("mean"),
                thesis.get("median"),
            )  # fmt: skip


def _table(dataset: str, rows: dict, methods) -> str:
    body = []
    for method in methods:
        if method not in rows:
            continue
        row, thesis = rows[method], published_row(dataset, method) or {}
        if method == "pgd":
            asr = f"{_fmt(row['asr'], 1)} %"
            body.append([METHOD_LABELS[method], f"{row['successes']}/{row['instances']}", asr])
            body[-1] += ["white-box"] * 3
            continue
        body.append(
            [
                METHOD_LABELS[method],
                f"{row['successes']}/{row['instances']}",
                f"{_fmt(row['asr'], 1)} % ({_fmt(thesis.get('asr'))} %)",
                f"{_fmt(row['max'])} ({_fmt(thesis.get('max'))})",
                f"{_fmt(row['mean'])} ({_fmt(thesis.get('mean'))})",
                f"{_fmt(row['median'])} ({_fmt(thesis.get('median'))})",
            ]
        )
    header = [
        "attack",
        "successes",
        "ASR (thesis)",
        "max (thesis)",
        "mean (thesis)",
        "median (thesis)",
    ]
    return markdown_table(header, body, "lrrrrr")


def report_markdown(result: dict, figures: list[Path]) -> str:
    lines = [f"# BOS² reproduction ({result['paper']})", ""]
    lines += [
        f"Budget T = {result['budget']}, BOS² profile `{result['profile']}`, initial queries "
        f"{'counted' if result['count_init_in_budget'] else 'not counted'}, "
        f"range mode `{result['range_mode']}` for BOS², BayesOpt and PGD.",
        "",
    ]
    lines += [f"- {note}" for note in NOTES]
    substituted = {d: why for d, why in result.get("images", {}).items() if "substitute" in why}
    lines += [f"- **{dataset} instances**: {why}." for dataset, why in substituted.items()]
    lines.append("")
    numbers = PUBLISHED["table_numbers"]
    main = ("bos2", "genattack", "zoo", "autozoom", "bayesopt", "pgd")
    ablation = ("bos2", "bos2-nostop", "bayesopt")
    for dataset, rows in result["tables"].items():
        delta = DELTA_MAX[dataset]
        lines += [
            f"## {dataset}: Table {numbers[dataset]['main']} (δ_max = {delta}, ours (thesis))",
            "",
            _table(dataset, rows, main),
            "",
        ]
        if any(method in rows for method in ablation[1:]):
            lines += [
                f"### Table {numbers[dataset]['ablation']}: the ablation",
                "",
                _table(dataset, rows, ablation),
                "",
            ]
        for method in ("bos2", "bos2-nostop"):
            row = rows.get(method, {})
            if "loop_length_mean" in row:
                lines.append(
                    f"- {METHOD_LABELS[method]}: {_fmt(row['loop_length_mean'])} queries per "
                    f"perturbation loop on average over the {row['loops_ended']} loops that ended "
                    "by their own rule (each run's last loop, cut short by the success or the "
                    f"budget, left out), {100 * row['loops_stopped_early']:.0f} % of them stopped "
                    f"early; latent dimensions chosen: {row['dimensions']}"
                )
        checks = result["checks"].get(dataset, {})
        ran = {k: v for k, v in checks.items() if v is not None}
        if ran:
            lines += ["", "Orderings of the thesis's tables on these runs:", ""]
            lines += [
                f"- {ORDERING_LABELS[name]}: {'yes' if ok else 'NO'}" for name, ok in ran.items()
            ]
        lines.append("")
    if result.get("difficulty"):
        verdicts = ", ".join(
            f"{METHOD_LABELS[m]} {'yes' if ok else 'NO'}" for m, ok in result["difficulty"].items()
        )
        lines += [f"Across the datasets: {DIFFICULTY_LABEL}: {verdicts}", ""]
    lines += figure_lines(figures)
    return "\n".join(lines) + "\n"


# -- figures ---------------------------------------------------------------------------------------
def write_figures(result: dict, out: Path) -> list[Path]:
    paths = [_cdf_figure(result, Path(out) / "queries_cdf.png")]
    if result.get("examples"):
        paths.append(_examples_figure(result, Path(out) / "adversarial_examples.png"))
    return paths


def _save(fig: Figure, path: Path, rect=(0, 0, 1, 1)) -> Path:
    """Lay the axes out inside ``rect`` (figure fractions; the rest is left to a figure legend)
    and write the PNG atomically."""
    fig.tight_layout(pad=0.3, rect=rect)
    with atomic_output(path) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI)
    return path


def _cdf_figure(result: dict, path: Path) -> Path:
    datasets = list(result["tables"])
    # one colour per attack in every panel, and one legend below them: inside a panel it hid
    # the curves wherever they ran (low on CIFAR-10, high on MNIST)
    colours = {method: f"C{k}" for k, method in enumerate(METHOD_LABELS)}
    handles = {}
    with rc_context(STYLE):
        fig = Figure(figsize=(3.25 * len(datasets), 3.0))
        FigureCanvasAgg(fig)
        for k, dataset in enumerate(datasets):
            ax = fig.add_subplot(1, len(datasets), k + 1)
            for method, row in result["tables"][dataset].items():
                q = np.asarray(row["queries_to_success"], dtype=float)
                if row["instances"] == 0 or method == "pgd":  # white-box: no query counts
                    continue
                xs = np.concatenate([[0], q, [result["budget"]]])  # each curve runs to T
                ys = np.minimum(np.arange(len(xs)), len(q)) / row["instances"]
                label = METHOD_LABELS[method]
                (line,) = ax.step(xs, 100 * ys, where="post", color=colours[method], label=label)
                handles.setdefault(label, line)
            ax.set_title(f"{dataset}: queries to success")
            ax.set_xlabel("queries")
            ax.set_ylabel("instances succeeded (%)")
            ax.grid(True, alpha=0.3, linewidth=0.5)
        fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=3, frameon=False)
        return _save(fig, path, rect=(0, 0.18, 1, 1))


def _examples_figure(result: dict, path: Path) -> Path:
    from frontierbo.attack.experiment import _test_images

    rows = [(d, e) for d, items in result["examples"].items() for e in items]
    with rc_context(STYLE):
        fig = Figure(figsize=(3.25, 1.1 * len(rows)))
        FigureCanvasAgg(fig)
        for k, (dataset, example) in enumerate(rows):
            x0 = _test_images(dataset)[0][example["image"]]
            x_adv = np.asarray(example["x_adv"])
            panels = (x0 + 0.5, x_adv + 0.5, 0.5 + (x_adv - x0) / (2 * DELTA_MAX[dataset]))
            titles = ("original", f"target {example['target']}", "perturbation")
            for j, (img, title) in enumerate(zip(panels, titles, strict=True)):
                ax = fig.add_subplot(len(rows), 3, 3 * k + j + 1)
                img = np.clip(img, 0, 1)
                ax.imshow(img[..., 0] if img.shape[-1] == 1 else img, cmap="gray", vmin=0, vmax=1)
                ax.set_xticks([])
                ax.set_yticks([])
                ax.set_title(f"{dataset} {title}" if j == 0 else title)
        return _save(fig, path)


REPRODUCTION = Reproduction(
    name="bos2",
    paper=PUBLISHED["paper"],
    datasets=DATASETS,
    defaults=DEFAULTS,
    quick=QUICK,
    build_specs=build_specs,
    worker=run_worker,
    summarise=summarise,
    csv_header=CSV_HEADER,
    csv_rows=csv_rows,
    figures=write_figures,
    markdown=report_markdown,
    check=check_options,
    published=PUBLISHED,
    unavailable=unavailable,
)
