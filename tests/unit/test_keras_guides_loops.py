"""What keras.io's training-loop-from-scratch and callbacks guides use: raw uint8 data into a
functional model, running logs in ``on_test_batch_end`` and the predict hooks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras import layers
from unison.keras.backend.keras_tensor import conform_input


def test_a_functional_model_converts_data_to_its_input_dtype() -> None:
    inputs = keras.Input(shape=(4,))
    model = keras.Model(inputs, layers.Dense(2)(inputs))
    pixels = torch.tensor([[0, 128, 255, 7]], dtype=torch.uint8)
    torch.testing.assert_close(model(pixels), model(pixels.float()))
    torch.testing.assert_close(model(np.ones((1, 4))), model(torch.ones(1, 4)))  # float64 NumPy
    seq = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(2)])
    torch.testing.assert_close(seq(pixels), seq(pixels.float()))


def test_conform_input_rules() -> None:
    assert conform_input(torch.ones(2, dtype=torch.uint8), torch.float32).dtype == torch.float32
    assert conform_input(torch.ones(2, dtype=torch.float64), torch.float32).dtype == torch.float32
    assert conform_input(torch.ones(2, dtype=torch.bfloat16), torch.float32).dtype == torch.bfloat16
    assert conform_input(torch.tensor([1.9]), torch.int64).tolist() == [1]
    assert conform_input(torch.tensor([3], dtype=torch.int32), torch.int64).dtype == torch.int32


class Recorder(keras.callbacks.Callback):
    def __init__(self) -> None:
        super().__init__()
        self.test_losses: list[float] = []
        self.outputs: list[tuple[int, ...]] = []
        self.events: list[str] = []

    def on_test_batch_end(self, batch: int, logs: Any = None) -> None:
        self.test_losses.append(logs["loss"])

    def on_predict_begin(self, logs: Any = None) -> None:
        self.events.append("begin")

    def on_predict_batch_end(self, batch: int, logs: Any = None) -> None:
        self.outputs.append(tuple(logs["outputs"].shape))

    def on_predict_end(self, logs: Any = None) -> None:
        self.events.append("end")


def test_evaluate_gives_test_batch_hooks_the_running_loss() -> None:
    model = keras.Sequential([keras.Input(shape=(1,)), layers.Dense(1, kernel_initializer="zeros")])
    model.compile(optimizer="sgd", loss="mse")
    y = np.array([[1.0], [1.0], [3.0], [3.0]], "float32")
    recorder = Recorder()
    total = model.evaluate(np.zeros((4, 1), "float32"), y, batch_size=2, verbose=0, callbacks=[recorder])
    # batch 0: mean(1, 1) = 1; after batch 1: mean(1, 1, 9, 9) = 5
    assert recorder.test_losses == pytest.approx([1.0, 5.0]) and total == pytest.approx(5.0)


def test_predict_calls_the_predict_hooks_with_each_batch_outputs() -> None:
    model = keras.Sequential([keras.Input(shape=(3,)), layers.Dense(2)])
    recorder = Recorder()
    out = model.predict(np.zeros((5, 3), "float32"), batch_size=2, callbacks=[recorder], verbose=0)
    assert out.shape == (5, 2)
    assert recorder.events == ["begin", "end"] and recorder.outputs == [(2, 2), (2, 2), (1, 2)]


def test_compile_objects_survive_save_and_load(tmp_path: Any) -> None:
    # the distributed-training guide's make_or_restore_model loads a model compiled with objects
    inputs = keras.Input(shape=(4,))
    model = keras.Model(inputs, layers.Dense(3)(inputs))
    model.compile(
        optimizer=keras.optimizers.Adam(),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[keras.metrics.SparseCategoricalAccuracy(), keras.metrics.SparseTopKCategoricalAccuracy(k=2)],
    )
    x, y = np.random.default_rng(0).normal(size=(8, 4)).astype("float32"), np.array([0, 1, 2, 0, 1, 2, 0, 1])
    model.fit(x, y, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert loaded.loss is not None
    assert (
        loaded.evaluate(x, y, verbose=0, return_dict=True).keys()
        == model.evaluate(x, y, verbose=0, return_dict=True).keys()
    )
    assert loaded.evaluate(x, y, verbose=0) == pytest.approx(model.evaluate(x, y, verbose=0))
