"""BOS²'s commands: ``frontierbo attack`` (= ``run bos2``: attack your own torch classifier, see
:mod:`frontierbo.attack.userattack`), ``frontierbo attack train-victim`` / ``port-victim`` (the
victims' weights, :mod:`frontierbo.attack.victims`) and ``reproduce bos2`` (Tables 5.1-5.4,
:mod:`frontierbo.attack.report`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from frontierbo.experiments.system import (
    System,
    add_sweep_arguments,
    positive_int,
    reproduce_command,
    with_written_note,
)
from frontierbo.flags import add_renamed

NAME = "bos2"
ATTACKS = ("bos2", "bos2-nostop", "bayesopt", "genattack", "zoo", "autozoom")
ARCHITECTURES = ("cw-mnist", "keras-cifar10")
INPUT_SCALES = ("attack", "unit", "byte")


def _add_attack_arguments(parser: argparse.ArgumentParser) -> None:
    # Checked in the handler, not by argparse: `attack train-victim` must not require them.
    parser.add_argument(
        "--model",
        help="a torch file: a whole nn.Module saved with torch.save (NCHW input, logits out; "
        "unpickling runs code from the file: trusted files only), or a state dict with "
        "--architecture",
    )
    parser.add_argument(
        "--images",
        help="an .npz with 'images' (n, H, W, C), uint8 0-255 or floats in [0, 1], and "
        "optionally 'labels' (n,) (default: the model's own predictions)",
    )
    parser.add_argument(
        "--target-class",
        nargs="+",
        help="target class index(es), or 'all' (every class but the label)",
    )
    parser.add_argument("--attack", choices=ATTACKS, default="bos2", help="the attack (bos2)")
    parser.add_argument(
        "--queries",
        type=positive_int,
        default=900,
        metavar="T",
        help="query budget T: classifier queries per instance, the initial ones included (900)",
    )
    add_renamed(parser, "--budget", "--queries", "the query budget T")
    parser.add_argument(
        "--delta-max",
        type=float,
        default=0.3,
        help="L_inf bound on the [0, 1] pixel scale (0.3; the thesis's CIFAR-10 uses 0.05)",
    )
    parser.add_argument(
        "--architecture",
        choices=ARCHITECTURES,
        default=None,
        help="--model is a state dict of this built-in architecture",
    )
    parser.add_argument(
        "--input-scale",
        choices=INPUT_SCALES,
        default=None,
        help="the range the model expects: attack [-0.5, 0.5], unit [0, 1], byte [0, 255] "
        "(default: the architecture's own; attack for a whole module)",
    )
    parser.add_argument(
        "--profile",
        choices=("paper", "scalable", "fast"),
        default="paper",
        help="paper: the thesis's settings; scalable: cheaper hyperparameter learning for "
        "long attacks; fast: fewer decompositions and candidates",
    )
    parser.add_argument(
        "--groups",
        type=positive_int,
        default=None,
        help="bos2, bos2-nostop: additive groups M of the perturbation GP (the thesis's 12; "
        "1 = one GP over all latent coordinates, fewer queries on our MNIST victim: "
        "docs/bos2-attack.md)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of every instance (0)")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="directory for adversarial.npz (x_adv in [0, 1]), queries.jsonl, summary.json",
    )
    parser.set_defaults(handler=_attack)


def _attack(args) -> str:
    from frontierbo.attack.userattack import format_summary, load_images, run_user_attack
    from frontierbo.attack.victims import load_torch_classifier

    missing = [f"--{k.replace('_', '-')}" for k in ("model", "images", "target_class")
               if getattr(args, k) is None]  # fmt: skip
    if missing:
        raise ValueError(f"attack needs {', '.join(missing)} (see --help)")
    images, labels, _ = load_images(args.images)
    targets = args.target_class
    if targets != ["all"]:
        try:
            targets = [int(t) for t in targets]
        except ValueError:
            raise ValueError(
                f"--target-class must be class indices or 'all', got {' '.join(targets)}"
            ) from None
    else:
        targets = "all"
    model = load_torch_classifier(
        args.model, args.architecture, args.input_scale, input_shape=images.shape[1:]
    )
    summary = run_user_attack(
        model,
        images,
        targets=targets,
        attack=args.attack,
        budget=args.queries,
        delta_max=args.delta_max,
        profile=args.profile,
        groups=args.groups,
        seed=args.seed,
        out=args.out,
        labels=labels,
    )
    return with_written_note(format_summary(summary), args.out)


def add_run_commands(run: argparse._SubParsersAction) -> None:
    parser = run.add_parser(
        NAME,
        allow_abbrev=False,
        help="black-box targeted attack (BOS²) on your own torch classifier",
        description="Attack a torch image classifier with BOS² or a baseline, querying only "
        "its class probabilities (same as `frontierbo attack`).",
    )
    _add_attack_arguments(parser)


def add_commands(top: argparse._SubParsersAction) -> None:
    attack = top.add_parser(
        "attack",
        allow_abbrev=False,
        help="black-box attack on your own classifier; train-victim / port-victim",
        description="Attack a torch image classifier (options below), or build the "
        "reproduction's victims with a sub-command.",
    )
    _add_attack_arguments(attack)
    tools = attack.add_subparsers(dest="attack_command", metavar="{train-victim,port-victim}")
    train = tools.add_parser(
        "train-victim",
        help="train the C&W MNIST victim on the first 10 000 MNIST training images",
        description="Train the Carlini-Wagner MNIST CNN (the C&W recipe, seeded) and write "
        "mnist_cw.pt with its sha256 and test accuracy.",
    )
    train.add_argument("--out", type=Path, required=True, help="directory for mnist_cw.pt")
    train.add_argument("--epochs", type=positive_int, default=50, help="most epochs (50)")
    train.add_argument(
        "--patience",
        type=positive_int,
        default=None,
        help="stop when the test accuracy has not improved for this many epochs",
    )
    train.add_argument("--seed", type=int, default=0, help="seed (0)")
    train.set_defaults(handler=_train)
    port = tools.add_parser(
        "port-victim",
        help="port the pretrained Keras CIFAR-10 CNN (cifar-10-model wheel) to torch",
        description="Read cnn_model.h5 from the cifar-10-model 7.4.0 wheel (`pip download "
        "--no-deps cifar-10-model==7.4.0`; never install it) with h5py and write "
        "cifar10_keras.pt.",
    )
    port.add_argument("source", help="the downloaded .whl, or the extracted cnn_model.h5")
    port.add_argument("--out", type=Path, required=True, help="directory for cifar10_keras.pt")
    port.set_defaults(handler=_port)


def _train(args) -> str:
    from frontierbo.attack.victims import train_mnist_victim

    info = train_mnist_victim(args.out, seed=args.seed, epochs=args.epochs, patience=args.patience)
    return json.dumps(info, indent=2, default=str)


def _port(args) -> str:
    from frontierbo.attack.victims import port_cifar_victim

    return json.dumps(port_cifar_victim(args.source, args.out), indent=2, default=str)


def add_reproduce_command(reproduce: argparse._SubParsersAction) -> None:
    from frontierbo.attack.experiment import DATASETS, METHODS, RANGE_MODES

    parser = reproduce.add_parser(
        NAME,
        help="Kharkovskii (thesis Ch. 5): BOS² vs BayesOpt, GenAttack, ZOO, AutoZOOM, "
        "Tables 5.1-5.4",
        description="Reproduce the BOS² attack experiments (resumable): 50 MNIST test images "
        "and 20 CIFAR-10 images, x 9 targets, T = 900.",
    )
    add_sweep_arguments(
        parser,
        quick="1 image, 2 targets, T = 100, the fast profile",
        runs="images per dataset (MNIST 50, CIFAR-10 20)",
        datasets=DATASETS,
    )
    parser.add_argument(
        "--queries",
        type=positive_int,
        default=None,
        metavar="T",
        help="query budget T: classifier queries per instance, the 30 initial ones included "
        "unless --init-not-in-budget (900)",
    )
    add_renamed(parser, "--budget", "--queries", "the query budget T")
    parser.add_argument(
        "--targets", type=positive_int, default=None, help="targets per image, 1-9 (9)"
    )
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=METHODS,
        default=None,
        metavar="M",
        help=f"subset of {', '.join(METHODS)} (default: all)",
    )
    parser.add_argument(
        "--profile",
        choices=("paper", "scalable", "fast"),
        default=None,
        help="paper (the thesis's settings, default), scalable (BOS²'s hyperparameters learned on "
        "<= 200 points without restarts, decompositions ranked at shared values, one "
        "acquisition pool per fit) or fast (the CI profile)",
    )
    parser.add_argument(
        "--init-not-in-budget",
        action="store_true",
        help="the 30 initial queries of BOS²/BayesOpt do not count towards --queries T",
    )
    parser.add_argument(
        "--range-mode",
        choices=RANGE_MODES,
        default=None,
        help="how BOS², BayesOpt and PGD keep inputs valid: clip (the thesis's L_inf ball, "
        "default) or rescale (the reference code's (x0 + delta) / (1 + 2 delta_max), which "
        "leaves the ball; success by the argmax alone)",
    )
    parser.set_defaults(handler=_reproduce)


def _reproduce(args) -> str:
    from frontierbo.attack.report import reproduce

    return reproduce_command(
        args,
        NAME,
        reproduce,
        budget=args.queries,
        targets=args.targets,
        methods=args.methods,
        profile=args.profile,
        count_init_in_budget=False if args.init_not_in_budget else None,
        range_mode=args.range_mode,
    )


SYSTEM = System(
    name=NAME,
    summary="black-box adversarial attacks by BO (BOS², BayesOpt, GenAttack, ZOO, AutoZOOM)",
    add_run_commands=add_run_commands,
    add_reproduce_command=add_reproduce_command,
    add_commands=add_commands,
    quick_reproduce=("--quick", "--datasets", "mnist", "--methods", "bos2", "genattack"),
    requires=("torch",),
)
