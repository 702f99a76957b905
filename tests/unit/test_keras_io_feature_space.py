"""keras.io's "Structured data classification with FeatureSpace" runs end to end, shortened.

examples/keras_io/structured_data_classification_with_feature_space.py runs as a user runs it (a
fresh ``python``) on the heart.csv that examples/program_data.py writes (303 rows, the real file's
columns), for 2 epochs. The concatenated feature width, 136, is what TensorFlow 2.21 / Keras 3.15
printed for ``preprocessed_x.shape`` running the original program on the same file (seed 0):
13 features one-hot/normalised/discretised plus the two crosses (64 + 16 bins).
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "examples" / "keras_io" / "structured_data_classification_with_feature_space.py"
_RUNNER = (
    "import random, runpy, sys, numpy, torch; random.seed(0); numpy.random.seed(0); torch.manual_seed(0); "
    "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def _write_heart(root: Path) -> Path:
    spec = importlib.util.spec_from_file_location("program_data", REPO / "examples" / "program_data.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.write_heart(root, 303)


@pytest.mark.timeout(300)
def test_feature_space_example_runs(tmp_path):
    pytest.importorskip("pandas", reason="the program reads heart.csv with pandas")
    _write_heart(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PYTHONUNBUFFERED="1", PYTHONPATH=os.pathsep.join(sys.path), PROGRAM_DATA=str(tmp_path), EPOCHS="2")
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(PROGRAM)],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=tmp_path,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-5000:]
    assert "(303, 14)\nUsing 242 samples for training and 61 for validation\n" in out, out
    assert re.search(r"^Input: \{'age': .*'thal': <tf.Tensor: shape=\(\), dtype=string, numpy=b'\w+'>\}$", out, re.M), (
        out
    )
    assert re.search(r"^preprocessed_x.shape: \S*\(?\[?32, 136\]?\)+$", out, re.M), out  # TF: (32, 136)
    assert "preprocessed_x.dtype: torch.float32" in out, out
    epochs = re.findall(
        r"^8/8 - .* - accuracy: ([\d.]+) - loss: ([\d.]+) - val_accuracy: ([\d.]+) - val_loss: ([\d.]+)$", out, re.M
    )
    assert len(epochs) == 2, out
    assert all(0.0 <= float(a) <= 1.0 and 0.0 < float(loss) < 3.0 for a, loss, _, _ in epochs), out
    (probability,) = re.findall(
        r"^This particular patient had a ([\d.]+)% probability of having a heart disease", out, re.M
    )
    assert math.isfinite(float(probability)) and 0.0 <= float(probability) <= 100.0, out
