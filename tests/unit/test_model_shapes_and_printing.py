"""model.input_shape/output_shape, layer.input_shape/output_shape (Keras 2) and TF's tensor printing."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf

pytestmark = pytest.mark.timeout(60)
keras = tf.keras


def test_sequential_shapes():
    model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(3), keras.layers.Dense(1)])
    assert model.input_shape == (None, 4) and model.output_shape == (None, 1)
    assert model.layers[0].input_shape == (None, 4) and model.layers[0].output_shape == (None, 3)


def test_sequential_built_by_a_call_reports_that_call():
    model = keras.Sequential([keras.layers.Dense(3)])
    assert not hasattr(model, "output_shape")  # never built: no shape, as Keras 3
    model(np.zeros((2, 5), "float32"))
    assert model.input_shape == (2, 5) and model.output_shape == (2, 3)


def test_functional_shapes():
    inputs = keras.Input(shape=(4,))
    hidden = keras.layers.Dense(2)
    a, b = hidden(inputs), keras.layers.Dense(3)(inputs)
    assert keras.Model(inputs, a).output_shape == (None, 2)
    two = keras.Model(inputs, [a, b])
    assert two.input_shape == (None, 4) and two.output_shape == [(None, 2), (None, 3)]
    assert hidden.output_shape == (None, 2) and hidden.input_shape == (None, 4)


def test_subclassed_model_has_no_shape_as_in_tf():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(2)

        def call(self, x):
            return self.dense(x)

    net = Net()
    out = net(np.zeros((2, 4), "float32"))  # a numpy batch becomes a tensor, as in Keras
    assert tuple(out.shape) == (2, 2)
    for name in ("output_shape", "input_shape"):
        assert not hasattr(net, name)
    assert not hasattr(net.dense, "output_shape")  # called on real tensors only (Keras 2 raises too)


def test_tensor_prints_in_tf_form():
    model = keras.Sequential([keras.Input(shape=(2,)), keras.layers.Dense(1, kernel_initializer="ones")])
    y = model(tf.constant([[1.0, 2.0]]))
    assert y.requires_grad
    assert str(y) == "tf.Tensor([[3.]], shape=(1, 1), dtype=float32)"
    assert repr(y) == "<tf.Tensor: shape=(1, 1), dtype=float32, numpy=array([[3.]], dtype=float32)>"
    assert str(tf.constant(3)) == "tf.Tensor(3, shape=(), dtype=int32)"
    assert repr(tf.constant(2.5)) == "<tf.Tensor: shape=(), dtype=float32, numpy=2.5>"
    assert "bfloat16" in str(torch.zeros(2, dtype=torch.bfloat16))
    assert f"{tf.constant(1.5):.2f}" == "1.50"
    assert str(tf.Variable(1.0)).startswith("<tf.Variable 'Variable:0' shape=()")  # its own form


def _summary(model, **kwargs):
    lines: list[str] = []
    model.summary(print_fn=lines.append, **kwargs)
    return lines


def test_summary_takes_keras_arguments() -> None:
    from unison import keras

    inner = keras.Sequential([keras.layers.Dense(4, name="inner_dense", input_shape=(3,))], name="inner")
    inner.trainable = False
    x = keras.Input(shape=(3,))
    model = keras.Model(x, keras.layers.Dense(2, name="head")(keras.layers.Dropout(0.1, name="drop")(inner(x))))
    rows = _summary(model, show_trainable=True)
    assert "Trainable" in rows[2]
    flags = {line.split()[1]: line.split("│")[-2].strip() for line in rows if line.startswith("│")}
    # Keras 3: Y/N, - without weights (the functional model's InputLayer row too)
    assert flags == {x.name: "-", "inner": "N", "drop": "-", "head": "Y"}
    nested = _summary(model, expand_nested=True)
    assert any(line.startswith("│    └ inner_dense (Dense)") for line in nested)  # Keras 3's mark under its model
    assert not any("inner_dense" in line for line in _summary(model))
    ranged = [line for line in _summary(model, layer_range=["drop", "head"]) if line.startswith("│")]
    assert [line.split()[1] for line in ranged] == ["drop", "head"]
    assert sum(line.startswith("├") for line in _summary(model)) == 3  # a rule between rows, as Keras 3
    narrow = _summary(model, line_length=60)
    assert {len(line) for line in narrow[1:4]} == {60}  # line_length: the whole printed line
    positioned = _summary(model, positions=[0.5, 0.8, 1.0], line_length=80)
    assert len(positioned[1]) == 80
    with pytest.raises(ValueError, match="layer_range names layers that model"):
        model.summary(layer_range=["drop", "nope"])
    with pytest.raises(ValueError, match="positions must give the end of each of the 3 columns"):
        model.summary(positions=[0.5, 0.4, 1.0])


def test_summary_counts_the_optimizer_once_it_has_stepped_as_keras_3() -> None:
    # TF 2.21 on keras.io's structured-data model printed, after fit: Total params: 3,479 (13.62 KB),
    # Trainable params: 1,153 (4.50 KB), Non-trainable params: 18 (96.00 B), Optimizer params: 2,308 (9.02 KB)
    from unison import keras

    model = keras.Sequential([keras.layers.Dense(4, input_shape=(3,)), keras.layers.Dense(1)])
    model.compile("adam", "mse")
    assert not any("Optimizer params" in line for line in _summary(model))
    model.fit(np.zeros((8, 3), "float32"), np.zeros((8, 1), "float32"), verbose=0)
    lines = _summary(model)
    trainable = 3 * 4 + 4 + 4 + 1  # 21 weights
    # Adam: iterations (int64) + learning rate (float32) + a momentum and a velocity per weight
    assert f" Optimizer params: {2 * trainable + 2:,} ({2 * trainable * 4 + 8 + 4:.2f} B)" in lines
    assert f" Total params: {3 * trainable + 2:,} ({3 * trainable * 4 + 12:.2f} B)" in lines


def test_a_programs_first_models_take_keras_default_names(monkeypatch: pytest.MonkeyPatch) -> None:
    # Keras 3 names a program's first functional model "functional" and its first Sequential
    # "sequential" (keras.io's summaries print them); unison drew the default name twice (functional_1)
    from unison import keras
    from unison.keras.backend import common

    monkeypatch.setattr(common, "_COUNTERS", {})
    from unison.keras.layers import base

    monkeypatch.setattr(base, "_COUNTERS", common._COUNTERS)
    x = keras.Input((3,))
    first, second = (keras.Model(x, keras.layers.Dense(2)(x)) for _ in range(2))
    assert (first.name, second.name) == ("functional", "functional_1")
    assert [keras.Sequential().name, keras.Sequential().name] == ["sequential", "sequential_1"]
