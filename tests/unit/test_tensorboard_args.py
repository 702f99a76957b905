"""TensorBoard's Keras arguments are honoured (or refused by name), and histograms carry layer names."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from unison import keras

pytestmark = pytest.mark.timeout(180)


def _fit(tmp_path: Any, epochs: int = 2, **kwargs: Any) -> str:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype("float32")
    y = (x[:, 0] > 0).astype("int64")
    model = keras.Sequential(
        [keras.Input((4,)), keras.layers.Dense(8, activation="relu", name="hidden"), keras.layers.Dense(2, name="out")],
        name="sequential",
    )
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    log_dir = str(tmp_path / "logs")
    model.fit(x, y, batch_size=16, epochs=epochs, verbose=0, callbacks=[keras.callbacks.TensorBoard(log_dir, **kwargs)])
    return log_dir


def _acc(folder: str) -> EventAccumulator:
    acc = EventAccumulator(folder, size_guidance={"scalars": 0, "histograms": 0, "images": 0, "tensors": 0})
    acc.Reload()
    return acc


def test_histograms_are_tagged_with_layer_names_as_keras_3(tmp_path) -> None:
    acc = _acc(os.path.join(_fit(tmp_path, histogram_freq=1), "train"))
    tags = acc.Tags()["histograms"]
    # keras 3: weight.path + "/histogram", e.g. sequential/hidden/kernel/histogram
    assert "sequential/hidden/kernel/histogram" in tags and "sequential/hidden/bias/histogram" in tags
    assert "sequential/out/kernel/histogram" in tags
    assert not any("stack" in t for t in tags), tags


def test_write_images_writes_each_weight_as_an_image(tmp_path) -> None:
    acc = _acc(os.path.join(_fit(tmp_path, histogram_freq=1, write_images=True), "train"))
    images = acc.Tags()["images"]
    assert "sequential/hidden/kernel/image" in images and "sequential/hidden/bias/image" in images
    kernel = acc.Images("sequential/hidden/kernel/image")[0]
    assert (kernel.width, kernel.height) == (8, 4)  # the 4x8 kernel, its long side across


def test_write_steps_per_second_logs_epoch_and_batch_rates(tmp_path) -> None:
    acc = _acc(os.path.join(_fit(tmp_path, write_steps_per_second=True, update_freq="batch"), "train"))
    scalars = acc.Tags()["scalars"]
    assert "epoch_steps_per_second" in scalars and "batch_steps_per_second" in scalars
    assert [e.step for e in acc.Scalars("epoch_steps_per_second")] == [0, 1]
    assert all(e.value > 0 for e in acc.Scalars("batch_steps_per_second"))
    assert len(acc.Scalars("batch_steps_per_second")) == 8  # 4 batches x 2 epochs


@pytest.mark.parametrize("profile_batch", [2, (2, 3), "2,3"])
def test_profile_batch_writes_a_torch_profiler_trace(tmp_path, profile_batch) -> None:
    log_dir = _fit(tmp_path, profile_batch=profile_batch)
    traces = [f for f in os.listdir(os.path.join(log_dir, "train")) if f.endswith(".pt.trace.json")]
    assert len(traces) == 1, os.listdir(os.path.join(log_dir, "train"))


def test_embeddings_freq_saves_the_weights_as_keras_does(tmp_path) -> None:
    log_dir = _fit(tmp_path, embeddings_freq=1)
    saved = sorted(f for f in os.listdir(os.path.join(log_dir, "train")) if f.startswith("keras_embedding"))
    assert saved == ["keras_embedding.ckpt-0.weights.h5", "keras_embedding.ckpt-1.weights.h5"]


@pytest.mark.parametrize("bad", [-1, (3, 2), "a,b", (1, 2, 3), 1.5])
def test_a_bad_profile_batch_is_refused_with_keras_message(tmp_path, bad) -> None:
    with pytest.raises(ValueError) as err:
        keras.callbacks.TensorBoard(str(tmp_path), profile_batch=bad)
    assert str(err.value) == (
        "profile_batch must be a non-negative integer or 2-tuple of positive integers. A pair of positive "
        f"integers signifies a range of batches to profile. Found: {bad!r}"
    )
