"""Attack your own torch classifier: ``frontierbo attack --model M --images I --target-class …``.

The images file is an ``.npz`` with ``images`` (n, H, W, C) — uint8 pixels 0-255 or floats in
[0, 1] — and optionally ``labels`` (n,) (default: the model's own predictions, so an instance is
"make the model change its mind to the target"). Every (image, target) pair is one instance with
its own seed; each writes its query log. Outputs in ``--out``: ``adversarial.npz`` (``x_adv``
(m, H, W, C) in the images' pixel range, NaN where the attack failed, plus ``image``, ``target``,
``success``, ``queries``), ``queries.jsonl`` (one line per query of every instance) and
``summary.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from frontierbo._validation import check_int, check_real
from frontierbo.experiments.runner import seed_for
from frontierbo.experiments.store import atomic_output, write_json_atomic

ATTACKS = ("bos2", "bos2-nostop", "bayesopt", "genattack", "zoo", "autozoom")


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
    out=None,
    labels=None,
) -> dict:
    """Attack every image towards each of ``targets`` (a list of class indices, or ``"all"``).

    ``model``: a :class:`~frontierbo.attack.victims.Victim` (or any callable from attack-space
    batches to probabilities); ``images`` (n, H, W, C) in [-0.5, 0.5]; ``groups``: BOS²'s
    number of additive groups (None: the thesis's 12).
    """
    from frontierbo.attack.base import execute
    from frontierbo.attack.experiment import build_attack
    from frontierbo.attack.oracle import QueryOracle

    if attack not in ATTACKS:
        raise ValueError(f"attack must be one of {list(ATTACKS)}, got {attack!r}")
    budget = check_int(budget, "budget (--queries)", low=1)
    delta_max = check_real(delta_max, "delta_max (--delta-max)", low=0.0, high=1.0)
    dataset = "cifar10" if images.shape[-1] == 3 else "mnist"
    # attacks are frozen dataclasses: one object serves every instance, and a bad option fails
    # here, before any query
    attacker = build_attack(attack, dataset, profile, groups)
    predicted = np.argmax(model(images), axis=1)
    true = predicted if labels is None else np.asarray(labels)
    classes = model(images[:1]).shape[1]
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
        _write(Path(out), summary, logs, x_adv)
    return summary


def _write(out: Path, summary: dict, logs: list[dict], x_adv: np.ndarray) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rows = summary["results"]
    with atomic_output(out / "adversarial.npz") as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(
            fh,
            x_adv=x_adv + 0.5,
            image=np.array([r["image"] for r in rows]),
            target=np.array([r["target"] for r in rows]),
            success=np.array([r["success"] for r in rows]),
            queries=np.array([r["queries"] for r in rows]),
        )
    with atomic_output(out / "queries.jsonl") as tmp:
        Path(tmp).write_text("".join(json.dumps(line) + "\n" for line in logs))
    write_json_atomic(out / "summary.json", summary)


def format_summary(summary: dict) -> str:
    lines = [
        f"{summary['attack']}: {summary['successes']}/{summary['instances']} instances "
        f"succeeded (budget {summary['budget']}, delta_max {summary['delta_max']})",
        "image  label  target  success  queries",
    ]
    for r in summary["results"]:
        lines.append(
            f"{r['image']:>5}  {r['label']:>5}  {r['target']:>6}  {str(r['success']):>7}  "
            f"{r['queries']:>7}"
        )
    return "\n".join(lines)
