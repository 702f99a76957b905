"""docs/tf_core_names.md is the generated table of the supported tf.* names and matches the code."""

from __future__ import annotations

import re

import pytest

import unison as tf
from unison._api_table import render

pytestmark = pytest.mark.timeout(60)


def test_doc_is_the_generated_table(repo):
    page = (repo / "docs" / "tf_core_names.md").read_text(encoding="utf-8")
    assert page == render(), (
        "docs/tf_core_names.md is out of date with the code. Regenerate it: "
        "PYTHONPATH=src python -m unison._api_table > docs/tf_core_names.md"
    )


def test_every_listed_name_resolves_and_core_names_are_listed():
    names = re.findall(r"^\| `(tf\.[\w.]+)` \|", render(), flags=re.MULTILINE)
    assert len(names) > 150
    for full in names:
        obj = tf
        for part in full.split(".")[1:]:
            obj = getattr(obj, part)  # raises if the table lists something unison lacks
    for required in (
        "tf.GradientTape",
        "tf.Variable",
        "tf.function",
        "tf.reduce_mean",
        "tf.math.reduce_sum",
        "tf.nn.compute_average_loss",
        "tf.random.uniform",
        "tf.config.list_physical_devices",
        "tf.train.Checkpoint",
        "tf.train.CheckpointManager",
        "tf.UnconnectedGradients",
        "tf.__version__",
        "tf.string",
        "tf.print",
        "tf.rank",
        "tf.size",
    ):
        assert required in names
