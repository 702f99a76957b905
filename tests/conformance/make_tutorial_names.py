"""Count the ``tf.*`` names TensorFlow's own TF 2 tutorials and guides use; write the most used.

``python tests/conformance/make_tutorial_names.py /path/to/tensorflow-docs/site/en`` reads the code
cells of the notebooks under ``tutorials/`` and ``guide/`` (a checkout of github.com/tensorflow/docs)
and rewrites ``tests/conformance/api/tutorial_names.txt``: the 150 names of ``api/tf.txt`` used by the
most notebooks, each with the number of notebooks that use it and its number of uses. The list is
committed, so the coverage report (``api_coverage.py``) needs neither the notebooks nor TensorFlow.

What counts:
- TF 2 notebooks only: ``guide/migrate/`` (TF 1 to TF 2 migration), the Estimator notebooks and any
  notebook that calls ``tf.compat.v1`` are left out;
- a use is a dotted ``tf.a.b.c`` in a code cell (shell and magic lines dropped), credited to the
  longest prefix that is a public name of ``api/tf.txt`` (``tf.data.Dataset.from_tensor_slices``
  counts for ``data.Dataset``); ``tf.keras.*`` is Keras's API (docs/keras_api.md) and not counted.

Example:
    >>> count_names(["x = tf.constant(1)\\ny = tf.data.Dataset.range(3)"], {"constant", "data.Dataset"})
    Counter({'constant': 1, 'data.Dataset': 1})
"""

from __future__ import annotations

import json
import pathlib
import re
import sys
from collections import Counter
from collections.abc import Iterable

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "api" / "tutorial_names.txt"
TOP = 150

_USE = re.compile(r"(?<![\w.])tf\.([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")


def is_tf2_notebook(relative: str, code: str) -> bool:
    """Whether a notebook (path relative to site/en) is a TF 2 program."""
    if relative.startswith("guide/migrate/") or "estimator" in relative:
        return False
    return "tf.compat.v1" not in code


def code_of(notebook: pathlib.Path) -> str:
    """The code cells of a notebook, without shell (``!``) and magic (``%``) lines."""
    cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
    lines = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else source
        lines += [line for line in text.splitlines() if not line.lstrip().startswith(("!", "%"))]
    return "\n".join(lines)


def _credited(dotted: str, public: set[str]) -> str | None:
    parts = dotted.split(".")
    if parts[0] == "keras":
        return None
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[:end])
        if name in public:
            return name
    return None


def count_names(codes: Iterable[str], public: set[str]) -> Counter[str]:
    """Uses of each public name over the given code texts."""
    uses: Counter[str] = Counter()
    for code in codes:
        for match in _USE.finditer(code):
            name = _credited(match.group(1), public)
            if name is not None:
                uses[name] += 1
    return uses


def main(site: str) -> None:
    root = pathlib.Path(site)
    notebooks = sorted(p for folder in ("tutorials", "guide") for p in (root / folder).rglob("*.ipynb"))
    if not notebooks:
        raise SystemExit(f"no notebooks under {root}/tutorials or {root}/guide: pass tensorflow/docs' site/en folder")
    lines = (HERE / "api" / "tf.txt").read_text(encoding="utf-8").splitlines()
    public = {line for line in lines if line and not line.startswith("#")}
    uses: Counter[str] = Counter()
    notebooks_using: Counter[str] = Counter()
    kept = 0
    for path in notebooks:
        code = code_of(path)
        if not is_tf2_notebook(path.relative_to(root).as_posix(), code):
            continue
        kept += 1
        found = count_names([code], public)
        uses.update(found)
        notebooks_using.update(found.keys())
    ranked = sorted(uses, key=lambda n: (-notebooks_using[n], -uses[n], n))[:TOP]
    out = [
        f"# the {len(ranked)} tf.* names used by the most of {kept} TF 2 notebooks of tensorflow/docs "
        "(site/en/tutorials, site/en/guide); written by tests/conformance/make_tutorial_names.py",
        "# name notebooks uses",
    ]
    out += [f"{name} {notebooks_using[name]} {uses[name]}" for name in ranked]
    OUT.write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(ranked)} names from {kept} notebooks)", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python tests/conformance/make_tutorial_names.py <tensorflow/docs checkout>/site/en")
    main(sys.argv[1])
