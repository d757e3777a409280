"""Lines of the five systems and the layer that serves them, by role, at a git revision or in the
working tree: ``python tools/line_counts.py [REV ...]`` prints one column per revision.

Roles (by file): commands (a system's ``cli.py`` / ``system.py`` and the shared code that builds
commands), run on your data (``userdata.py``, ``userattack.py``, the shared run path), study
samplers (``sampler.py``), conformance checks, reproduction (``experiment.py``, ``report.py``,
``summary.py``) and everything else (the algorithms, problems, data, services).
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = ("po", "ldp", "quantum", "macro", "attack")
SHARED = {
    "src/frontierbo/experiments/system.py": "commands",
    "src/frontierbo/systems/declare.py": "commands",
    "src/frontierbo/systems/commands.py": "commands",
    "src/frontierbo/systems/__init__.py": "commands",
    "src/frontierbo/systems/userrun.py": "run on your data",
    "src/frontierbo/macro/field.py": "run on your data",  # macro/userdata.py's table reader
    "src/frontierbo/systems/checks.py": "conformance checks",
}
ROLES = ("commands", "run on your data", "study samplers", "conformance checks", "reproduction",
         "algorithms, data, services")  # fmt: skip
PLUMBING = ROLES[:4]


def role(path: str) -> str | None:
    if path in SHARED:
        return SHARED[path]
    parts = PurePosixPath(path).parts
    if len(parts) < 4 or parts[:2] != ("src", "frontierbo") or parts[2] not in SYSTEMS:
        return None
    if not path.endswith(".py"):
        return None
    name = parts[-1]
    if len(parts) == 4 and name in ("cli.py", "system.py"):
        return "commands"
    if len(parts) == 4 and name in ("userdata.py", "userattack.py"):
        return "run on your data"
    if len(parts) == 4 and name == "sampler.py":
        return "study samplers"
    if len(parts) == 4 and name in ("experiment.py", "report.py", "summary.py"):
        return "reproduction"
    return ROLES[-1]


def files(rev: str | None) -> dict[str, int]:
    """path -> line count, at ``rev`` (None: the working tree)."""
    if rev is None:
        paths = [str(p.relative_to(ROOT)) for p in (ROOT / "src").rglob("*.py")]
        return {p: len((ROOT / p).read_text(encoding="utf-8").splitlines()) for p in paths}
    listing = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "src"], cwd=ROOT,
                             check=True, capture_output=True, text=True).stdout.split()  # fmt: skip
    out = {}
    for path in listing:
        if path.endswith(".py") and role(path):
            text = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True,
                                  capture_output=True, text=True).stdout  # fmt: skip
            out[path] = len(text.splitlines())
    return out


def by_role(counts: dict[str, int]) -> dict[str, int]:
    totals = dict.fromkeys(ROLES, 0)
    for path, n in counts.items():
        if (r := role(path)) is not None:
            totals[r] += n
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revs", nargs="*", help="git revisions (default: the working tree)")
    args = parser.parse_args()
    revs = args.revs or [None]
    columns = [by_role(files(rev)) for rev in revs]
    names = [rev or "working tree" for rev in revs]
    print("| role | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for r in ROLES:
        print(f"| {r} | " + " | ".join(str(c[r]) for c in columns) + " |")
    plumbing = [sum(c[r] for r in PLUMBING) for c in columns]
    print("| **plumbing** (first four) | " + " | ".join(map(str, plumbing)) + " |")
    print("| **all** | " + " | ".join(str(sum(c.values())) for c in columns) + " |")


if __name__ == "__main__":
    main()
