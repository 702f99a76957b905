"""benchmarks/gpu_check.sh: its dry run on the CPU goes through every line that needs no GPU, so the
script works unmodified the first time a GPU is lent."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import pytest
import torch

REPO = pathlib.Path(__file__).resolve().parents[2]


def _module():
    spec = importlib.util.spec_from_file_location("gpu_check", REPO / "benchmarks" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_dry_run_writes_every_section_figure(tmp_path):
    out = tmp_path / "gpu.json"
    env = dict(os.environ, PYTHON=sys.executable)
    proc = subprocess.run(
        ["bash", str(REPO / "benchmarks" / "gpu_check.sh"), "--dry-run", "--skip", "tests", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert report["dry_run"] is True and report["machine"]["cuda_available"] == torch.cuda.is_available()
    assert "error" not in report["cnn"], report["cnn"]
    assert len(report["cnn"]["test_accuracy"]) == 1 and 0.0 <= report["cnn"]["test_accuracy"][0] <= 1.0
    for precision in ("float32", "mixed_bfloat16"):
        figures = report["gpt"][precision]
        assert figures["unison_fit_tokens_per_s"] > 0 and figures["ddp_tokens_per_s"] > 0, report["gpt"]


def test_tests_section_counts_passes_and_names_failures(tmp_path, monkeypatch):
    gpu_check = _module()
    test_file = tmp_path / "test_probe.py"
    test_file.write_text("def test_ok():\n    assert True\n\n\ndef test_bad():\n    assert 1 == 2\n")
    monkeypatch.setattr(gpu_check, "GPU_TESTS", [str(test_file)])
    result = gpu_check.run_tests(timeout=120)
    assert result["counts"] == {"passed": 1, "failed": 1}, result
    assert result["failures"] == [f"{test_file}::test_bad"] or result["failures"][0].endswith("::test_bad")
    assert result["exit_code"] == 1


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without a GPU")
def test_full_run_without_a_gpu_says_to_use_the_dry_run(tmp_path):
    with pytest.raises(SystemExit, match="no CUDA device; run with --dry-run"):
        _module().main(["--out", str(tmp_path / "x.json")])
