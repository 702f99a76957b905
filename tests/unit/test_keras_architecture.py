"""src/unison/keras/ imports in one direction: no import cycle, no edge from a lower tier to a higher one.

The graph is read from the code's own ``import`` statements (module level and inside functions;
``if TYPE_CHECKING:`` blocks are not imports at run time and are left out). A node is a file:
``from unison.keras.layers.base import Layer`` is an edge to ``layers/base.py``, ``from
unison.keras import losses`` (or ``from unison.keras.losses import get``) an edge to the package's
face, ``losses/__init__.py``.

A folder (or a single-module room such as ``random.py``) is one tier, and no two folders import
each other (nor go round a longer circle): the folder graph is the file graph with each module
replaced by its folder. The package faces that only re-export (``keras/__init__.py``,
``utils/__init__.py``, ``preprocessing/__init__.py``) sit on top and belong to no folder.

The tiers, lowest first (a module may import its own tier and those below, never above):

1. ``foundation``: ``ops/`` (with the settings the ops read, ``ops/_config.py``), ``backend/``
   (with ``keras_tensor``), ``random``, ``activations``, ``initializers``, ``regularizers``,
   ``constraints``, ``distribution``, ``dtype_policies`` (layers compute under a policy),
   ``utils/`` (with Keras's variable lists and ``Model.summary``'s table), ``datasets/``,
   ``preprocessing/`` (re-exports of ``utils/``), ``saving/`` (layers save their inner layers; the
   classes a config names, optimizers too, are registered by their packages, never imported),
   ``export/`` (serving formats; the model is the argument, never imported);
2. ``layers``: ``layers/`` (``FeatureSpace`` too: it is a layer);
3. ``components``: ``losses/``, ``metrics/``, ``optimizers/``, ``mixed_precision/`` (loss scaling),
   (``experimental``, Keras 2's schedules and premade models, is a face);
4. ``callbacks``: ``callbacks/`` (they read ``self.model``'s attributes, never the trainer);
5. ``trainers``: ``trainers/`` (the loop, the steps, the state; the model is the argument);
6. ``models``: ``models/`` (``Model`` inherits the trainer mixin and calls the loop), ``distillation/``
   (``Distiller`` is a ``Model``);
7. ``faces``: ``applications/`` and the package faces that gather everything.

Run as a script (``python tests/unit/test_keras_architecture.py [SRC_DIR]``) it prints the graph,
its cycles, its upward edges and the folder graph.
"""

from __future__ import annotations

import ast
import pathlib
import sys

SRC = pathlib.Path(__file__).resolve().parents[2] / "src"
PACKAGE = "unison.keras"

TIERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "foundation",
        (
            "ops",
            "backend",
            "random",
            "tree",
            "activations",
            "initializers",
            "regularizers",
            "constraints",
            "distribution",
            "dtype_policies",
            "utils",
            "datasets",
            "preprocessing",
            "saving",
            "legacy",
            "export",
            "config",
            "quantizers",
            "visualization",
        ),
    ),
    ("layers", ("layers",)),
    ("components", ("losses", "metrics", "optimizers", "mixed_precision")),
    ("callbacks", ("callbacks",)),
    ("trainers", ("trainers",)),
    ("models", ("models", "distillation")),
    ("faces", ("applications",)),
]
# Package faces that re-export what lies above their own modules: they sit on top.
FACES = ("", "utils", "preprocessing", "experimental")


def tier_of(module: str) -> int | None:
    """The tier index of ``unison.keras.<...>`` (``None`` for a module no tier names)."""
    rel = module.removeprefix(PACKAGE).removeprefix(".")
    if rel in FACES:
        return len(TIERS) - 1
    best: tuple[int, int] | None = None  # (prefix length, tier)
    for index, (_, prefixes) in enumerate(TIERS):
        for prefix in prefixes:
            if (rel == prefix or rel.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_graph(src: pathlib.Path = SRC) -> dict[str, set[str]]:
    """``{module: modules of unison.keras it imports}`` for every file under ``src/unison/keras``."""
    root = src / "unison" / "keras"
    files: dict[str, pathlib.Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path

    def resolve(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        edges: set[str] = set()

        def visit(node: ast.AST, package: str = package, edges: set[str] = edges) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and _is_type_checking(child):
                    for other in child.orelse:
                        visit(other)
                    continue
                if isinstance(child, ast.Import):
                    for alias in child.names:
                        found = resolve(alias.name)
                        if found:
                            edges.add(found)
                elif isinstance(child, ast.ImportFrom):
                    base = child.module or ""
                    if child.level:
                        parts = package.split(".")
                        parts = parts[: len(parts) - (child.level - 1)]
                        base = ".".join(parts + ([base] if base else []))
                    for alias in child.names:
                        full = f"{base}.{alias.name}"
                        found = full if full in files else resolve(base)
                        if found:
                            edges.add(found)
                visit(child)

        visit(ast.parse(path.read_text(), filename=str(path)))
        edges.discard(module)
        edges.discard(PACKAGE)  # the root face: every module's parent package, imported first anyway
        graph[module] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
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

    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                connect(v)
    finally:
        sys.setrecursionlimit(old_limit)
    return sorted(found)


def upward_edges(graph: dict[str, set[str]]) -> list[str]:
    """``"a (tier) -> b (tier)"`` for every import from a lower tier into a higher one."""
    bad = []
    for module, targets in sorted(graph.items()):
        mine = tier_of(module)
        for target in sorted(targets):
            theirs = tier_of(target)
            if mine is not None and theirs is not None and theirs > mine:
                bad.append(f"{_short(module)} ({TIERS[mine][0]}) -> {_short(target)} ({TIERS[theirs][0]})")
    return bad


def folder_of(module: str) -> str | None:
    """The folder (or single-module room) of ``unison.keras.<...>``; ``None`` for a package face."""
    rel = module.removeprefix(PACKAGE).removeprefix(".")
    return None if rel in FACES else rel.split(".")[0]


def folder_tiers(graph: dict[str, set[str]]) -> dict[str, set[int]]:
    """``{folder: the tiers its modules are in}`` (one tier each when the layout holds)."""
    found: dict[str, set[int]] = {}
    for module in graph:
        folder, tier = folder_of(module), tier_of(module)
        if folder is not None and tier is not None:
            found.setdefault(folder, set()).add(tier)
    return found


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between folders: an edge where a module of one imports a module of another."""
    folders: dict[str, set[str]] = {}
    for module, targets in graph.items():
        mine = folder_of(module)
        if mine is None:
            continue
        edges = folders.setdefault(mine, set())
        for target in targets:
            theirs = folder_of(target)
            if theirs is not None and theirs != mine:
                edges.add(theirs)
    return folders


def folder_edge_sources(graph: dict[str, set[str]], a: str, b: str) -> list[str]:
    """The module edges behind the folder edge ``a -> b`` (to name them in a failure)."""
    return sorted(
        f"{_short(m)} -> {_short(t)}"
        for m, targets in graph.items()
        if folder_of(m) == a
        for t in targets
        if folder_of(t) == b
    )


def _short(module: str) -> str:
    return module.removeprefix("unison.") or module


def test_every_keras_module_belongs_to_a_tier():
    unknown = sorted(_short(m) for m in import_graph() if tier_of(m) is None)
    assert not unknown, f"add these modules to a tier in tests/unit/test_keras_architecture.py: {unknown}"


def test_keras_has_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles inside src/unison/keras: " + "; ".join(
        " <-> ".join(_short(m) for m in c) for c in found
    )


def test_keras_imports_no_higher_tier():
    bad = upward_edges(import_graph())
    assert not bad, "imports that run up the tiers of src/unison/keras: " + "; ".join(bad)


def test_every_keras_folder_is_one_tier():
    graph = import_graph()
    split = {
        folder: sorted(TIERS[tier][0] for tier in tiers)
        for folder, tiers in folder_tiers(graph).items()
        if len(tiers) > 1
    }
    assert not split, f"folders of src/unison/keras that span several tiers (move modules out): {split}"


def test_no_two_keras_folders_import_each_other():
    graph = import_graph()
    found = cycles(folder_graph(graph))
    detail = []
    for component in found:
        edges = [edge for a in component for b in component if a != b for edge in folder_edge_sources(graph, a, b)]
        detail.append(" <-> ".join(component) + " (" + "; ".join(edges) + ")")
    assert not found, "folders of src/unison/keras that import each other: " + " | ".join(detail)


def test_the_folder_checks_see_a_split_folder_and_a_folder_cycle():
    graph = {
        "unison.keras.utils.a": {"unison.keras.datasets.b"},
        "unison.keras.datasets.b": set(),
        "unison.keras.datasets.c": {"unison.keras.utils.d"},
        "unison.keras.utils.d": set(),
        "unison.keras.utils": {"unison.keras.layers.e"},  # a face: belongs to no folder
        "unison.keras.layers.e": set(),
    }
    assert cycles(folder_graph(graph)) == [["datasets", "utils"]]
    assert folder_edge_sources(graph, "utils", "datasets") == ["keras.utils.a -> keras.datasets.b"]
    split = {"unison.keras.saving.x": set(), "unison.keras.saving.y": set(), "unison.keras.losses.z": set()}
    assert folder_tiers(split) == {"saving": {0}, "losses": {2}}
    assert tier_of("unison.keras.mixed_precision.loss_scale") == 2 and tier_of("unison.keras.dtype_policies") == 0


def test_the_checks_see_a_cycle_and_an_upward_edge():
    graph = {
        "unison.keras.layers.a": {"unison.keras.models.m"},
        "unison.keras.models.m": {"unison.keras.layers.a"},
    }
    assert cycles(graph) == [["unison.keras.layers.a", "unison.keras.models.m"]]
    assert upward_edges(graph) == ["keras.layers.a (layers) -> keras.models.m (models)"]


def test_the_graph_sees_imports_inside_functions_but_not_type_checking_blocks():
    graph = import_graph()
    # keras/trainers/loop.py imports coordinated_steps only inside a function (grpc loads lazily)
    assert "unison.keras.trainers.coordinated_steps" in graph["unison.keras.trainers.loop"]
    # keras/optimizers/apply.py names Optimizer under `if TYPE_CHECKING:` only
    assert "unison.keras.optimizers" not in graph["unison.keras.optimizers.apply"]


def main(argv: list[str]) -> int:
    src = pathlib.Path(argv[1]) if len(argv) > 1 else SRC
    graph = import_graph(src)
    print(f"import graph of {src / 'unison' / 'keras'}: {len(graph)} modules, {sum(map(len, graph.values()))} edges")
    for module in sorted(graph, key=lambda m: (tier_of(m) if tier_of(m) is not None else -1, m)):
        tier = tier_of(module)
        name = TIERS[tier][0] if tier is not None else "?"
        targets = ", ".join(_short(t) for t in sorted(graph[module]))
        print(f"[{name}] {_short(module)} -> {targets}")
    found = cycles(graph)
    print(f"cycles: {len(found)}")
    for component in found:
        print(f"  {len(component)} modules: " + ", ".join(_short(m) for m in component))
    bad = upward_edges(graph)
    print(f"upward edges: {len(bad)}")
    for edge in bad:
        print(f"  {edge}")
    folders = folder_graph(graph)
    print("folder graph:")
    for folder in sorted(folders):
        tiers = ", ".join(TIERS[t][0] for t in sorted(folder_tiers(graph).get(folder, set())))
        print(f"[{tiers}] {folder} -> {', '.join(sorted(folders[folder]))}")
    print(f"folder cycles: {cycles(folders)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
