"""The experiments of the thesis's Chapter 5 (Section 5.3), as data.

An *instance* is one correctly classified test image attacked towards one of the 9 other
classes; a *run* is one attack method on one instance, id ``<dataset>/i<image>/t<target>/<method>``
with its own seed. MNIST: 50 test images drawn at random among those the victim classifies
correctly (the draw depends on ``--seed`` only); CIFAR-10: the 20 real test images that ship in
foolbox (all classified correctly by the ported victim). ``--runs N`` takes the first N images
of each dataset. Without the MNIST test set (``mnist/mnist_test.npz`` or the IDX files of
``frontierbo data fetch mnist-idx``) the MNIST images are drawn from its first 20 images, which
foolbox ships too (:data:`MNIST_SUBSTITUTE`; the results' ``images`` field says which).

Every attack queries the same :class:`~frontierbo.attack.oracle.QueryOracle` with the hard
budget ``T`` (900): the 30 initial queries of BOS² and BayesOpt count towards it
(``count_init_in_budget``, docs/decisions.md#bos-initial-queries-count-towards-the-budget; with
False the oracle allows ``T + 30`` and the reported counts leave them out).

The victim of each dataset (``victims``): MNIST's is the C&W CNN with its authors' weights
(``mnist``; ``mnist-10k`` is the same CNN trained here on 10 000 images), CIFAR-10's the ported
Keras CNN. Two axes of settings, each stored in the runs' configs only where it changes the run:

- ``profile`` (:data:`PROFILE_SETTINGS`), what is reproduced: ``paper`` is the thesis as
  written (the L_inf ball by clipping; GenAttack with its code's defaults, "the default
  parameter settings" of the thesis); ``reference`` is the authors' code (the BayesOpt code's
  rescaling ``(x0 + delta) / (1 + 2 delta_max)``, success by the argmax alone; GenAttack with
  its README's settings for MNIST and CIFAR-10). ZOO and AutoZOOM run alike in both.
- ``fitting`` (:data:`PERTURBATION_FITTINGS`), how BOS²'s and BayesOpt's GPs learn their
  hyperparameters: ``full`` (the thesis's settings), ``scalable`` (the same algorithm with
  cheaper hyperparameter learning) and ``fast`` (for CI: 5 decompositions, 50 L-BFGS iterations,
  1 000 acquisition candidates, 5 000 stopping samples, BayesOpt reduced alike), which
  ``--quick`` uses with T = 100 on one image and two targets.
"""

from __future__ import annotations

import dataclasses
import time
from functools import lru_cache

import numpy as np

from frontierbo._validation import check_int
from frontierbo.experiments.report import load_published
from frontierbo.experiments.runner import RunSpec, seed_for

DATASETS = ("mnist", "cifar10")
#: method key -> report label, in the order of Tables 5.1 / 5.3 then the ablation.
METHOD_LABELS = {
    "bos2": "BOS²",
    "genattack": "GenAttack",
    "zoo": "ZOO",
    "autozoom": "AutoZOOM",
    "bayesopt": "BayesOpt",
    "bos2-nostop": "BOS² (no stopping)",
    "pgd": "white-box PGD (reference)",
}
METHODS = tuple(METHOD_LABELS)
#: How ``Q(u)`` keeps the input valid (docs/decisions.md#bos-pixel-range-by-clipping):
#: ``clip`` (the thesis's L_inf threat model) or ``rescale``, the BayesOpt code's
#: ``(x_0 + delta) / (1 + 2 delta_max)``, which BOS² and BayesOpt were built on; it leaves the
#: ball, and success is the argmax alone, as in that code.
RANGE_MODES = ("clip", "rescale")
#: The methods that query through ``Q(u)`` and so follow the profile's range mode; GenAttack,
#: ZOO and AutoZOOM clip, as their own codes do.
RANGE_MODE_METHODS = ("bos2", "bos2-nostop", "bayesopt", "pgd")
#: The methods whose GPs follow ``fitting``.
FITTING_METHODS = ("bos2", "bos2-nostop", "bayesopt")
#: What each profile sets: the range mode of :data:`RANGE_MODE_METHODS` and GenAttack's settings
#: (a key of :data:`GENATTACK_SETTINGS`).
PROFILE_SETTINGS = {
    "paper": {"range_mode": "clip", "genattack": "code-defaults"},
    "reference": {"range_mode": "rescale", "genattack": "readme"},
}
PROFILES = tuple(PROFILE_SETTINGS)
#: GenAttack's settings: its code's flag defaults (:class:`GenAttackReference`'s) or the
#: commands its README gives for MNIST and CIFAR-10 (nesl/adversarial_genattack README.md).
GENATTACK_SETTINGS = {
    "code-defaults": {"mnist": {}, "cifar10": {}},
    "readme": {
        "mnist": {"population": 4, "mutation_rate": 0.30, "alpha": 0.5, "adaptive": False,
                  "temperature": 0.1},
        "cifar10": {"population": 4, "mutation_rate": 0.05, "alpha": 0.25, "adaptive": False,
                    "temperature": 0.1},
    },
}  # fmt: skip
FITTINGS = ("full", "scalable", "fast")
#: L_inf bounds of the thesis (Section 5.3), in the attack space [-0.5, 0.5].
DELTA_MAX = {"mnist": 0.3, "cifar10": 0.05}
IMAGES = {"mnist": 50, "cifar10": 20}
#: Colour channels of each dataset's images (a latent side s has s * s * channels dimensions).
CHANNELS = {"mnist": 1, "cifar10": 3}
PUBLISHED = load_published("frontierbo.attack")

#: dataset -> its victim by default (:data:`~frontierbo.attack.victims.BUILTIN_VICTIMS`).
DEFAULT_VICTIMS = {"mnist": "mnist", "cifar10": "cifar10"}

DEFAULTS = {
    "runs": None,
    "budget": 900,
    "targets": 9,
    "methods": METHODS,
    "profile": ("reference",),
    "fitting": "full",
    "count_init_in_budget": True,
    "mnist_victim": "mnist",
    "mnist_images": "random",
}
#: ``--mnist-images``: which correctly classified MNIST test images are attacked, in which order.
MNIST_IMAGE_ORDERS = ("random", "first")
QUICK = {"budget": 100, "targets": 2, "runs": 1, "fitting": "fast"}


def check_options(params: dict) -> dict:
    methods = params["methods"]
    names = (methods,) if isinstance(methods, str) else tuple(methods)
    unknown = [m for m in names if m not in METHODS]
    if unknown or not names:
        raise ValueError(f"--methods must be among {list(METHODS)}, got {unknown or []}")
    params["methods"] = tuple(dict.fromkeys(names))
    profiles = params["profile"]
    profiles = (profiles,) if isinstance(profiles, str) else tuple(profiles)
    for profile in profiles:
        if profile in FITTINGS:  # the GP settings were --profile once
            raise ValueError(
                f"--profile {profile} is now --fitting {profile} (--profile is what is "
                f"reproduced: {', '.join(PROFILES)})"
            )
        if profile not in PROFILES:
            raise ValueError(f"--profile must be among {list(PROFILES)}, got {profile!r}")
    if not profiles:
        raise ValueError(f"--profile must be among {list(PROFILES)}, got none")
    params["profile"] = tuple(dict.fromkeys(profiles))
    if params["fitting"] not in FITTINGS:
        raise ValueError(f"--fitting must be one of {list(FITTINGS)}, got {params['fitting']!r}")
    if params["mnist_victim"] not in ("mnist", "mnist-10k"):
        raise ValueError(
            f"--mnist-victim must be one of ['mnist', 'mnist-10k'], got {params['mnist_victim']!r}"
        )
    if params["mnist_images"] not in MNIST_IMAGE_ORDERS:
        raise ValueError(
            f"--mnist-images must be one of {list(MNIST_IMAGE_ORDERS)}, "
            f"got {params['mnist_images']!r}"
        )
    budget, targets = params["budget"], params["targets"]
    if not isinstance(budget, int) or budget < 31:
        raise ValueError(f"--queries must be an integer >= 31 (30 initial queries), got {budget}")
    if not isinstance(targets, int) or not 1 <= targets <= 9:
        raise ValueError(f"--targets must be an integer in [1, 9], got {targets}")
    params["count_init_in_budget"] = bool(params["count_init_in_budget"])
    return params


def unavailable(dataset: str) -> str | None:
    """Why ``dataset`` cannot run here (torch, or foolbox for the CIFAR-10 images and for the
    MNIST samples when the MNIST test set is absent), or None."""
    import importlib.util

    foolbox = dataset == "cifar10" or not mnist_test_available()
    needed = ["torch"] + (["foolbox"] if foolbox else [])
    missing = [m for m in needed if importlib.util.find_spec(m) is None]
    if missing:
        why = f"needs {' and '.join(missing)}: pip install 'frontierbo[attack]'"
        if dataset == "mnist" and "foolbox" in missing:
            why += " (or the MNIST test set: frontierbo data fetch mnist-idx)"
        return why
    return None


#: Where the MNIST instances come from when the test set is absent (results' ``images``).
MNIST_SUBSTITUTE = (
    "substitute: the first 20 MNIST test images (indices 0-19, byte-identical to the test "
    "set's), which ship in foolbox; mnist/mnist_test.npz was not found (`frontierbo data fetch "
    "mnist-idx` downloads the full test set)"
)


def mnist_test_available() -> bool:
    """True when the full MNIST test set is under a data root (npz or the IDX files)."""
    from frontierbo.attack.data import MNIST_FILES, MNIST_TEST_IDX
    from frontierbo.data import data_available

    idx = all(data_available(relative) for relative, _, _ in MNIST_TEST_IDX)
    return data_available(MNIST_FILES["test"][0]) or idx


def image_source(dataset: str, order: str = "random") -> str:
    """Which images ``dataset``'s instances are drawn from (the results' ``images`` field);
    ``order`` is ``--mnist-images``."""
    if dataset == "cifar10":
        return "the 20 real CIFAR-10 test images that ship in foolbox"
    if not mnist_test_available():
        return MNIST_SUBSTITUTE
    if order == "first":
        return "the MNIST test set (10,000 images), the first the victim classifies correctly"
    return "the MNIST test set (10,000 images), a seeded random draw of those classified correctly"


def required_inputs(options) -> list:
    """The data files the chosen datasets read (checked before anything runs): the MNIST test
    set (the npz, else the IDX files), whose first 20 images in foolbox stand in without it."""
    from frontierbo.attack.data import MNIST_FILES, MNIST_TEST_IDX
    from frontierbo.data import Input, data_available

    if "mnist" not in options.datasets:
        return []
    npz = MNIST_FILES["test"][0]
    if data_available(npz):  # load_mnist reads it first
        return [Input("the MNIST instances", (npz,))]
    idx = tuple(relative for relative, _, _ in MNIST_TEST_IDX)  # what `data fetch` downloads
    substitute = "the first 20 MNIST test images, which ship in foolbox"
    return [Input("the MNIST instances", idx, substitute)]


# -- instances ------------------------------------------------------------------------------------
@lru_cache(maxsize=3)
def _victim(victim: str):
    """The built-in victim ``victim`` (a key of ``BUILTIN_VICTIMS``: ``mnist``, ``mnist-10k``,
    ``cifar10``), loaded once per process."""
    from frontierbo.attack.victims import load_victim

    return load_victim(victim)


def victim_dataset(victim: str) -> str:
    """The dataset whose images ``victim`` classifies."""
    from frontierbo.attack.victims import VICTIM_DATASET

    return VICTIM_DATASET[victim]


@lru_cache(maxsize=2)
def _test_images(dataset: str) -> tuple[np.ndarray, np.ndarray]:
    from frontierbo.attack import data

    if dataset == "cifar10":
        return data.load_cifar10_samples()
    return data.load_mnist("test") if mnist_test_available() else data.load_mnist_samples()


@lru_cache(maxsize=4)
def chosen_images(victim: str, seed: int, order: str = "random") -> tuple[int, ...]:
    """The test-set indices attacked: classified correctly by ``victim``, in a seeded random
    order (MNIST; §5.3's "50 random images") or in file order (the 20 CIFAR-10 images, and MNIST
    with ``order="first"``: the reference code's ``generate_attack_data_set`` takes the first
    correctly classified test images)."""
    dataset = victim_dataset(victim)
    images, labels = _test_images(dataset)
    correct = np.flatnonzero(_victim(victim).predict(images) == labels)
    if dataset == "mnist" and order == "random":
        correct = np.random.default_rng(seed_for(seed, "mnist-images")).permutation(correct)
    return tuple(int(i) for i in correct[: IMAGES[dataset]])


def instance_targets(label: int, targets: int) -> list[int]:
    """The first ``targets`` of the 9 classes other than ``label``, in the order label+1, ..."""
    return [(label + k) % 10 for k in range(1, 10)][:targets]


def counted_queries(queries: int, uncounted: int) -> int:
    """The queries a run reports when its first ``uncounted`` (initial) queries are free
    (docs/decisions.md#bos-initial-queries-count-towards-the-budget): a success among them took
    none of the budget, so it reports 0, not a negative count."""
    return max(queries - uncounted, 0)


def method_settings(method: str, profile: str, fitting: str) -> dict:
    """The settings that change ``method``'s run under ``profile`` and ``fitting`` (and only
    those: a ZOO run serves both profiles, a GenAttack run every fitting)."""
    settings = {}
    if method in RANGE_MODE_METHODS:
        settings["range_mode"] = PROFILE_SETTINGS[profile]["range_mode"]
    if method in FITTING_METHODS:
        settings["fitting"] = fitting
    if method == "genattack":
        settings["genattack"] = PROFILE_SETTINGS[profile]["genattack"]
    return settings


def serves(config: dict, profile: str) -> bool:
    """Whether the run of ``config`` belongs to ``profile``'s tables."""
    wanted = PROFILE_SETTINGS[profile]
    return all(config.get(key, wanted[key]) == wanted[key] for key in wanted)


def run_id(victim: str, image: int, target: int, method: str, settings: dict) -> str:
    """``<victim>/i<image>/t<target>/<method>[/<settings>]``, e.g. ``mnist/i7/t3/bos2/rescale-full``."""
    rid = f"{victim}/i{image}/t{target}/{method}"
    return f"{rid}/{'-'.join(settings.values())}" if settings else rid


def victims(options) -> dict[str, str]:
    """dataset -> the victim attacked on it."""
    return {
        d: options["mnist_victim"] if d == "mnist" else DEFAULT_VICTIMS[d] for d in options.datasets
    }


def build_specs(options) -> list[RunSpec]:
    specs: dict[str, RunSpec] = {}
    for dataset, victim in victims(options).items():
        images = chosen_images(victim, options.seed, options["mnist_images"])
        n = IMAGES[dataset] if options.runs is None else min(options.runs, len(images))
        labels = _test_images(dataset)[1]
        for image in images[:n]:
            for target in instance_targets(int(labels[image]), options["targets"]):
                instance_seed = seed_for(options.seed, dataset, image, target)
                for profile in options["profile"]:
                    for method in options["methods"]:
                        settings = method_settings(method, profile, options["fitting"])
                        config = {
                            "dataset": dataset,
                            "victim": victim,
                            "image": image,
                            "label": int(labels[image]),
                            "target": target,
                            "method": method,
                            "budget": options["budget"],
                            "count_init_in_budget": options["count_init_in_budget"],
                            **settings,
                        }
                        rid = run_id(victim, image, target, method, settings)
                        specs.setdefault(rid, RunSpec(rid, config, instance_seed))
    return list(specs.values())


# -- one run --------------------------------------------------------------------------------------
def _full():
    from frontierbo.attack.add_gp_ucb import AddGPSettings

    return AddGPSettings()


def _scalable():
    from frontierbo.attack.add_gp_ucb import AddGPSettings

    return AddGPSettings(
        rank_decompositions="shared",
        fit_points=SCALABLE_FIT_POINTS,
        refit_restarts=1,
        pool_refresh="fit",
    )


def _fast():
    from frontierbo.attack.add_gp_ucb import AddGPSettings

    return AddGPSettings(n_decompositions=5, fit_maxiter=50, n_random=1000, lbfgs_maxiter=50)


#: The perturbation GP of each fitting: ``full`` is the thesis's; ``scalable`` ranks the candidate
#: decompositions at data-scaled hyperparameters (one Cholesky each), fits hyperparameters on
#: at most 200 points (the BayesOpt code's subset size for learning decompositions) from the
#: current values only (no random restarts), and draws the acquisition pool once per fit,
#: extending it as data arrive; ``fast`` is for CI
#: (docs/decisions.md#bos-the-paper-scalable-and-fast-profiles).
PERTURBATION_FITTINGS = {"full": _full, "scalable": _scalable, "fast": _fast}
SCALABLE_FIT_POINTS = 200


def build_attack(
    method: str,
    dataset: str,
    fitting: str,
    groups: int | None = None,
    *,
    genattack: str = "code-defaults",
    victim: str | None = None,
):
    """The attack object of ``method`` with the GP settings of ``fitting`` (a key of
    :data:`PERTURBATION_FITTINGS`).

    ``groups``: BOS²'s number of additive groups ``M`` (None: the fitting's, the thesis's 12;
    1 is a single Matérn-5/2 GP over every latent coordinate). BOS² methods only.
    ``genattack``: GenAttack's settings, a key of :data:`GENATTACK_SETTINGS`; ``victim``: the
    built-in victim white-box PGD reads (default: the dataset's)."""
    from frontierbo.attack.baselines import AutoZoomBiLin, GenAttackReference, ZooAdam
    from frontierbo.attack.bayesopt_attack import BayesOptAttack
    from frontierbo.attack.bos2 import BOS2
    from frontierbo.attack.perturbation_bo import StoppingSettings

    if fitting not in FITTINGS:
        raise ValueError(f"fitting (--fitting) must be one of {list(FITTINGS)}, got {fitting!r}")
    fast = fitting == "fast"
    if groups is not None and method not in ("bos2", "bos2-nostop"):
        raise ValueError(f"groups (--groups) applies to bos2 and bos2-nostop only, not {method}")
    if method == "pgd":
        from frontierbo.attack.whitebox import WhiteBoxPGD

        return WhiteBoxPGD(_victim(victim or DEFAULT_VICTIMS[dataset]))
    if method in ("bos2", "bos2-nostop"):
        perturbation = PERTURBATION_FITTINGS[fitting]()
        if groups is not None:
            groups = check_int(groups, "groups (--groups)", low=1)
            perturbation = dataclasses.replace(perturbation, n_groups=groups)
        stopping = StoppingSettings(samples=5000) if fast else StoppingSettings()
        return BOS2(
            name=method,
            perturbation=perturbation,
            stopping=None if "nostop" in method else stopping,
        )
    if method == "bayesopt":
        return (
            BayesOptAttack(n_random=1000, fit_maxiter=50, lbfgs_maxiter=50)
            if fast
            else BayesOptAttack()
        )
    if method == "genattack":
        return GenAttackReference(**GENATTACK_SETTINGS[genattack][dataset])
    # tanh space on CIFAR only
    # (docs/decisions.md#bos-zoo-and-autozoom-defaults-from-the-autozoom-code)
    tanh = dataset == "cifar10"
    return ZooAdam(use_tanh=tanh) if method == "zoo" else AutoZoomBiLin(use_tanh=tanh)


def run_worker(spec: RunSpec, attack=None) -> dict:
    """One attack instance: the outcome, the query count and what the attack logged.

    ``attack``: run this attack object instead of ``spec``'s method built with its profile (a
    variant of that method, as ``benchmarks/bos2_variants.py`` runs); the record is the same."""
    import torch

    from frontierbo.attack.base import execute
    from frontierbo.attack.bos2 import loop_summary
    from frontierbo.attack.oracle import QueryOracle

    torch.set_num_threads(1)  # one image per query: threads cost more than they give
    c = spec.config
    images, _ = _test_images(c["dataset"])
    victim = _victim(c["victim"])
    if attack is None:
        attack = build_attack(
            c["method"], c["dataset"], c.get("fitting", "full"),
            genattack=c.get("genattack", "code-defaults"), victim=c["victim"],
        )  # fmt: skip
    init = 30 if c["method"] in ("bos2", "bos2-nostop", "bayesopt") else 0
    uncounted = 0 if c["count_init_in_budget"] else init
    oracle = QueryOracle(
        victim,
        images[c["image"]],
        c["target"],
        DELTA_MAX[c["dataset"]],
        c["budget"] + uncounted,
        range_mode=c.get("range_mode", "clip"),
    )
    started = time.perf_counter()
    result = execute(attack, oracle, seed=spec.seed)
    record = {
        "success": result.success,
        "queries": counted_queries(result.queries, uncounted),
        "stopped_by": result.stopped_by,
        "best_objective": result.best_objective,
        "seconds": round(time.perf_counter() - started, 3),
        "linf": None if result.x_adv is None else float(np.abs(result.x_adv - oracle.x0).max()),
    }
    if c["method"].startswith("bos2"):
        record["loops"] = [
            {k: r[k] for k in ("dimension", "length", "best", "stopped_early")}
            for r in loop_summary(result.details)
        ]
    if c["method"] == "bayesopt":
        record["sides"] = [s["side"] for s in result.details.get("selections", [])]
    if c["method"] == "bos2" and result.success and c["target"] == (c["label"] + 1) % 10:
        # adversarial examples for the report's figure (BOS², first target of each image)
        record["x_adv"] = np.round(result.x_adv, 5).tolist()
    return record
