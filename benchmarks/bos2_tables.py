"""The per-instance tables and paired counts of the BOS² results, from reproduction stores.

``frontierbo reproduce bos2`` prints Tables 5.1-5.4 (ASR, max / mean / median queries). The results
also show every instance's queries side by side and paired sign tests, which the report does not;
this script writes them between the markers of ``records/bos2/tables.md`` (linked from
``docs/bos2-attack.md``), so that file always says what a store holds:

* ``<!-- NAME_table -->`` ... ``<!-- /NAME_table -->``: one row per instance, in the order the
  reproduction ran them, ``…`` for an instance not yet run, ``✗`` for a failure within T;
* ``<!-- NAME_summary -->`` ... ``<!-- /NAME_summary -->``: successes and medians over the
  instances that all three GP attacks finished in run order (the reproduction's own order, up to
  the first instance not finished: a store filled from its far end too, by
  ``tools/bos2_fill.py``, holds instances chosen by how fast they ran, which are not a sample),
  BOS² against BayesOpt and against its ablation (two-sided sign tests), the instances only
  one of two attacks solved (exact McNemar tests), the orderings of
  docs/decisions.md#bos-orderings-and-tolerances-of-the-report on those instances
  (an attack the store did not run, such as ZOO, taken from ``--cheap``), the stopping rule's
  loops and the seconds per instance;
* ``<!-- NAME_progress -->`` ... ``<!-- /NAME_progress -->``: how many instances are done, and
  what the rest cost at the mean of those done in run order.

``--update-from NAME=RUN_FILE`` first copies a running reproduction's ``runs.jsonl`` into NAME's
store file: its complete records only (``ResultStore.complete_bytes``: a line being written is
left for the next update), in one atomic replace, and only if it continues the store.

Run: ``python benchmarks/bos2_tables.py --docs records/bos2/tables.md
--earlier records/bos2/bos2-first-machine-tables.json --cheap records/bos2/bos2-cheap-clip.jsonl
mnist_rescale=records/bos2/bos2-mnist-rescale.jsonl:mnist
cifar_clip=records/bos2/bos2-cifar10-clip.jsonl:cifar10
mnist_clip=records/bos2/bos2-mnist-clip.jsonl:mnist`` (``NAME=STORE_FILE:DATASET``; no
``--docs``: print the sections). Needs the package with its ``[attack]`` extra: the victims
say which images are attacked, in which order.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

from bos2_variants import sign_p, sign_test, stored
from frontierbo.attack.experiment import chosen_images, instance_targets
from frontierbo.attack.summary import METHOD_LABELS, ORDERING_LABELS, method_row, orderings
from frontierbo.experiments.store import ResultStore
from frontierbo.io import atomic_output, write_text_atomic

GP = ("bos2", "bos2-nostop", "bayesopt")
COLUMNS = {"bos2": "BOS²", "bos2-nostop": "BOS² (no stop)", "bayesopt": "BayesOpt",
           "genattack": "GenAttack", "pgd": "white-box PGD"}  # fmt: skip


def outcome(record: dict) -> int | None:
    """Queries to success, or None for a failure within T."""
    return record["queries"] if record["success"] else None


def cell(record: dict | None, method: str) -> str:
    if record is None:
        return "…"
    if not record["success"]:
        return "✗"
    return "✓" if method == "pgd" else str(record["queries"])


def instance_rows(runs: dict) -> list[tuple[int, int, int]]:
    """``(image, label, target)`` for every target of every image begun, in run order."""
    images: dict[int, int] = {}
    for (image, _), methods in runs.items():
        images.setdefault(image, next(iter(methods.values()))["config"]["label"])
    return [(i, lab, (lab + k) % 10) for i, lab in images.items() for k in range(1, 10)]


def in_run_order(runs: dict, image_order: list[int]) -> dict:
    """``runs`` with its images in the reproduction's order (``chosen_images``), not the order in
    which they reached the store (a far-end fill appends late images early)."""
    rank = {image: k for k, image in enumerate(image_order)}
    return dict(sorted(runs.items(), key=lambda kv: rank.get(kv[0][0], len(rank))))


def run_order_prefix(runs: dict, image_order: list[int]) -> list[tuple[int, int]]:
    """The instances in run order (``image_order``, targets label+1, ...), up to the first one
    the three GP attacks have not all finished, or the first image not begun: the
    reproduction's own sample, whatever a far-end fill added beyond it."""
    prefix = []
    for image in image_order:
        begun = [methods for (i, _), methods in runs.items() if i == image]
        if not begun:
            return prefix
        label = next(iter(begun[0].values()))["config"]["label"]
        for target in instance_targets(label, 9):
            if not all(m in runs.get((image, target), {}) for m in GP):
                return prefix
            prefix.append((image, target))
    return prefix


def table(runs: dict) -> str:
    lines = ["| image (label) | target | " + " | ".join(COLUMNS.values()) + " |",
             "|---|---:|" + "---:|" * len(COLUMNS)]  # fmt: skip
    wins = dict.fromkeys(COLUMNS, 0)
    done = dict.fromkeys(COLUMNS, 0)
    for image, label, target in instance_rows(runs):
        records = runs.get((image, target), {})
        cells = [cell(records.get(m), m) for m in COLUMNS]
        lines.append(f"| {image} ({label}) | {target} | " + " | ".join(cells) + " |")
        for m in COLUMNS:
            done[m] += m in records
            wins[m] += bool(records.get(m, {}).get("success"))
    totals = " | ".join(f"{wins[m]}/{done[m]}" for m in COLUMNS)
    lines.append(f"| **successes** | | {totals} |")
    return "\n".join(lines)


def progress(runs: dict, dataset: str, title: str, path: str, image_order: list[int]) -> str:
    """How far the store is: instances with all three GP attacks done, of the dataset's 9 per
    image (50 MNIST images, 20 CIFAR-10)."""
    from frontierbo.attack.experiment import IMAGES

    done = [key for key, v in runs.items() if all(m in v for m in GP)]
    per_image = Counter(image for image, _ in done).values()
    whole = sum(n == 9 for n in per_image)
    rest = [n for n in per_image if n < 9]  # a store may be filled from both ends at once
    parts = [f"{whole} whole image{'s' if whole > 1 else ''}"] if whole else []
    if rest:
        images = f"{len(rest)}{' other' if whole else ''} image{'s' if len(rest) > 1 else ''}"
        parts.append(f"{sum(rest)} target{'s' if sum(rest) > 1 else ''} of {images}")
    part = " and ".join(parts)
    left = 9 * IMAGES[dataset] - len(done)
    line = f"- {title} (`{path}`): {len(done)} of {9 * IMAGES[dataset]} instances done"
    line += f" ({part}); " if part else "; "
    sample = [runs[k] for k in run_order_prefix(runs, image_order)]
    return line + f"{left} to go{cost_left(sample, left)}."


def cost_left(finished: list[dict], left: int) -> str:
    """What the instances left cost at the mean of ``finished`` (those done in run order): the
    three GP attacks' seconds per instance, on one core each (an estimate: later images may fail
    more or less often)."""
    if not finished or not left:
        return ""
    runs = [v[m] for v in finished for m in GP]
    per_instance = sum(r["seconds"] for r in runs) / len(finished)
    by_outcome = {
        label: [r["seconds"] for r in runs if r["success"] == won]
        for label, won in (("a success", True), ("a failure (run to T)", False))
    }
    means = "; ".join(f"{label} {np.mean(s):.0f} s" for label, s in by_outcome.items() if s)
    machines = len({r["machine"] for r in runs if "machine" in r})
    mixed = f"; records of {machines} machines, whose cores differ in speed" if machines > 1 else ""
    hours = round(left * per_instance / 3600)
    return (
        f", about {hours} core-hour{'' if hours == 1 else 's'} at the mean of the "
        f"{len(finished)} done in run order "
        f"({per_instance:.0f} s per instance for the three GP attacks; one GP attack's mean: "
        f"{means}{mixed})"
    )


def queries(records: list[dict], method: str) -> list[int | None]:
    return [outcome(r[method]) for r in records]


def with_cheap(runs: dict, cheap: dict) -> dict:
    """``runs`` with the cheap attacks' records of the same instances added where it has none.

    A record that follows a range mode (PGD's) is added only under the range mode of the
    instance's GP records: a ``clip`` PGD run says nothing about ``rescale`` instances. GenAttack,
    ZOO and AutoZOOM clip in both, and their records carry no range mode."""
    for key, methods in runs.items():
        modes = {r["config"].get("range_mode") for r in methods.values()} - {None}
        for method, record in cheap.get(key, {}).items():
            if record["config"].get("range_mode", next(iter(modes), None)) in modes:
                methods.setdefault(method, record)
    return runs


def asr_interval(successes: int, n: int) -> str:
    """``k/n (ASR %, 95 % CI lo–hi %)``, the exact (Clopper–Pearson) interval: on a subset of
    the instances it says how far the full table's ASR may still move. It treats instances as
    independent; the 9 targets of one image are not, so it is if anything too narrow."""
    ci = binomtest(successes, n).proportion_ci(confidence_level=0.95, method="exact")
    return f"{successes}/{n} ({100 * successes / n:.0f} %, 95 % CI {100 * ci.low:.0f}–{100 * ci.high:.0f} %)"


#: Pairs whose ASRs the report's orderings compare (GenAttack against the attack it is set below).
ASR_PAIRS = (("bos2", "bos2-nostop"), ("bos2", "bayesopt"), ("bos2-nostop", "bayesopt"),
             ("genattack", "bos2"))  # fmt: skip


def paired_successes(records: list[dict], pairs=ASR_PAIRS) -> str:
    """For each pair (a, b): the instances only a solved and only b solved, and the exact
    McNemar p (a two-sided sign test on those discordant instances). The orderings compare the
    ASRs' point estimates; this says which differences are evidence."""
    parts = []
    for a, b in pairs:
        if not all(a in r and b in r for r in records):
            continue
        only_a = sum(r[a]["success"] and not r[b]["success"] for r in records)
        only_b = sum(r[b]["success"] and not r[a]["success"] for r in records)
        parts.append(f"{COLUMNS[a]} {only_a} against {COLUMNS[b]} {only_b} "
                     f"(p = {sign_p(only_a, only_b):.2g})")  # fmt: skip
    return "; ".join(parts)


def checked_orderings(rows: dict, dataset: str, budget: int) -> str:
    """The report's orderings (docs/decisions.md#bos-orderings-and-tolerances-of-the-report)
    over per-method rows (``attack.summary.method_row``)."""
    checks = orderings({dataset: rows}, budget)[dataset]
    ran = [f"{ORDERING_LABELS[k]}: {'yes' if ok else '**no**'}" for k, ok in checks.items()
           if ok is not None]  # fmt: skip
    return "; ".join(ran) if ran else "none can be checked yet"


def summary(runs: dict, title: str, dataset: str, image_order: list[int]) -> str:
    prefix = run_order_prefix(runs, image_order)
    finished = [runs[k] for k in prefix]
    n = len(finished)
    beyond = sum(all(m in v for m in GP) for v in runs.values()) - n
    aside = (
        f"\n  - Not counted above: {beyond} instance{'s' if beyond > 1 else ''} finished out of "
        "run order (filled from the far end, those that ran fastest first: not a sample)."
        if beyond
        else ""
    )
    if not n:
        return f"- **{title}**: no instance in run order has all three GP attacks done yet.{aside}"
    methods = [m for m in METHOD_LABELS if all(m in v for v in finished)]
    rows = {m: method_row([v[m] for v in finished]) for m in methods}
    shown = [m for m in (*GP, "genattack") if m in rows]
    wins = ", ".join(f"{COLUMNS[m]} {asr_interval(rows[m]['successes'], n)}" for m in shown)
    medians = ", ".join(
        f"{COLUMNS[m]} {'–' if rows[m]['median'] is None else format(rows[m]['median'], 'g')}"
        for m in GP
    )
    bos2, ablation = rows["bos2"], rows["bos2-nostop"]
    budget = finished[0]["bos2"]["config"]["budget"]
    seconds = ", ".join(f"{COLUMNS[m]} {rows[m]['seconds_mean']:.0f}" for m in GP)
    return "\n".join([
        f"- **{title}**: {n} instances with all three GP attacks done in run order. "
        f"Successes: {wins}. "
        f"Median queries over successes: {medians}.",
        f"  - BayesOpt against BOS², "
        f"{sign_test(queries(finished, 'bos2'), queries(finished, 'bayesopt'))}.",
        f"  - BOS² against its ablation (stopping), "
        f"{sign_test(queries(finished, 'bos2-nostop'), queries(finished, 'bos2'))}.",
        f"  - Instances only one of two attacks solved (exact McNemar tests): "
        f"{paired_successes(finished)}.",
        f"  - Orderings of the thesis's tables on these {n} instances: "
        f"{checked_orderings(rows, dataset, budget)}.",
        f"  - Perturbation loops that ended by their own rule (each run's last loop, cut short "
        f"by the success or T, left out): {bos2.get('loops_stopped_early', 0.0):.0%} of BOS²'s "
        f"{bos2.get('loops_ended', 0)} stopped early, and they averaged "
        f"{bos2.get('loop_length_mean', 0.0):.1f} queries; the ablation's "
        f"{ablation.get('loops_ended', 0)} averaged {ablation.get('loop_length_mean', 0.0):.1f}.",
        f"  - Seconds per instance (mean): {seconds}.{aside}",
    ])  # fmt: skip


def machines(runs: dict, columns: list[str], earlier: dict, title: str) -> str:
    """The same instances on two machines: how often each attack's outcome and query count agree
    (a seed fixes the random numbers, not the rounding: see frontierbo.experiments.machine)."""
    rows = []
    for method in (*GP, "genattack"):
        pairs = []
        for key, row in earlier.items():
            image, target = map(int, key.split("/"))
            record = runs.get((image, target), {}).get(method)
            old = row[columns.index(method)]
            if record is not None and old != "not run":
                pairs.append((old, outcome(record)))
        if not pairs:
            continue
        both = [abs(a - b) for a, b in pairs if a is not None and b is not None]
        rows.append(
            f"| {COLUMNS[method]} | {len(pairs)} | {sum(a == b for a, b in pairs)} | "
            f"{sum((a is None) == (b is None) for a, b in pairs)} | "
            f"{f'{np.median(both):g}' if both else '–'} |"
        )
    if not rows:
        return f"{title}: no instance run on both machines yet."
    return "\n".join([
        f"{title}:",
        "",
        "| attack | instances on both | identical queries | same outcome | "
        "median difference where both succeeded |",
        "|---|---:|---:|---:|---:|",
        *rows,
    ])  # fmt: skip


def replace_section(text: str, name: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- {name} -->\n)(?:.*?\n)?(<!-- /{name} -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"docs: no <!-- {name} --> ... <!-- /{name} --> markers")
    return pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)


def update_store(store: str, run_file: str) -> int:
    """Replace ``store`` by the complete records of ``run_file``, refusing to lose records: the
    run file must begin with the store's bytes (a reproduction continues its store)."""
    if not Path(run_file).is_file():
        raise SystemExit(f"--update-from: no file {run_file}")
    try:
        new, old = ResultStore(run_file).complete_bytes(), ResultStore(store).complete_bytes()
    except ValueError as exc:  # a corrupt line before the end
        raise SystemExit(f"--update-from: {exc}") from None
    lines, stored_lines = new.count(b"\n"), old.count(b"\n")
    if not new.startswith(old):
        raise SystemExit(
            f"--update-from: {run_file} does not continue {store} ({lines} lines against "
            f"{stored_lines}); copy the store into the run folder before resuming"
        )
    with atomic_output(store) as tmp:
        tmp.write_bytes(new)
    return lines - stored_lines


def parse_source(arg: str) -> tuple[str, str, str]:
    name, _, rest = arg.partition("=")
    path, _, dataset = rest.rpartition(":")
    if not (name and path and dataset in ("mnist", "cifar10")):
        raise SystemExit(f"expected NAME=STORE_FILE:mnist|cifar10, got {arg!r}")
    return name, path, dataset


TITLES = {"mnist_rescale": "MNIST, rescale", "cifar_clip": "CIFAR-10, clip",
          "mnist_clip": "MNIST, clip"}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sources", nargs="+", metavar="NAME=STORE_FILE:DATASET")
    ap.add_argument("--docs", help="rewrite the marked sections of this file in place")
    ap.add_argument("--cheap", help="a store of the cheap attacks (as records/bos2/"
                    "bos2-cheap-clip.jsonl): their ZOO and AutoZOOM for the orderings")  # fmt: skip
    ap.add_argument("--update-from", action="append", default=[], metavar="NAME=RUN_FILE",
                    help="first bring NAME's store up to a running reproduction's runs.jsonl")  # fmt: skip
    ap.add_argument("--earlier", help="per-instance results of another machine (JSON, as "
                    "records/bos2/bos2-first-machine-tables.json): adds NAME_machines")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0,
                    help="the reproductions' --seed, which orders the MNIST images (default 0)")  # fmt: skip
    args = ap.parse_args()
    text = Path(args.docs).read_text(encoding="utf-8") if args.docs else None
    sources = {name: path for name, path, _ in map(parse_source, args.sources)}
    for name, _, run_file in (u.partition("=") for u in args.update_from):
        if name not in sources:
            raise SystemExit(f"--update-from {name}=...: no source named {name!r}")
        print(f"{sources[name]}: {update_store(sources[name], run_file)} new records")
    earlier = json.loads(Path(args.earlier).read_text(encoding="utf-8")) if args.earlier else None
    for name, path, dataset in map(parse_source, args.sources):
        runs, title = stored(path, dataset), TITLES.get(name, name)
        victim = next(iter(next(iter(runs.values())).values()))["config"]["victim"]
        order = list(chosen_images(victim, args.seed))
        runs = in_run_order(runs, order)
        if args.cheap:
            runs = with_cheap(runs, stored(args.cheap, dataset))
        sections = {f"{name}_table": table(runs),
                    f"{name}_summary": summary(runs, title, dataset, order),
                    f"{name}_progress": progress(runs, dataset, title, path, order)}  # fmt: skip
        if earlier is not None and name in earlier:  # a store the other machine never ran has none
            sections[f"{name}_machines"] = machines(runs, earlier["columns"], earlier[name], title)
        for section, body in sections.items():
            if text is None:
                print(f"<!-- {section} -->\n{body}\n")
            else:
                text = replace_section(text, section, body)
    if text is not None:
        write_text_atomic(args.docs, text)


if __name__ == "__main__":
    main()
