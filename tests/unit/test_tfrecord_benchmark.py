"""The TFRecord throughput benchmark's unison-only path runs and reports a positive rate."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_unison_only_reports_positive_throughput(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("tfrecord_throughput", REPO / "benchmarks" / "tfrecord_throughput.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.main(["--unison-only", "--records", "50", "--files", "2", "--repeats", "1"])
    rates = out["median_records_per_s"]
    assert set(rates) == {f"unison/{c}" for c in module.CONFIGS}
    assert all(v > 0 for v in rates.values())
    assert "| TFRecordDataset, raw records |" in capsys.readouterr().out
