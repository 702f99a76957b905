"""A Functional model with nested Sequentials (ConvNeXt's stem and downsampling blocks) in Keras 3's
``.weights.h5``: Keras 3 files a nested model's layers under ``layers/<model>/layers/<name>``; and
``ConvNeXtTiny`` itself (its depthwise convolutions are Keras's ``Conv2D(groups=...)``: ``conv2d``).

Keras 3 (``tensorflow.keras``, in a subprocess: ``keras_files_oracle.py``) builds the model
(``keras_files_models.build(keras, "nested_sequential")``), moves its weights off their initial
values and saves ``.weights.h5``; unison loads it into its own build and must predict the same.
Then unison saves its build and Keras loads the file and predicts the same.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import keras_files_models as models  # noqa: E402

pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("tensorflow") is None, reason="TensorFlow (the oracle) is not installed"
    ),
    pytest.mark.timeout(600),
    pytest.mark.slow,
]
NAME = "nested_sequential"
TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def _oracle(action: str, directory: str, name: str = NAME) -> dict[str, str]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "keras_files_oracle.py"), "keras3", action, directory, name],
        env=env,
        capture_output=True,
        text=True,
        timeout=500,
    )
    report = os.path.join(directory, f"keras3-{action}.json")
    assert done.returncode == 0 and os.path.exists(report), done.stderr[-3000:]
    with open(report) as fh:
        return dict(json.load(fh))


@pytest.mark.parametrize("name", [NAME, "convnext_tiny"])
def test_keras_weights_of_nested_sequentials_load_in_unison(name: str, tmp_path: Any) -> None:
    from unison import keras

    directory = str(tmp_path)
    written = _oracle("write", directory, name)
    assert written[name + ".weights.h5"] == "ok", written
    model = models.build(keras, name)
    model.load_weights(os.path.join(directory, name + ".weights.h5"))
    want = np.load(os.path.join(directory, name + ".npy"))
    np.testing.assert_allclose(models.predict(model, name), want, **TOLERANCE)


def test_unison_weights_of_nested_sequentials_load_in_keras(tmp_path: Any) -> None:
    from unison import keras

    directory = str(tmp_path)
    model = models.build(keras, NAME)
    models.perturb(model)
    want = models.predict(model, NAME)
    model.save_weights(os.path.join(directory, NAME + ".weights.h5"))
    loaded = _oracle("read", directory)
    assert loaded.get(NAME + ".weights.h5") == "ok", loaded
    got = np.load(os.path.join(directory, f"{NAME}.weights.h5.keras3.npy"))
    np.testing.assert_allclose(got, want, **TOLERANCE)
