"""``frontierbo demo``: the synthetic PO-GP-UCB experiment at a small size, in well under a minute.

Non-private GP-UCB against PO-GP-UCB at eps in {e^0.0, e^0.9, e^1.1} (r = 10), on the 100 x 100
synthetic GP grid in the authors' setting (a new GP sample per run); prints a table beside the
paper's numbers and writes a plot. It runs exactly the four configurations it prints (paper
profile, no privacy-utility comparison): 80 runs by default, about 6 s on one core.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from frontierbo.po.experiment import (
    NON_PRIVATE,
    PO,
    PUBLISHED,
    SETUPS,
    config_key,
    final,
    run_dataset,
)

DEMO = replace(
    SETUPS["synthetic"],
    title="Synthetic GP demo",
    sweep_log_eps=(0.0, 0.9, 1.1),
    tables=(),
    privacy_log_eps=(),
)
#: The paper's S_50 derived from its text, by log eps
#: (docs/decisions.md#po-gp-ucb-published-numbers-derived-from-the-text).
PAPER_S50 = {(k if k == NON_PRIVATE else float(k)): v for k, v in PUBLISHED["demo_S50"].items()}


def demo(out: Path, runs: int = 20, n_jobs: int = 1, seed: int = 0, progress: bool = True) -> str:
    """Run the demo into ``out`` (resumable); return the printed table."""
    from frontierbo.experiments.plots import over, plot_regret_curves
    from frontierbo.experiments.store import lock_directory
    from frontierbo.io import check_out_dir
    from frontierbo.po.problems.synthetic import synthetic_gp_grid

    out = check_out_dir(out)  # an unusable --out fails before any work
    with lock_directory(out):  # a second demo into the same folder refuses at once
        summary = run_dataset(DEMO, synthetic_gp_grid(seed), out, runs, n_jobs, seed, progress)
    rows = [("GP-UCB (non-private)", "–", "–", "–", NON_PRIVATE, PAPER_S50[NON_PRIVATE])]
    for le in DEMO.sweep_log_eps:
        c = summary["configs"][config_key(PO, le, DEMO.sweep_r)]
        key = config_key(PO, le, DEMO.sweep_r)
        rows.append(
            (f"PO-GP-UCB eps=e^{le:g}", c["branch"], f"{c['omega']:.0f}", "10", key, PAPER_S50[le])
        )
    curves = {label: _curve(summary["configs"][key]) for label, *_, key, _ in rows}
    plot = plot_regret_curves(
        curves,
        out / "demo_simple_regret.png",
        f"Synthetic GP, r = 10, {runs} runs",
        ylabel="simple regret S_t (objective units)",
        band=f"± 1 standard error {over([runs])}",
    )
    lines = [
        f"Synthetic GP, 100x100 grid, T = {DEMO.iterations}, {runs} runs (sigma_min = "
        f"{summary['sigma_min']:.2f})",
        "",
        f"{'method':<24}{'branch':>7}{'omega':>7}{'r':>4}{'S_50 (ours)':>18}{'paper':>8}",
    ]
    for label, branch, omega, r, key, paper in rows:
        mean, se = final(summary, key)
        lines.append(f"{label:<24}{branch:>7}{omega:>7}{r:>4}{mean:>11.3f} ± {se:.3f}{paper:>8.3f}")
    lines += [
        "",
        f"plot: {plot}",
        "PO-GP-UCB's release is NOT differentially private (see docs/privacy.md).",
    ]
    return "\n".join(lines)


def _curve(config: dict):
    return config["mean"][1:], config["stderr"][1:]
