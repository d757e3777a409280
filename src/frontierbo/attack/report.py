"""``frontierbo reproduce bos2``: the attack experiments of :mod:`frontierbo.attack.experiment` on
the shared tail (:mod:`frontierbo.experiments.report`): Tables 5.1-5.4 with the thesis's numbers
beside ours, the orderings of those tables on our runs, a figure of the queries-to-success CDFs
and one of adversarial examples."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib import rc_context
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
    required_inputs,
    run_worker,
    unavailable,
)
from frontierbo.attack.summary import (
    DIFFICULTY_LABEL,
    ORDERING_LABELS,
    published_row,
    summarise,
)
from frontierbo.experiments.plots import (
    LINESTYLES,
    STYLE,
    integer_ticks,
    new_figure,
    place_legend,
    save_figure,
)
from frontierbo.experiments.report import Reproduction, figure_lines
from frontierbo.io import markdown_table

NOTES = [
    "ASR: % of instances with a target-class input inside the L_inf ball within the budget; "
    "max / mean / median: queries to success over the successful instances. The 30 initial "
    "queries of BOS² and BayesOpt count (Algorithm 5 leaves this open) unless "
    "count_init_in_budget is False.",
    "Victims: MNIST `mnist`, the C&W CNN with the weights the BayesOpt attack's and AutoZOOM's "
    "code ship (99.41 % test accuracy; MIT, rubinxin/BayesOpt_Attack), or `mnist-10k`, the same "
    "CNN trained here on the first 10 000 training images (98.35 %); CIFAR-10, the pretrained "
    "Keras CNN of the cifar-10-model wheel ported to torch (not the C&W architecture, whose "
    "weights are not available here; raw 0-255 input, ReLU on the logits). The attack space is "
    "pixel/255 - 0.5 for both.",
    "Profiles: `paper` is the thesis as written (the L_inf ball by clipping; GenAttack with its "
    "code's defaults); `reference` is the authors' code (the BayesOpt code's rescaling "
    "(x0 + δ)/(1 + 2 δ_max), success by the argmax alone; GenAttack with its README's "
    "settings). ZOO and AutoZOOM run alike in both.",
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
    "profile", "dataset", "method", "instances", "asr", "max", "mean", "median",
    "thesis_asr", "thesis_max", "thesis_mean", "thesis_median",
)  # fmt: skip


def reproduce(out, **options) -> dict:
    """``frontierbo reproduce bos2``: :meth:`Reproduction.reproduce
    <frontierbo.experiments.report.Reproduction.reproduce>` of :data:`REPRODUCTION`.

    Own options: ``budget`` (T, 900), ``targets`` (per image, 9), ``methods`` (subset of
    bos2, genattack, zoo, autozoom, bayesopt, bos2-nostop, pgd), ``profile`` (a tuple of
    ``paper`` and ``reference``; ``("reference",)``), ``fitting`` (``full``, ``scalable`` or
    ``fast``), ``count_init_in_budget`` (True), ``mnist_victim`` (``mnist`` or
    ``mnist-10k``) and ``mnist_images`` (``random`` or ``first``); ``quick``: one image, two
    targets, T = 100 and the fast fitting.
    """
    return REPRODUCTION.reproduce(out, **options)


def _fmt(value, digits: int = 2) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


def csv_rows(result: dict):
    for profile, part in result["profiles"].items():
        for dataset, rows in part["tables"].items():
            for method, row in rows.items():
                thesis = published_row(dataset, method) or {}
                yield (
                    profile, dataset, method, row["instances"], row["asr"], row["max"],
                    row["mean"], row["median"], thesis.get("asr"), thesis.get("max"),
                    thesis.get("mean"), thesis.get("median"),
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
    victims = ", ".join(f"{d} `{v}`" for d, v in result["victims"].items())
    lines += [
        f"Budget T = {result['budget']}, profiles {', '.join(result['profile'])}, BOS² and "
        f"BayesOpt fitting `{result['fitting']}`, initial queries "
        f"{'counted' if result['count_init_in_budget'] else 'not counted'}; victims {victims}.",
        "",
    ]
    lines += [f"- {note}" for note in NOTES]
    lines += [f"- **{d} instances**: {source}." for d, source in result.get("images", {}).items()]
    lines.append("")
    for profile, part in result["profiles"].items():
        if len(result["profiles"]) > 1:
            lines += [f"## Profile `{profile}`", ""]
        lines += _profile_markdown(part, level="##" if len(result["profiles"]) == 1 else "###")
    lines += figure_lines(figures)
    return "\n".join(lines) + "\n"


def _profile_markdown(part: dict, level: str) -> list[str]:
    lines = []
    numbers = PUBLISHED["table_numbers"]
    main = ("bos2", "genattack", "zoo", "autozoom", "bayesopt", "pgd")
    ablation = ("bos2", "bos2-nostop", "bayesopt")
    for dataset, rows in part["tables"].items():
        delta = DELTA_MAX[dataset]
        lines += [
            f"{level} {dataset}: Table {numbers[dataset]['main']} (δ_max = {delta}, ours (thesis))",
            "",
            _table(dataset, rows, main),
            "",
        ]
        if any(method in rows for method in ablation[1:]):
            lines += [
                f"{level}# Table {numbers[dataset]['ablation']}: the ablation",
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
        checks = part["checks"].get(dataset, {})
        ran = {k: v for k, v in checks.items() if v is not None}
        if ran:
            lines += ["", "Orderings of the thesis's tables on these runs:", ""]
            lines += [
                f"- {ORDERING_LABELS[name]}: {'yes' if ok else 'NO'}" for name, ok in ran.items()
            ]
        lines.append("")
    if part.get("difficulty"):
        verdicts = ", ".join(
            f"{METHOD_LABELS[m]} {'yes' if ok else 'NO'}" for m, ok in part["difficulty"].items()
        )
        lines += [f"Across the datasets: {DIFFICULTY_LABEL}: {verdicts}", ""]
    return lines


# -- figures ---------------------------------------------------------------------------------------
def write_figures(result: dict, out: Path) -> list[Path]:
    """``queries_cdf.png`` and ``adversarial_examples.png`` (the latter says so where no attack
    gave an example)."""
    return [
        save_figure(cdf_figure(result), Path(out) / "queries_cdf.png"),
        save_figure(examples_figure(result), Path(out) / "adversarial_examples.png"),
    ]


def _successes(result: dict, method: str) -> str:
    """``"3/18 succeeded"`` or ``"succeeded: mnist 3/18, cifar10 0/20"``."""
    counts = [
        (dataset, f"{rows[method]['successes']}/{rows[method]['instances']}")
        for dataset, rows in result["tables"].items()
        if method in rows and rows[method]["instances"]
    ]
    if len(result["tables"]) == 1 and counts:
        return f"{counts[0][1]} succeeded"
    return "succeeded: " + ", ".join(f"{d} {c}" for d, c in counts)


def cdf_figure(result: dict) -> Figure:
    """Per dataset, the share of instances each black-box attack has broken against the queries
    spent (to the budget T). One colour and line style per attack in every panel; the legend,
    below the panels, gives each attack's successes, so that attacks that broke nothing (all
    flat at 0 %, on top of each other) are still told apart."""
    datasets = list(result["tables"])
    methods = [m for m in METHOD_LABELS if m != "pgd"]  # white-box: no query counts
    with rc_context(STYLE):
        fig = new_figure((3.25 * len(datasets), 2.4))
        axes = fig.subplots(1, len(datasets), squeeze=False)[0]
        for ax, dataset in zip(axes, datasets, strict=True):
            for k, method in enumerate(methods):
                row = result["tables"][dataset].get(method)
                if row is None or row["instances"] == 0:
                    continue
                q = np.asarray(row["queries_to_success"], dtype=float)
                xs = np.concatenate([[0], q, [result["budget"]]])  # each curve runs to T
                ys = np.minimum(np.arange(len(xs)), len(q)) / row["instances"]
                label = f"{METHOD_LABELS[method]} ({_successes(result, method)})"
                style = LINESTYLES[k % len(LINESTYLES)]
                ax.step(xs, 100 * ys, where="post", color=f"C{k}", linestyle=style, label=label)
            ax.set_ylim(-4, 104)  # a curve at 0 % or 100 % is not drawn on the frame
            ax.set_title(f"{dataset}: queries to success")
            ax.set_xlabel(f"queries (budget T = {result['budget']})")
            ax.set_ylabel("instances succeeded (%)")
            ax.grid(True, alpha=0.3, linewidth=0.5)
            integer_ticks(ax)
        place_legend(fig, list(axes), inside=False)
    return fig


def examples_figure(result: dict) -> Figure:
    """Per BOS² example (first target of an image): the clean image, the adversarial one and
    the perturbation (grey 0.5 = none, black / white = -/+ δ_max). Where a dataset has no
    example (no such success within the budget), the title says so; with none at all, the
    figure is that one sentence."""
    from frontierbo.attack.experiment import _test_images

    examples = result.get("examples") or {}
    rows = [(d, e) for d, items in examples.items() for e in items]
    missing = [d for d in result["tables"] if not examples.get(d)]
    title = "BOS² adversarial examples\n(the first target of each image)"
    if missing:
        title += f"\nnone for {', '.join(missing)}\n(no success within T = {result['budget']})"
    with rc_context(STYLE):
        fig = new_figure((3.25, 0.5 + 1.1 * max(len(rows), 1)))
        fig.suptitle(title)
        if not rows:
            ax = fig.add_subplot()
            ax.set_axis_off()
            ax.text(0.5, 0.5, "no successful example to show", ha="center", va="center")
            return fig
        for k, (dataset, example) in enumerate(rows):
            x0 = _test_images(dataset)[0][example["image"]]
            x_adv = np.asarray(example["x_adv"])
            panels = (x0 + 0.5, x_adv + 0.5, 0.5 + (x_adv - x0) / (2 * DELTA_MAX[dataset]))
            titles = ("original", f"target {example['target']}", "perturbation")
            for j, (img, panel) in enumerate(zip(panels, titles, strict=True)):
                ax = fig.add_subplot(len(rows), 3, 3 * k + j + 1)
                img = np.clip(img, 0, 1)
                ax.imshow(img[..., 0] if img.shape[-1] == 1 else img, cmap="gray", vmin=0, vmax=1)
                ax.set_xticks([])
                ax.set_yticks([])
                ax.set_title(f"{dataset} {panel}" if j == 0 else panel)
    return fig


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
    inputs=required_inputs,
)
