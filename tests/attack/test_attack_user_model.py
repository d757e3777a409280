"""`frontierbo attack --model`: every documented form of a user's own model loads the same
classifier, and every way of getting it wrong is one line naming the flag to use."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from frontierbo.attack import nets  # noqa: E402
from frontierbo.attack.user_model import load_torch_classifier, model_form  # noqa: E402
from frontierbo.attack.victims import Victim  # noqa: E402

CLASS = """\
import torch
from torch import nn


class MyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Flatten(), nn.Linear(400, 8), nn.ReLU(), nn.Linear(8, 3))

    def forward(self, x):
        return self.f(x)
"""

#: A training script: the class in __main__, the training (here: saving) under the guard, a
#: counter that shows whether the guarded part ran.
TRAIN = CLASS + textwrap.dedent("""
    if __name__ == "__main__":
        import pathlib
        runs = pathlib.Path("trained.txt")
        runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
        torch.manual_seed(0)
        model = MyCNN()
        torch.save(model, "main_model.pt")
        torch.save(model, "legacy_model.pt", _use_new_zipfile_serialization=False)
        torch.save(model.state_dict(), "state.pt")
        torch.save({"model": model.state_dict(), "epoch": 3}, "checkpoint.pt")
        torch.jit.save(torch.jit.script(model), "scripted.pt")
        torch.jit.save(torch.jit.trace(model, torch.zeros(1, 1, 20, 20)), "traced.pt")
""")

#: A second script that imports the class from mymodel.py (pickled as mymodel.MyCNN).
TRAIN_IMPORTED = """\
import torch
from mymodel import MyCNN

torch.manual_seed(0)
torch.save(MyCNN(), "mod_model.pt")
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Every form of one model, made by real training scripts run as __main__."""
    folder = tmp_path_factory.mktemp("user-model")
    (folder / "mymodel.py").write_text(CLASS)
    (folder / "train.py").write_text(TRAIN)
    (folder / "train_imported.py").write_text(TRAIN_IMPORTED)
    (folder / "broken.py").write_text("import torch\nraise RuntimeError('no GPU here')\n")
    (folder / "junk.pt").write_bytes(b"hello\n")
    for script in ("train.py", "train_imported.py"):
        subprocess.run([sys.executable, script], cwd=folder, check=True, timeout=120)
    torch.save(nets.CWMnistNet().state_dict(), folder / "cw.pt")
    pixels = np.random.default_rng(0).integers(0, 256, (1, 20, 20, 1), dtype=np.uint8)
    np.savez(folder / "imgs.npz", images=pixels)
    return folder


def reference(files) -> Victim:
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("reference_mymodel", files / "mymodel.py")
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    net = module.MyCNN()
    net.load_state_dict(torch.load(files / "state.pt", weights_only=True))
    return Victim(net, (20, 20, 1))


@pytest.mark.parametrize(
    "name, options, form",
    [
        ("scripted.pt", {}, "torchscript"),
        ("traced.pt", {}, "torchscript"),
        ("state.pt", {"model_module": "mymodel.py", "model_class": "MyCNN"}, "state-dict"),
        ("state.pt", {"model_module": "train.py", "model_class": "MyCNN"}, "state-dict"),
        ("main_model.pt", {"model_module": "train.py"}, "pickled"),
        ("legacy_model.pt", {"model_module": "train.py"}, "pickled"),
        ("mod_model.pt", {"model_module": "mymodel.py"}, "pickled"),
    ],
)
def test_every_form_loads_the_same_classifier(files, name, options, form):
    assert model_form(files / name)[0] == form
    options = {k: files / v if k == "model_module" else v for k, v in options.items()}
    victim = load_torch_classifier(files / name, input_shape=(20, 20, 1), **options)
    x = np.random.default_rng(1).uniform(-0.5, 0.5, (4, 20, 20, 1))
    np.testing.assert_allclose(victim(x), reference(files)(x), atol=1e-6)
    assert (files / "trained.txt").read_text() == "x"  # importing train.py did not train again


def test_a_builtin_architecture_takes_its_state_dict_shape_and_scale(files):
    torch.manual_seed(3)
    module = nets.CWMnistNet().eval()
    torch.save(module.state_dict(), files / "cw3.pt")
    x = np.random.default_rng(3).uniform(-0.5, 0.5, (5, 28, 28, 1))
    victim = load_torch_classifier(files / "cw3.pt", "cw-mnist")  # shape and scale: its own
    assert victim.input_shape == (28, 28, 1) and victim.input_scale == "attack"
    np.testing.assert_allclose(victim(x), Victim(module, (28, 28, 1))(x), atol=1e-12)


def test_telling_the_form_runs_no_code_of_the_file(tmp_path):
    import os

    class Evil:
        def __reduce__(self):
            return os.makedirs, (str(tmp_path / "ran"),)

    torch.save({"weight": torch.zeros(2), "payload": Evil()}, tmp_path / "evil.pt")
    assert model_form(tmp_path / "evil.pt") == ("pickled", None)
    assert not (tmp_path / "ran").exists()


# every message: (--model, other flags, what the one line must say)
MESSAGES = [
    ("nothere.pt", [], ["--model: no such file: nothere.pt"]),
    ("state.pt", [], ["is a state dict", "--architecture", "--model-module FILE.py --model-class"]),
    ("main_model.pt", [], ["__main__.MyCNN", "training script", "--model-module"]),
    ("legacy_model.pt", [], ["__main__.MyCNN", "--model-module"]),
    ("mod_model.pt", [], ["needs the module 'mymodel'", "--model-module", "PYTHONPATH"]),
    ("state.pt", ["--model-module", "mymodel.py"], ["--model-class NAME"]),
    ("state.pt", ["--model-class", "MyCNN"], ["--model-class MyCNN needs --model-module"]),
    ("state.pt", ["--model-module", "mymodel.py", "--model-class", "Nope"],
     ["defines no nn.Module class Nope (its own: MyCNN)"]),
    ("state.pt", ["--model-module", "broken.py", "--model-class", "MyCNN"],
     ["--model-module", "importing it failed", "RuntimeError: no GPU here"]),
    ("state.pt", ["--model-module", "nothere.py", "--model-class", "MyCNN"],
     ["--model-module: no such file: nothere.py"]),
    ("state.pt", ["--architecture", "cw-mnist", "--model-module", "mymodel.py"], ["not both"]),
    ("state.pt", ["--architecture", "cw-mnist"],
     ["does not fit --architecture cw-mnist", "missing conv1.weight", "unexpected f.1.weight"]),
    ("cw.pt", ["--architecture", "cw-mnist"], ["failed on one image of shape (1, 1, 20, 20)"]),
    ("scripted.pt", ["--architecture", "cw-mnist"], ["TorchScript", "drop --architecture"]),
    ("main_model.pt", ["--model-module", "train.py", "--model-class", "MyCNN"],
     ["whole pickled module", "drop --model-class"]),
    ("checkpoint.pt", [], ["not a state dict (keys: model, epoch", "model.state_dict()"]),
    ("junk.pt", [], ["not a torch file", "TorchScript (torch.jit.save)"]),
    ("train.py", [], ["not a torch file", "the .py file goes to --model-module"]),
]  # fmt: skip


@pytest.mark.parametrize("model, flags, expected", MESSAGES, ids=lambda v: str(v)[:40])
def test_every_loading_failure_is_one_line_naming_the_flag(cli, files, monkeypatch, model, flags,
                                                           expected):  # fmt: skip
    monkeypatch.chdir(files)
    status, out, err = cli(["attack", "--model", model, "--images", "imgs.npz",
                            "--target-class", "2", "--queries", "5", *flags])  # fmt: skip
    assert status == 2 and out == ""
    assert err.startswith("frontierbo: error: ") and err.count("\n") == 1, err
    for part in expected:
        assert part in err, err
    assert "architecture=" not in err  # the flag, never the Python keyword


def test_a_missing_images_file_is_one_line(cli, files, monkeypatch):
    monkeypatch.chdir(files)
    status, _, err = cli(["attack", "--model", "scripted.pt", "--images", "nothere.npz",
                          "--target-class", "2"])  # fmt: skip
    assert status == 2 and err == "frontierbo: error: --images: no such file: nothere.npz\n"


def test_model_flags_need_a_model_file(files):
    from frontierbo.attack.userattack import run_user_attack

    victim = load_torch_classifier(files / "scripted.pt", input_shape=(20, 20, 1))
    with pytest.raises(ValueError, match="--model-module and --model-class apply to a model file"):
        run_user_attack(victim, np.zeros((1, 20, 20, 1)), targets=[1], model_class="MyCNN")
