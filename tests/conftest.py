"""Shared test set-up: where the MNIST files are, and a repository-root fixture."""

from __future__ import annotations

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]


def data_dir() -> pathlib.Path | None:
    """$UNISON_DATA_DIR, else ../shared/data beside the repository, if it holds MNIST."""
    env = os.environ.get("UNISON_DATA_DIR")
    path = pathlib.Path(env) if env else REPO.parent / "shared" / "data"
    return path if (path / "mnist" / "train-images-idx3-ubyte.gz").exists() else None


@pytest.fixture
def mnist_dir() -> pathlib.Path:
    path = data_dir()
    if path is None:
        pytest.skip("MNIST not found: set UNISON_DATA_DIR to a folder holding mnist/")
    return path


@pytest.fixture
def repo() -> pathlib.Path:
    return REPO


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test under tests/distributed starts real processes: mark it so `-m` can select it."""
    for item in items:
        if "distributed" in pathlib.Path(str(item.fspath)).parts:
            item.add_marker(pytest.mark.distributed)


# Scripts that made committed fixtures with TensorFlow itself (run by hand in a TF venv, not tests).
collect_ignore_glob = ["unit/data/*/make_with_*.py"]
