"""``frontierbo data list / where / verify / fetch``: the dataset registry on the command line.

The registry (:func:`frontierbo.data.registry`) names every data file the package reads, with
its sha256, licence and source; ``fetch`` downloads the datasets whose exact bytes are public
into the data root (``$FRONTIERBO_DATA``, else the user cache), checking each file's sha256.
"""

from __future__ import annotations

import argparse

from frontierbo.data import (
    DATA_ENV,
    default_fetch_root,
    fetch,
    get_dataset,
    registry,
    searched_roots,
    verify,
)


def add_commands(top: argparse._SubParsersAction) -> None:
    data = top.add_parser(
        "data",
        help="list, locate, verify and fetch the data files (the dataset registry)",
        description="The data files the reproductions read: where they come from, their "
        "licence and sha256; fetch downloads the public ones into the data root.",
    )
    sub = data.add_subparsers(dest="data_command", required=True, metavar="ACTION")
    listing = sub.add_parser("list", help="every dataset: files, licence, fetchable or why not")
    listing.set_defaults(handler=_list)
    where = sub.add_parser("where", help="the data roots searched, in order")
    where.set_defaults(handler=_where)
    check = sub.add_parser("verify", help="check the sha256 of the data files present")
    check.add_argument("names", nargs="*", metavar="NAME", help="datasets (default: all)")
    check.add_argument("--root", help="check this data root only (default: every root searched)")
    check.set_defaults(handler=_verify)
    get = sub.add_parser(
        "fetch",
        help="download datasets into the data root, checking their sha256",
        description="Download each file of the datasets into the data root (default: "
        f"${DATA_ENV} if set, else the user cache), through a temporary file that is checked "
        "against the registry's sha256 before it is moved into place.",
    )
    get.add_argument("names", nargs="+", metavar="NAME", help="datasets (frontierbo data list)")
    get.add_argument("--root", help=f"data root to write into (default: {default_fetch_root()})")
    get.add_argument(
        "--url",
        help="base URL of a mirror of a data root: each file is read from URL/<its path below "
        "the root> instead of the registry's source",
    )
    get.add_argument("--force", action="store_true", help="download files already present too")
    get.set_defaults(handler=_fetch)


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def _list(args) -> str:
    blocks = []
    for d in registry().values():
        state = "fetchable" if d.fetchable else "not fetchable"
        size = _size(sum(f.bytes for f in d.files))
        lines = [
            f"{d.name}: {d.description}",
            f"  files: {', '.join(f.path for f in d.files)} ({size})",
            f"  licence: {d.licence}",
            f"  source: {d.source}",
            f"  used by: {d.used_by}",
            f"  {state}" + ("" if d.fetchable else f": {d.not_fetchable}"),
        ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _where(args) -> str:
    lines = ["Data roots searched, in order (the first holding a file wins):"]
    seen = set()
    for what, path in searched_roots():
        resolved = path.resolve()
        if what.startswith("shared/data beside") and not path.is_dir():
            continue  # one line per ancestor would bury the roots that matter
        if resolved in seen:
            continue
        seen.add(resolved)
        lines.append(f"  {path}  ({what}; {'exists' if path.is_dir() else 'absent'})")
    lines.append(f"fetch writes into: {default_fetch_root()} (--root to choose another)")
    return "\n".join(lines)


def _verify(args) -> str:
    for name in args.names:
        get_dataset(name)  # an unknown name fails before anything is read
    checks = verify(args.names or None, root=args.root)
    width = max(len(c.path) for c in checks)
    lines = [
        f"{c.status:8}  {c.path:{width}}  {c.found if c.found else ''}".rstrip() for c in checks
    ]
    present = [c for c in checks if c.status != "absent"]
    bad = [c for c in checks if c.status == "mismatch"]
    lines.append(f"{len(present)} of {len(checks)} files present, {len(bad)} with a wrong sha256")
    if bad:
        print("\n".join(lines), flush=True)
        raise ValueError(
            "sha256 mismatch: "
            + "; ".join(f"{c.found} (expected {_expected(c)}, got {c.sha256})" for c in bad)
            + "; delete these files and fetch them again (frontierbo data fetch NAME --force)"
        )
    return "\n".join(lines)


def _expected(check) -> str:
    return next(f.sha256 for f in get_dataset(check.dataset).files if f.path == check.path)


def _fetch(args) -> str:
    for name in args.names:
        get_dataset(name)  # every name is checked before anything is downloaded
    lines = []
    for name in args.names:
        paths = fetch(name, root=args.root, url=args.url, force=args.force)
        lines += [f"ok  {path}" for path in paths]
        lines.append(f"{name}: licence: {get_dataset(name).licence}")
    count = sum(len(get_dataset(name).files) for name in args.names)
    lines.append(f"fetched {', '.join(args.names)}: {count} files, sha256 checked")
    return "\n".join(lines)
