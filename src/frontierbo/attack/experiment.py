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
False the oracle allows ``T + 30`` and the reported counts leave them out). Profiles of BOS²
(docs/decisions.md#bos-the-paper-scalable-and-fast-profiles; the baselines run their own
defaults in all three): ``paper`` (the thesis's settings), ``scalable``
(:data:`PERTURBATION_PROFILES`: the same algorithm with cheaper hyperparameter learning, for the
full tables on 2 cores) and ``fast`` (for CI: 5 decompositions, 50 L-BFGS iterations, 1 000
acquisition candidates, 5 000 stopping samples, BayesOpt reduced alike), which ``--quick`` uses
with T = 100 on one image and two targets per dataset.
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
PROFILES = ("paper", "scalable", "fast")
#: How ``Q(u)`` keeps the input valid (docs/decisions.md#bos-pixel-range-by-clipping):
#: ``clip`` (the thesis's L_inf threat model) or ``rescale``, the BayesOpt code's
#: ``(x_0 + delta) / (1 + 2 delta_max)``, which BOS² and BayesOpt were built on; it leaves the
#: ball, and success is the argmax alone, as in that code.
RANGE_MODES = ("clip", "rescale")
#: The methods that query through ``Q(u)`` and so follow ``--range-mode``; GenAttack, ZOO and
#: AutoZOOM clip, as their own codes do.
RANGE_MODE_METHODS = ("bos2", "bos2-nostop", "bayesopt", "pgd")
#: L_inf bounds of the thesis (Section 5.3), in the attack space [-0.5, 0.5].
DELTA_MAX = {"mnist": 0.3, "cifar10": 0.05}
IMAGES = {"mnist": 50, "cifar10": 20}
#: Colour channels of each dataset's images (a latent side s has s * s * channels dimensions).
CHANNELS = {"mnist": 1, "cifar10": 3}
PUBLISHED = load_published("frontierbo.attack")

DEFAULTS = {
    "runs": None,
    "budget": 900,
    "targets": 9,
    "methods": METHODS,
    "profile": "paper",
    "count_init_in_budget": True,
    "range_mode": "clip",
}
QUICK = {"budget": 100, "targets": 2, "runs": 1, "profile": "fast"}


def check_options(params: dict) -> dict:
    methods = params["methods"]
    names = (methods,) if isinstance(methods, str) else tuple(methods)
    unknown = [m for m in names if m not in METHODS]
    if unknown or not names:
        raise ValueError(f"--methods must be among {list(METHODS)}, got {unknown or []}")
    params["methods"] = tuple(dict.fromkeys(names))
    if params["profile"] not in PROFILES:
        raise ValueError(f"--profile must be one of {list(PROFILES)}, got {params['profile']!r}")
    budget, targets = params["budget"], params["targets"]
    if not isinstance(budget, int) or budget < 31:
        raise ValueError(f"--queries must be an integer >= 31 (30 initial queries), got {budget}")
    if not isinstance(targets, int) or not 1 <= targets <= 9:
        raise ValueError(f"--targets must be an integer in [1, 9], got {targets}")
    params["count_init_in_budget"] = bool(params["count_init_in_budget"])
    if params["range_mode"] not in RANGE_MODES:
        raise ValueError(
            f"--range-mode must be one of {list(RANGE_MODES)}, got {params['range_mode']!r}"
        )
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


def image_source(dataset: str) -> str:
    """Which images ``dataset``'s instances are drawn from (the results' ``images`` field)."""
    if dataset == "cifar10":
        return "the 20 real CIFAR-10 test images that ship in foolbox"
    if mnist_test_available():
        return "the MNIST test set (10,000 images)"
    return MNIST_SUBSTITUTE


# -- instances ------------------------------------------------------------------------------------
@lru_cache(maxsize=2)
def _victim(dataset: str):
    from frontierbo.attack.victims import load_victim

    return load_victim(dataset)


@lru_cache(maxsize=2)
def _test_images(dataset: str) -> tuple[np.ndarray, np.ndarray]:
    from frontierbo.attack import data

    if dataset == "cifar10":
        return data.load_cifar10_samples()
    return data.load_mnist("test") if mnist_test_available() else data.load_mnist_samples()


@lru_cache(maxsize=4)
def chosen_images(dataset: str, seed: int) -> tuple[int, ...]:
    """The test-set indices attacked: correctly classified, in a seeded random order (MNIST)
    or in file order (the 20 CIFAR-10 images)."""
    images, labels = _test_images(dataset)
    correct = np.flatnonzero(_victim(dataset).predict(images) == labels)
    if dataset == "mnist":
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


def run_id(dataset: str, image: int, target: int, method: str) -> str:
    return f"{dataset}/i{image}/t{target}/{method}"


def build_specs(options) -> list[RunSpec]:
    specs = []
    for dataset in options.datasets:
        images = chosen_images(dataset, options.seed)
        n = IMAGES[dataset] if options.runs is None else min(options.runs, len(images))
        labels = _test_images(dataset)[1]
        for image in images[:n]:
            for target in instance_targets(int(labels[image]), options["targets"]):
                instance_seed = seed_for(options.seed, dataset, image, target)
                for method in options["methods"]:
                    config = {
                        "dataset": dataset,
                        "image": image,
                        "label": int(labels[image]),
                        "target": target,
                        "method": method,
                        "budget": options["budget"],
                        "profile": options["profile"],
                        "count_init_in_budget": options["count_init_in_budget"],
                        "range_mode": options["range_mode"],
                    }
                    rid = run_id(dataset, image, target, method)
                    specs.append(RunSpec(rid, config, instance_seed))
    return specs


# -- one run --------------------------------------------------------------------------------------
def _paper():
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


#: The perturbation GP of each profile: ``paper`` is the thesis's; ``scalable`` ranks the candidate
#: decompositions at data-scaled hyperparameters (one Cholesky each), fits hyperparameters on
#: at most 200 points (the BayesOpt code's subset size for learning decompositions) from the
#: current values only (no random restarts), and draws the acquisition pool once per fit,
#: extending it as data arrive; ``fast`` is the CI profile
#: (docs/decisions.md#bos-the-paper-scalable-and-fast-profiles).
PERTURBATION_PROFILES = {"paper": _paper, "scalable": _scalable, "fast": _fast}
SCALABLE_FIT_POINTS = 200


def build_attack(method: str, dataset: str, profile: str, groups: int | None = None):
    """The attack object of ``method`` with the settings of ``profile``.

    ``groups``: BOS²'s number of additive groups ``M`` (None: the profile's, the thesis's 12;
    1 is a single Matérn-5/2 GP over every latent coordinate). BOS² methods only."""
    from frontierbo.attack.baselines import AutoZoomBiLin, GenAttackReference, ZooAdam
    from frontierbo.attack.bayesopt_attack import BayesOptAttack
    from frontierbo.attack.bos2 import BOS2
    from frontierbo.attack.perturbation_bo import StoppingSettings

    fast = profile == "fast"
    if groups is not None and method not in ("bos2", "bos2-nostop"):
        raise ValueError(f"groups (--groups) applies to bos2 and bos2-nostop only, not {method}")
    if method == "pgd":
        from frontierbo.attack.whitebox import WhiteBoxPGD

        return WhiteBoxPGD(_victim(dataset))
    if method in ("bos2", "bos2-nostop"):
        perturbation = PERTURBATION_PROFILES[profile]()
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
        return GenAttackReference()
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
    if attack is None:
        attack = build_attack(c["method"], c["dataset"], c["profile"])
    init = 30 if c["method"] in ("bos2", "bos2-nostop", "bayesopt") else 0
    uncounted = 0 if c["count_init_in_budget"] else init
    oracle = QueryOracle(
        _victim(c["dataset"]),
        images[c["image"]],
        c["target"],
        DELTA_MAX[c["dataset"]],
        c["budget"] + uncounted,
        range_mode=c["range_mode"] if c["method"] in RANGE_MODE_METHODS else "clip",
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
