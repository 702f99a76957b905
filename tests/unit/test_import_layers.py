"""The import graph between unison's packages: arrows point one way, and `import unison` stays light.

Run as a script to print which package imports which, as a table (the before/after of a
refactor): ``python tests/unit/test_import_layers.py`` (``--modules``: and the modules behind
each edge).
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys
from collections import defaultdict

import pytest

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "unison"

# The layers, top to bottom: a package may import only packages below it (or itself).
# `data` sits below `distribute` and `keras` and imports neither.
LAYERS = ["cli", "bench", "keras", "distribute", "data", "optim", "launch", "comm", "debug", "cluster"]
# Packages/modules every layer may use (leaf helpers with no unison imports of their own).
ANYWHERE = {"errors", "_io", "testing"}


def package_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "unison" or len(parts) < 2:
        return None
    return parts[1].removesuffix(".py")


def import_graph() -> dict[str, set[str]]:
    """{package: {packages it imports}} from every module-level or function-level import."""
    graph: dict[str, set[str]] = defaultdict(set)
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC.parent).with_suffix("")
        source_pkg = package_of(".".join(rel.parts))
        if source_pkg is None or source_pkg == "__init__":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                target = package_of(name)
                if target and target != source_pkg:
                    graph[source_pkg].add(target)
    return graph


def test_imports_point_down_the_layers():
    graph = import_graph()
    upward = []
    for src_pkg, targets in graph.items():
        if src_pkg not in LAYERS:
            continue
        for dst in targets:
            if dst in ANYWHERE or dst not in LAYERS:
                continue
            if LAYERS.index(dst) < LAYERS.index(src_pkg):
                upward.append(f"{src_pkg} -> {dst}")
    assert not upward, f"imports that point up the layers {LAYERS}: {sorted(upward)}"


@pytest.mark.slow
def test_import_unison_loads_no_parameter_server_stack():
    code = "import unison, sys; print(sorted(m for m in ('grpc', 'cloudpickle') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def _imports_with_kind(tree: ast.Module) -> list[tuple[str, str]]:
    """(module imported, kind) of every absolute import: kind "top" (runs on import), "lazy" (inside
    a function: runs when called) or "typing" (under ``if TYPE_CHECKING:``: never runs)."""
    found: list[tuple[str, str]] = []

    def visit(node: ast.AST, kind: str) -> None:
        for child in ast.iter_child_nodes(node):
            child_kind = kind
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and kind == "top":
                child_kind = "lazy"
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for grandchild in child.body:
                    visit(ast.Module(body=[grandchild], type_ignores=[]), "typing")
                for grandchild in child.orelse:
                    visit(ast.Module(body=[grandchild], type_ignores=[]), kind)
                continue
            if isinstance(child, ast.Import):
                found.extend((a.name, child_kind) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                found.append((child.module, child_kind))
            visit(child, child_kind)

    visit(tree, "top")
    return found


def import_table() -> dict[str, dict[str, dict[str, str]]]:
    """{package: {package it imports: {importing module: "top" | "lazy" | "typing"}}}.

    A module that imports a package both ways counts as "top" (the import runs when it loads).
    """
    rank = {"typing": 0, "lazy": 1, "top": 2}
    table: dict[str, dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        module = ".".join(rel.parts)
        source_pkg = package_of(module)  # "__init__": what `import unison` itself imports
        if source_pkg is None:
            continue
        for name, kind in _imports_with_kind(ast.parse(path.read_text())):
            target = package_of(name)
            if not target or target == source_pkg:
                continue
            modules = table[source_pkg][target]
            modules[module] = max(modules.get(module, kind), kind, key=rank.__getitem__)
    return table


def report(modules_too: bool = False) -> str:
    """The import graph as a plain-text table, for before/after notes on the code's structure
    (``modules_too``: then, for each edge, the modules that import)."""
    table = import_table()
    every = {p.stem for p in SRC.glob("*.py")} | {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()}
    packages = sorted(every | set(table), key=lambda p: (LAYERS.index(p) if p in LAYERS else len(LAYERS), p))
    counts = {p: sum(1 for _ in (SRC / p).rglob("*.py")) if (SRC / p).is_dir() else 1 for p in packages}
    lines = [
        "unison: which package imports which (from src/unison, by tests/unit/test_import_layers.py)",
        f"layers, top to bottom: {' > '.join(LAYERS)}; usable anywhere: {', '.join(sorted(ANYWHERE))}",
        "each import: target(M) = M modules of the package import it when they load;",
        "  target(M lazy) = only inside functions; target(M typing) = only under TYPE_CHECKING;",
        "  __init__ = unison/__init__.py, what `import unison` runs; cli also imports by name at run time",
        "",
        f"{'package':<14}{'modules':>8}  imports",
    ]
    upward = []
    for pkg in packages:
        cells = []
        for target, modules in sorted(
            table.get(pkg, {}).items(), key=lambda kv: (LAYERS.index(kv[0]) if kv[0] in LAYERS else len(LAYERS), kv[0])
        ):
            kinds = set(modules.values())
            kind = "" if "top" in kinds else (" lazy" if "lazy" in kinds else " typing")
            cells.append(f"{target}({len(modules)}{kind})")
            if (
                pkg in LAYERS
                and target in LAYERS
                and target not in ANYWHERE
                and LAYERS.index(target) < LAYERS.index(pkg)
            ):
                upward.extend(f"  {m} -> {target} ({k})" for m, k in sorted(modules.items()))
        lines.append(f"{pkg:<14}{counts[pkg]:>8}  {', '.join(cells) if cells else '-'}")
    lines += ["", "imports up the layers: " + ("none" if not upward else f"{len(upward)}")] + upward
    if modules_too:
        lines += ["", "the modules behind each edge (package -> package: module [lazy|typing])"]
        for pkg in packages:
            for target, modules in sorted(table.get(pkg, {}).items()):
                lines.append(
                    f"{pkg} -> {target}: "
                    + ", ".join(m + ("" if k == "top" else f" [{k}]") for m, k in sorted(modules.items()))
                )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(report(modules_too="--modules" in sys.argv[1:]))
