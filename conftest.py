"""Set-up shared by the tests and the docstring examples (``pytest --doctest-modules src/unison``).

The examples of ``unison.keras.datasets`` load the real data sets, from local files only: the
folder the tests use (``$UNISON_DATA_DIR``, else ``../shared/data`` beside the repository) or
Debian's ``/usr/share/datasets``. Where a data set is not on this machine its examples are
skipped, saying so; they never reach the network (downloads are pointed at a closed port).
"""

from __future__ import annotations

import os
import pathlib

import pytest
from _pytest.doctest import DoctestItem

REPO = pathlib.Path(__file__).resolve().parent
_DATASET_CALLS = ("load_data(", "load(", "locate(", "read_idx_gz(", "read_split(")


@pytest.fixture(autouse=True)
def _dataset_examples_read_local_files(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    item = request.node
    if not isinstance(item, DoctestItem) or not item.name.startswith("unison.keras.datasets"):
        return
    if item.dtest is None or not any(call in ex.source for ex in item.dtest.examples for call in _DATASET_CALLS):
        return
    from unison.keras.datasets import _fetch, fashion_mnist, mnist

    env = os.environ.get(_fetch.ENV_DATA_DIR)
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, env or str(REPO.parent / "shared" / "data"))
    monkeypatch.setenv(_fetch.ENV_MIRROR, "http://127.0.0.1:9/")  # a download fails at once, offline
    spec = fashion_mnist._SPEC if "fashion_mnist" in item.name else mnist._SPEC
    if _fetch.local_folder(spec) is None:
        pytest.skip(
            f"this example reads {spec.name} from local files: set {_fetch.ENV_DATA_DIR} to a "
            f"folder holding {spec.name}/ (the four IDX .gz files)"
        )
