"""Fill a BOS² store from its far end, on a borrowed machine with many cores, for a fixed time.

``frontierbo reproduce bos2`` runs its instances in order, image by image. This runs the very same
runs (the CLI's ``build_specs``: same ``run_id``, ``config`` and seed, so the records are the
CLI's, ``machine`` aside) in another order, so that a second machine can work on a store beside
a reproduction that fills it from the front without either doing the other's work:

* images from the last one backwards (the front reproduction reaches them last);
* an instance that white-box PGD could not reach (``--skip-unreachable``, read from the cheap
  store's PGD records) is left out: the GP attacks then almost surely run to T = 900, about
  15 minutes each, which a short lease would kill before it finished;
* runs already in ``--store`` are skipped, as the CLI skips them;
* with ``--attempts FILE``, each run's start is appended to FILE, and a run FILE says was started
  before but that is not in the store is left out: a lease ended while it ran, so it takes longer
  than a lease, and starting it again would only lose another lease's worth of a core (the
  front reproduction runs it, without a time limit). ``--retry-attempted`` starts them anyway.

The store resumes as the CLI's does: each finished run is one fsynced line, so stopping this (a
lease's end, ``timeout``) loses only the runs in flight. Append the new lines to the front
reproduction's run file with ``ResultStore.append`` (``O_APPEND``), never by rewriting it.

Run: ``python tools/bos2_fill.py --store DIR/runs.jsonl --jobs 16 [--skip-unreachable CHEAP]
[--attempts DIR/attempts.jsonl]``
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
from pathlib import Path

from frontierbo.attack.experiment import (
    DEFAULTS,
    build_specs,
    check_options,
    run_worker,
)
from frontierbo.experiments.report import Options
from frontierbo.experiments.runner import run_sweep
from frontierbo.experiments.store import ResultStore


def unreachable(cheap: Path, dataset: str) -> set[tuple[int, int]]:
    """(image, target) pairs that white-box PGD failed on, from the cheap store."""
    out = set()
    with open(cheap, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            c = rec["config"]
            if c["dataset"] == dataset and c["method"] == "pgd" and not rec["success"]:
                out.add((c["image"], c["target"]))
    return out


def fill_order(specs, skip: set[tuple[int, int]]):
    """``specs`` with the images reversed (targets and methods kept in order), ``skip`` left out."""
    images = list(dict.fromkeys(s.config["image"] for s in specs))
    rank = {image: k for k, image in enumerate(reversed(images))}
    kept = [s for s in specs if (s.config["image"], s.config["target"]) not in skip]
    return sorted(kept, key=lambda s: rank[s.config["image"]])  # stable: targets stay in order


def unfinished(attempts: Path, store: ResultStore) -> set[str]:
    """run_ids that ``attempts`` says were started and that ``store`` does not hold."""
    if not attempts.exists():
        return set()
    with open(attempts, encoding="utf-8") as fh:
        started = {json.loads(line)["run_id"] for line in fh if line.strip()}
    return started - {rec["run_id"] for rec in store.load()}


def logged_worker(attempts: Path, spec):
    """``run_worker(spec)``, its start first appended to ``attempts`` (one line, ``O_APPEND``)."""
    line = json.dumps(
        {"run_id": spec.run_id, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    )
    fd = os.open(attempts, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)
    return run_worker(spec)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", required=True, type=Path, help="the runs.jsonl to fill")
    ap.add_argument("--jobs", type=int, default=-1, help="worker processes (-1: all cores)")
    ap.add_argument("--dataset", default="mnist", choices=["mnist", "cifar10"])
    ap.add_argument("--profile", default="paper", choices=["paper", "reference"])
    ap.add_argument("--fitting", default="scalable", choices=["full", "scalable"])
    ap.add_argument("--mnist-victim", default="mnist", choices=["mnist", "mnist-10k"])
    ap.add_argument("--methods", nargs="+", default=["bos2", "bayesopt", "bos2-nostop"])
    ap.add_argument("--skip-unreachable", type=Path, metavar="CHEAP_STORE")
    ap.add_argument("--attempts", type=Path, help="log of run starts (see above)")
    ap.add_argument(
        "--retry-attempted",
        action="store_true",
        help="also start runs the --attempts log says an earlier lease cut off",
    )
    args = ap.parse_args(argv)
    params = dict(DEFAULTS, methods=args.methods, profile=(args.profile,), fitting=args.fitting,
                  mnist_victim=args.mnist_victim)  # fmt: skip
    options = Options(args.store.parent, (args.dataset,), False, None, 0, check_options(params))
    skip = unreachable(args.skip_unreachable, args.dataset) if args.skip_unreachable else set()
    store = ResultStore(args.store)
    specs = fill_order(build_specs(options), skip)
    worker, cut_off = run_worker, set()
    if args.attempts:
        worker = functools.partial(logged_worker, args.attempts.resolve())
        if not args.retry_attempted:
            cut_off = unfinished(args.attempts, store)
            specs = [s for s in specs if s.run_id not in cut_off]
    print(
        f"{len(specs)} runs in fill order ({len(skip)} unreachable instances and "
        f"{len(cut_off)} runs an earlier lease cut off left out)"
    )
    run_sweep(specs, worker, store, n_jobs=args.jobs, desc="bos2 fill")


if __name__ == "__main__":
    main()
