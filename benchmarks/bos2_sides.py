"""Does BOS²'s dimension grid explain BayesOpt's lead? BOS² with side 20 added to ``d_allowed``.

On the MNIST rescale instances of a reproduction store (``frontierbo reproduce bos2
--range-mode rescale --profile scalable --out STORE``), BayesOpt needed fewer queries than BOS²
on most common successes, and most of its successes came in a 20 × 20 latent space, which
BayesOpt's grid has (sides 6..20, from its reference code) and BOS²'s does not (the thesis's
d_allowed, sides 6..18). This runs BOS² again on the store's first instances, with the store's
own seed for each, changing only ``sides`` to 6..20, and prints its queries beside the stored
BOS² (6..18) and BayesOpt ones. Results go to ``--out`` (JSON, one entry per instance,
resumable: instances already there are skipped).

Run: ``python benchmarks/bos2_sides.py --store /work/runs/bos2-rescale --instances 18
--out bos2_sides.json`` (needs the ``attack`` extra).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

SIDES_20 = (6, 8, 10, 12, 14, 16, 18, 20)


def stored(store: str) -> dict:
    out: dict = {}
    with open(os.path.join(store, "runs.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            c = r["config"]
            if c["dataset"] == "mnist" and c["range_mode"] == "rescale":
                out.setdefault((c["image"], c["target"]), {})[c["method"]] = r
    return out


def run_one(record: dict) -> dict:
    import torch

    from frontierbo.attack.base import execute
    from frontierbo.attack.bos2 import BOS2
    from frontierbo.attack.experiment import (
        DELTA_MAX,
        PERTURBATION_PROFILES,
        _test_images,
        _victim,
    )
    from frontierbo.attack.oracle import QueryOracle
    from frontierbo.attack.perturbation_bo import StoppingSettings

    torch.set_num_threads(1)
    c = record["config"]
    attack = BOS2(perturbation=PERTURBATION_PROFILES[c["profile"]](),
                  stopping=StoppingSettings(), sides=SIDES_20)  # fmt: skip
    images, _ = _test_images("mnist")
    oracle = QueryOracle(_victim("mnist"), images[c["image"]], c["target"], DELTA_MAX["mnist"],
                         c["budget"], range_mode="rescale")  # fmt: skip
    started = time.perf_counter()
    result = execute(attack, oracle, seed=record["seed"])
    return {"success": result.success, "queries": result.queries,
            "seconds": round(time.perf_counter() - started, 1)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", required=True)
    ap.add_argument("--instances", type=int, default=18)
    ap.add_argument("--out", default="bos2_sides.json")
    args = ap.parse_args()
    runs = stored(args.store)
    keys = [k for k, v in runs.items() if "bos2" in v and "bayesopt" in v][: args.instances]
    done = {}
    if os.path.exists(args.out):
        with open(args.out, encoding="utf-8") as fh:
            done = json.load(fh)
    for image, target in keys:
        key = f"{image}/{target}"
        if key not in done:
            done[key] = run_one(runs[(image, target)]["bos2"])
            tmp = args.out + ".tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(done, fh)
            os.replace(tmp, args.out)
        print(key, done[key], flush=True)
    print("| image/target | BOS² sides 6..18 | BOS² sides 6..20 | BayesOpt |")
    print("|---|---:|---:|---:|")
    cells = []
    for image, target in keys:
        key = f"{image}/{target}"
        if key not in done:
            continue
        row = [runs[(image, target)]["bos2"], done[key], runs[(image, target)]["bayesopt"]]
        q = [r["queries"] if r["success"] else None for r in row]
        cells.append(q)
        print(f"| {key} | " + " | ".join("✗" if v is None else str(v) for v in q) + " |")
    for j, name in enumerate(("BOS² 6..18", "BOS² 6..20", "BayesOpt")):
        ok = [c[j] for c in cells if c[j] is not None]
        print(f"{name}: {len(ok)}/{len(cells)} successes, median {np.median(ok) if ok else '-'}")


if __name__ == "__main__":
    main()
