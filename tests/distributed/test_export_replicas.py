"""model.export on two replicas: every replica calls it, the chief writes, none returns early."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import numpy as np
import pytest
from export_fns import fit_then_export
from replica_fns import make_data

from unison.testing import run_distributed

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.slow,
    pytest.mark.skipif(
        not all(importlib.util.find_spec(m) for m in ("onnx", "onnxscript", "onnxruntime")),
        reason="needs onnx, onnxscript and onnxruntime",
    ),
]


def test_the_chief_exports_onnx_once_and_it_predicts_the_trained_model(tmp_path: Any) -> None:
    import onnxruntime

    results = run_distributed(fit_then_export, world_size=2, args=(["/cpu:0", "/cpu:1"], str(tmp_path)), timeout=240)
    assert sorted(r["chief"] for r in results) == [False, True]
    assert all(r["file_complete"] for r in results)  # replica 1 returned only once the file was there
    assert os.listdir(tmp_path) == ["model.onnx"]
    session = onnxruntime.InferenceSession(str(tmp_path / "model.onnx"), providers=["CPUExecutionProvider"])
    xv, _ = make_data(10, seed=1)
    got = session.run(None, {"x": np.asarray(xv, dtype=np.float32)})[0]
    np.testing.assert_allclose(got, results[0]["predict"], atol=1e-5)
