"""Point 7 of issue 12: user mistakes that ended in a raw IndexError or were silently accepted."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import unison as tf
from unison.cluster.placement import usable_cores
from unison.cluster.resolvers import TFConfigClusterResolver
from unison.distribute.devices import parse_devices
from unison.optim.safety import NonFiniteGradientError


def test_tf_config_with_an_empty_worker_list_is_named() -> None:
    raw = '{"cluster": {"worker": []}, "task": {"type": "worker", "index": 0}}'
    with pytest.raises(ValueError, match=r"TF_CONFIG: cluster.worker is an empty list.*task worker:0.*Fix: list"):
        TFConfigClusterResolver(environ={"TF_CONFIG": raw})


def test_cpu_device_beyond_the_cores_is_refused_with_the_fix(monkeypatch) -> None:
    monkeypatch.delenv("UNISON_CPU_OVERSUBSCRIBE", raising=False)
    cores = usable_cores()
    with pytest.raises(ValueError) as info:
        parse_devices([f"/cpu:{cores + 97}"])
    text = str(info.value)
    assert f"/cpu:{cores + 97}" in text and f"os.cpu_count()={os.cpu_count()}" in text
    assert "UNISON_CPU_OVERSUBSCRIBE=1" in text
    assert [d.index for d in parse_devices([f"/cpu:{i}" for i in range(cores)])] == list(range(cores))
    monkeypatch.setenv("UNISON_CPU_OVERSUBSCRIBE", "1")
    assert parse_devices([f"/cpu:{cores + 97}"])[0].index == cores + 97


def _classifier() -> tf.keras.Sequential:
    torch.manual_seed(0)
    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


def test_validation_label_outside_the_classes_names_value_classes_and_validation_data() -> None:
    x = np.zeros((8, 4), "float32")
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    model = _classifier()
    before = model.get_weights()
    with pytest.raises(ValueError, match=r"In the validation data .*label value of 5 .*\[0, 3\)"):
        model.fit(x, y, validation_data=(x, np.array([0, 1, 2, 5, 1, 2, 0, 1])), verbose=0)
    for a, b in zip(before, model.get_weights()):
        assert np.array_equal(a, b)  # refused before the first step
    with pytest.raises(ValueError, match=r"In the labels \(y\) given to fit/evaluate: .*label value of 7"):
        model.fit(x, np.array([0, 1, 2, 7, 1, 2, 0, 1]), verbose=0)


def test_nan_input_on_one_replica_raises_like_on_two() -> None:
    x = np.zeros((8, 4), "float32")
    x[0, 0] = np.nan
    model = _classifier()
    before = model.get_weights()
    with pytest.raises(NonFiniteGradientError, match=r"Non-finite gradient .* at step 1 on ranks \[0\]"):
        model.fit(x, np.array([0, 1, 2, 0, 1, 2, 0, 1]), verbose=0)
    for a, b in zip(before, model.get_weights()):
        assert np.array_equal(a, b)  # the bad step did not update the weights
