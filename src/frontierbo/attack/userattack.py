"""``frontierbo run bos2`` / ``frontierbo attack``: attack your own torch classifier.

Every (image, target) pair is one instance with its own seed, so an instance's result does not
depend on the others. ``--model`` takes the forms of :mod:`frontierbo.attack.user_model`.

Progress goes to stderr: a bar on a terminal (instances done, queries, successes) and one line
per finished instance. With ``out`` every instance is kept as it finishes, so a killed attack
loses at most the instance it was on:

- ``instances.jsonl``: one line per finished instance (its outcome, ``x_adv``, every query and
  the run's options), appended atomically by :class:`~frontierbo.experiments.store.ResultStore`:
  the record the other files are made from. Rerunning the same command resumes: the instances
  there are skipped. Other options (or another model or images) into the same ``out`` are
  refused, naming what differs.
- ``adversarial.npz`` (``x_adv`` (m, H, W, C) in [0, 1], NaN where the attack failed, with
  ``image``, ``target``, ``success``, ``queries``) and ``summary.json``: rewritten after every
  instance (``finished`` < ``instances`` while running); ``queries.jsonl``: every query of every
  finished instance, appended per instance (rebuilt from ``instances.jsonl`` on resume).
- ``result.json``: the summary, written by the shared run path when every instance is done.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from frontierbo._validation import check_int
from frontierbo.attack.system import INSTANCES_FILE, RUN
from frontierbo.data import file_sha256
from frontierbo.experiments.runner import seed_for
from frontierbo.experiments.store import ResultStore, lock_directory
from frontierbo.io import atomic_output, to_jsonable, write_json_atomic, write_text_atomic
from frontierbo.systems.userrun import implements, progress_bar

#: Seconds between two redraws of the bar's query count.
REDRAW = 0.5
#: Seconds between two "running" lines when there is no bar (stderr is not a terminal).
HEARTBEAT = 60.0
#: How a config key is named in the refusal of another attack's ``out``.
_FLAGS = {p.name: p.option for p in RUN.params}
_FILES = {"model": "--model", "model_module": "--model-module", "images": "--images"}
_CHANGED = {"images": "other images or labels"}


def load_images(path) -> tuple[np.ndarray, np.ndarray | None, float]:
    """Images in the attack space [-0.5, 0.5], labels or None, and the file's pixel scale."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--images: no such file: {path}")
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
    fitting: str = "scalable",
    groups: int | None = None,
    seed: int = 0,
    architecture: str | None = None,
    input_scale: str | None = None,
    model_module: Path | None = None,
    model_class: str | None = None,
    out=None,
    labels=None,
    progress: bool | None = None,
) -> dict:
    """Attack every image towards each target (module doc). From Python ``model`` may also be a
    :class:`~frontierbo.attack.victims.Victim` (any callable from attack-space batches to
    probabilities), ``images`` an array (n, H, W, C) in [-0.5, 0.5] and ``labels`` the images'
    classes (default: the file's, else the model's predictions). ``progress``: the bar and the
    per-instance lines on stderr (None: the bar on a terminal only; False: silent)."""
    from frontierbo.attack.experiment import build_attack

    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None, got {progress!r}")
    if isinstance(images, str | os.PathLike):
        images, stored, _ = load_images(images)
        labels = stored if labels is None else labels
    images = np.asarray(images, dtype=float)
    if isinstance(model, str | os.PathLike):
        from frontierbo.attack.user_model import load_torch_classifier

        victim = load_torch_classifier(
            model, architecture, input_scale, model_module=model_module,
            model_class=model_class, input_shape=images.shape[1:],
        )  # fmt: skip
        identity = {"model": file_sha256(model),
                    "model_module": None if model_module is None else file_sha256(model_module)}  # fmt: skip
    elif any(v is not None for v in (architecture, input_scale, model_module, model_class)):
        raise ValueError(
            "--architecture, --input-scale, --model-module and --model-class apply to a model "
            "file only"
        )
    else:
        victim, identity = model, None
    dataset = "cifar10" if images.shape[-1] == 3 else "mnist"
    # attacks are frozen dataclasses: one object serves every instance, and a bad option fails
    # here, before any query
    attacker = build_attack(attack, dataset, fitting, groups)
    probabilities = victim(images)
    true = probabilities.argmax(axis=1) if labels is None else np.asarray(labels).astype(int)
    instances = _instances(targets, true, probabilities.shape[1])
    if identity is None:  # a Python callable: known by what it answers on the images
        identity = {"model": "predictions " + _digest(np.round(probabilities, 6))}
    config = {
        "attack": attack, "budget": budget, "delta_max": delta_max, "fitting": fitting,
        "groups": groups, "seed": seed, "targets": targets, "architecture": architecture,
        "input_scale": input_scale, "model_class": model_class, **identity,
        "images": _digest(images, true),
    }  # fmt: skip
    config = json.loads(json.dumps(to_jsonable(config)))  # as a stored record reads it back

    def attack_one(i: int, t: int, tick) -> dict:
        from frontierbo.attack.base import execute
        from frontierbo.attack.oracle import QueryOracle

        def counted(x):
            p = victim(x)
            tick()
            return p

        oracle = QueryOracle(counted, images[i], t, delta_max, budget)
        result = execute(attacker, oracle, seed_for(seed, i, t))
        return to_jsonable({  # as it is stored, so a resumed run returns the same
            "run_id": _run_id(i, t), "config": config, "image": i, "label": int(true[i]),
            "target": t, "success": result.success, "queries": result.queries,
            "stopped_by": result.stopped_by,
            "x_adv": None if result.x_adv is None else np.asarray(result.x_adv).tolist(),
            "log": [dict(r.__dict__) for r in oracle.log],
        })  # fmt: skip

    with lock_directory(out) if out is not None else contextlib.nullcontext():
        records = _run(instances, attack_one, out, config, progress, attack, images.shape[1:])
    return _summary(config, len(instances), records)


def _instances(targets, true: np.ndarray, classes: int) -> list[tuple[int, int]]:
    """The (image, target) pairs: every target but the image's label."""
    instances = []
    for i in range(true.shape[0]):
        wanted = [c for c in range(classes) if c != true[i]] if targets == "all" else targets
        for t in wanted:
            t = check_int(t, "target (--target-class)", low=0, high=classes - 1)
            if t != true[i]:
                instances.append((i, t))
    if not instances:
        raise ValueError("--target-class: every target equals its image's label; nothing to do")
    return instances


def _digest(*arrays) -> str:
    digest = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        digest.update(f"{a.dtype.str}{a.shape}".encode())
        digest.update(a.tobytes())
    return digest.hexdigest()


def _run(instances, attack_one, out, config, progress, attack: str, shape) -> list[dict]:
    """Every instance's record, in instance order: the ones ``out`` holds, then the rest, each
    kept in ``out`` as it finishes."""
    store = None if out is None else ResultStore(Path(out) / INSTANCES_FILE)
    done = {} if store is None else _resume(store, config, out)
    files = None if out is None else _Files(out, config, len(instances), shape)
    records = [done[_run_id(i, t)] for i, t in instances if _run_id(i, t) in done]
    if files is not None and records:
        files.rebuild(records)
    report = _Progress(progress, attack, len(instances), records)
    if report.say:
        where = "" if out is None else f"; each kept in {out}/ as it finishes"
        again = f", {len(done)} already in {out}/ (resumed)" if done else ""
        report.say(
            f"{attack}: {report.planned}, up to {config['budget']} queries each{again}{where}"
        )
    try:
        with report:  # the bar is gone before the line below
            for k, (i, t) in enumerate(instances, start=1):
                if _run_id(i, t) in done:
                    continue
                report.current = f"instance {k}/{len(instances)} (image {i}, target {t})"
                record = attack_one(i, t, report.tick)
                if store is not None:
                    store.append(record)  # kept: from here on a kill cannot lose it
                records.append(record)
                if files is not None:
                    files.add(records)
                report.finished(record)
    except KeyboardInterrupt:
        if store is not None:
            # the store, not ``records``: Ctrl-C may come after an instance was kept and before
            # the files made from it were; they are made again from what was kept
            kept = store.load()
            if kept:
                files.rebuild(kept)
            if report.say:
                report.say(
                    f"{attack}: interrupted; {len(kept)} of {report.planned} kept in "
                    f"{Path(out) / INSTANCES_FILE}: run the same command again to resume"
                )
        raise
    return records


def _run_id(image: int, target: int) -> str:
    return f"image{image}-target{target}"


class _Progress:
    """What stderr shows: the bar (instances done; queries and successes beside it), a line
    per finished instance, and without a bar a line every :data:`HEARTBEAT` seconds."""

    def __init__(self, progress, attack: str, planned: int, records: list[dict]):
        self.planned = f"{planned} instance{'s' * (planned != 1)}"
        self.say = None if progress is False else _say
        self.queries = sum(r["queries"] for r in records)
        self.successes = _successes(records)
        self.bar = progress_bar(progress, planned, f"{attack}: instances")
        self.bar.unit = "instance"
        self.bar.update(len(records))
        self.current, self._drawn, self._beat = "", 0.0, time.monotonic()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.bar.close()

    def _postfix(self) -> None:
        self.bar.set_postfix_str(f"queries {self.queries}, successes {self.successes}")

    def tick(self) -> None:
        """One query made."""
        self.queries += 1
        now = time.monotonic()
        if now - self._drawn >= REDRAW:
            self._drawn = now
            self._postfix()
        if self.say and self.bar.disable and now - self._beat >= HEARTBEAT:
            self._beat = now
            self.say(f"{self.current}: running, {self.queries} queries so far")

    def finished(self, record: dict) -> None:
        self.successes += bool(record["success"])
        self.bar.update(1)
        self._postfix()
        self._beat = time.monotonic()
        if self.say:
            what = (f"success at query {record['queries']}" if record["success"]
                    else f"no success in {record['queries']} queries ({record['stopped_by']})")  # fmt: skip
            self.bar.write(f"{self.current}: {what}; so far {self.successes} succeeded, "
                           f"{self.queries} queries", file=sys.stderr)  # fmt: skip


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _successes(records) -> int:
    return sum(bool(r["success"]) for r in records)


def _resume(store: ResultStore, config: dict, out) -> dict[str, dict]:
    """The finished instances ``out`` holds, by run id; another attack's are refused."""
    records = store.load()
    for record in records:
        old = record.get("config")
        if old != config:
            raise ValueError(
                f"--out {out} holds {len(records)} instances of another attack "
                f"({_differences(old or {}, config)}); rerun with the same options to resume, "
                "or give another --out"
            )
    return {record["run_id"]: record for record in records}


def _differences(old: dict, new: dict) -> str:
    found = []
    for key in [k for k in new if old.get(k) != new[k]] + [k for k in old if k not in new]:
        if key in _FILES:  # a digest: say what it is of
            object_model = str(new.get(key)).startswith("predictions")
            what = "another model" if object_model else _CHANGED.get(key, "another file")
            found.append(f"{_FILES[key]}: {what}")
        else:
            found.append(f"{_FLAGS.get(key, key)} {old.get(key)!r} there, {new.get(key)!r} now")
    return "; ".join(found)


def _summary(config: dict, planned: int, records: list[dict]) -> dict:
    rows = [{key: r[key] for key in ("image", "label", "target", "success", "queries",
                                     "stopped_by")} for r in records]  # fmt: skip
    return {
        "attack": config["attack"],
        "budget": config["budget"],
        "delta_max": config["delta_max"],
        **({} if config["groups"] is None else {"groups": config["groups"]}),
        "instances": planned,
        "finished": len(rows),
        "successes": _successes(rows),
        "results": rows,
    }


class _Files:
    """The files of ``out`` made from the finished instances' records (module doc)."""

    def __init__(self, out, config: dict, planned: int, shape: tuple):
        self.out, self.config, self.planned, self.shape = Path(out), config, planned, shape

    def rebuild(self, records: list[dict]) -> None:
        """Every file made again from ``records`` (on resume: repairs a kill that came between
        an instance's record and its queries)."""
        write_text_atomic(self.out / "queries.jsonl", _query_lines(records))
        self._tables(records)

    def add(self, records: list[dict]) -> None:
        """After one more instance (the last of ``records``): its queries appended, the npz
        and the summary rewritten."""
        _append(self.out / "queries.jsonl", _query_lines(records[-1:]))
        self._tables(records)

    def _tables(self, records: list[dict]) -> None:
        x_adv = np.full((len(records), *self.shape), np.nan)
        for k, record in enumerate(records):
            if record["x_adv"] is not None:
                x_adv[k] = np.asarray(record["x_adv"], dtype=float)
        keys = ("image", "target", "success", "queries")
        columns = {key: np.array([r[key] for r in records], dtype=int) for key in keys}
        columns["success"] = columns["success"].astype(bool)
        with atomic_output(self.out / "adversarial.npz") as tmp, open(tmp, "wb") as fh:
            np.savez_compressed(fh, x_adv=x_adv + 0.5, **columns)
        write_json_atomic(self.out / "summary.json", _summary(self.config, self.planned, records))


def _query_lines(records: list[dict]) -> str:
    return "".join(
        json.dumps({"image": r["image"], "target": r["target"], **line}) + "\n"
        for r in records
        for line in r["log"]
    )


def _append(path: Path, text: str) -> None:
    """``text`` appended with one write on an ``O_APPEND`` descriptor, fsynced."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


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
           "budget": 40, "fitting": "fast", "seed": 1}  # fmt: skip
    return [{**run, "attack": attack} for attack in RUN.param("attack").choices]
