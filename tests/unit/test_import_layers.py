"""The import graph of src/unison: no import circle, arrows point down the rooms, `import unison` stays light.

The graph is computed from the code's own ``import`` statements, file by file (module-level and
function-level imports; not those under ``if TYPE_CHECKING:``, which never run). A failure names
the edge (file and line) or the files of the circle.

Run as a script to print the graph as the before/after of a refactor:
``python tests/unit/test_import_layers.py`` (``--modules``: and the file-level edges behind each
room-level one).
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys
from collections import defaultdict

import pytest

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "unison"

# --- the file-level graph: every module of src/unison, from its own import statements ------------------
#
# Nodes are modules (``unison.core.tape``; a package is its ``__init__``: ``unison.data``). Every
# module inside ``unison/keras/`` counts as the one node ``unison.keras`` here: the files inside keras
# have their own test (the keras layers test). An edge is an ``import`` that runs:
# at module level ("top") or inside a function ("lazy"); imports under ``if TYPE_CHECKING:`` never
# run and make no edge. ``from P import name`` points at the module ``P.name`` when there is one,
# else at ``P``; the parent packages Python loads on the way are not edges (they are the package's
# own ``__init__``, which each room keeps light or lists as its face).

COLLAPSED = "unison.keras"

# The rooms of src/unison, top to bottom (docs/architecture.md, "Layers"): a room imports only rooms
# of a lower tier. Rooms of one tier are siblings and import each other neither.
TIERS: list[tuple[str, ...]] = [
    ("cli", "bench", "testing", "_api_table"),  # programs over the public face (`import unison`)
    ("__init__",),  # unison/__init__.py: the public face, `import unison as tf` / `as hvd`
    ("_faces", "horovod"),  # TF / Horovod names composed from the rooms below
    ("keras",),
    ("saved_model",),
    ("distribute",),
    ("train",),
    ("data",),
    ("optim",),
    ("launch",),
    ("comm",),
    ("debug",),
    ("cluster",),
    ("core",),
    ("ops",),
]
# Leaves every room may use: they import no other part of unison.
ANYWHERE_MODULES = {"unison.errors", "unison.core.atomic_io", "unison.core.interactive", "unison.version"}


def module_files() -> dict[str, pathlib.Path]:
    """{dotted module name: its file} for every module under src/unison."""
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _node(module: str) -> str:
    return COLLAPSED if module == COLLAPSED or module.startswith(COLLAPSED + ".") else module


def room_of(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def _targets(node: ast.Import | ast.ImportFrom, here: str, is_package: bool, modules: set[str]) -> list[str]:
    """The unison modules one import statement loads (absolute or relative)."""

    def existing(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    if isinstance(node, ast.Import):
        found = [existing(a.name) for a in node.names if a.name.split(".")[0] == "unison"]
        return [m for m in found if m]
    base = node.module or ""
    if node.level:
        package = here if is_package else here.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}" if base else package
    if base.split(".")[0] != "unison":
        return []
    out = []
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        target = sub if sub in modules else existing(base)
        if target:
            out.append(target)
    return out


def _import_statements(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement that can run, with "top" (runs on import) or "lazy" (inside a function)."""
    found: list[tuple[ast.Import | ast.ImportFrom, str]] = []

    def visit(node: ast.AST, kind: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for grandchild in child.orelse:
                    visit(ast.Module(body=[grandchild], type_ignores=[]), kind)
                continue  # typing-only imports never run
            child_kind = "lazy" if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else kind
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((child, child_kind))
            visit(child, child_kind)

    visit(tree, "top")
    return found


def file_edges() -> dict[str, dict[str, tuple[str, str]]]:
    """{module: {module it imports: (where "path:line", "top" | "lazy")}}, keras as one node.

    A target imported both ways counts as "top"; the first such line is named.
    """
    files = module_files()
    modules = set(files)
    edges: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
    for module, path in files.items():
        source = _node(module)
        rel = path.relative_to(SRC.parents[1]).as_posix()
        for statement, kind in _import_statements(ast.parse(path.read_text())):
            for target in _targets(statement, module, path.name == "__init__.py", modules):
                target = _node(target)
                if target == source:
                    continue
                old = edges[source].get(target)
                if old is None or (old[1] == "lazy" and kind == "top"):
                    edges[source][target] = (f"{rel}:{statement.lineno}", kind)
    return edges


def import_cycles(edges: dict[str, dict[str, tuple[str, str]]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def strongconnect(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(set(edges) | {w for targets in edges.values() for w in targets}):
        if v not in index:
            strongconnect(v)
    return sorted(found)


def _tier(room: str) -> int | None:
    for i, rooms in enumerate(TIERS):
        if room in rooms:
            return i
    return None


def upward_edges(edges: dict[str, dict[str, tuple[str, str]]]) -> list[str]:
    """Imports from a room to a room of the same or a higher tier (siblings included)."""
    bad = []
    for source, targets in sorted(edges.items()):
        for target, (where, kind) in sorted(targets.items()):
            if target in ANYWHERE_MODULES:
                continue
            src_room, dst_room = room_of(source), room_of(target)
            if src_room == dst_room:
                continue
            src_tier, dst_tier = _tier(src_room), _tier(dst_room)
            if src_tier is None or dst_tier is None or dst_tier > src_tier:
                continue
            bad.append(f"{source} -> {target} ({where}, {kind}): {src_room} may not import {dst_room}")
    return bad


def unplaced_rooms() -> list[str]:
    """Rooms of src/unison that the tiers do not place (a new package must be given its tier)."""
    leaves = {room_of(m) for m in ANYWHERE_MODULES if m.count(".") == 1}
    rooms = {room_of(m) for m in module_files()} - leaves
    return sorted(r for r in rooms if _tier(r) is None)


def test_no_import_cycle_outside_keras():
    edges = file_edges()
    cycles = import_cycles(edges)
    described = []
    for component in cycles:
        inside = set(component)
        lines = [
            f"    {a} -> {b} ({where}, {kind})"
            for a in component
            for b, (where, kind) in sorted(edges.get(a, {}).items())
            if b in inside
        ]
        described.append(f"  {len(component)} modules: {', '.join(component)}\n" + "\n".join(lines))
    assert not cycles, "import circles (every module imports the next, keras counted as one node):\n" + "\n".join(
        described
    )


def test_imports_point_down_the_layers():
    bad = upward_edges(file_edges())
    order = " > ".join("/".join(rooms) for rooms in TIERS)
    assert not bad, f"imports that do not point down the rooms {order}:\n" + "\n".join(bad)


def test_every_room_has_a_place_in_the_layers():
    assert not unplaced_rooms(), (
        f"rooms of src/unison that TIERS in {pathlib.Path(__file__).name} does not place: {unplaced_rooms()}. "
        "Give each its tier (what it may import) and a line in docs/architecture.md."
    )


def test_nothing_below_keras_imports_keras():
    keras_tier = _tier("keras")
    assert keras_tier is not None
    below = [
        f"{source} -> {COLLAPSED} ({where}, {kind})"
        for source, targets in sorted(file_edges().items())
        for target, (where, kind) in targets.items()
        if target == COLLAPSED and (_tier(room_of(source)) or 0) > keras_tier
    ]
    assert not below, "modules below keras that import it:\n" + "\n".join(below)


def test_the_graph_sees_lazy_and_relative_imports_but_not_typing_ones():
    code = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from unison.keras import Model\n"
        "def f():\n    from unison.errors import NotFoundError\n"
        "from . import atomic_io\n"
        "import unison.core.tape\n"
    )
    modules = {"unison", "unison.core", "unison.core.atomic_io", "unison.core.tape", "unison.errors", "unison.keras"}
    found = [
        (target, kind)
        for statement, kind in _import_statements(ast.parse(code))
        for target in _targets(statement, "unison.core.function", False, modules)
    ]
    assert found == [("unison.errors", "lazy"), ("unison.core.atomic_io", "top"), ("unison.core.tape", "top")]


@pytest.mark.slow
def test_import_unison_loads_no_parameter_server_stack():
    code = "import unison, sys; print(sorted(m for m in ('grpc', 'cloudpickle') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def report(modules_too: bool = False) -> str:
    """The graph as plain text: which room imports which (how many modules, top or lazy), the
    circles and the imports that point up (``modules_too``: every file-level edge as well)."""
    edges = file_edges()
    files = module_files()
    rooms: dict[str, dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    for source, targets in edges.items():
        for target, (_where, kind) in targets.items():
            a, b = room_of(source), room_of(target)
            if a != b:
                seen = rooms[a][b]
                seen[source] = "top" if "top" in (kind, seen.get(source)) else kind
    every = sorted({room_of(m) for m in files})

    def order(room: str) -> tuple[int, str]:
        tier = _tier(room)
        return (len(TIERS) if tier is None else tier, room)

    counts = {r: sum(1 for m in files if room_of(m) == r) for r in every}
    lines = [
        "unison: which room imports which (file-level graph of src/unison, tests/unit/test_import_layers.py)",
        "tiers, top to bottom: " + " > ".join("/".join(t) for t in TIERS),
        f"usable anywhere: {', '.join(sorted(ANYWHERE_MODULES))}; {COLLAPSED} counts as one node",
        "each import: room(M) = M modules import it when they load; room(M lazy) = only inside functions",
        "",
        f"{'room':<14}{'modules':>8}  imports",
    ]
    for room in sorted(every, key=order):
        cells = []
        for target, modules in sorted(rooms.get(room, {}).items(), key=lambda kv: order(kv[0])):
            lazy = "" if "top" in modules.values() else " lazy"
            cells.append(f"{target}({len(modules)}{lazy})")
        lines.append(f"{room:<14}{counts[room]:>8}  {', '.join(cells) if cells else '-'}")
    cycles = import_cycles(edges)
    lines += ["", f"import circles: {len(cycles) or 'none'}"]
    lines += [f"  {len(c)} modules: {', '.join(c)}" for c in cycles]
    bad = upward_edges(edges)
    lines += ["", f"imports up the tiers: {len(bad) or 'none'}"] + [f"  {b}" for b in bad]
    lines += ["", f"rooms without a tier: {', '.join(unplaced_rooms()) or 'none'}"]
    if modules_too:
        lines += ["", "every edge (module -> module: where, kind)"]
        for source in sorted(edges):
            for target, (where, kind) in sorted(edges[source].items()):
                lines.append(f"{source} -> {target}: {where} {kind}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(report(modules_too="--modules" in sys.argv[1:]))
