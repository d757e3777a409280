"""frontierbo: Bayesian optimisation where classic BO breaks (demo, reproduce, privacy, run).

Every bad input ends in one line ``frontierbo: error: <message naming the parameter>`` and exit
status 2; nothing is written before the inputs are validated.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

REPRODUCTIONS = ("po-gp-ucb", "ldp-bo", "quantum-bo")
QUICK_RUNS = 3
#: ``--algorithm`` choices per ``run`` command.
LDP_ALGORITHMS = ("ata", "tgp", "moma")
QUANTUM_ALGORITHMS = ("q-gp-ucb", "gp-ucb", "q-linucb", "linucb")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def _jobs(text: str) -> int:
    value = int(text)
    if value == 0 or value < -1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1 or -1 (all cores), got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="frontierbo", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="small synthetic PO-GP-UCB experiment: table + plot")
    demo.add_argument("--out", type=Path, default=Path("frontierbo-demo"))
    demo.add_argument("--runs", type=_positive_int, default=20)
    demo.add_argument("--jobs", type=_jobs, default=1)
    demo.add_argument("--seed", type=int, default=0)

    rep = sub.add_parser("reproduce", help="reproduce a paper's figures and tables")
    rep.add_argument("paper", choices=REPRODUCTIONS)
    rep.add_argument(
        "--quick",
        action="store_true",
        help=f"po-gp-ucb: {QUICK_RUNS} runs per configuration; ldp-bo: T = 1000 and 2 trials; "
        "quantum-bo: T = 2000 / 1000 and 3 runs",
    )
    rep.add_argument(
        "--runs",
        type=_positive_int,
        default=None,
        help="runs per configuration (50; ldp-bo 10; quantum-bo 10 synthetic / 5 AutoML)",
    )
    rep.add_argument("--jobs", type=_jobs, default=1, help="parallel worker processes (-1: all)")
    rep.add_argument("--out", type=Path, default=None)
    rep.add_argument("--seed", type=int, default=0)
    rep.add_argument("--datasets", nargs="+", default=None, help="subset of the datasets")
    rep.add_argument(
        "--source",
        choices=("reference", "generated"),
        default=None,
        help="quantum-bo only: the authors' synthetic function and RFF draws (read from the data "
        "root, validation use) or the project's own seeded ones",
    )
    rep.add_argument(
        "--noisy",
        action="store_true",
        help="quantum-bo only: also run Q-GP-UCB on noisy Qiskit-Aer circuits (synthetic, 3 runs; "
        "about a minute per run; extra [quantum])",
    )
    rep.add_argument(
        "--beta-scale",
        type=float,
        default=None,
        help="ldp-bo only: the common confidence-width multiplier of every algorithm (0.1)",
    )

    priv = sub.add_parser("privacy", help="privacy tools")
    priv_sub = priv.add_subparsers(dest="privacy_command", required=True)
    audit = priv_sub.add_parser(
        "audit", help="attack the published PO-GP-UCB release: reconstruction + distinguisher"
    )
    audit.add_argument("dataset", choices=("synthetic", "branin", "loan", "property"))
    audit.add_argument("--epsilon", type=float, default=None, help="default: the paper's")
    audit.add_argument("--delta", type=float, default=None, help="default: the paper's")
    audit.add_argument("--r", type=int, default=None, help="default: the paper's")
    audit.add_argument("--k", type=int, default=None, help="known rows (default d + 1)")
    audit.add_argument("--known-indices", type=int, nargs="+", default=None)
    audit.add_argument("--trials", type=int, default=200)
    audit.add_argument("--seed", type=int, default=0)

    run = sub.add_parser(
        "run",
        help="optimise on your own CSV file (gp-ucb, po-gp-ucb: rows are candidates; "
        "ldp-bo: columns are arms, rows are reward observations; quantum-bo: rows are arms "
        "with reward columns p or mean, sigma)",
    )
    run.add_argument("algorithm", choices=("gp-ucb", "po-gp-ucb", "ldp-bo", "quantum-bo"))
    run.add_argument("--data", required=True, help="CSV file with a header row")
    run.add_argument(
        "--target",
        default=None,
        help="column to maximise (see --minimize); not for ldp-bo or quantum-bo",
    )
    run.add_argument(
        "--features", nargs="+", default=None, help="input columns (default: all others)"
    )
    run.add_argument("--minimize", action="store_true", help="minimise the target instead")
    run.add_argument(
        "--iterations", "-T", type=int, required=True, help="rounds (quantum-bo: query budget)"
    )
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--epsilon", type=float, default=None)
    run.add_argument(
        "--delta", type=float, default=None, help="quantum-bo: failure probability per stage (0.05)"
    )
    run.add_argument("--r", type=int, default=None, help="projection dimension")
    run.add_argument(
        "--mechanism",
        choices=("random_projection", "gaussian"),
        default=None,
        help="po-gp-ucb release: the published one (NOT DP, the default) or the (eps, delta)-DP "
        "Gaussian one",
    )
    run.add_argument("--n-init", type=int, default=None, help="random initial rows (1)")
    run.add_argument("--out", type=Path, default=None, help="directory for result.json")
    ldp = run.add_argument_group(
        "ldp-bo", "columns = arms, rows = reward observations (see frontierbo.ldp.userdata)"
    )
    ldp.add_argument(
        "--algorithm",
        dest="ldp_algorithm",
        choices=LDP_ALGORITHMS + QUANTUM_ALGORITHMS,
        default=None,
        help="ldp-bo: ata, tgp or moma (required); quantum-bo: q-gp-ucb (default), gp-ucb, "
        "q-linucb or linucb",
    )
    ldp.add_argument("--beta-scale", type=float, default=None, help="width multiplier (0.1)")
    ldp.add_argument(
        "--exclude", nargs="+", default=None, help="columns that are not arms (e.g. Date)"
    )
    qbo = run.add_argument_group(
        "quantum-bo",
        "rows = arms; reward column p (Bernoulli) or mean and sigma (Gaussian), the other "
        "columns are features (see frontierbo.quantum.userdata)",
    )
    qbo.add_argument(
        "--lengthscale",
        type=float,
        default=None,
        help="SE length-scale on the min-max normalised features (0.2; GP methods only)",
    )
    qbo.add_argument(
        "--beta",
        default=None,
        help="UCB width: 'log', 'theory' or a number (default: log quantum, sqrt(2) classical)",
    )
    qbo.add_argument(
        "--weighting",
        choices=("paper", "reference"),
        default=None,
        help="quantum methods: eq. 3 (paper, default) or the authors' code (reference)",
    )
    qbo.add_argument(
        "--encoding",
        choices=("exact", "reference"),
        default=None,
        help="quantum methods: amplitude encoding of the rewards (exact)",
    )
    qbo.add_argument(
        "--backend",
        choices=("numpy", "statevector", "aer"),
        default=None,
        help="quantum methods: NumPy IQAE simulator (numpy, default) or Qiskit circuits "
        "(statevector, aer; needs frontierbo[quantum])",
    )
    return parser


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    return f"frontierbo: warning: {message}\n"


def main(argv: list[str] | None = None) -> int:
    warnings.formatwarning = _one_line_warning
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        text = COMMANDS[args.command](args)
    except (ValueError, TypeError, FileNotFoundError, RuntimeError) as exc:
        print(f"frontierbo: error: {exc}", file=sys.stderr)
        return 2
    if text:
        print(text)
    return 0


def _demo(args) -> str:
    from frontierbo.po.demo import demo

    return demo(args.out, runs=args.runs, n_jobs=args.jobs, seed=args.seed)


def _reproduce(args) -> str:
    if args.paper == "quantum-bo":
        return _reproduce_quantum(args)
    if args.source is not None or args.noisy:
        raise ValueError("--source and --noisy apply to quantum-bo only")
    if args.paper == "ldp-bo":
        return _reproduce_ldp(args)
    if args.beta_scale is not None:
        raise ValueError("--beta-scale applies to ldp-bo only")
    from frontierbo.po.experiment import SETUPS
    from frontierbo.po.report import reproduce

    datasets = args.datasets or list(SETUPS)
    unknown = [d for d in datasets if d not in SETUPS]
    if unknown:
        raise ValueError(f"--datasets must be among {sorted(SETUPS)}, got {unknown}")
    runs = args.runs or (QUICK_RUNS if args.quick else 50)
    out = args.out or Path(f"results/po-gp-ucb{'-quick' if args.quick else ''}")
    result = reproduce(out, datasets, runs=runs, n_jobs=args.jobs, seed=args.seed)
    return (out / "report.md").read_text() + f"\nwritten to {out}/ in {result['seconds']} s"


def _reproduce_ldp(args) -> str:
    from frontierbo.ldp import experiment as ldp_bo
    from frontierbo.ldp.report import reproduce

    datasets = args.datasets or list(ldp_bo.DATASETS)
    unknown = [d for d in datasets if d not in ldp_bo.DATASETS]
    if unknown:
        raise ValueError(f"--datasets must be among {list(ldp_bo.DATASETS)}, got {unknown}")
    T = ldp_bo.QUICK_T if args.quick else ldp_bo.FULL_T
    runs = args.runs or (ldp_bo.QUICK_TRIALS if args.quick else ldp_bo.FULL_TRIALS)
    beta_scale = ldp_bo.BETA_SCALE if args.beta_scale is None else args.beta_scale
    out = args.out or Path(f"results/ldp-bo{'-quick' if args.quick else ''}")
    result = reproduce(
        out, datasets, T, runs, n_jobs=args.jobs, seed=args.seed, beta_scale=beta_scale
    )
    return (out / "report.md").read_text() + f"\nwritten to {out}/ in {result['seconds']} s"


def _reproduce_quantum(args) -> str:
    from frontierbo.quantum.experiment import MAIN_SETTINGS
    from frontierbo.quantum.report import reproduce

    if args.beta_scale is not None:
        raise ValueError("--beta-scale applies to ldp-bo only")
    settings = args.datasets or list(MAIN_SETTINGS)
    unknown = [d for d in settings if d not in MAIN_SETTINGS]
    if unknown:
        raise ValueError(f"--datasets must be among {list(MAIN_SETTINGS)}, got {unknown}")
    out = args.out or Path(f"results/quantum-bo{'-quick' if args.quick else ''}")
    result = reproduce(
        out,
        settings,
        quick=args.quick,
        noisy=args.noisy,
        runs=args.runs,
        n_jobs=args.jobs,
        seed=args.seed,
        source=args.source or "reference",
    )
    return (out / "report.md").read_text() + f"\nwritten to {out}/ in {result['seconds']} s"


#: The quantum-bo options of ``run``: flag -> argparse dest (None when not given).
_QUANTUM_OPTIONS = {
    "--lengthscale": "lengthscale",
    "--beta": "beta",
    "--weighting": "weighting",
    "--encoding": "encoding",
    "--backend": "backend",
}


def _reject_quantum_options(args, command: str) -> None:
    """One error naming the first quantum-bo option given to another ``run`` command."""
    for flag, dest in _QUANTUM_OPTIONS.items():
        if getattr(args, dest) is not None:
            ldp_beta = flag == "--beta" and command == "ldp-bo"
            hint = " (ldp-bo's width multiplier is --beta-scale)" if ldp_beta else ""
            raise ValueError(f"{flag} applies to quantum-bo only, not to {command}{hint}")


def _run_ldp(args) -> str:
    from frontierbo.ldp.experiment import BETA_SCALE, DELTA
    from frontierbo.ldp.userdata import format_ldp_result, run_ldp_on_csv

    if args.ldp_algorithm is None:
        raise ValueError("--algorithm (ata, tgp or moma) is required for ldp-bo")
    if args.ldp_algorithm not in LDP_ALGORITHMS:
        raise ValueError(
            f"--algorithm for ldp-bo must be one of {', '.join(LDP_ALGORITHMS)}, got "
            f"{args.ldp_algorithm!r} (a quantum-bo algorithm)"
        )
    _reject_quantum_options(args, "ldp-bo")
    for flag, value in (("--target", args.target), ("--features", args.features)):
        if value is not None:
            raise ValueError(f"{flag} does not apply to ldp-bo (columns are arms)")
    if args.minimize or args.r is not None:
        raise ValueError("--minimize and --r do not apply to ldp-bo")
    result = run_ldp_on_csv(
        args.data,
        args.ldp_algorithm,
        args.iterations,
        args.seed,
        epsilon=args.epsilon,
        beta_scale=BETA_SCALE if args.beta_scale is None else args.beta_scale,
        delta=DELTA if args.delta is None else args.delta,
        exclude=args.exclude,
        out=args.out,
    )
    text = format_ldp_result(result)
    if args.out is not None:
        text += f"\nwritten {json.dumps(str(Path(args.out) / 'result.json'))}"
    return text


def _run_quantum(args) -> str:
    from frontierbo.quantum.userdata import format_quantum_result, run_quantum_on_csv

    algorithm = args.ldp_algorithm or "q-gp-ucb"
    if algorithm not in QUANTUM_ALGORITHMS:
        raise ValueError(
            f"--algorithm for quantum-bo must be one of {', '.join(QUANTUM_ALGORITHMS)}, got "
            f"{algorithm!r} (an ldp-bo algorithm)"
        )
    foreign = {  # flag: (dest, the commands it belongs to, what quantum-bo does instead)
        "--target": (
            "target",
            "gp-ucb / po-gp-ucb",
            "it reads the reward columns p or mean, sigma",
        ),
        "--minimize": ("minimize", "gp-ucb / po-gp-ucb", "it maximises the mean reward"),
        "--epsilon": ("epsilon", "po-gp-ucb / ldp-bo", "it sets each stage's accuracy itself"),
        "--r": ("r", "po-gp-ucb", None),
        "--mechanism": ("mechanism", "po-gp-ucb", None),
        "--n-init": ("n_init", "gp-ucb / po-gp-ucb", "it starts from one random arm"),
        "--beta-scale": ("beta_scale", "ldp-bo", "its width multiplier is --beta"),
        "--exclude": ("exclude", "ldp-bo", "choose the feature columns with --features"),
    }
    for flag, (dest, owner, instead) in foreign.items():
        value = getattr(args, dest)
        if value is not None and value is not False:
            hint = f" ({instead})" if instead else ""
            raise ValueError(f"{flag} applies to {owner} only, not to quantum-bo{hint}")
    if args.lengthscale is not None and algorithm in ("q-linucb", "linucb"):
        raise ValueError(
            f"--lengthscale applies to the GP methods q-gp-ucb and gp-ucb only; {algorithm} uses "
            "the linear kernel on the normalised features"
        )
    result = run_quantum_on_csv(
        args.data,
        args.iterations,
        args.seed,
        algorithm=algorithm,
        features=args.features,
        lengthscale=0.2 if args.lengthscale is None else args.lengthscale,
        beta=args.beta,
        weighting=args.weighting or "paper",
        encoding=args.encoding or "exact",
        backend=args.backend or "numpy",
        delta=0.05 if args.delta is None else args.delta,
        out=args.out,
    )
    text = format_quantum_result(result)
    if args.out is not None:
        text += f"\nwritten {json.dumps(str(Path(args.out) / 'result.json'))}"
    return text


def _run(args) -> str:
    if args.algorithm == "ldp-bo":
        return _run_ldp(args)
    if args.algorithm == "quantum-bo":
        return _run_quantum(args)
    if args.ldp_algorithm is not None:
        raise ValueError(
            f"--algorithm applies to ldp-bo only ({', '.join(LDP_ALGORITHMS)}) and to quantum-bo "
            f"({', '.join(QUANTUM_ALGORITHMS)}), not to {args.algorithm}"
        )
    for flag, value in (
        ("--beta-scale", args.beta_scale),
        ("--exclude", args.exclude),
    ):
        if value is not None:
            raise ValueError(f"{flag} applies to ldp-bo only")
    _reject_quantum_options(args, args.algorithm)
    if args.target is None:
        raise ValueError(f"--target is required for {args.algorithm}")
    from frontierbo.po.userdata import format_result, run_on_csv

    result = run_on_csv(
        args.data,
        args.target,
        args.algorithm,
        args.iterations,
        args.seed,
        features=args.features,
        minimize=args.minimize,
        epsilon=args.epsilon,
        delta=args.delta,
        r=args.r,
        n_init=1 if args.n_init is None else args.n_init,
        out=args.out,
        mechanism=args.mechanism or "random_projection",
    )
    text = format_result(result)
    if args.out is not None:
        text += f"\nwritten {json.dumps(str(Path(args.out) / 'result.json'))}"
    return text


def _privacy(args) -> str:
    from frontierbo.po.audit import audit_command

    return audit_command(
        args.dataset,
        epsilon=args.epsilon,
        delta=args.delta,
        r=args.r,
        k=args.k,
        trials=args.trials,
        seed=args.seed,
        known_indices=args.known_indices,
    )


COMMANDS = {"demo": _demo, "reproduce": _reproduce, "run": _run, "privacy": _privacy}

if __name__ == "__main__":
    sys.exit(main())
