"""docs/data.md's supported-API table is the one the code generates."""

from __future__ import annotations

from pathlib import Path

from unison.data._apitable import api_table, current_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "data.md"


def test_api_table_matches_the_code() -> None:
    assert current_table(DOC.read_text(encoding="utf-8")) == api_table(), (
        "docs/data.md is out of date: run `PYTHONPATH=src python -m unison.data._apitable docs/data.md`"
    )


def test_every_dataset_method_is_in_the_table() -> None:
    import unison as tf

    table = api_table()
    for name in (
        "map",
        "batch",
        "shuffle",
        "prefetch",
        "interleave",
        "padded_batch",
        "rebatch",
        "cache",
        "from_generator",
        "cardinality",
        "element_spec",
        "as_numpy_iterator",
        "reduce",
    ):
        assert f"`Dataset.{name}`" in table and hasattr(tf.data.Dataset, name)
