"""docs/tf_api.md and docs/keras_api.md are the generated coverage reports and match the code."""

from __future__ import annotations

import pytest
from api_coverage import PAGES, REPO, read_listing, read_tutorial_names, scan_tests

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("page", sorted(PAGES))
def test_page_is_the_generated_report(page):
    text = (REPO / page).read_text(encoding="utf-8")
    assert text == PAGES[page](), (
        f"{page} is out of date with the code or the conformance tests. Regenerate it: "
        "python tests/conformance/api_coverage.py"
    )


def test_listings_are_tensorflows_public_api():
    for file, least in (("tf.txt", 1300), ("keras3.txt", 1300), ("tf_keras.txt", 850)):
        version, names = read_listing(file)
        assert len(names) >= least, f"{file} ({version}) lists only {len(names)} names"
        assert len(set(names)) == len(names)
    _, tf_names = read_listing("tf.txt")
    assert "linalg.det" in tf_names and "keras.layers.Dense" not in tf_names  # tf.keras is left out


def test_tutorial_names_are_public_names():
    """The list of names TF's tutorials use most (make_tutorial_names.py) credits only public names."""
    rows = read_tutorial_names()
    public = set(read_listing("tf.txt")[1])
    assert len(rows) == 150 and len({name for name, _, _ in rows}) == 150
    assert all(name in public and notebooks >= 1 and uses >= notebooks for name, notebooks, uses in rows)
    assert rows[0][1] >= rows[-1][1]  # ranked by the number of notebooks using a name


def test_every_tested_name_is_a_public_name():
    """A typo in a decorator's names would count nothing: each must be in its listing."""
    listings = {"": set(read_listing("tf.txt")[1])}
    listings["keras:"] = set(read_listing("keras3.txt")[1])
    listings["tf_keras:"] = set(read_listing("tf_keras.txt")[1])
    evidence, _ = scan_tests()
    unknown = []
    for name in evidence:
        prefix, _, bare = name.rpartition(":")
        if bare not in listings[prefix + ":" if prefix else ""]:
            unknown.append(name)
    assert not unknown, f"conformance tests name what is not public API: {sorted(unknown)}"


def test_tensorflow_is_an_oracle_only():
    """src/unison never imports TensorFlow: it is a test extra, not a dependency.

    The exceptions are worker programs run in TensorFlow's own process, never imported by unison:
    `unison bench`'s TF baseline (when the user asks for the comparison) and the SavedModel
    export's writer (when the user asks for a SavedModel, with the export-tf extra installed).
    """
    workers = {
        REPO / "src" / "unison" / "bench" / "tf_worker.py",
        REPO / "src" / "unison" / "saved_model" / "tf_graph_worker.py",
    }
    offenders = [
        str(path.relative_to(REPO))
        for path in (REPO / "src" / "unison").rglob("*.py")
        if path not in workers
        and any(
            line.strip().startswith(("import tensorflow", "from tensorflow", "import tf_keras", "import keras"))
            for line in path.read_text(encoding="utf-8").splitlines()
        )
    ]
    assert not offenders, f"these modules import TensorFlow or Keras: {offenders}"
