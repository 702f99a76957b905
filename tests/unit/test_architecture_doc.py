"""docs/architecture.md names every module under src/unison, and nothing that does not exist."""

from __future__ import annotations

import importlib.util
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "unison"
DOC = REPO / "docs" / "architecture.md"
_ENTRY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.py|/)")


def documented_paths() -> set[str]:
    """Paths named in the doc's ``src/unison/`` tree: nesting follows the indentation."""
    text = DOC.read_text()
    block = text.split("```\nsrc/unison/\n", 1)[1].split("```", 1)[0]
    stack: list[tuple[int, str]] = []  # (indent, folder)
    paths: set[str] = set()
    for line in block.splitlines():
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        names = []
        for token in stripped.split(", "):
            match = _ENTRY.match(token)
            if match is None or match.group(0) != token.split(" ")[0]:
                break
            names.append(match.group(0))
        if not names:
            continue  # a continuation line of a description
        while stack and stack[-1][0] >= indent:
            stack.pop()
        prefix = "".join(folder for _, folder in stack)
        for name in names:
            paths.add(prefix + name)
        if len(names) == 1 and names[0].endswith("/"):
            stack.append((indent, names[0]))
    return paths


def source_paths() -> set[str]:
    paths = set()
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).as_posix()
        if path.name == "__main__.py" or (path.name == "__init__.py" and rel != "__init__.py"):
            continue  # a package's __init__ is named by its folder
        paths.add(rel)
    for path in SRC.rglob("*"):
        if path.is_dir() and (path / "__init__.py").exists():
            paths.add(path.relative_to(SRC).as_posix() + "/")
    return paths


def test_every_module_is_in_the_architecture_doc():
    missing = sorted(source_paths() - documented_paths())
    assert not missing, f"docs/architecture.md does not name these modules: {missing}"


def test_the_architecture_doc_names_no_module_that_does_not_exist():
    stale = sorted(documented_paths() - source_paths())
    assert not stale, f"docs/architecture.md names modules that do not exist: {stale}"


def documented_keras_tiers() -> dict[str, set[str]]:
    """The doc's keras tier table: ``{tier: rooms}`` (``utils/`` -> ``utils``, ``random.py`` -> ``random``)."""
    text = DOC.read_text()
    rows = text.split("| keras tier | rooms |\n| --- | --- |\n", 1)[1].split("\n\n", 1)[0]
    tiers: dict[str, set[str]] = {}
    for row in rows.strip().splitlines():
        tier, rooms = (cell.strip() for cell in row.strip("|").split("|"))
        tiers[tier] = {name.removesuffix("/").removesuffix(".py") for name in re.findall(r"`([^`]+)`", rooms)}
    return tiers


def test_the_keras_tier_table_is_the_one_the_architecture_test_enforces():
    spec = importlib.util.spec_from_file_location(
        "keras_architecture", pathlib.Path(__file__).with_name("test_keras_architecture.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    enforced = {name: set(rooms) for name, rooms in module.TIERS}
    assert documented_keras_tiers() == enforced, (
        "docs/architecture.md's keras tier table differs from TIERS in tests/unit/test_keras_architecture.py"
    )
