"""OneDeviceStrategy("/gpu:0") on a host without that GPU warns and runs on the CPU, as TF's soft
placement does (it used to raise)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a host without GPUs")
def test_missing_gpu_warns_and_runs_on_cpu() -> None:
    with pytest.warns(
        UserWarning, match=r"'/gpu:0' is not available on this machine \(0 visible GPU\(s\)\); running on '/cpu:0'"
    ):
        strategy = tf.distribute.OneDeviceStrategy("/gpu:0")
    assert strategy.num_replicas_in_sync == 1
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
    history = model.fit(np.ones((8, 3), np.float32), np.ones((8, 1), np.float32), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert next(model.parameters()).device.type == "cpu"


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a host without GPUs")
def test_mirrored_on_one_missing_gpu_is_one_cpu_replica_as_in_tf() -> None:
    # TF 2.21 on a CPU-only host: MirroredStrategy(["/gpu:0"]) has 1 replica, variables on CPU:0
    with pytest.warns(UserWarning, match=r"devices \['/gpu:0'\] are not available"):
        strategy = tf.distribute.MirroredStrategy(["/gpu:0"])
    assert strategy.num_replicas_in_sync == 1


def test_malformed_device_still_raises() -> None:
    with pytest.raises(ValueError, match="Malformed device string"):
        tf.distribute.OneDeviceStrategy("/tpu:0")
