"""Finding the shared data files and checking their sha256.

Search order for a file given by its path relative to the data root (e.g. ``"ura/x.csv"``):

1. an explicit ``path`` argument (used as is, nothing else is searched);
2. the root named by the ``FRONTIERBO_DATA`` environment variable;
3. ``../shared/data`` relative to the current working directory;
4. a ``shared/data`` folder beside any ancestor of this file (the repository's sibling
   ``shared/data`` when the package is used from a checkout).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

DATA_ENV = "FRONTIERBO_DATA"

# sha256 of the files described in shared/data/*/README.md; keyed by path below the data root.
KNOWN_SHA256: dict[str, str] = {
    "ura/ura_private_projects.csv": (
        "fcad5105e5bcf9949c3428b233a7986a738a633b98a84f38587982d8afbbe8b4"
    ),
    "ura/ura_private_projects_v2021-11_1490.csv": (
        "5609b97ccaa7912c242eb231c62568434f05ce4a38619505282f0e65db03220e"
    ),
}


def candidate_roots() -> list[Path]:
    """Data roots searched in order (env var, ../shared/data from the cwd, beside the checkout).

    Roots that do not exist are kept out, duplicates are removed.
    """
    roots: list[Path] = []
    env = os.environ.get(DATA_ENV)
    if env:
        roots.append(Path(env).expanduser())
    roots.append(Path.cwd().parent / "shared" / "data")
    roots.extend(parent / "shared" / "data" for parent in Path(__file__).resolve().parents)
    unique: list[Path] = []
    for root in roots:
        if root.is_dir() and all(root.resolve() != seen.resolve() for seen in unique):
            unique.append(root)
    return unique


def _searched_description(relative: str) -> str:
    env = os.environ.get(DATA_ENV)
    places = [f"${DATA_ENV}/{relative}" + (f" (= {env})" if env else " (not set)")]
    places.append(str(Path.cwd().parent / "shared" / "data" / relative))
    places.append(f"shared/data/{relative} beside the ancestors of {Path(__file__).resolve()}")
    return "; ".join(places)


def resolve_data_path(relative: str, path: str | os.PathLike | None = None) -> Path:
    """Return the path of a data file.

    Args:
        relative: path below the data root, e.g. ``"ura/ura_private_projects.csv"``.
        path: an explicit file path; when given it is used as is.

    Raises:
        FileNotFoundError: the file is in none of the searched places; the message lists them and
            says how to fix it (pass a path, or set FRONTIERBO_DATA to the data root).
    """
    if path is not None:
        explicit = Path(path).expanduser()
        if not explicit.is_file():
            raise FileNotFoundError(
                f"data file {str(explicit)!r} (for {relative!r}) does not exist; pass the path of "
                f"an existing file, or pass path=None and set {DATA_ENV} to the data root"
            )
        return explicit
    for root in candidate_roots():
        candidate = root / relative
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"data file {relative!r} not found. Searched: {_searched_description(relative)}. "
        f"Fix: pass path='/path/to/{Path(relative).name}', or set the environment variable "
        f"{DATA_ENV} to the folder that contains {relative!r}."
    )


def file_sha256(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_sha256(path: str | os.PathLike, expected: str) -> str:
    """Check a file's sha256 against ``expected`` (hex, case-insensitive); return the digest.

    Raises:
        ValueError: the digests differ; the message names the file and both hashes.
    """
    actual = file_sha256(path)
    if actual.lower() != expected.strip().lower():
        raise ValueError(
            f"sha256 mismatch for {str(path)!r}: expected {expected.strip().lower()}, got {actual}. "
            "The file is corrupted or a different version; restore it, or (for your own file) "
            "turn the checksum check off with verify=False."
        )
    return actual


def data_available(relative: str) -> bool:
    """True when :func:`resolve_data_path` would find ``relative`` without an explicit path."""
    try:
        resolve_data_path(relative)
    except FileNotFoundError:
        return False
    return True
