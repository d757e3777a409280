"""How many BOS² instances can be reached at all: white-box PGD on the victims, per latent side
and range mode.

The black-box attacks search ``u = Up(z)`` for a latent field ``z`` of side s (BOS² picks
s in 6..18; BayesOpt 6..20) inside the L∞ ball. A white-box PGD in the same space bounds what
they can reach. For each range mode and side this runs
:class:`~frontierbo.attack.whitebox.WhiteBoxPGD` with its defaults (six starts of 200 sign
steps on the logit margin, the targeted cross-entropy and (5.2) in turn; at full resolution
``u`` projected onto the box the clip leaves alone) on the reproduction's instances and prints
the fraction it reached. ``full`` is the full-resolution perturbation. Every success is checked
by one oracle query; a failure is only evidence (PGD is local), weaker in a latent field, where
``z`` cannot be projected onto the clip's box (the class's doc). ``--earlier`` runs the earlier
PGD instead (two starts on (5.2), ``u`` only kept in [-1, 1], so pixels pushed past the image
box froze), to compare.

Its purpose is to explain the gap between our ASR and the thesis's (docs/bos2-attack.md,
"Feasibility"): is an instance out of reach of every attack in the L∞ ball, in the latent space
of the black-box attacks, or only of the attacks we ran?

Run: ``python benchmarks/attack_feasibility.py [--dataset mnist] [--images 10]
[--sides 6,10,14,18,full] [--modes clip,rescale] [--per-instance out.json] [--earlier]`` (the
attack extra; per side, on a shared 2-core machine, about 4-5 minutes for the 450 MNIST
instances and 5-8 for the 180 CIFAR-10 ones: a miss costs all six starts).
``--per-instance`` also writes whether each instance was reached, keyed by the reproduction's
instance ids.
"""

from __future__ import annotations

import argparse
import time

from frontierbo.io import write_json_atomic


def feasibility(
    dataset: str, images: int, side, mode: str, earlier: bool = False
) -> dict[str, bool]:
    """Whether PGD reached each instance of the first ``images`` images x 9 targets, keyed by
    the reproduction's instance id (``cifar10/i0/t4``, as in its run ids). ``earlier``: the
    earlier PGD (module doc)."""
    from frontierbo.attack import experiment as ex
    from frontierbo.attack.base import execute
    from frontierbo.attack.oracle import QueryOracle
    from frontierbo.attack.whitebox import WhiteBoxPGD

    victim = ex._victim(dataset)
    pixels, labels = ex._test_images(dataset)
    attack = (
        WhiteBoxPGD(victim, side=side, starts=2, losses=("objective",), project=False, decay=False)
        if earlier
        else WhiteBoxPGD(victim, side=side)
    )
    reached = {}
    for image in ex.chosen_images(dataset, 0)[:images]:
        for target in ex.instance_targets(int(labels[image]), 9):
            oracle = QueryOracle(
                victim, pixels[image], target, ex.DELTA_MAX[dataset], budget=1, range_mode=mode
            )
            result = execute(attack, oracle, seed=ex.seed_for(0, dataset, image, target))
            reached[f"{dataset}/i{image}/t{target}"] = bool(result.success)
    return reached


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", choices=("mnist", "cifar10"), default="mnist")
    parser.add_argument("--images", type=int, default=10)
    parser.add_argument("--sides", default="6,10,14,18,full")
    parser.add_argument("--modes", default="clip,rescale")
    parser.add_argument(
        "--per-instance",
        metavar="PATH",
        help="also write {mode: {side: {instance: reached}}} as JSON, to set against the "
        "black-box attacks' records instance by instance",
    )
    parser.add_argument(
        "--earlier",
        action="store_true",
        help="the earlier PGD (two starts on (5.2), no projection onto the image box)",
    )
    args = parser.parse_args()

    import torch

    torch.set_num_threads(1)
    sides = [None if s == "full" else int(s) for s in args.sides.split(",")]
    which = "the earlier white-box PGD" if args.earlier else "white-box PGD"
    print(f"{args.dataset}, first {args.images} images x 9 targets, {which} reached:")
    print(f"{'mode':>8} {'side':>5} {'reached':>9} {'fraction':>9} {'seconds':>8}")
    per_instance: dict[str, dict[str, dict[str, bool]]] = {}
    for mode in args.modes.split(","):
        for side in sides:
            start = time.perf_counter()
            outcome = feasibility(args.dataset, args.images, side, mode, args.earlier)
            per_instance.setdefault(mode, {})[str(side or "full")] = outcome
            reached, total = sum(outcome.values()), len(outcome)
            print(
                f"{mode:>8} {side or 'full':>5} {reached:>4}/{total:<4} {reached / total:>9.1%} "
                f"{time.perf_counter() - start:>8.1f}",
                flush=True,
            )
    if args.per_instance:
        write_json_atomic(args.per_instance, per_instance)


if __name__ == "__main__":
    main()
