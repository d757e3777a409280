"""The BOS² docs' reachability counts: white-box PGD's reach set against the attacks' records.

Reads a GP store (``records/bos2/bos2-mnist-clip.jsonl`` or ``bos2-cifar10-clip.jsonl``), the
cheap store (GenAttack and full-resolution PGD, ``bos2-cheap-clip.jsonl``) and the per-side
reachability written by ``benchmarks/attack_feasibility.py --per-instance``
(``bos2-*-pgd-sides.json``), and prints what the docs' "Feasibility" and "Verdicts" sections
quote: how many instances PGD reaches at full resolution, at each latent side and in one of
them; each attack's successes outside each reach set and inside side 18's (BOS²'s largest);
the instances all three GP attacks failed though PGD reaches them at side 18; and, per image,
the images on which the GP attacks failed every target. It runs no attack.

Run: ``python tools/pgd_reach_summary.py --dataset mnist [--images 10]`` (the committed
records; a second, or a few with ``--images``, which keeps the first images of the run order
and needs the attack extra).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

RECORDS = Path(__file__).resolve().parents[1] / "records" / "bos2"
GP = ("bos2", "bos2-nostop", "bayesopt")
ATTACKS = (*GP, "genattack")


def load(dataset: str, store: Path, cheap: Path, sides: Path):
    """``runs[(image, target)][method] -> success`` and the reach sets by name."""
    runs: dict = {}
    for path in (store, cheap):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            c = record["config"]
            if c["dataset"] == dataset and c.get("range_mode", "clip") == "clip":
                runs.setdefault((c["image"], c["target"]), {}).setdefault(
                    c["method"], bool(record["success"])
                )
    reach = {"full": {key for key, r in runs.items() if r.get("pgd")}}
    for side, per in json.loads(sides.read_text(encoding="utf-8"))["clip"].items():
        reach[side] = {
            (int(k.split("/")[1][1:]), int(k.split("/")[2][1:])) for k, ok in per.items() if ok
        }
    reach["union"] = set().union(*reach.values())
    return runs, reach


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", choices=("mnist", "cifar10"), default="mnist")
    parser.add_argument("--store", type=Path)
    parser.add_argument("--cheap", type=Path, default=RECORDS / "bos2-cheap-clip.jsonl")
    parser.add_argument("--sides", type=Path)
    parser.add_argument("--images", type=int, help="only the first IMAGES images in run order")
    args = parser.parse_args()
    name = "mnist" if args.dataset == "mnist" else "cifar10"
    store = args.store or RECORDS / f"bos2-{name}-clip.jsonl"
    sides = args.sides or RECORDS / f"bos2-{name}-pgd-sides.json"
    runs, reach = load(args.dataset, store, args.cheap, sides)
    if args.images:
        from frontierbo.attack.experiment import chosen_images

        kept = set(chosen_images(args.dataset, 0)[: args.images])
        runs = {key: r for key, r in runs.items() if key[0] in kept}
        reach = {label: {key for key in keys if key[0] in kept} for label, keys in reach.items()}
    done = {key for key, r in runs.items() if all(m in r for m in ATTACKS)}
    n = len(runs)
    print(f"{args.dataset}: {n} instances, {len(done)} with every GP attack and GenAttack")
    for label, keys in reach.items():
        print(f"  PGD reaches {label:>5}: {len(keys):>4}/{n} ({len(keys) / n:.1%})")
    print("  successes outside each reach set:")
    for attack in ATTACKS:
        solved = {key for key in done if runs[key][attack]}
        outside = {label: len(solved - keys) for label, keys in reach.items()}
        print(f"    {attack:>12}: {len(solved):>4} solved; outside {outside}")
    for label in ("full", "18"):
        if label not in reach:
            continue
        inside = reach[label] & done
        print(f"  on the {len(inside)} instances reachable at {label}:")
        for attack in ATTACKS:
            solved = sum(runs[key][attack] for key in inside)
            print(f"    {attack:>12}: {solved} ({solved / len(inside):.1%})")
        all_gp_failed = {key for key in inside if not any(runs[key][m] for m in GP)}
        rescued = sum(runs[key]["genattack"] for key in all_gp_failed)
        print(f"    all three GP attacks failed {len(all_gp_failed)}; GenAttack solved {rescued}")
    if "18" in reach:
        only_bayesopt = {key for key in done if runs[key]["bayesopt"] and not runs[key]["bos2"]}
        beyond = only_bayesopt - reach["18"]
        print(
            f"  BayesOpt alone (not BOS²): {len(only_bayesopt)}; not reachable at side 18: "
            f"{len(beyond)} (of them reachable at side 20: {len(beyond & reach.get('20', set()))})"
        )
    images = sorted({image for image, _ in done})
    for image in images:
        keys = [key for key in done if key[0] == image]
        if len(keys) == 9 and not any(runs[key][m] for key in keys for m in GP):
            counts = {label: len(set(keys) & r) for label, r in reach.items()}
            print(f"  image {image}: all GP attacks failed all 9 targets; PGD reaches {counts}")


if __name__ == "__main__":
    main()
