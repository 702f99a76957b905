"""The import graph between unison's packages: arrows point one way, and `import unison` stays light.

Run as a script to print which package imports which:
``python tests/unit/test_import_layers.py``.
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys
from collections import defaultdict

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "unison"

# The layers, top to bottom: a package may import only packages below it (or itself).
# `data` sits below `distribute` and `keras` and imports neither.
LAYERS = ["cli", "bench", "keras", "distribute", "data", "optim", "launch", "comm", "cluster"]
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


def test_import_unison_loads_no_parameter_server_stack():
    code = "import unison, sys; print(sorted(m for m in ('grpc', 'cloudpickle') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


if __name__ == "__main__":
    for pkg, targets in sorted(import_graph().items()):
        print(f"{pkg:12s} -> {', '.join(sorted(targets))}")
