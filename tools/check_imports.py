"""Check frontierbo's import graph: every import points down the layers, and there is no cycle.

Layers, lowest first (a module may import its own layer and the layers below it):

    0  _validation, _threads, flags  boundary checks; one meaning per command-line flag
    1  io, data                      CSV / JSON / atomic writes; data-root resolution and checksums
    2  core                          kernels, GP, fitting, acquisition, the loop
    3  dp                            samplers, accounting, audit statistics
    4  experiments                   store, runner (local / Dask), report tail
       study                         persistent ask / tell studies, their storage and samplers
       dashboard                     the live page over a snapshot; the study dashboard
       systems                       what a system declares; its commands, run path and checks
    5  po, ldp, quantum, ...         one package per system; a system never imports another system
       integration                   bridges to other libraries (Optuna's sampler)
    6  registry, cli, data_cli       the list of systems, the thin dispatcher, `frontierbo data`

Every ``import`` and ``from ... import`` is read with ``ast`` (including the ones inside
functions, which run lazily but are edges all the same). Run ``python tools/check_imports.py`` to
print the graph's violations (exit 1 if any) or ``--graph`` to print every package-level edge.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

PACKAGE = "frontierbo"
SRC = Path(__file__).resolve().parents[1] / "src" / PACKAGE

#: Top-level module or package -> layer.
SHARED_LAYERS = {
    "_validation": 0,
    "_threads": 0,
    "flags": 0,
    "io": 1,
    "data": 1,
    "core": 2,
    "dp": 3,
    "experiments": 4,
    "study": 4,
    "dashboard": 4,
    "systems": 4,
    "integration": 5,
    "registry": 6,
    "cli": 6,
    "data_cli": 6,
    "__init__": 6,
    "__main__": 6,
}
SYSTEM_LAYER = 5


def top_level_units(src: Path = SRC) -> dict[str, int]:
    """Every top-level module / package of the source tree with its layer (systems: layer 5)."""
    units = {}
    for path in sorted(src.iterdir()):
        name = path.stem if path.suffix == ".py" else path.name
        if path.suffix != ".py" and not (path / "__init__.py").is_file():
            continue
        units[name] = SHARED_LAYERS.get(name, SYSTEM_LAYER)
    return units


def _module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([PACKAGE, *parts])


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """Absolute names a node imports (relative imports resolved against ``module``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".")
            base = base if is_package else base[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        # ``from frontierbo import io`` imports the submodule io
        if prefix == PACKAGE:
            return [f"{PACKAGE}.{alias.name}" for alias in node.names]
        return [prefix]
    return []


def module_edges(src: Path = SRC) -> list[tuple[str, str, str]]:
    """(importing module, imported frontierbo module, file:line) for every internal import."""
    edges = []
    for path in sorted(src.rglob("*.py")):
        module = _module_name(path, src)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for name in _imported(node, module, path.name == "__init__.py"):
                if name == PACKAGE or name.startswith(PACKAGE + "."):
                    edges.append((module, name, f"{path.relative_to(src.parent)}:{node.lineno}"))
    return edges


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def violations(src: Path = SRC) -> list[str]:
    """Upward imports, imports between two systems, and cycles between top-level units."""
    units = top_level_units(src)
    problems = []
    graph: dict[str, set[str]] = {unit: set() for unit in units}
    for importer, imported, where in module_edges(src):
        a, b = _unit(importer), _unit(imported)
        if a == b or b not in units:
            continue
        graph[a].add(b)
        la, lb = units[a], units[b]
        if lb > la:
            problems.append(f"{where}: upward import {importer} -> {imported} (layer {la} -> {lb})")
        elif la == lb == SYSTEM_LAYER:
            problems.append(f"{where}: system {a} imports system {b} ({importer} -> {imported})")
    cycle = find_cycle(graph)
    if cycle:
        problems.append("import cycle between packages: " + " -> ".join(cycle))
    return problems


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a closed path, or None (iterative DFS with colours)."""
    colour = dict.fromkeys(graph, 0)  # 0 new, 1 on the stack, 2 done
    for root in graph:
        if colour[root]:
            continue
        stack = [(root, iter(sorted(graph[root])))]
        path = [root]
        colour[root] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                colour[node] = 2
                stack.pop()
                path.pop()
            elif colour.get(child) == 1:
                return path[path.index(child) :] + [child]
            elif colour.get(child) == 0:
                colour[child] = 1
                stack.append((child, iter(sorted(graph[child]))))
                path.append(child)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", action="store_true", help="print the package-level edges")
    args = parser.parse_args(argv)
    if args.graph:
        units = top_level_units()
        pairs = {(_unit(a), _unit(b)) for a, b, _ in module_edges()}
        for a, b in sorted(p for p in pairs if p[0] != p[1] and p[1] in units):
            print(f"{a} (layer {units[a]}) -> {b} (layer {units[b]})")
    problems = violations()
    for line in problems:
        print(line)
    if not args.graph:
        print(f"{len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
