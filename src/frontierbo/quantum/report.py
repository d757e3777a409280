"""``frontierbo reproduce quantum-bo``: run the grid of :mod:`frontierbo.quantum.experiment`,
then write results.json, summary.csv, one cumulative-regret-vs-queries figure per setting and
report.md with the published numbers (spec 4.7, from the authors' result pickles) beside ours."""

from __future__ import annotations

import csv
import io
import math
import time
from pathlib import Path

import numpy as np

from frontierbo._validation import check_int
from frontierbo.experiments.store import write_json_atomic, write_text_atomic
from frontierbo.quantum.experiment import (
    DEFAULT_METHODS,
    MAIN_SETTINGS,
    METHODS,
    NOISY_METHOD,
    NOISY_RUNS,
    QUICK_RUNS,
    QUICK_T,
    REPORT_QUERIES,
    SETTINGS,
    SHAPE_METHODS,
    SHAPE_QUERIES,
    SHAPE_SETTING,
    build_specs,
    run_grid,
)

PAPER = "Dai, Lau, Verma, Shu, Low & Jaillet, Quantum Bayesian Optimization, NeurIPS 2023"

#: Published cumulative regret (mean, s.e.) at query q, from the authors' result pickles (spec 4.7).
#: Q-GP-UCB has plateaued by query 500 (spec 4.7 prints its value there for every later query).
#: Their Q-GP-UCB is the reference code (mean weights 1/eps^3), i.e. our ``q-gp-ucb-reference``.
PUBLISHED: dict[str, dict[str, dict[int, tuple[float, float]]]] = {
    "synthetic-gauss0.3": {
        "gp-ucb": {
            10: (3.34, 0.29),
            100: (14.99, 1.14),
            500: (26.07, 1.97),
            1000: (35.32, 1.83),
            2000: (42.76, 2.28),
            5000: (48.52, 2.29),
            10000: (54.02, 2.75),
        },
        "q-gp-ucb-reference": {
            10: (4.50, 0.55),
            100: (30.48, 0.49),
            500: (30.88, 0.49),
            1000: (30.88, 0.49),
            2000: (30.88, 0.49),
            5000: (30.88, 0.49),
            10000: (30.88, 0.49),
        },
    },
    "synthetic-gauss0.4": {
        "gp-ucb": {
            10: (3.51, 0.27),
            100: (15.74, 1.46),
            500: (29.66, 3.33),
            1000: (37.82, 4.26),
            2000: (44.20, 4.50),
            5000: (50.65, 5.02),
            10000: (59.43, 6.32),
        },
        "q-gp-ucb-reference": {
            10: (4.48, 0.35),
            100: (29.40, 0.85),
            500: (29.53, 0.90),
            1000: (29.53, 0.90),
            2000: (29.53, 0.90),
            5000: (29.53, 0.90),
            10000: (29.53, 0.90),
        },
    },
    "synthetic-bernoulli": {
        "gp-ucb": {
            10: (3.12, 0.24),
            100: (13.22, 1.23),
            500: (26.59, 2.89),
            1000: (32.92, 3.79),
            2000: (39.54, 4.44),
            5000: (47.87, 4.54),
            10000: (51.44, 4.81),
        },
        "q-gp-ucb-reference": {
            10: (4.35, 0.42),
            100: (33.12, 0.81),
            500: (34.14, 1.08),
            1000: (34.14, 1.08),
            2000: (34.14, 1.08),
            5000: (34.14, 1.08),
            10000: (34.14, 1.08),
        },
    },
    "automl-sigma0.01": {
        "gp-ucb": {
            10: (0.63, 0.04),
            100: (3.51, 0.08),
            500: (10.76, 0.19),
            1000: (15.11, 0.23),
            2000: (21.33, 0.32),
            3000: (25.98, 0.32),
            5000: (33.19, 0.29),
        },
        "q-gp-ucb-reference": {
            10: (1.05, 0.07),
            100: (9.27, 0.28),
            500: (18.34, 0.43),
            1000: (18.34, 0.43),
            2000: (18.34, 0.43),
            3000: (18.34, 0.43),
            5000: (18.34, 0.43),
        },
    },
    "automl-sigma0.05": {
        "gp-ucb": {
            10: (0.91, 0.08),
            100: (5.39, 1.02),
            500: (13.34, 1.44),
            1000: (18.37, 1.65),
            2000: (24.66, 2.04),
            3000: (29.13, 2.06),
            5000: (36.83, 2.01),
        },
        "q-gp-ucb-reference": {
            10: (1.04, 0.07),
            100: (8.98, 0.22),
            500: (19.07, 0.82),
            1000: (19.07, 0.82),
            2000: (19.07, 0.82),
            3000: (19.07, 0.82),
            5000: (19.07, 0.82),
        },
        "linucb": {
            10: (1.02, 0.06),
            100: (8.12, 1.72),
            500: (37.37, 10.36),
            1000: (73.14, 21.59),
            2000: (144.46, 44.17),
            3000: (215.67, 66.82),
            5000: (357.80, 112.27),
        },
        "q-linucb": {
            10: (1.13, 0.00),
            100: (7.02, 1.55),
            500: (27.10, 10.65),
            1000: (52.21, 22.03),
            2000: (102.43, 44.80),
            3000: (152.64, 67.56),
            5000: (253.08, 113.08),
        },
    },
}
#: The spec's re-simulation (its section 4.8) of the paper-faithful weighting, for context.
CALIBRATION = {
    "q-gp-ucb": "spec 4.8 re-simulation: 630 +- 14 (sigma 0.3), 944 +- 44 (0.4), 714 +- 38 (Bernoulli); AutoML 158 / 220",
    "q-gp-ucb-beta1": "spec 4.8 re-simulation: 48.5 +- 3.1 (sigma 0.3), 45.9 +- 2.1 (Bernoulli); AutoML 71.2 / 73.7",
}

NOTES = [
    "Published Q-GP-UCB numbers come from the authors' code, whose posterior mean weights y by "
    "1/eps^3 (not the paper's 1/eps^2) and whose IQAE simulator used seed 0 on every call. "
    "`q-gp-ucb-reference` does both (our NumPy IQAE re-seeded with 0 per call: a deterministic "
    "function of (amplitude, eps_a), not Aer's seed-0 stream); `q-gp-ucb-reference-random` keeps "
    "the weighting with fresh IQAE randomness per call, and then some runs lock onto a "
    "sub-optimal arm (column 'locked'): the published plateau depends on both quirks.",
    "`q-gp-ucb` is the paper's Algorithm 1 with eq. (3) and the experiments' beta = 1 + ln n; "
    "`q-gp-ucb-beta1` the same with beta = 1. Neither is tuned; the spec's own re-simulation "
    "found the same orders of magnitude (see the calibration column).",
    "GP-UCB and LinUCB replay the reference code's random streams (numpy.random.RandomState(seed "
    "+ run): one uniform draw for x_0, then one reward draw per query), so with seed 0 and the "
    "authors' function and RFF draws the synthetic GP-UCB numbers are reproduced to every digit.",
    "Regret per query: a stage of N oracle queries on an arm with gap g adds N g; the initial "
    "random input is stage 0 (queried with eps = 1, i.e. 6 IQAE queries). Stages run until T "
    "queries are spent and the curve is cut at T. Mean +- standard error with ddof = 0, as the "
    "authors' notebook.",
    "IQAE: qiskit-algorithms' algorithm simulated exactly in distribution (frontierbo.quantum.iqae), "
    "alpha = 0.05, Clopper-Pearson, the reference shots formula and query count (with the "
    "fallback count when no Grover power was used), reference amplitude encoding.",
    "Q-LinUCB here is the paper-faithful one (weighted Gram, eps at the chosen arm); the "
    "published one had the reference code's quirks (unweighted Gram, eps at the previous arm), "
    "so only the ordering (linear methods far behind kernel methods) is comparable.",
]


# -- summaries ----------------------------------------------------------------------------------
def _stats(values) -> tuple[float, float]:
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std() / math.sqrt(v.size))  # ddof = 0, as the notebook


def summarise(records: list[dict]) -> dict:
    """Per setting and method: R(q) at the report's query counts, curves, stage structure."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for rec in records:
        c = rec["config"]
        groups.setdefault((c["setting"], c["method"]), []).append(rec)
    summary: dict[str, dict] = {}
    order = {m: i for i, m in enumerate(METHODS)}
    for (key, m), recs in sorted(groups.items(), key=lambda kv: (kv[0][0], order[kv[0][1]])):
        T = recs[0]["config"]["T"]
        cps = np.asarray(recs[0]["checkpoints"], dtype=int)
        curves = np.array([np.asarray(r["cum_regret"], dtype=float) for r in recs])
        finals = [r["final_regret"] for r in recs]
        at = {int(q): _stats(curves[:, list(cps).index(q)]) for q in REPORT_QUERIES if q in cps}
        entry = {
            "label": METHODS[m].label,
            "runs": len(recs),
            "T": T,
            "final": _stats(finals),
            "final_median": float(np.median(finals)),
            "at": at,
            "checkpoints": cps,
            "curve_mean": curves.mean(axis=0),
            "curve_se": curves.std(axis=0) / math.sqrt(len(recs)),
            "stages": float(np.mean([r["num_stages"] for r in recs])),
            "distinct_arms": (
                int(min(r["distinct_arms"] for r in recs)),
                int(max(r["distinct_arms"] for r in recs)),
            ),
            "locked": int(sum(r["last_arm"] != r["best_index"] for r in recs)),
            "seconds": float(np.mean([r["seconds"] for r in recs])),
        }
        if METHODS[m].quantum:
            last = [r["stage_queries"][-1] for r in recs]
            entry["last_stage_queries"] = (int(min(last)), int(max(last)))
            entry["queries_per_stage"] = float(np.mean([np.mean(r["stage_queries"]) for r in recs]))
        summary.setdefault(key, {})[m] = entry
    return summary


def crossover(summary: dict, key: str, method: str) -> int | None:
    """First stored query count after which ``method``'s mean regret stays below GP-UCB's."""
    s = summary.get(key, {})
    if "gp-ucb" not in s or method not in s:
        return None
    q_curve, g_curve = s[method]["curve_mean"], s["gp-ucb"]["curve_mean"]
    cps = s[method]["checkpoints"]
    below = q_curve < g_curve
    if not below[-1]:
        return None
    idx = len(below) - int(np.argmin(below[::-1]))  # first index of the final all-True run
    return int(cps[idx])


def checks(summary: dict) -> list[tuple[str, bool | None, str]]:
    """The spec's experiment-level checks (6.3) as (claim, holds?, evidence); None = not run."""
    out = []
    for key in MAIN_SETTINGS:
        s = summary.get(key, {})
        pub = PUBLISHED[key]["gp-ucb"]
        if "gp-ucb" in s and s["gp-ucb"]["T"] in pub:
            T = s["gp-ucb"]["T"]
            (m, se), (pm, pse) = s["gp-ucb"]["final"], pub[T]
            ok = abs(m - pm) <= 2 * math.hypot(se, pse)
            out.append(
                (
                    f"{key}: GP-UCB R({T}) within 2 s.e. of the published {pm:.2f}",
                    ok,
                    f"{m:.2f} ± {se:.2f}",
                )
            )
        if "q-gp-ucb-reference" in s:
            e = s["q-gp-ucb-reference"]
            lo, hi = (25, 40) if key.startswith("synthetic") else (15, 25)
            ok = lo <= e["final_median"] <= hi
            out.append(
                (
                    f"{key}: reference-code Q-GP-UCB median R(T) in [{lo}, {hi}] (spec 6.3.2)",
                    ok,
                    f"median {e['final_median']:.1f}, locked {e['locked']}/{e['runs']}",
                )
            )
        kernel = [
            s[m]["final"][0] for m in ("gp-ucb", "q-gp-ucb-reference", "q-gp-ucb-beta1") if m in s
        ]
        linear = [s[m]["final"][0] for m in ("linucb", "q-linucb") if m in s]
        if kernel and linear:
            ok = min(linear) > max(kernel)
            out.append(
                (
                    f"{key}: LinUCB and Q-LinUCB behind the kernel methods (spec 6.3.6)",
                    ok,
                    f"linear min {min(linear):.1f} vs kernel max {max(kernel):.1f}",
                )
            )
    for key in MAIN_SETTINGS:
        s = summary.get(key, {})
        if NOISY_METHOD in s and "q-gp-ucb-reference" in s and "gp-ucb" in s:
            noisy, ideal, gp = (
                s[m]["final"][0] for m in (NOISY_METHOD, "q-gp-ucb-reference", "gp-ucb")
            )
            out.append(
                (
                    f"{key}: noisy-circuit Q-GP-UCB >= noiseless and < GP-UCB (paper Fig. 3, an observation)",
                    ideal <= noisy < gp,
                    f"noisy {noisy:.1f}, noiseless {ideal:.1f}, GP-UCB {gp:.1f}",
                )
            )
    s3, s4 = summary.get("synthetic-gauss0.3", {}), summary.get("synthetic-gauss0.4", {})
    if "gp-ucb" in s3 and "gp-ucb" in s4:
        a, b = s3["gp-ucb"]["final"][0], s4["gp-ucb"]["final"][0]
        out.append(
            (
                "GP-UCB regret larger at sigma 0.4 than 0.3 (spec 6.3.7)",
                b > a,
                f"{b:.1f} vs {a:.1f}",
            )
        )
    if "q-gp-ucb" in s3 and "q-gp-ucb" in s4:
        a, b = s3["q-gp-ucb"]["queries_per_stage"], s4["q-gp-ucb"]["queries_per_stage"]
        out.append(
            (
                "Q-GP-UCB spends more queries per stage at sigma 0.4 (spec 6.3.7)",
                b > a,
                f"{b:.0f} vs {a:.0f}",
            )
        )
    return out


def shape_test(summary: dict) -> dict | None:
    """Spec 6.3.4: R at T in {1e3, 3e3, 1e4, 3e4} on the long synthetic runs, and increments."""
    s = summary.get(SHAPE_SETTING)
    if not s:
        return None
    table = {}
    for m, e in s.items():
        vals = [e["at"][q][0] for q in SHAPE_QUERIES if q in e["at"]]
        table[m] = {"R": vals, "increments": list(np.diff(vals)), "stages": e["stages"]}
    gates = {}
    if "gp-ucb" in table and "q-gp-ucb-beta1" in table:
        g, q = table["gp-ucb"]["increments"], table["q-gp-ucb-beta1"]["increments"]
        if len(g) == 3 and len(q) == 3:
            gates["Q-GP-UCB (beta = 1) adds less than GP-UCB over [1e4, 3e4]"] = bool(q[-1] < g[-1])
            gates["Q-GP-UCB (beta = 1) increments shrink"] = bool(q[0] > q[1] > q[2])
    return {"table": table, "gates": gates}


# -- artefacts ----------------------------------------------------------------------------------
def summary_csv(summary: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(
        [
            "setting",
            "method",
            "label",
            "runs",
            "T",
            "R_T_mean",
            "R_T_se",
            "R_T_median",
            "stages",
            "locked",
            "seconds",
        ]
    )
    for key, methods in summary.items():
        for m, e in methods.items():
            w.writerow(
                [
                    key,
                    m,
                    e["label"],
                    e["runs"],
                    e["T"],
                    f"{e['final'][0]:.4f}",
                    f"{e['final'][1]:.4f}",
                    f"{e['final_median']:.4f}",
                    f"{e['stages']:.1f}",
                    e["locked"],
                    f"{e['seconds']:.3f}",
                ]
            )
    return buf.getvalue()


#: Methods that set the y-range of the zoomed panel (the curves of the paper's Fig. 1).
ZOOM_METHODS = ("gp-ucb", "q-gp-ucb-reference", "q-gp-ucb-beta1")


def write_figures(summary: dict, out: Path) -> list[Path]:
    """Cumulative regret vs oracle queries, mean ± s.e., one figure per setting: left, the paper's
    Fig. 1 scale (set by GP-UCB and the reference / beta = 1 Q-GP-UCB; other curves may leave the
    chart); right, every method on a log scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from frontierbo.experiments.store import atomic_output

    paths = []
    for key, methods in summary.items():
        fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.6))
        top = max(
            (
                float(np.max(e["curve_mean"] + e["curve_se"]))
                for m, e in methods.items()
                if m in ZOOM_METHODS
            ),
            default=0.0,
        )
        for e in methods.values():
            x, y, se = e["checkpoints"], e["curve_mean"], e["curve_se"]
            for ax in axes:
                (line,) = ax.plot(x, y, label=e["label"], linewidth=1.2)
                ax.fill_between(x, y - se, y + se, color=line.get_color(), alpha=0.2, linewidth=0)
        if top > 0:
            axes[0].set_ylim(0, 1.3 * top)
        axes[1].set_yscale("symlog", linthresh=1.0)
        for ax, title in zip(axes, ("paper scale", "all methods (symlog)"), strict=True):
            ax.set_xlabel("oracle queries")
            ax.set_ylabel("cumulative regret")
            ax.set_title(f"{SETTINGS[key].title}: {title}", fontsize=8)
        axes[1].legend(fontsize=6.5, frameon=False, loc="lower right")
        fig.tight_layout()
        path = out / f"fig_{key}.png"
        with atomic_output(path) as tmp:
            fig.savefig(tmp, format="png", dpi=120)
        plt.close(fig)
        paths.append(path)
    return paths


def _pm(value: tuple[float, float] | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value[0]:.{digits}f} ± {value[1]:.{digits}f}"


def report_markdown(result: dict, figures: list[Path]) -> str:
    summary = result["summary"]
    lines = [
        "# Quantum BO reproduction (Q-GP-UCB)",
        "",
        f"Paper: {PAPER}. Function / RFF source: `{result['source']}`; base seed {result['seed']}; "
        f"{result['seconds']} s (stored runs are reused).",
        "",
        "## Cumulative regret at the horizon: ours vs published",
        "",
        *(
            []
            if result["source"] == "reference"
            else [
                "The synthetic runs use the project's own function and RFF draws (`--source "
                "generated`), the published numbers the authors': compare orderings, not values.",
                "",
            ]
        ),
        "| setting | method | runs | T | ours R(T) | median | published R(T) | stages | distinct arms | locked |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key in [k for k in SETTINGS if k in summary]:
        for m, e in summary[key].items():
            pub = PUBLISHED.get(key, {}).get(m, {}).get(e["T"])
            lines.append(
                f"| {key} | {e['label']} | {e['runs']} | {e['T']} | {_pm(e['final'], 2)} | {e['final_median']:.1f} | "
                f"{_pm(pub, 2)} | {e['stages']:.1f} | {e['distinct_arms'][0]}-{e['distinct_arms'][1]} | {e['locked']}/{e['runs']} |"
            )
    lines += ["", "`locked`: runs whose last stage (or last query) was not on the best arm.", ""]
    lines += ["## Regret curve at the paper's query counts", ""]
    for key in [k for k in MAIN_SETTINGS if k in summary]:
        qs = [q for q in REPORT_QUERIES if q <= max(e["T"] for e in summary[key].values())]
        lines += [
            f"### {SETTINGS[key].title}",
            "",
            "| method | " + " | ".join(f"R({q})" for q in qs) + " |",
            "|---|" + "---|" * len(qs),
        ]
        for m, e in summary[key].items():
            lines.append(
                f"| {e['label']} (ours) | " + " | ".join(_pm(e["at"].get(q)) for q in qs) + " |"
            )
            pub = PUBLISHED.get(key, {}).get(m)
            if pub:
                lines.append(
                    f"| {e['label']} (published) | "
                    + " | ".join(_pm(pub.get(q), 2) if q in pub else "–" for q in qs)
                    + " |"
                )
        cross = {m: crossover(summary, key, m) for m in summary[key] if METHODS[m].quantum}
        lines += [
            "",
            "Crossover with GP-UCB (first stored query after which the mean stays below): "
            + ", ".join(
                f"{METHODS[m].label} {c if c is not None else 'never'}" for m, c in cross.items()
            )
            + ".",
            "",
        ]
    lines += ["## Checks (spec 6.3)", ""]
    for claim, ok, evidence in result["checks"]:
        lines.append(f"- [{'x' if ok else ' '}] {claim}: {evidence}")
    shape = result.get("shape")
    if shape:
        lines += [
            "",
            "## Shape test: R at T = 1e3, 3e3, 1e4, 3e4 (spec 6.3.4)",
            "",
            "| method | R | increments | stages |",
            "|---|---|---|---|",
        ]
        for m, row in shape["table"].items():
            lines.append(
                f"| {METHODS[m].label} | {', '.join(f'{v:.1f}' for v in row['R'])} | {', '.join(f'{v:.1f}' for v in row['increments'])} | {row['stages']:.1f} |"
            )
        lines += [""] + [
            f"- [{'x' if ok else ' '}] {claim}" for claim, ok in shape["gates"].items()
        ]
        lines += [
            "",
            "Spec 6.3.4 calibration: GP-UCB 35.3 / 45.4 / 54.0 / 61.5; Q-GP-UCB (beta = 1) 30.6 / 40.8 / 48.5 / 53.4.",
        ]
    lines += ["", "## Context for the paper-faithful variants", ""] + [
        f"- {METHODS[m].label}: {text}" for m, text in CALIBRATION.items()
    ]
    lines += ["", "## Notes", ""] + [f"- {n}" for n in NOTES]
    lines += ["", "## Figures", ""] + [f"- `{p.name}`" for p in figures] + [""]
    return "\n".join(lines)


def reproduce(
    out,
    settings=MAIN_SETTINGS,
    methods=DEFAULT_METHODS,
    *,
    quick: bool = False,
    noisy: bool = False,
    runs: int | None = None,
    n_jobs: int = 1,
    seed: int = 0,
    source: str = "reference",
    shape: bool | None = None,
    progress: bool = True,
) -> dict:
    """Run (or resume) the grid into ``out`` and write every artefact; returns the results dict.

    ``quick``: T = 2000 (synthetic) / 1000 (AutoML) and 3 runs, no shape test. ``shape``: run the
    T = 3e4 shape test (default: not quick). ``noisy``: also run the reference code on noisy
    Qiskit-Aer circuits on the synthetic settings (3 runs each; needs the ``[quantum]`` extra).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    seed = check_int(seed, "seed", low=0)
    if runs is not None:
        runs = check_int(runs, "runs", low=1)
    started = time.time()
    if quick:
        T = lambda key: QUICK_T["synthetic" if key.startswith("synthetic") else "automl"]  # noqa: E731
        runs = runs or QUICK_RUNS
    else:
        T = None
    specs = build_specs(settings, methods, seed=seed, T=T, runs=runs, source=source)
    if shape if shape is not None else not quick:
        specs += build_specs(
            [SHAPE_SETTING],
            [m for m in SHAPE_METHODS if m in methods],
            seed=seed,
            runs=runs,
            source=source,
        )
    if noisy:
        synthetic = [k for k in settings if k.startswith("synthetic")]
        n_noisy = min(runs or NOISY_RUNS, NOISY_RUNS)
        specs += build_specs(synthetic, [NOISY_METHOD], seed=seed, T=T, runs=n_noisy, source=source)
    records = run_grid(out, specs, n_jobs=n_jobs, progress=progress)
    summary = summarise(records)
    result = {
        "paper": PAPER,
        "seed": seed,
        "source": source,
        "seconds": round(time.time() - started, 1),
        "summary": summary,
        "checks": checks(summary),
        "shape": shape_test(summary),
        "published": PUBLISHED,
    }
    write_json_atomic(out / "results.json", result)
    write_text_atomic(out / "summary.csv", summary_csv(summary))
    figures = write_figures(summary, out)
    write_text_atomic(out / "report.md", report_markdown(result, figures))
    return result
