"""src/unison/keras/ imports in one direction: no import cycle, no edge from a lower tier to a higher one.

The graph is read from the code's own ``import`` statements (module level and inside functions;
``if TYPE_CHECKING:`` blocks are not imports at run time and are left out). A node is a file:
``from unison.keras.layers.base import Layer`` is an edge to ``layers/base.py``, ``from
unison.keras import losses`` (or ``from unison.keras.losses import get``) an edge to the package's
face, ``losses/__init__.py``.

The tiers, lowest first (a module may import its own tier and those below, never above):

1. ``foundation``: ``backend/`` (with ``keras_tensor``), ``ops/``, ``random``, ``activations``,
   ``initializers``, ``regularizers``, ``distribution``, ``utils/``, ``datasets/``,
   ``preprocessing/``, ``mixed_precision/policy.py`` (layers compute under a policy),
   ``saving/serialization.py`` and ``saving/weights_file.py`` (layers save their inner layers;
   the classes a config names are registered by their packages, never imported);
2. ``layers``: ``layers/``;
3. ``components``: ``losses/``, ``metrics/``, ``optimizers/``, ``mixed_precision/`` (loss scaling);
4. ``saving``: ``saving/`` (whole-model files: a model passes itself in);
5. ``callbacks``: ``callbacks/`` (they read ``self.model``'s attributes, never the trainer);
6. ``trainers``: ``trainers/`` (the loop, the steps, the state; the model is the argument);
7. ``models``: ``models/`` (``Model`` inherits the trainer mixin and calls the loop);
8. ``faces``: the package faces that gather everything (``keras/__init__.py``,
   ``utils/__init__.py``, ``preprocessing/__init__.py``) and ``utils/image_dataset.py`` (it resizes
   with a layer).

Run as a script (``python tests/unit/test_keras_architecture.py [SRC_DIR]``) it prints the graph,
its cycles and its upward edges.
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
            "backend",
            "ops",
            "random",
            "activations",
            "initializers",
            "regularizers",
            "constraints",
            "distribution",
            "utils",
            "datasets",
            "preprocessing",
            "mixed_precision.policy",
            "saving.serialization",
            "saving.weights_file",
        ),
    ),
    ("layers", ("layers", "utils.summary_utils", "utils.feature_space")),
    ("components", ("losses", "metrics", "optimizers", "mixed_precision")),
    ("saving", ("saving",)),
    ("callbacks", ("callbacks",)),
    ("trainers", ("trainers",)),
    ("models", ("models",)),
    ("faces", ("utils.image_dataset", "utils.model_visualization", "applications")),
]
# Package faces that re-export what lies above their own modules: they sit on top.
FACES = ("", "utils", "preprocessing")


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
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
