"""Do the GP attacks lose the CIFAR-10 instances whose target logit the victim clips to 0?

Our CIFAR-10 victim (the Keras CNN of the ``cifar-10-model`` wheel) has a ReLU on its logits.
While the target's logit is clipped to 0, the objective (5.2), ``z_tgt - logsumexp_{c != tgt}
z_c``, sees only the other classes: a query that raises the target's pre-activation but leaves
it negative scores the same. This script splits the 180 instances by whether the target's logit
is 0 at the clean image, keeps those white-box PGD reaches in BOS²'s largest latent side (18),
and counts each black-box attack's successes in the two groups from the committed store. It
also prints the share of random corners of the L∞ ball (200 per image, clipped to the range)
at which the target's logit is 0. It runs no attack: one batch of forward passes per image.

Run: ``python benchmarks/bos2_relu_logits.py [--store records/bos2/bos2-cifar10-clip.jsonl]
[--reachable records/bos2/bos2-cifar10-pgd-sides.json|none] [--seed 0]`` (the attack extra; a
few seconds). A store of some instances (``records/bos2/parity-cifar10.jsonl``) counts those.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from bos2_variants import stored
from frontierbo.attack import experiment as ex

ATTACKS = ("bos2", "bos2-nostop", "bayesopt", "genattack")
CORNERS = 200


def clipped_targets(rng: np.random.Generator) -> dict[str, tuple[bool, float]]:
    """Per instance id: (target logit 0 at the clean image, share of random corners where it
    is 0)."""
    victim = ex._victim("cifar10")
    pixels, labels = ex._test_images("cifar10")
    delta = ex.DELTA_MAX["cifar10"]
    out = {}
    for image in ex.chosen_images("cifar10", 0):
        x0 = pixels[image]
        corners = np.clip(
            x0 + delta * rng.choice([-1.0, 1.0], size=(CORNERS, *x0.shape)), -0.5, 0.5
        )
        z = victim.logits(np.concatenate([x0[None], corners]))
        for target in ex.instance_targets(int(labels[image]), 9):
            key = f"cifar10/i{image}/t{target}"
            out[key] = (bool(z[0, target] == 0), float(np.mean(z[1:, target] == 0)))
    return out


def instance(key: str) -> tuple[int, int]:
    """``cifar10/i3/t5`` -> (3, 5), the key of ``bos2_variants.stored``."""
    _, image, target = key.split("/")
    return int(image[1:]), int(target[1:])


def _reachable(path: str) -> dict[str, bool] | None:
    """White-box PGD's reach at side 18 per instance id, or None for ``none``."""
    if path == "none":
        return None
    with open(path) as f:
        return json.load(f)["clip"]["18"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", default="records/bos2/bos2-cifar10-clip.jsonl")
    parser.add_argument(
        "--reachable",
        default="records/bos2/bos2-cifar10-pgd-sides.json",
        help="white-box reach per latent side (clip); 'none': count every instance",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import torch

    torch.set_num_threads(1)
    runs = stored(args.store, "cifar10")
    reachable = _reachable(args.reachable)
    clipped = {
        k: v
        for k, v in clipped_targets(np.random.default_rng(args.seed)).items()
        if instance(k) in runs
    }
    shares = [share for _, share in clipped.values()]
    print(f"target logit 0 at the clean image: {sum(c for c, _ in clipped.values())} of "
          f"{len(clipped)} instances; at random corners of the ball: {np.mean(shares):.1%}")  # fmt: skip
    print(
        f"{'attack':>12} | {'clipped at x0':>15} | {'positive at x0':>15}   "
        f"({'every instance' if reachable is None else 'reachable at side 18'})"
    )
    counted = [k for k in clipped if reachable is None or reachable[k]]
    groups = [[k for k in counted if clipped[k][0] == want] for want in (True, False)]
    for attack in [a for a in ATTACKS if all(a in runs[instance(k)] for k in clipped)]:
        cells = []
        for keys in groups:
            solved = sum(runs[instance(k)][attack]["success"] for k in keys)
            share = f"{solved / len(keys):>4.0%}" if keys else "   –"
            cells.append(f"{solved:>3}/{len(keys):<3} ({share})")
        print(f"{attack:>12} | {cells[0]:>15} | {cells[1]:>15}")


if __name__ == "__main__":
    main()
