"""The supported-API table of docs/data.md, generated from the code (a test keeps them equal).

Regenerate the table in place::

    PYTHONPATH=src python -m unison.data._apitable docs/data.md

Example:
    >>> "| `Dataset.batch" in api_table()
    True
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

START, END = "<!-- api-table:start -->", "<!-- api-table:end -->"


def _summary(obj: object) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.splitlines()[0].replace("|", "\\|") if doc else ""


def _signature(obj: object) -> str:
    try:
        sig = inspect.signature(obj)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    params = [p for p in sig.parameters.values() if p.name not in ("self", "name")]

    def default(p: inspect.Parameter) -> str:
        text = repr(p.default)
        return "<unset>" if " at 0x" in text else text  # a sentinel: no address in the docs

    return (
        "("
        + ", ".join(
            str(p).split(":")[0].split("=")[0].strip() + (f"={default(p)}" if p.default is not p.empty else "")
            for p in params
        )
        + ")"
    )


def api_table() -> str:
    """Markdown rows: every public name of ``unison.data`` and every public ``Dataset`` method."""
    import unison.data as data
    from unison.data import experimental
    from unison.data.dataset import _UNSUPPORTED, Dataset

    rows = ["| name | arguments | what it does |", "| --- | --- | --- |"]
    for name in sorted(n for n in vars(Dataset) if not n.startswith("_")):
        member = getattr(Dataset, name)
        target = member.fget if isinstance(member, property) else member
        sig = "" if isinstance(member, property) else f"`{_signature(target)}`"
        rows.append(f"| `Dataset.{name}` | {sig} | {_summary(target)} |")
    for name in ("__iter__", "__len__"):
        rows.append(f"| `Dataset.{name}` | | {_summary(getattr(Dataset, name))} |")
    for module, prefix in ((data, "tf.data"), (experimental, "tf.data.experimental")):
        for name in sorted(getattr(module, "__all__", [])):
            obj = getattr(module, name)
            if name in ("Dataset", "experimental") or inspect.ismodule(obj):
                continue
            kind = "constant" if isinstance(obj, int) else ""
            summary = f"`{obj!r}`" if kind else _summary(obj)
            sig = "" if kind or inspect.isclass(obj) and issubclass(obj, int) else _signature(obj)
            rows.append(f"| `{prefix}.{name}` | `{sig}` | {summary} |".replace("| `` |", "| |"))
    rows.append("")
    rows.append("Not supported (raise `AttributeError` naming the nearest supported way):")
    rows.append("")
    for name in sorted(_UNSUPPORTED):
        rows.append(f"- `Dataset.{name}`: use {_UNSUPPORTED[name]}")
    return "\n".join(rows)


def current_table(doc: str) -> str:
    """The table part of docs/data.md (between the markers)."""
    start, end = doc.index(START) + len(START), doc.index(END)
    return doc[start:end].strip("\n")


def rewrite(path: str | Path) -> None:
    """Replace the table in ``path`` with :func:`api_table`'s."""
    p = Path(path)
    doc = p.read_text(encoding="utf-8")
    start, end = doc.index(START) + len(START), doc.index(END)
    p.write_text(doc[:start] + "\n" + api_table() + "\n" + doc[end:], encoding="utf-8")


if __name__ == "__main__":
    rewrite(sys.argv[1] if len(sys.argv) > 1 else "docs/data.md")
