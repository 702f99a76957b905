"""The coverage reports: every public name of TF 2.21, Keras 3 and tf_keras, and where unison stands.

``python tests/conformance/api_coverage.py`` rewrites ``docs/tf_api.md`` (TensorFlow) and
``docs/keras_api.md`` (Keras 3 and Keras 2); ``tests/conformance/test_coverage_report.py`` fails when
a page and the code disagree. Nothing here needs TensorFlow: the public names are data
(``api/*.txt``, written by ``api/make_api_lists.py`` with TensorFlow installed), the conformance
tests are read from their source (the ``@same_as_tf(...)`` decorators of ``test_*.py`` in this
folder), and unison's side is looked up attribute by attribute.

A name's state:
- **conformance**: unison has it, and tests compare it with TensorFlow on ordinary input and on at
  least one edge case (``edge=True``);
- **partly tested**: unison has it and a test compares it, but not both kinds;
- **untested**: unison has it, no conformance test names it;
- **TPU-only**: a TPU-only name (``TPUStrategy``, ``TPUClusterResolver``): it exists for
  ``isinstance`` checks, using it raises ``TPUNotSupportedError`` (a ``ValueError``, TF's class when it
  finds no TPU) saying what to use instead, and a test compares that error with TF's and checks the
  message (``match=``). Counted apart: not implemented, and not "conformance";
- **missing**: ``tf.<name>`` raises unison's AttributeError naming what to use instead.
"""

from __future__ import annotations

import ast
import importlib.util
import pathlib
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]

STATES = ("conformance", "partly tested", "untested", "TPU-only", "missing")
# the columns every page shows; "TPU-only" only where a listing has such names
_ALWAYS = ("conformance", "partly tested", "untested", "missing")


@dataclass
class Evidence:
    """What the conformance tests say of one name."""

    ordinary: list[str] = field(default_factory=list)
    edge: list[str] = field(default_factory=list)
    matched: list[str] = field(default_factory=list)  # tests that also check unison's message (match=)


@dataclass(frozen=True)
class Difference:
    names: tuple[str, ...]
    test: str
    reason: str


def read_listing(file: str) -> tuple[str, list[str]]:
    """(the version line, the names) of ``api/<file>``."""
    lines = (HERE / "api" / file).read_text(encoding="utf-8").splitlines()
    return lines[0].lstrip("# ").split(":")[0], [line for line in lines[1:] if line and not line.startswith("#")]


def _decorator_calls(tree: ast.Module) -> Iterable[tuple[str, ast.Call]]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and getattr(deco.func, "id", None) == "same_as_tf":
                    yield node.name, deco


def _string_tables(tree: ast.Module) -> dict[str, tuple[str, ...]]:
    """Module-level ``NAME = ("a", "b", ...)`` tables, which decorators may unpack (``*NAME``)."""
    tables = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, (ast.Tuple, ast.List)) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
            ):
                tables[node.targets[0].id] = tuple(e.value for e in value.elts)  # type: ignore[attr-defined]
    return tables


def _module_namespace(path: pathlib.Path) -> dict[str, Any]:
    """The test module's globals, for a decorator that unpacks a computed table (``*NAMES``, ``*NAMES[2:]``).

    Test modules import only numpy, pytest and tf_oracle at module level, so importing one is cheap.
    """
    if path not in _NAMESPACES:
        if str(path.parent) not in sys.path:
            sys.path.insert(0, str(path.parent))
        spec = importlib.util.spec_from_file_location(f"_coverage_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _NAMESPACES[path] = vars(module)
    return _NAMESPACES[path]


_NAMESPACES: dict[pathlib.Path, dict[str, Any]] = {}


def _names_of(
    args: list[ast.expr], tables: dict[str, tuple[str, ...]], path: pathlib.Path | None = None
) -> Iterable[str]:
    for arg in args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            yield arg.value
        elif isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name) and arg.value.id in tables:
            yield from tables[arg.value.id]
        elif isinstance(arg, ast.Starred) and path is not None:
            value = tuple(eval(ast.unparse(arg.value), _module_namespace(path)))  # the module's own expression
            if not all(isinstance(v, str) for v in value):
                raise ValueError(f"@same_as_tf(*{ast.unparse(arg.value)}) in {path.name}: not a sequence of strings")
            yield from value
        elif isinstance(arg, ast.Starred):
            raise ValueError(f"@same_as_tf(*{ast.unparse(arg.value)}): must be a module-level tuple of strings")


def _dialects(node: ast.expr | None, tables: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The ``dialects=`` of a decorator: a literal tuple of strings or a module-level table's name."""
    if isinstance(node, ast.Name):
        return tables.get(node.id, ())
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return ()


def scan_tests(folder: pathlib.Path = HERE) -> tuple[dict[str, Evidence], list[Difference]]:
    """The names each ``@same_as_tf`` test checks, from the test files' source."""
    evidence: dict[str, Evidence] = defaultdict(Evidence)
    differences: list[Difference] = []
    for path in sorted(folder.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        tables = _string_tables(tree)
        for test, call in _decorator_calls(tree):
            names = tuple(_names_of(call.args, tables, path))
            keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg}
            edge = isinstance(keywords.get("edge"), ast.Constant) and keywords["edge"].value is True  # type: ignore[union-attr]
            where = f"{path.name}::{test}"
            if "tf_keras" in _dialects(keywords.get("dialects"), tables):
                # a test run in both Keras dialects checks each "keras:" name in Keras 2 too
                names = (*names, *("tf_keras:" + n.split(":", 1)[1] for n in names if n.startswith("keras:")))
            for name in names:
                (evidence[name].edge if edge else evidence[name].ordinary).append(where)
                if "match" in keywords:
                    evidence[name].matched.append(where)
            differs = keywords.get("differs")
            if isinstance(differs, ast.Constant) and isinstance(differs.value, str):
                differences.append(Difference(names, where, differs.value))
    return dict(evidence), differences


_ABSENT = object()


def lookup(root: Any, dotted: str) -> Any:
    """``root.<dotted>`` in unison, or ``_ABSENT`` (an AttributeError or ImportError says it is not there)."""
    obj = root
    for part in dotted.split("."):
        try:
            obj = getattr(obj, part)
        except (AttributeError, ImportError, NotImplementedError):
            return _ABSENT
    return obj


def resolves(root: Any, dotted: str) -> bool:
    """Whether ``root.<dotted>`` exists in unison."""
    return lookup(root, dotted) is not _ABSENT


def classify(names: list[str], root: Any, evidence: dict[str, Evidence], prefix: str = "") -> dict[str, str]:
    """The state of every name of a listing."""
    states = {}
    for name in names:
        seen = evidence.get(prefix + name)
        obj = lookup(root, name)
        if obj is _ABSENT:
            states[name] = "missing"
        elif getattr(obj, "_tpu_only", False) is True:
            # exists only to raise TPUNotSupportedError: counted as such once a test checks that error
            states[name] = "TPU-only" if seen and seen.matched else "untested"
        elif seen and seen.ordinary and seen.edge:
            states[name] = "conformance"
        elif seen:
            states[name] = "partly tested"
        else:
            states[name] = "untested"
    return states


def _module_of(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else ""


def render_section(title: str, version: str, label: str, states: dict[str, str]) -> list[str]:
    """A per-module totals table, then every name by state."""
    by_module: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for name, state in states.items():
        by_module[_module_of(name)][state].append(name)
    total = defaultdict(int)
    for state in states.values():
        total[state] += 1
    n = len(states)
    done = total["conformance"]
    columns = [s for s in STATES if s in _ALWAYS or total[s]]
    tpu = f", {total['TPU-only']} TPU-only (a named error saying what to use instead)" if total["TPU-only"] else ""
    lines = [
        f"## {title}",
        "",
        f"Measured against the public API of {version}: **{n} names; {done} implemented and conformance-tested "
        f"({100 * done / n:.1f}%)**, {total['partly tested']} partly tested, {total['untested']} implemented "
        f"without a conformance test{tpu}, {total['missing']} missing.",
        "",
        "| module | names | " + " | ".join(columns) + " |",
        "|---|---:|" + "---:|" * len(columns),
    ]
    for module in sorted(by_module):
        counts = by_module[module]
        size = sum(len(v) for v in counts.values())
        lines.append(
            f"| `{label}{'.' + module if module else ''}` | {size} | "
            + " | ".join(str(len(counts.get(s, []))) for s in columns)
            + " |"
        )
    lines.append(f"| **all** | **{n}** | **{done}** | " + " | ".join(str(total[s]) for s in columns[1:]) + " |")
    lines.append("")
    for module in sorted(by_module):
        lines.append(f"### `{label}{'.' + module if module else ''}`")
        lines.append("")
        for state in STATES:
            names = sorted(by_module[module].get(state, []))
            if names:
                short = ", ".join(f"`{x.rsplit('.', 1)[-1]}`" for x in names)
                lines.append(f"- {state} ({len(names)}): {short}")
        lines.append("")
    return lines


def render_differences(differences: list[Difference], keep: str) -> list[str]:
    keras_page = keep != "tf"
    rows = [d for d in differences if any((":" in n) == keras_page for n in d.names)]
    lines = ["## Differences kept on purpose", ""]
    if not rows:
        return [*lines, "None: every conformance test compares values, dtypes and shapes with TensorFlow's.", ""]
    lines += ["| names | test | why |", "|---|---|---|"]
    for d in rows:
        lines.append(f"| {', '.join(f'`{n}`' for n in d.names)} | `{d.test}` | {d.reason} |")
    return [*lines, ""]


_HEADER = """Generated by `python tests/conformance/api_coverage.py`; `tests/conformance/test_coverage_report.py`
fails when this page and the code disagree. The public names are TensorFlow's own, walked from the
installed packages by `tests/conformance/api/make_api_lists.py` and kept as data in
`tests/conformance/api/`. A name is **conformance**-tested when a test of `tests/conformance/`
computes it on unison and on TensorFlow 2.21 and compares values (a tolerance per dtype), dtypes,
shapes and error classes, on ordinary input and on an edge case (empty, broadcasting, dtype
promotion, NaN or a bad argument); `.ci/run` installs TensorFlow (the `conformance` extra) so CI
compares for real. A **missing** name raises `AttributeError` saying unison does not implement it
and naming the torch equivalent where there is one.
"""

_TPU_NOTE = """A **TPU-only** name (`TPUStrategy`, `experimental.TPUStrategy`, `cluster_resolver.TPUClusterResolver`)
exists, so `isinstance` checks work, and using it raises `unison.errors.TPUNotSupportedError`: TPUs
are not supported on unison's PyTorch backend; the message names MirroredStrategy /
MultiWorkerMirroredStrategy (or the GPU/CPU resolvers) and torch_xla for TPUs from PyTorch. The
error is a `ValueError`, the class TF raises when it finds no TPU, so the usual
`try: TPUStrategy(TPUClusterResolver()) except ValueError:` probe falls back as on TF; its tests
compare that error class with TF's and check the message. Such names are counted in their own column,
neither as implemented nor as conformance-tested.
"""


_STRUCTURAL_DIFFERENCES = [
    "Differences that follow from unison's values being torch's, which no conformance test can compare away:",
    "",
    "- dtypes are torch dtypes: `tf.float32 is torch.float32`, so TF's `DType` attributes `.name`, `.min`, `.max`, "
    "`.is_integer`, `.size` are absent (`torch.finfo`/`torch.iinfo` give the limits);",
    "- a tensor's `.shape` is a `torch.Size` (a tuple, printed `torch.Size([3, 1])`): `x.shape.as_list()` fails, "
    "`x.get_shape().as_list()`, `tf.TensorShape(x.shape).as_list()` and `list(x.shape)` work; "
    "`tf.TensorSpec(...).shape` is a tuple too;",
    "- a tensor's `.device` is a `torch.device` (`cpu`), not TF's device string, so `x.device.endswith('GPU:0')` fails;",
    "- `tf.function` runs the Python function eagerly, so `tf.inside_function()` is False inside it.",
    "",
]


def read_tutorial_names() -> list[tuple[str, int, int]]:
    """(name, notebooks, uses) of ``api/tutorial_names.txt``: the names TF's tutorials use most."""
    rows = []
    for line in (HERE / "api" / "tutorial_names.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, notebooks, uses = line.split()
            rows.append((name, int(notebooks), int(uses)))
    return rows


def render_tutorial_names(root: Any, evidence: dict[str, Evidence]) -> list[str]:
    """How many of the names TF's tutorials and guides use most are conformance-tested."""
    rows = read_tutorial_names()
    states = classify([name for name, _, _ in rows], root, evidence)
    done = sum(state == "conformance" for state in states.values())
    lines = [
        "## The names TensorFlow's tutorials and guides use most",
        "",
        f"`tests/conformance/api/tutorial_names.txt` lists the {len(rows)} `tf.*` names used by the most TF 2 "
        "notebooks of tensorflow/docs (counted from their code by `tests/conformance/make_tutorial_names.py`): "
        f"**{done} of {len(rows)} implemented and conformance-tested**.",
    ]
    for state in STATES[1:]:
        names = sorted(name for name, s in states.items() if s == state)
        if names:
            lines += ["", f"- {state} ({len(names)}): " + ", ".join(f"`{n}`" for n in names)]
    return [*lines, ""]


def render_tf() -> str:
    import unison

    evidence, differences = scan_tests()
    version, names = read_listing("tf.txt")
    states = classify(names, unison, evidence)
    lines = [
        "# TensorFlow's API in unison: the coverage report",
        "",
        _HEADER,
        _TPU_NOTE,
        "Left out of the listing, as the TF-API issue measures it: `tf.keras` (see [keras_api.md](keras_api.md)), "
        "`tf.compat`, `tf.estimator`, `tf.tpu`, `tf.lite`, `tf.xla`, `tf.raw_ops`, DTensor, `tf.security`, "
        "`tf.quantization`, `tf.feature_column`, `tf.test` and `tf.experimental.numpy`. What each supported "
        "name does in unison, with its source: [tf_core_names.md](tf_core_names.md).",
        "",
        *render_section("`tf`", version, "tf", states),
        *render_tutorial_names(unison, evidence),
        *render_differences(differences, "tf"),
        *_STRUCTURAL_DIFFERENCES,
    ]
    return "\n".join(lines).rstrip() + "\n"


def render_keras() -> str:
    import unison

    evidence, differences = scan_tests()
    blocks = []
    for file, title, prefix in (
        ("keras3.txt", "Keras 3 (`keras`)", "keras:"),
        ("tf_keras.txt", "Keras 2 (`tf_keras`)", "tf_keras:"),
    ):
        version, names = read_listing(file)
        states = classify(names, unison.keras, evidence, prefix)
        blocks += render_section(title, version, "keras", states)
    lines = [
        "# Keras's API in unison: the coverage report",
        "",
        _HEADER.replace("TensorFlow's own", "Keras's own").replace(
            "TensorFlow 2.21 and", "Keras on TensorFlow 2.21 and"
        ),
        'Keras 3\'s names are checked as `unison.keras.<name>` and tested with `@same_as_tf("keras:<name>")`; '
        'Keras 2\'s (`tf_keras`, TF_USE_LEGACY_KERAS=1) likewise with `"tf_keras:<name>"`.',
        "",
        *blocks,
        *render_differences(differences, "keras"),
    ]
    return "\n".join(lines).rstrip() + "\n"


PAGES = {"docs/tf_api.md": render_tf, "docs/keras_api.md": render_keras}


def main() -> None:
    for page, render in PAGES.items():
        (REPO / page).write_text(render(), encoding="utf-8")
        print(f"wrote {page}", file=sys.stderr)


if __name__ == "__main__":
    main()
