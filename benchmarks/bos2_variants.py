"""Why does BayesOpt need fewer queries than BOS²? BOS² re-run with one part changed at a time.

On the MNIST rescale instances of a reproduction store (``frontierbo reproduce bos2
--profile reference --fitting scalable --out STORE``), BayesOpt needed fewer queries than BOS²
on most instances both solved. (``--dataset cifar10`` takes a store's CIFAR-10 records instead;
every run uses its record's range mode, budget and seed.) The two attacks differ in two parts: how the latent space is
chosen (BOS²'s Algorithm 6 over sides 6..18; BayesOpt's marginal likelihood over sides 6..20)
and the perturbation model (BOS²'s additive GP of 12 random coordinate groups; BayesOpt's one
Matérn-5/2 GP over all coordinates). Each variant changes one of them and keeps the rest,
stopping included, and runs with the store's own seed for each instance:

* ``as-stored``: nothing changed, a check that the script re-runs the stored BOS² exactly;
* ``sides-6-20``: ``d_allowed`` gets BayesOpt's side 20 (sides 6..20);
* ``fixed-18``: no choice of latent space: every loop runs at side 18 (Algorithm 6 with one
  allowed dimension);
* ``fixed-18-one-group``: side 18 and one group, i.e. a single Matérn-5/2 GP over all 324
  coordinates, as BayesOpt's model (its acquisition is still Add-GP-UCB's: best of the pool,
  then L-BFGS-B);
* ``one-group``: Algorithm 6 as in BOS² (sides 6..18), one group;
* ``fixed-18-low-beta``: side 18, 12 groups, each group's UCB weight ``beta^{1/2}`` cut from 3
  to ``3 / sqrt(12)``: Add-GP-UCB adds 12 groups' ``3 sigma_j``, an exploration bonus up to
  ``sqrt(12)`` times that of one GP of the same total variance; is that what costs queries, or
  the additive model itself?

It prints the variants' queries beside the stored BOS² and BayesOpt ones, with success counts,
medians and sign tests against the stored BOS². Results go to ``--out`` (JSON,
``{variant: {"image/target": result}}``, written atomically after every instance and re-read
first, so runs of different variants can share it; instances already there are skipped, so a
killed run resumes).

Run: ``python benchmarks/bos2_variants.py --store records/bos2/bos2-mnist-rescale.jsonl
--variant fixed-18 --images 1813 2391 --out bos2_variants.json`` (needs the ``attack`` extra;
``--store`` is a store folder or its ``runs.jsonl``); ``--instances N``
takes the store's first N instances instead of whole images, ``--keys IMAGE/TARGET ...`` those
instances; ``--fitting full`` runs the variant with the full fitting's perturbation GP (results
under ``variant@full``) and ``--gp FIELD=VALUE ...`` changes fields of its settings (results under
``variant@fitting+FIELD=VALUE``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os

import numpy as np
from scipy.stats import binomtest

from frontierbo.attack.experiment import FITTINGS

VARIANTS = {
    "as-stored": {},  # a check: must give the stored BOS² queries
    "sides-6-20": {"sides": (6, 8, 10, 12, 14, 16, 18, 20)},
    "fixed-18": {"sides": (18,)},
    "fixed-18-one-group": {"sides": (18,), "n_groups": 1},
    "one-group": {"n_groups": 1},
    "fixed-18-low-beta": {"sides": (18,), "beta_sqrt": 3.0 / np.sqrt(12.0)},
}


def stored(store: str, dataset: str = "mnist") -> dict:
    """``{(image, target): {method: record}}`` of the store's records of ``dataset``.

    ``store``: a reproduction's ``--out`` folder or its ``runs.jsonl`` file."""
    out: dict = {}
    path = store if store.endswith(".jsonl") else os.path.join(store, "runs.jsonl")
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a kill
            c = r["config"]
            if c["dataset"] == dataset:
                out.setdefault((c["image"], c["target"]), {})[c["method"]] = r
    return out


def build(variant: str, fitting: str, dataset: str = "mnist", gp: dict | None = None):
    """BOS² with ``variant``'s changes, ``fitting``'s perturbation GP and the ``gp`` overrides of
    its :class:`~frontierbo.attack.add_gp_ucb.AddGPSettings` fields."""
    from frontierbo.attack.experiment import build_attack

    change = dict(VARIANTS[variant])
    attack = build_attack("bos2", dataset, fitting, groups=change.pop("n_groups", None))
    gp = dict(gp or {})
    if "beta_sqrt" in change:
        gp["beta_sqrt"] = change.pop("beta_sqrt")
    if gp:
        perturbation = dataclasses.replace(attack.perturbation, **gp)
        attack = dataclasses.replace(attack, perturbation=perturbation)
    return dataclasses.replace(attack, **change)


def parse_gp(items: list[str] | None) -> dict:
    """``["refit_restarts=5", "fit_points=none"]`` -> AddGPSettings overrides (ints, floats,
    ``none``, or the text)."""
    from frontierbo.attack.add_gp_ucb import AddGPSettings

    fields = {f.name for f in dataclasses.fields(AddGPSettings)}
    out = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        if not sep or key not in fields:
            raise SystemExit(
                f"--gp: expected FIELD=VALUE with FIELD among {sorted(fields)}, got {item!r}"
            )
        if text.lower() == "none":
            out[key] = None
            continue
        for kind in (int, float):
            try:
                out[key] = kind(text)
                break
            except ValueError:
                continue
        else:
            out[key] = text
    return out


def result_name(variant: str | None, fitting: str | None, gp: dict) -> str | None:
    """Where a variant's results go in ``--out``: ``variant[@fitting][+field=value...]``."""
    if variant is None:
        return None
    name = f"{variant}@{fitting}" if fitting else variant
    return name + "".join(f"+{k}={v}" for k, v in gp.items())


def run_one(variant: str, record: dict, fitting: str | None, gp: dict | None = None) -> dict:
    from frontierbo.attack.experiment import CHANNELS, run_worker
    from frontierbo.attack.resize import side_of
    from frontierbo.experiments.runner import RunSpec

    c = record["config"]
    attack = build(variant, fitting or c["fitting"], c["dataset"], gp)
    out = run_worker(RunSpec(record["run_id"], c, record["seed"]), attack=attack)
    channels = CHANNELS[c["dataset"]]
    return {"success": out["success"], "queries": out["queries"], "seconds": round(out["seconds"], 1),
            "sides": [side_of(r["dimension"], channels) for r in out["loops"]]}  # fmt: skip


def instances(
    runs: dict, images: list[int] | None, count: int, keys: list[str] | None = None
) -> list[tuple[int, int]]:
    both = [k for k, v in runs.items() if "bos2" in v and "bayesopt" in v]
    if keys:
        wanted = [tuple(int(x) for x in key.split("/")) for key in keys]
        missing = [f"{i}/{t}" for i, t in wanted if (i, t) not in both]
        if missing:
            raise SystemExit(
                f"--keys: no BOS² and BayesOpt records of {', '.join(missing)} in the store"
            )
        return wanted
    if images:
        return [k for k in both if k[0] in images]
    return both[:count]


def load(path: str) -> dict:
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def save(path: str, name: str, key: str, result: dict) -> None:
    """Add one result to ``path`` atomically, re-reading it first so that runs of other variants
    writing to the same file keep theirs."""
    done = load(path)
    done.setdefault(name, {})[key] = result
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(done, fh)
    os.replace(tmp, path)


def sign_p(wins: int, losses: int) -> float:
    """Two-sided exact sign-test p of ``wins`` against ``losses`` (ties left out); 1 with no
    pair. On paired successes it is the exact McNemar test."""
    return binomtest(wins, wins + losses).pvalue if wins + losses else 1.0


def sign_test(first: list, second: list) -> str:
    """How often ``second`` needed fewer / more queries than ``first`` where both succeeded."""
    pairs = [(a, b) for a, b in zip(first, second, strict=True) if a is not None and b is not None]
    fewer, more = sum(b < a for a, b in pairs), sum(b > a for a, b in pairs)
    p = sign_p(fewer, more)
    return f"on {len(pairs)} solved by both: fewer queries on {fewer}, more on {more} (p = {p:.2g})"


def report(runs: dict, keys: list, done: dict, names: list[str]) -> None:
    """A table of queries (✗: failed) per instance: stored BOS², the variants, stored BayesOpt;
    then successes, medians and sign tests against the stored BOS²."""
    keys = [k for k in keys if all(f"{k[0]}/{k[1]}" in done.get(n, {}) for n in names)]
    columns = ["BOS²", *names, "BayesOpt"]
    print("| image/target | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    cells = []
    for image, target in keys:
        key = f"{image}/{target}"
        row = [runs[(image, target)]["bos2"], *(done[n][key] for n in names),
               runs[(image, target)]["bayesopt"]]  # fmt: skip
        cells.append([r["queries"] if r["success"] else None for r in row])
        print(f"| {key} | " + " | ".join("✗" if v is None else str(v) for v in cells[-1]) + " |")
    by_column = list(zip(*cells, strict=True)) if cells else [() for _ in columns]
    for name, column in zip(columns, by_column, strict=True):
        ok = [v for v in column if v is not None]
        median = np.median(ok) if ok else "-"
        print(f"{name}: {len(ok)}/{len(column)} successes, median {median}")
    for name, column in zip(columns[1:], by_column[1:], strict=True):
        print(f"{name} against BOS² {sign_test(by_column[0], column)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", required=True)
    ap.add_argument("--variant", choices=sorted(VARIANTS))
    ap.add_argument("--dataset", choices=("mnist", "cifar10"), default="mnist",
                    help="whose records of the store to use (one --out per dataset)")  # fmt: skip
    ap.add_argument("--table", nargs="+", metavar="NAME",
                    help="run nothing: tabulate these results of --out (e.g. fixed-18 fixed-18@full)")  # fmt: skip
    ap.add_argument("--images", type=int, nargs="+", help="whole images of the store")
    ap.add_argument("--instances", type=int, default=18, help="else the store's first N")
    ap.add_argument("--keys", nargs="+", metavar="IMAGE/TARGET", help="else these instances")
    ap.add_argument("--fitting", choices=FITTINGS,
                    help="the perturbation GP's fitting (default: the store's)")  # fmt: skip
    ap.add_argument("--gp", nargs="+", metavar="FIELD=VALUE",
                    help="override AddGPSettings fields of the fitting, e.g. refit_restarts=5")  # fmt: skip
    ap.add_argument("--out", default="bos2_variants.json")
    args = ap.parse_args()
    if not args.table and not args.variant:
        ap.error("give --variant to run one, or --table to tabulate results")
    gp = parse_gp(args.gp)
    name = result_name(args.variant, args.fitting, gp)
    runs = stored(args.store, args.dataset)
    keys = instances(runs, args.images, args.instances, args.keys)
    done = load(args.out)
    if args.table:
        report(runs, keys, done, args.table)
        return
    for image, target in keys:
        key = f"{image}/{target}"
        if key not in done.setdefault(name, {}):
            record = runs[(image, target)]["bos2"]
            done[name][key] = run_one(args.variant, record, args.fitting, gp)
            save(args.out, name, key, done[name][key])
        print(key, done[name][key], flush=True)
    report(runs, keys, done, [name])


if __name__ == "__main__":
    main()
