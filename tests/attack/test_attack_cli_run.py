"""`frontierbo attack --out`: progress on stderr, each instance kept as it finishes, an
interrupted or killed attack resumed without losing or repeating an instance, and another
attack's `--out` refused."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from frontierbo.attack.userattack import run_user_attack  # noqa: E402
from frontierbo.attack.victims import Victim  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def tiny_net(classes: int = 3, pixels: int = 400):
    torch.manual_seed(0)
    nn = torch.nn
    return nn.Sequential(nn.Flatten(), nn.Linear(pixels, 8), nn.ReLU(), nn.Linear(8, classes))


@pytest.fixture
def model_files(tmp_path):
    """A TorchScript net with 3 classes and two 20 x 20 images labelled 0."""
    torch.jit.save(torch.jit.script(tiny_net()), tmp_path / "net.pt")
    pixels = np.random.default_rng(0).integers(0, 256, (2, 20, 20, 1), dtype=np.uint8)
    np.savez(tmp_path / "imgs.npz", images=pixels, labels=np.zeros(2, dtype=int))
    return tmp_path


def instance_ids(out: Path) -> list[str]:
    return [
        json.loads(line)["run_id"] for line in (out / "instances.jsonl").read_text().splitlines()
    ]


def test_progress_lines_and_the_files_named_are_the_files_written(cli, model_files):
    out = model_files / "out"
    args = ["attack", "--model", model_files / "net.pt", "--images", model_files / "imgs.npz",
            "--target-class", "1", "2", "--attack", "zoo", "--queries", "20", "--out", out]  # fmt: skip
    status, text, err = cli(args)
    assert status == 0, err
    lines = err.splitlines()
    assert (
        lines[0] == f"zoo: 4 instances, up to 20 queries each; each kept in {out}/ as it finishes"
    )
    assert [line.split(":")[0] for line in lines[1:]] == [
        "instance 1/4 (image 0, target 1)", "instance 2/4 (image 0, target 2)",
        "instance 3/4 (image 1, target 1)", "instance 4/4 (image 1, target 2)",
    ]  # fmt: skip
    assert lines[-1].endswith("queries") and "so far" in lines[-1]
    named = re.findall(r'^written "(.*)"$', text, flags=re.M)
    assert sorted(Path(p).name for p in named) == sorted(
        p.name for p in out.iterdir() if not p.name.startswith(".")
    )
    summary = json.loads((out / "summary.json").read_text())
    assert summary["finished"] == summary["instances"] == 4
    assert json.loads((out / "result.json").read_text()) == summary
    assert len(instance_ids(out)) == 4
    assert len((out / "queries.jsonl").read_text().splitlines()) == sum(
        r["queries"] for r in summary["results"]
    )


def test_the_bar_shows_instances_queries_and_successes(model_files, capsys):
    run_user_attack(model_files / "net.pt", model_files / "imgs.npz", targets=[1], attack="zoo",
                    budget=10, progress=True)  # fmt: skip
    err = capsys.readouterr().err
    assert "zoo: instances:" in err and "queries 20, successes" in err and "2/2" in err


def test_without_a_terminal_a_running_line_comes_every_heartbeat(model_files, capsys,
                                                                 monkeypatch):  # fmt: skip
    from frontierbo.attack import userattack

    monkeypatch.setattr(userattack, "HEARTBEAT", 0.0)  # capsys is no terminal: no bar
    run_user_attack(model_files / "net.pt", model_files / "imgs.npz", targets=[1], attack="zoo",
                    budget=3)  # fmt: skip
    err = capsys.readouterr().err
    assert "instance 1/2 (image 0, target 1): running, 2 queries so far" in err
    assert "instance 2/2 (image 1, target 1): running, 6 queries so far" in err
    assert "\r" not in err  # no bar


class Interrupting:
    """The victim until its ``limit``-th single-image query, which raises KeyboardInterrupt
    (Ctrl-C) instead."""

    def __init__(self, victim, limit: int):
        self.victim, self.limit, self.queries = victim, limit, 0

    def __call__(self, x):
        if np.asarray(x).shape[0] == 1:
            self.queries += 1
            if self.queries == self.limit:
                raise KeyboardInterrupt
        return self.victim(x)


def read_npz(path: Path) -> dict:
    with np.load(path) as data:
        return {key: data[key] for key in data}


def test_an_interrupted_attack_resumes_without_loss_or_duplicates(tmp_path, capsys):
    victim = Victim(tiny_net(), (20, 20, 1))
    images = np.random.default_rng(1).uniform(-0.5, 0.5, (2, 20, 20, 1))
    run = {"targets": [1, 2], "labels": [0, 0], "attack": "zoo", "budget": 15, "seed": 4,
           "progress": False}  # fmt: skip
    straight = run_user_attack(victim, images, out=tmp_path / "a", **run)
    first_two = sum(r["queries"] for r in straight["results"][:2])

    out = tmp_path / "b"
    with pytest.raises(KeyboardInterrupt):  # at the first query of the third instance
        run_user_attack(Interrupting(victim, first_two + 1), images, out=out,
                        **{**run, "progress": None})  # fmt: skip
    assert "zoo: interrupted; 2 of 4 instances kept in" in capsys.readouterr().err
    assert instance_ids(out) == ["image0-target1", "image0-target2"]
    partial = json.loads((out / "summary.json").read_text())
    assert (partial["finished"], partial["instances"]) == (2, 4)
    assert partial["results"] == straight["results"][:2]
    assert len((out / "queries.jsonl").read_text().splitlines()) == first_two
    assert not (out / "result.json").exists()
    a, b = read_npz(tmp_path / "a" / "adversarial.npz"), read_npz(out / "adversarial.npz")
    for key in a:
        np.testing.assert_array_equal(b[key], a[key][:2])

    resumed = run_user_attack(victim, images, out=out, **run)
    assert resumed == straight
    assert instance_ids(out) == instance_ids(tmp_path / "a")  # each once, in order
    for name in ("result.json", "summary.json", "queries.jsonl"):
        assert (out / name).read_bytes() == (tmp_path / "a" / name).read_bytes(), name
    b = read_npz(out / "adversarial.npz")
    for key in a:
        np.testing.assert_array_equal(b[key], a[key])


def test_a_torn_queries_file_is_rebuilt_from_the_instances_on_resume(tmp_path):
    victim = Victim(tiny_net(), (20, 20, 1))
    images = np.random.default_rng(1).uniform(-0.5, 0.5, (1, 20, 20, 1))
    run = {"targets": [1, 2], "labels": [0], "attack": "zoo", "budget": 12, "progress": False}
    run_user_attack(victim, images, out=tmp_path, **run)
    whole = (tmp_path / "queries.jsonl").read_bytes()
    (tmp_path / "queries.jsonl").write_bytes(whole[: len(whole) // 2 + 7])  # a kill mid-append
    (tmp_path / "summary.json").unlink()
    run_user_attack(victim, images, out=tmp_path, **run)
    assert (tmp_path / "queries.jsonl").read_bytes() == whole
    assert json.loads((tmp_path / "summary.json").read_text())["finished"] == 2


def test_another_attack_into_the_same_out_is_refused(cli, model_files):
    out = model_files / "out"
    base = ["attack", "--model", model_files / "net.pt", "--images", model_files / "imgs.npz",
            "--target-class", "1", "--attack", "zoo", "--queries", "10", "--out", out]  # fmt: skip
    assert cli(base)[0] == 0
    kept = (out / "instances.jsonl").read_bytes()
    status, _, err = cli([*base, "--seed", "1", "--queries", "12"])
    assert status == 2 and err.count("\n") == 1, err
    assert (
        "holds 2 instances of another attack (--queries 10 there, 12 now; --seed 0 there, "
        "1 now); rerun with the same options to resume, or give another --out" in err
    )
    with torch.no_grad():
        net = tiny_net()
        net[-1].bias += 1.0
    torch.jit.save(torch.jit.script(net), model_files / "other.pt")
    status, _, err = cli([*base[:2], model_files / "other.pt", *base[3:]])
    assert status == 2 and "(--model: another file)" in err, err
    assert (out / "instances.jsonl").read_bytes() == kept
    status, _, err = cli(base)  # the same command resumes: nothing left to run
    assert status == 0 and "2 already in" in err and "instance 1/2" not in err


def readme_attack_command() -> list[str]:
    """The `frontierbo attack` command of the README, as its words."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^frontierbo attack --model .*?(?<!\\)$", text, flags=re.M | re.S)
    assert match, "README.md has no `frontierbo attack --model` command"
    return match.group(0).replace("\\\n", " ").split()[1:]


def test_the_readme_attack_shows_progress_and_keeps_instances_when_interrupted(cli, tmp_path,
                                                                               monkeypatch):  # fmt: skip
    """The README's command on a 10-class net and two MNIST-sized images (2 x 9 instances),
    shortened to T = 30, Ctrl-C'd after its first instance: what it found is kept, and the same
    command finishes the rest."""
    words = readme_attack_command()
    model, images = words[words.index("--model") + 1], words[words.index("--images") + 1]
    torch.jit.save(torch.jit.script(tiny_net(10, 784)), tmp_path / model)
    pixels = np.random.default_rng(0).integers(0, 256, (2, 28, 28, 1), dtype=np.uint8)
    np.savez(tmp_path / images, images=pixels)
    argv = [*words, "--queries", "30", "--fitting", "fast"]
    code = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "from frontierbo.cli import main; sys.exit(main(sys.argv[1:]))")  # fmt: skip
    out = tmp_path / "out"
    child = subprocess.Popen([sys.executable, "-c", code, *argv], cwd=tmp_path, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (out / "instances.jsonl").is_file() or not instance_ids(out):
            assert child.poll() is None and time.monotonic() < deadline, child.communicate()
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130, err
    lines = err.splitlines()
    assert lines[0].startswith("bos2: 18 instances, up to 30 queries each; each kept in out/")
    assert all(line.startswith("instance ") for line in lines[1:-1])  # one per kept instance
    kept = instance_ids(out)
    assert 1 <= len(kept) < 18 and len(lines) - 2 in (len(kept), len(kept) - 1), err
    assert lines[-1] == (f"bos2: interrupted; {len(kept)} of 18 instances kept in "
                         "out/instances.jsonl: run the same command again to resume")  # fmt: skip
    assert json.loads((out / "summary.json").read_text())["finished"] == len(kept)

    monkeypatch.chdir(tmp_path)
    status, text, err = cli(argv)
    assert status == 0, err
    assert f"{len(kept)} already in out/ (resumed)" in err.splitlines()[0]
    ids = instance_ids(out)
    assert ids[: len(kept)] == kept and len(ids) == len(set(ids)) == 18
    assert json.loads((out / "result.json").read_text())["finished"] == 18
    assert 'written "out/result.json"' in text


def test_a_killed_attack_keeps_every_finished_instance(tmp_path, model_files):
    """SIGKILL (no handler runs) after the first instance: the file holds whole records only."""
    args = ["attack", "--model", "net.pt", "--images", "imgs.npz", "--target-class", "all",
            "--attack", "zoo", "--queries", "400", "--out", "out"]  # fmt: skip
    code = "import sys; from frontierbo.cli import main; sys.exit(main(sys.argv[1:]))"
    child = subprocess.Popen([sys.executable, "-c", code, *args], cwd=model_files,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    out = model_files / "out"
    try:
        deadline = time.monotonic() + 60
        while not (out / "instances.jsonl").is_file() or not instance_ids(out):
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    kept = instance_ids(out)  # every line a whole record (json.loads would fail on a torn one)
    assert 1 <= len(kept) <= 4 and len(set(kept)) == len(kept)
    summary = run_user_attack(out.parent / "net.pt", out.parent / "imgs.npz", targets="all",
                              attack="zoo", budget=400, out=out, progress=False)  # fmt: skip
    ids = instance_ids(out)
    assert ids[: len(kept)] == kept and len(ids) == len(set(ids)) == summary["finished"] == 4
