"""Finding the data files, checking their sha256, and fetching them (``frontierbo data``).

Search order for a file given by its path relative to the data root (e.g. ``"ura/x.csv"``):

1. an explicit ``path`` argument (used as is, nothing else is searched);
2. the root named by the ``FRONTIERBO_DATA`` environment variable;
3. ``../shared/data`` relative to the current working directory;
4. a ``shared/data`` folder beside any ancestor of this file (the repository's sibling
   ``shared/data`` when the package is used from a checkout);
5. the user cache, ``$XDG_CACHE_HOME/frontierbo`` or ``~/.cache/frontierbo``, where
   :func:`fetch` writes unless ``FRONTIERBO_DATA`` is set.

Every file the package reads is in the registry :data:`REGISTRY_FILE` (package data): each
dataset with its files' sha256, size, licence, source and, where the exact bytes are public, the
URL :func:`fetch` downloads them from. Datasets whose bytes are published nowhere (made or
repaired in the project, or extracted from an unlicensed source) are listed with the reason
they cannot be fetched.

A reproduction declares the files it reads as :class:`Input` s; :func:`check_inputs` finds and
checksums them all before it runs, and says which documented substitute stands in for a missing
one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

DATA_ENV = "FRONTIERBO_DATA"
#: The dataset registry, package data beside this module.
REGISTRY_FILE = "datasets.json"
FETCH_COMMAND = "frontierbo data fetch"


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset: its path below the data root, sha256, size and download URL."""

    path: str
    sha256: str
    bytes: int
    url: str | None = None


@dataclass(frozen=True)
class Dataset:
    """A registry entry: files, provenance, licence, and why it cannot be fetched (if so)."""

    name: str
    description: str
    source: str
    licence: str
    used_by: str
    files: tuple[DataFile, ...]
    not_fetchable: str | None = None

    @property
    def fetchable(self) -> bool:
        """True when every file has a public URL serving exactly its bytes."""
        return self.not_fetchable is None and all(f.url for f in self.files)


@functools.cache
def registry() -> dict[str, Dataset]:
    """The datasets of :data:`REGISTRY_FILE`, by name (read once)."""
    raw = json.loads(
        resources.files("frontierbo").joinpath(REGISTRY_FILE).read_text(encoding="utf-8")
    )
    datasets = {}
    for name, entry in raw["datasets"].items():
        files = tuple(DataFile(**f) for f in entry["files"])
        fields = {k: v for k, v in entry.items() if k != "files"}
        datasets[name] = Dataset(name=name, files=files, **fields)
    return datasets


def dataset_of(relative: str) -> Dataset | None:
    """The registry dataset holding the file ``relative`` (a path below the data root), if any."""
    for dataset in registry().values():
        if any(f.path == relative for f in dataset.files):
            return dataset
    return None


def get_dataset(name: str) -> Dataset:
    """The registry entry ``name``; a ValueError lists the known names otherwise."""
    try:
        return registry()[name]
    except KeyError:
        raise ValueError(
            f"unknown dataset {name!r}; the datasets are {', '.join(registry())} "
            "(frontierbo data list)"
        ) from None


# sha256 of every registered file (shared/data/*/README.md), keyed by path below the data root.
KNOWN_SHA256: dict[str, str] = {f.path: f.sha256 for d in registry().values() for f in d.files}


def user_cache_root() -> Path:
    """The per-user data root: ``$XDG_CACHE_HOME/frontierbo``, else ``~/.cache/frontierbo``."""
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".cache") / "frontierbo"


def default_fetch_root() -> Path:
    """Where :func:`fetch` writes by default: ``$FRONTIERBO_DATA`` if set, else the user cache."""
    env = os.environ.get(DATA_ENV)
    return Path(env).expanduser() if env else user_cache_root()


def searched_roots() -> list[tuple[str, Path]]:
    """Every data root searched, in order, as ``(what, path)``; existing or not."""
    roots: list[tuple[str, Path]] = []
    env = os.environ.get(DATA_ENV)
    if env:
        roots.append((f"${DATA_ENV}", Path(env).expanduser()))
    roots.append(
        ("../shared/data from the working directory", Path.cwd().parent / "shared" / "data")
    )
    roots.extend(
        ("shared/data beside the package", parent / "shared" / "data")
        for parent in Path(__file__).resolve().parents
    )
    roots.append(("user cache", user_cache_root()))
    return roots


def candidate_roots() -> list[Path]:
    """Data roots searched in order (env var, ../shared/data from the cwd, beside the checkout,
    the user cache).

    Roots that do not exist are kept out, duplicates are removed.
    """
    unique: list[Path] = []
    for _, root in searched_roots():
        if root.is_dir() and all(root.resolve() != seen.resolve() for seen in unique):
            unique.append(root)
    return unique


def _searched_description(relative: str) -> str:
    env = os.environ.get(DATA_ENV)
    places = [f"${DATA_ENV}/{relative}" + (f" (= {env})" if env else " (not set)")]
    places.append(str(Path.cwd().parent / "shared" / "data" / relative))
    places.append(f"shared/data/{relative} beside the ancestors of {Path(__file__).resolve()}")
    places.append(str(user_cache_root() / relative))
    return "; ".join(places)


def _fetch_hint(relative: str) -> str:
    """How ``frontierbo data fetch`` can (or cannot) provide the file ``relative``."""
    dataset = dataset_of(relative)
    if dataset is None:
        return ""
    if dataset.fetchable:
        return (
            f"run `{FETCH_COMMAND} {dataset.name}` (downloads it into {default_fetch_root()} "
            "and checks its sha256), "
        )
    return (
        f"`{FETCH_COMMAND} {dataset.name}` cannot download it ({dataset.not_fetchable}); if you "
        "have a copy, "
    )


def resolve_data_path(relative: str, path: str | os.PathLike | None = None) -> Path:
    """Return the path of a data file.

    Args:
        relative: path below the data root, e.g. ``"ura/ura_private_projects.csv"``.
        path: an explicit file path; when given it is used as is.

    Raises:
        FileNotFoundError: the file is in none of the searched places; the message lists them and
            says how to fix it (``frontierbo data fetch NAME``, or why that dataset cannot be
            fetched; pass a path, or set FRONTIERBO_DATA to the data root).
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
        f"Fix: {_fetch_hint(relative)}pass path='/path/to/{Path(relative).name}', or set the "
        f"environment variable {DATA_ENV} to the folder that contains {relative!r}."
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


# --------------------------------------------------------------------------- a run's inputs


@dataclass(frozen=True)
class Input:
    """Data files that one part of a reproduction reads, checked before it starts.

    Attributes:
        used_for: what reads them, as messages name it (e.g. ``"temperature (E3)"``).
        files: their paths below the data root.
        substitute: the documented stand-in that runs when one of them is not found (e.g.
            ``"a seeded substitute road graph (docs/decisions.md#...)"``); None: the files
            are required.
    """

    used_for: str
    files: tuple[str, ...]
    substitute: str | None = None

    def __post_init__(self):
        if isinstance(self.files, str) or not self.files:
            raise ValueError(f"Input {self.used_for!r}: files must be a non-empty tuple of paths")
        object.__setattr__(self, "files", tuple(self.files))


def check_inputs(inputs) -> list[str]:
    """Find every file of ``inputs`` (:class:`Input`) and check its sha256, before a run starts.

    Files are looked up as :func:`resolve_data_path` does (the first data root holding one is
    the one the loaders read), and the registered ones are checked against the registry's
    sha256, so a run never fails on its data hours in.

    Returns:
        One line per input whose substitute will run (a file not found), saying what stands in
        for which dataset and how to get the real one.

    Raises:
        FileNotFoundError: a required file is not found. One line: what needs it, the dataset,
            the places searched and how to get it (``frontierbo data fetch NAME`` or
            ``$FRONTIERBO_DATA``).
        ValueError: a registered file's sha256 differs from the registry's (one line: the
            file, the dataset and how to replace it).
    """
    notes = []
    for item in inputs:
        found = {relative: _find(relative) for relative in item.files}
        missing = [relative for relative, path in found.items() if path is None]
        if missing and item.substitute is None:
            raise FileNotFoundError(_missing_message(item.used_for, missing))
        if missing:
            notes.append(
                f"{item.used_for}: {_what(missing)} was not found under a data root, so "
                f"{item.substitute} stands in for it ({_how_to_get(missing)})"
            )
            continue
        for relative, path in found.items():
            expected = _registered_sha256(relative)
            if expected is None:
                continue  # not a registered file (e.g. the user's own LendingClub CSV)
            actual = file_sha256(path)
            if actual != expected:
                raise ValueError(
                    f"{item.used_for}: {str(path)!r} ({_what([relative])}) has sha256 "
                    f"{actual[:12]}..., not the registered {expected[:12]}...: it is corrupt or "
                    f"another version; {_how_to_replace(relative)}"
                )
    return notes


def searched_places() -> str:
    """The data roots searched, in order, in one phrase for messages (the folders beside the
    package's ancestors as one entry)."""
    groups: dict[str, list[Path]] = {}
    for what, root in searched_roots():
        groups.setdefault(what, []).append(root)
    parts = [] if os.environ.get(DATA_ENV) else [f"${DATA_ENV} (not set)"]
    for what, roots in groups.items():
        where = str(roots[0]) if len(roots) == 1 else f"{roots[0]} ... {roots[-1]}"
        parts.append(f"{what} ({where})")
    return "; ".join(parts)


def _find(relative: str) -> Path | None:
    """Where :func:`resolve_data_path` finds ``relative`` under the data roots, or None."""
    for root in candidate_roots():
        if (root / relative).is_file():
            return root / relative
    return None


def _registered_sha256(relative: str) -> str | None:
    dataset = dataset_of(relative)
    if dataset is None:
        return None
    return next(f.sha256 for f in dataset.files if f.path == relative)


def _datasets_of(relatives) -> list[Dataset | None]:
    """The registry datasets holding ``relatives``, in order, once each (None: unregistered)."""
    return list(dict.fromkeys(dataset_of(relative) for relative in relatives))


def _what(relatives) -> str:
    """``dataset 'NAME'`` (``file 'PATH'`` where unregistered) for ``relatives``, once each."""
    names: list[str] = []
    for relative in relatives:
        dataset = dataset_of(relative)
        name = f"dataset {dataset.name!r}" if dataset is not None else f"file {relative!r}"
        if name not in names:
            names.append(name)
    return " and ".join(names)


def _not_found(missing) -> str:
    shown = ", ".join(missing[:2]) + (f" and {len(missing) - 2} more" if len(missing) > 2 else "")
    return f"{shown} not found"


def _how_to_get(missing) -> str:
    """How to provide the files ``missing``: the fetch command(s), else why there is none; and
    the data-root variable."""
    commands, reasons = [], []
    for dataset in _datasets_of(missing):
        if dataset is not None and dataset.fetchable:
            commands.append(f"`{FETCH_COMMAND} {dataset.name}`")
        elif dataset is not None:
            reasons.append(f"`{FETCH_COMMAND} {dataset.name}` cannot download it: "
                           f"{dataset.not_fetchable.split('. ')[0]}")  # fmt: skip
        else:
            reasons.append(f"`{FETCH_COMMAND}` has no dataset for it")
    root = f"set {DATA_ENV} to a data root holding {missing[0]}"
    if commands:
        return f"get it with {' and '.join(commands)} or {root}"
    return f"{'; '.join(reasons)}; if you have a copy, {root}"


def _missing_message(used_for: str, missing) -> str:
    registered = any(dataset_of(relative) is not None for relative in missing)
    which = f": {_not_found(missing)}" if registered else ", not found"
    return (
        f"{used_for} needs {_what(missing)}{which}; searched {searched_places()}. "
        f"Fix: {_how_to_get(missing)}"
    )


def _how_to_replace(relative: str) -> str:
    dataset = dataset_of(relative)
    if dataset is not None and dataset.fetchable:
        return f"replace it with `{FETCH_COMMAND} {dataset.name} --force`"
    return f"restore the original file, or set {DATA_ENV} to a data root holding it"


# --------------------------------------------------------------------------- verify and fetch


@dataclass(frozen=True)
class FileCheck:
    """The state of one registered file: ``"ok"``, ``"mismatch"`` or ``"absent"``."""

    dataset: str
    path: str
    status: str
    found: Path | None = None
    sha256: str | None = None


def verify(names=None, root: str | os.PathLike | None = None) -> list[FileCheck]:
    """Check the sha256 of the registered files that are present.

    Args:
        names: dataset names (default: all of the registry).
        root: check only this data root; default: each file where :func:`resolve_data_path`
            finds it.

    Returns:
        One :class:`FileCheck` per registered file, absent ones included.
    """
    datasets = [get_dataset(n) for n in names] if names else list(registry().values())
    checks = []
    for dataset in datasets:
        for entry in dataset.files:
            if root is not None:
                found = Path(root).expanduser() / entry.path
                found = found if found.is_file() else None
            else:
                try:
                    found = resolve_data_path(entry.path)
                except FileNotFoundError:
                    found = None
            if found is None:
                checks.append(FileCheck(dataset.name, entry.path, "absent"))
                continue
            digest = file_sha256(found)
            status = "ok" if digest == entry.sha256 else "mismatch"
            checks.append(FileCheck(dataset.name, entry.path, status, found, digest))
    return checks


class DataFetchError(RuntimeError):
    """A dataset could not be fetched (no public URL, a download error or a sha256 mismatch)."""


def fetch(
    name: str,
    *,
    root: str | os.PathLike | None = None,
    url: str | None = None,
    force: bool = False,
    timeout: float = 60.0,
) -> list[Path]:
    """Download the files of dataset ``name`` into a data root and check their sha256.

    Each file is written to a temporary file beside the root, checked against the registry's
    sha256 and only then moved into place with :func:`os.replace`, so a failed or corrupt
    download leaves nothing behind. Files already present with the right sha256 are kept.

    Args:
        name: a dataset of the registry (``frontierbo data list``).
        root: the data root to write into; default :func:`default_fetch_root`
            (``$FRONTIERBO_DATA``, else the user cache, both searched by the loaders).
        url: a base URL to download from instead of the registry's: file ``p`` (its path below
            the data root) is read from ``<url>/<p>``, i.e. a mirror of a data root. This also
            fetches a dataset without a public URL from your own mirror.
        force: download again files already present with the right sha256.
        timeout: seconds per connection attempt.

    Returns:
        The paths of the dataset's files under ``root``.

    Raises:
        ValueError: unknown dataset.
        DataFetchError: the dataset has no public URL (and no ``url`` was given), a download
            failed (HTTP error, unreachable host) or a file's sha256 differs from the registry's.
    """
    dataset = get_dataset(name)
    if url is None and not dataset.fetchable:
        raise DataFetchError(
            f"dataset {name!r} cannot be fetched: {dataset.not_fetchable}. Licence: "
            f"{dataset.licence}. If you have a copy, put it under a data root "
            f"(frontierbo data where) or pass --url BASE of a mirror of a data root."
        )
    target_root = Path(root).expanduser() if root is not None else default_fetch_root()
    target_root.mkdir(parents=True, exist_ok=True)
    written = []
    for entry in dataset.files:
        target = target_root / entry.path
        if not force and target.is_file() and file_sha256(target) == entry.sha256:
            written.append(target)
            continue
        source = f"{url.rstrip('/')}/{entry.path}" if url is not None else entry.url
        _download(source, target, entry, target_root, timeout, name)
        written.append(target)
    return written


def _download(
    source: str, target: Path, entry: DataFile, root: Path, timeout: float, name: str
) -> None:
    """``source`` -> ``target`` through a temporary file in ``root``, checked, then renamed."""
    from frontierbo import __version__

    request = urllib.request.Request(source, headers={"User-Agent": f"frontierbo/{__version__}"})
    handle, temporary = tempfile.mkstemp(prefix=".fetch-", suffix=".part", dir=root)
    try:
        digest = hashlib.sha256()
        try:
            with (
                os.fdopen(handle, "wb") as out,
                urllib.request.urlopen(request, timeout=timeout) as r,
            ):
                for block in iter(lambda: r.read(1 << 20), b""):
                    digest.update(block)
                    out.write(block)
        except urllib.error.HTTPError as exc:
            raise DataFetchError(
                f"fetching {name!r}: {source} answered HTTP {exc.code} {exc.reason}; nothing was "
                f"written for {entry.path!r}"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise DataFetchError(
                f"fetching {name!r}: could not download {source} ({reason}); nothing was written "
                f"for {entry.path!r}"
            ) from None
        actual = digest.hexdigest()
        if actual != entry.sha256:
            raise DataFetchError(
                f"fetching {name!r}: sha256 mismatch for {source}: expected {entry.sha256}, got "
                f"{actual}; the download was discarded and nothing was written for {entry.path!r}"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
