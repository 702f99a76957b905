"""benchmarks/layers_vs_keras.py: its unison worker times the ``--quick`` layers, every case names a
layer unison has, and ``--layers`` refuses a name it does not know."""

from __future__ import annotations

import argparse
import importlib.util
import math
import pathlib
from typing import Any

import pytest
import torch

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench() -> Any:
    spec = importlib.util.spec_from_file_location("layers_vs_keras", REPO / "benchmarks" / "layers_vs_keras.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(120)
def test_quick_layers_time_on_unison(bench: Any, capsys: pytest.CaptureFixture[str]) -> None:
    threads = torch.get_num_threads()
    try:
        times = bench._worker("unison", list(bench.QUICK), 1, 1)
    finally:
        torch.set_num_threads(threads)  # the worker sets it; other tests keep theirs
    assert set(times) == set(bench.QUICK)
    assert all(math.isfinite(wall) and wall > 0 and cpu >= 0 for wall, cpu in times.values()), times
    assert capsys.readouterr().err == ""  # no case failed


def test_every_case_names_a_unison_layer(bench: Any) -> None:
    from unison.keras import layers

    missing = [name for name, case in bench.CASES.items() if not hasattr(layers, case["cls"])]
    assert not missing


def test_layers_option_selects_and_refuses(bench: Any) -> None:
    pick = bench._select(argparse.Namespace(layers="LSTM,Dense", quick=False))
    assert pick == ["LSTM", "LSTM sequences", "Dense"]
    with pytest.raises(SystemExit, match="unknown layer 'Densse'"):
        bench._select(argparse.Namespace(layers="Densse", quick=False))
