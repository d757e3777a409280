"""``frontierbo run bos2`` / ``frontierbo attack``: attack your own torch classifier.

Every (image, target) pair is one instance with its own seed. ``out`` receives
``adversarial.npz`` (``x_adv`` (m, H, W, C) in [0, 1], NaN where the attack failed, with
``image``, ``target``, ``success``, ``queries``), ``queries.jsonl`` (every query of every
instance), ``summary.json`` and, from the shared run path, ``result.json`` (the same summary).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from frontierbo._validation import check_int
from frontierbo.attack.system import RUN
from frontierbo.experiments.runner import seed_for
from frontierbo.io import atomic_output, write_json_atomic, write_text_atomic
from frontierbo.systems.userrun import implements


def load_images(path) -> tuple[np.ndarray, np.ndarray | None, float]:
    """Images in the attack space [-0.5, 0.5], labels or None, and the file's pixel scale."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--images: no file {path}")
    with np.load(path) as data:
        if "images" not in data:
            raise ValueError(f"--images: {path} has no array 'images' (keys: {sorted(data)})")
        images = np.asarray(data["images"])
        labels = np.asarray(data["labels"]).astype(int) if "labels" in data else None
    if images.ndim == 3:
        images = images[..., None]
    if images.ndim != 4:
        raise ValueError(f"--images: 'images' must be (n, H, W, C), got shape {images.shape}")
    scale = 255.0 if images.dtype == np.uint8 else 1.0
    x = images.astype(float) / scale
    if x.min() < 0 or x.max() > 1:
        raise ValueError("--images: float images must lie in [0, 1] (or give uint8 0-255)")
    if labels is not None and labels.shape != (images.shape[0],):
        raise ValueError(f"--images: 'labels' must have shape ({images.shape[0]},)")
    return x - 0.5, labels, scale


@implements(RUN)
def run_user_attack(
    model,
    images,
    *,
    targets,
    attack: str = "bos2",
    budget: int = 900,
    delta_max: float = 0.3,
    profile: str = "paper",
    groups: int | None = None,
    seed: int = 0,
    architecture: str | None = None,
    input_scale: str | None = None,
    out=None,
    labels=None,
) -> dict:
    """Attack every image towards each target. From Python ``model`` may also be a
    :class:`~frontierbo.attack.victims.Victim` (any callable from attack-space batches to
    probabilities), ``images`` an array (n, H, W, C) in [-0.5, 0.5] and ``labels`` the images'
    classes (default: the file's, else the model's predictions)."""
    from frontierbo.attack.base import execute
    from frontierbo.attack.experiment import build_attack
    from frontierbo.attack.oracle import QueryOracle

    if isinstance(images, str | os.PathLike):
        images, stored, _ = load_images(images)
        labels = stored if labels is None else labels
    if isinstance(model, str | os.PathLike):
        from frontierbo.attack.victims import load_torch_classifier

        model = load_torch_classifier(
            model, architecture, input_scale, input_shape=images.shape[1:]
        )
    elif architecture is not None or input_scale is not None:
        raise ValueError("--architecture and --input-scale apply to a model file only")
    dataset = "cifar10" if images.shape[-1] == 3 else "mnist"
    # attacks are frozen dataclasses: one object serves every instance, and a bad option fails
    # here, before any query
    attacker = build_attack(attack, dataset, profile, groups)
    probabilities = model(images)
    true = probabilities.argmax(axis=1) if labels is None else np.asarray(labels)
    classes = probabilities.shape[1]
    instances = []
    for i in range(images.shape[0]):
        wanted = [c for c in range(classes) if c != true[i]] if targets == "all" else targets
        for t in wanted:
            t = check_int(t, "target (--target-class)", low=0, high=classes - 1)
            if t != true[i]:
                instances.append((i, t))
    if not instances:
        raise ValueError("--target-class: every target equals its image's label; nothing to do")
    rows, logs, x_adv = [], [], np.full((len(instances), *images.shape[1:]), np.nan)
    for k, (i, t) in enumerate(instances):
        oracle = QueryOracle(model, images[i], t, delta_max, budget)
        result = execute(attacker, oracle, seed_for(seed, i, t))
        if result.success:
            x_adv[k] = result.x_adv
        rows.append(
            {"image": i, "label": int(true[i]), "target": t, "success": result.success,
             "queries": result.queries, "stopped_by": result.stopped_by}
        )  # fmt: skip
        logs += [{"image": i, "target": t, **r.__dict__} for r in oracle.log]
    summary = {
        "attack": attack,
        "budget": budget,
        "delta_max": delta_max,
        **({} if groups is None else {"groups": groups}),
        "instances": len(rows),
        "successes": sum(r["success"] for r in rows),
        "results": rows,
    }
    if out is not None:
        _write(out, summary, logs, x_adv)
    return summary


def _write(out: Path, summary: dict, logs: list[dict], x_adv: np.ndarray) -> None:
    keys = ("image", "target", "success", "queries")
    columns = {key: np.array([r[key] for r in summary["results"]]) for key in keys}
    with atomic_output(out / "adversarial.npz") as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, x_adv=x_adv + 0.5, **columns)
    write_text_atomic(out / "queries.jsonl", "".join(json.dumps(line) + "\n" for line in logs))
    write_json_atomic(out / "summary.json", summary)


def format_summary(summary: dict) -> str:
    lines = [
        f"{summary['attack']}: {summary['successes']}/{summary['instances']} instances "
        f"succeeded (budget {summary['budget']}, delta_max {summary['delta_max']})",
        "image  label  target  success  queries",
    ]
    row = "{image:>5}  {label:>5}  {target:>6}  {success!s:>7}  {queries:>7}"
    return "\n".join(lines + [row.format(**r) for r in summary["results"]])


def example(directory) -> list[dict]:
    """A pickled two-layer net on one 20 x 20 grey image (BayesOpt's smallest) and a 40-query
    run of each attack (conformance); skips without torch."""
    import pytest

    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    nn = torch.nn
    torch.save(nn.Sequential(nn.Flatten(), nn.Linear(400, 8), nn.ReLU(), nn.Linear(8, 3)),
               directory / "net.pt")  # fmt: skip
    pixels = np.random.default_rng(0).integers(0, 256, (1, 20, 20, 1), dtype=np.uint8)
    np.savez(directory / "images.npz", images=pixels)
    run = {"model": directory / "net.pt", "images": directory / "images.npz", "targets": [2],
           "budget": 40, "profile": "fast", "seed": 1}  # fmt: skip
    return [{**run, "attack": attack} for attack in RUN.param("attack").choices]
