"""Keras 3 names that need its torch backend: ``config.set_backend`` and ``layers.TorchModuleWrapper``, on
unison against Keras 3.15.

Keras's side runs in one child process, started once by the oracle (each test reads its answer): it
imports Keras on its torch backend (no TensorFlow), calls ``set_backend`` (which reloads the whole
``keras`` package, so it must not happen in the oracle itself) with an unknown name, then "torch", and
wraps torch modules. unison's side runs the same code in the test process. Marked slow: the child imports Keras
and torch (about 5 s of CPU)."""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf

CODE = """
import json, warnings
import numpy as np, torch
warnings.simplefilter("ignore")
out = {}

def _np(t):
    return keras.ops.convert_to_numpy(t).tolist()

try:
    keras.config.set_backend("no_such_backend")
    out["unknown"] = "accepted"
except ValueError as exc:
    out["unknown"] = type(exc).__name__
keras.config.set_backend("torch")
if keras.__name__ == "keras":  # Keras 3 reloaded its package: use the new module
    import keras
out["torch"] = [keras.config.backend(), type(keras.ops.ones((2,))).__module__.split(".")[0]]

lin = torch.nn.Linear(3, 2)
with torch.no_grad():
    lin.weight.copy_(torch.arange(6.0).reshape(2, 3) / 10)
    lin.bias.fill_(0.5)
layer = keras.layers.TorchModuleWrapper(lin)
x = np.arange(6, dtype="float32").reshape(2, 3)
out["ordinary"] = [_np(layer(x)), len(layer.trainable_weights), sorted(list(w.shape) for w in layer.weights),
                   layer.count_params()]

net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))
with torch.no_grad():
    net[0].weight.copy_(torch.tensor([[1.0, -1.0], [0.5, 2.0]]))
    net[0].bias.zero_()
net[0].bias.requires_grad_(False)
layer = keras.layers.TorchModuleWrapper(net)
x = np.array([[1.0, 2.0], [3.0, -1.0], [0.0, 0.5]], "float32")
# (non_trainable_weights are left out: see the edge test's differs)
out["edge"] = [_np(layer(x, training=True)), len(layer.trainable_weights), _np(net[1].running_mean)]
print(json.dumps(out))
"""
_KERAS_ANSWER: dict = {}


def _results(tf) -> dict:
    import json

    if tf.keras.__name__ != "keras":  # unison: the code runs here (its set_backend accepts only "torch")
        import io
        from contextlib import redirect_stdout

        out = io.StringIO()
        with redirect_stdout(out):
            exec(CODE, {"keras": tf.keras})  # noqa: S102 - the test's own code, the same on both sides
        return json.loads(out.getvalue())
    if not _KERAS_ANSWER:  # Keras 3, once per oracle process
        import os
        import subprocess
        import sys

        env = dict(os.environ, KERAS_BACKEND="torch", TF_CPP_MIN_LOG_LEVEL="3")
        done = subprocess.run(
            [sys.executable, "-c", "import keras\n" + CODE], capture_output=True, text=True, timeout=300, env=env
        )
        if done.returncode != 0:
            raise RuntimeError(f"Keras on torch failed: {done.stderr[-800:]}")
        _KERAS_ANSWER.update(json.loads(done.stdout.strip().splitlines()[-1]))
    return _KERAS_ANSWER


@pytest.mark.slow
@same_as_tf("keras:config.set_backend")
def test_set_backend_to_torch(tf):
    return _results(tf)["torch"]


@pytest.mark.slow
@same_as_tf("keras:config.set_backend", edge=True)
def test_set_backend_to_an_unknown_name(tf):
    return _results(tf)["unknown"]


@pytest.mark.slow
@same_as_tf("keras:layers.TorchModuleWrapper", rtol=1e-5, atol=1e-5)
def test_torch_module_wrapper_of_a_linear_module(tf):
    return _results(tf)["ordinary"]


@pytest.mark.slow
@same_as_tf(
    "keras:layers.TorchModuleWrapper",
    edge=True,
    rtol=1e-5,
    atol=1e-5,
    differs="unison's TorchModuleWrapper also lists the module's buffers (BatchNorm's running statistics) "
    "among its non-trainable weights, so get_weights/save_weights carry them; Keras 3 tracks parameters only",
)
def test_torch_module_wrapper_with_a_frozen_bias_and_batch_statistics(tf):
    return _results(tf)["edge"]
