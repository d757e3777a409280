"""BOS², declared: ``run bos2`` (attack your own torch classifier), ``frontierbo attack`` (the same,
with the sub-tools ``train-victim`` / ``port-victim`` that make the victims' weights) and
``reproduce bos2`` (Tables 5.1-5.4); see :mod:`frontierbo.systems.declare`."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import replace
from pathlib import Path

from frontierbo.attack.experiment import (
    DATASETS,
    FITTINGS,
    METHODS,
    MNIST_IMAGE_ORDERS,
    PROFILES,
)
from frontierbo.systems.commands import positive_int, run_command
from frontierbo.systems.declare import REQUIRED, Applies, Command, Param, Reproduction, System, load

NAME = "bos2"
ATTACKS = ("bos2", "bos2-nostop", "bayesopt", "genattack", "zoo", "autozoom")
RENAMED_BUDGET = (("--budget", "the query budget T"),)
#: ``frontierbo attack --out``: one line per finished instance (the record resume reads).
INSTANCES_FILE = "instances.jsonl"


def _file_or_object(value, label):
    """A file (the command line) or, from Python, the classifier or image array itself."""
    if isinstance(value, str | os.PathLike) or callable(value) or hasattr(value, "shape"):
        return value
    raise TypeError(f"{label} must be a file, a classifier or an image array, got {value!r}")


def _targets(value, label):
    """``"all"`` (or ``["all"]``) or class indices; the command line gives them as strings."""
    try:
        names = list([value] if isinstance(value, str | int) else value)
        return "all" if names == ["all"] else [int(t) if isinstance(t, str) else t for t in names]
    except (TypeError, ValueError):
        raise ValueError(f"{label} must be class indices or 'all', got {value!r}") from None


RUN = Command(
    NAME,
    help="black-box targeted attack (BOS²) on your own torch classifier",
    description="Attack a torch image classifier with BOS² or a baseline, querying only its "
    "class probabilities (same as `frontierbo attack`).",
    params=(
        Param("model", Path, REQUIRED, "your classifier (NCHW input, logits out), one of: "
              "TorchScript (torch.jit.save; nothing else needed), a state dict (torch.save("
              "model.state_dict())) with --architecture or --model-module and --model-class, or "
              "a whole module (torch.save(model)): unpickled with weights_only=False, which runs "
              "code named in the file (trusted files only); its class must be importable or in "
              "--model-module", check=_file_or_object),
        Param("images", Path, REQUIRED, "an .npz with 'images' (n, H, W, C), uint8 0-255 or "
              "floats in [0, 1], and optionally 'labels' (n,) (default: the model's own "
              "predictions)", check=_file_or_object),
        Param("targets", list, REQUIRED, "target class index(es), or 'all' (every class but the "
              "label)", flag="--target-class", check=_targets),
        Param("attack", str, "bos2", "the attack", choices=ATTACKS),
        Param("budget", int, 900, "query budget T: classifier queries per instance, the initial "
              "ones included", low=1, flag="--queries", metavar="T", renamed=RENAMED_BUDGET),
        Param("delta_max", float, 0.3, "L_inf bound on the [0, 1] pixel scale (%(default)s; the "
              "thesis's CIFAR-10 uses 0.05)", low=0.0, high=1.0, low_open=True, high_open=True),
        Param("architecture", str, None, "--model is a state dict of this built-in architecture",
              choices=("cw-mnist", "keras-cifar10")),
        Param("model_module", Path, None, "a Python file that defines your model's class: it is "
              "imported (its code runs; keep training under `if __name__ == \"__main__\":`). "
              "With --model-class, --model is a state dict of that class; without, a whole "
              "module whose class (also one pickled from your script's __main__) is found there",
              metavar="FILE.py"),
        Param("model_class", str, None, "with --model-module: --model is a state dict of this "
              "class, built as NAME() without arguments", metavar="NAME"),
        Param("input_scale", str, None, "the range the model expects: attack [-0.5, 0.5], unit "
              "[0, 1], byte [0, 255] (default: the architecture's own; attack for your own "
              "model)", choices=("attack", "unit", "byte")),
        Param("fitting", str, "scalable", "how BOS² and BayesOpt learn their GPs: scalable (the "
              "thesis's algorithm with cheaper hyperparameter learning; default), full (the "
              "thesis's settings: 3-20x the time per instance) or fast (fewer decompositions and "
              "candidates)", choices=FITTINGS,
              renamed=(("--profile", "the GP settings: full was paper"),)),
        Param("groups", int, None, "bos2, bos2-nostop: additive groups M of the perturbation GP "
              "(the thesis's 12; 1 = one GP over all latent coordinates, fewer queries on our "
              "MNIST victim: docs/bos2-attack.md)", low=1,
              applies=Applies("attack", ("bos2", "bos2-nostop"))),
        Param("seed", int, 0, "seed of every instance", low=0),
        Param("out", Path, None, "directory for the results, kept as each instance finishes: "
              f"{INSTANCES_FILE} (one line per instance), adversarial.npz (x_adv in [0, 1]), "
              "queries.jsonl, summary.json; result.json when all are done. Rerunning the same "
              "command resumes; other options in the same --out are refused"),
    ),
    run="frontierbo.attack.userattack:run_user_attack",
    format="frontierbo.attack.userattack:format_summary",
    written=(INSTANCES_FILE, "adversarial.npz", "queries.jsonl", "summary.json", "result.json"),
    example="frontierbo.attack.userattack:example",
)  # fmt: skip


def add_commands(top: argparse._SubParsersAction) -> None:
    """``frontierbo attack``: ``run bos2``'s options and handler, and the sub-tools that make the
    victims' weights. Not ``top_level``: argparse would demand --model, --images and
    --target-class before ``attack train-victim``, so here they are optional and the handler
    asks for them."""
    attack = top.add_parser(
        "attack",
        help="black-box attack on your own classifier; train-victim / port-victim",
        description="Attack a torch image classifier (options below), or build the "
        "reproduction's victims with a sub-command.",
    )
    for param in RUN.params:
        (replace(param, default=None) if param.required else param).add_to(attack)
    attack.set_defaults(handler=_attack)
    tools = attack.add_subparsers(dest="attack_command", metavar="{train-victim,port-victim}")
    train = tools.add_parser(
        "train-victim",
        help="train the mnist-10k victim (the C&W CNN on the first 10 000 training images)",
        description="Train the Carlini-Wagner MNIST CNN (the C&W recipe, seeded) on the first "
        "10 000 MNIST training images and write mnist_cw.pt (the mnist-10k victim) with its "
        "sha256 and test accuracy.",
    )
    train.add_argument("--out", type=Path, required=True, help="directory for mnist_cw.pt")
    train.add_argument("--epochs", type=positive_int, default=50, help="most epochs (50)")
    train.add_argument("--patience", type=positive_int, default=None,
                       help="stop when the test accuracy has not improved for this many epochs")  # fmt: skip
    train.add_argument("--seed", type=int, default=0, help="seed (0)")
    train.set_defaults(handler=lambda a: _tool("training:train_mnist_victim", a.out, seed=a.seed,
                                               epochs=a.epochs, patience=a.patience))  # fmt: skip
    port = tools.add_parser(
        "port-victim",
        help="port a victim's Keras weights to torch: the C&W MNIST CNN (cw_mnist.h5) or the "
        "CIFAR-10 CNN (cifar-10-model wheel)",
        description="Read the Keras weights with h5py (no TensorFlow) and write the torch state "
        "dict: cw_mnist.h5 (../shared/data/attack, MIT) -> mnist_cw_authors.pt (the mnist "
        "victim); the cifar-10-model 7.4.0 wheel (`pip download --no-deps "
        "cifar-10-model==7.4.0`; never install it) or its cnn_model.h5 -> cifar10_keras.pt.",
    )
    port.add_argument("source", help="cw_mnist.h5, the downloaded .whl, or its cnn_model.h5")
    port.add_argument("--out", type=Path, required=True, help="directory for the .pt file")
    port.set_defaults(handler=lambda a: _tool("keras_port:port_victim", a.source, a.out))


def _attack(args) -> str:
    missing = [p.option for p in RUN.params if p.required and getattr(args, p.dest) is None]
    if missing:
        raise ValueError(f"attack needs {', '.join(missing)} (see --help)")
    try:
        return run_command(RUN, args)
    except KeyboardInterrupt:  # Ctrl-C: the run said what it kept; no traceback
        raise SystemExit(130) from None


def _tool(target: str, *args, **kwargs) -> str:
    """A sub-tool's result (``frontierbo.attack.<target>``, imported now: it needs torch)."""
    try:
        tool = load(f"frontierbo.attack.{target}")
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            raise
        raise ImportError(
            "attack tools need PyTorch; install the extra: pip install 'frontierbo[attack]'"
        ) from None
    return json.dumps(tool(*args, **kwargs), indent=2, default=str)


def reproduce(out, *, init_not_in_budget: bool = False, **options) -> dict:
    """:func:`frontierbo.attack.report.reproduce`; ``--init-not-in-budget`` is
    ``count_init_in_budget=False`` (None: the reproduction's default)."""
    from frontierbo.attack.report import reproduce as run

    return run(out, count_init_in_budget=False if init_not_in_budget else None, **options)


SYSTEM = System(
    name=NAME,
    summary="black-box adversarial attacks by BO (BOS², BayesOpt, GenAttack, ZOO, AutoZOOM)",
    commands=(RUN,),
    reproduction=Reproduction(
        help="Kharkovskii (thesis Ch. 5): BOS² vs BayesOpt, GenAttack, ZOO, AutoZOOM, "
        "Tables 5.1-5.4",
        description="Reproduce the BOS² attack experiments (resumable): 50 MNIST test images "
        "and 20 CIFAR-10 images, x 9 targets, T = 900.",
        quick="1 image, 2 targets, T = 100, the fast fitting",
        runs="images per dataset (MNIST 50, CIFAR-10 20)",
        datasets=DATASETS,
        reproduce="frontierbo.attack.system:reproduce",
        quick_args=("--quick", "--datasets", "mnist", "--methods", "bos2", "genattack"),
        params=(
            Param("budget", int, None, "query budget T: classifier queries per instance, the 30 "
                  "initial ones included unless --init-not-in-budget (900)", flag="--queries",
                  metavar="T", renamed=RENAMED_BUDGET),
            Param("targets", int, None, "targets per image, 1-9 (9)"),
            Param("methods", list, None, f"subset of {', '.join(METHODS)} (default: all)",
                  choices=METHODS, metavar="M"),
            Param("profile", list, None, "what is reproduced, one or both: reference (the "
                  "authors' code: inputs rescaled by (x0 + delta) / (1 + 2 delta_max), GenAttack's "
                  "README settings; default) or paper (the thesis as written: the L_inf ball by "
                  "clipping, GenAttack's code defaults)", choices=PROFILES, metavar="P",
                  renamed=(("--range-mode", "clip is the paper profile's, rescale the "
                            "reference profile's"),)),
            Param("fitting", str, None, "how BOS² and BayesOpt learn their GPs: full (the "
                  "thesis's settings, default), scalable (BOS²'s hyperparameters learned on <= "
                  "200 points without restarts, decompositions ranked at shared values, one "
                  "acquisition pool per fit; BayesOpt as in full) or fast (the CI settings)",
                  choices=FITTINGS),
            Param("mnist_victim", str, None, "the MNIST victim: mnist (the C&W CNN with its "
                  "authors' weights, 99.41 %%; default) or mnist-10k (the same CNN trained here on "
                  "10 000 images, 98.35 %%)", choices=("mnist", "mnist-10k")),
            Param("mnist_images", str, None, "which MNIST test images, of those the victim "
                  "classifies correctly: random (a seeded random draw, as the thesis says; "
                  "default) or first (the first in file order, as the authors' code picks them)",
                  choices=MNIST_IMAGE_ORDERS),
            Param("init_not_in_budget", bool, False, "the 30 initial queries of BOS²/BayesOpt do "
                  "not count towards --queries T"),

        ),
        requires=("torch",),
    ),
    add_commands=add_commands,
)  # fmt: skip
