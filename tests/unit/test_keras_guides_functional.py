"""What keras.io's functional-API and Sequential guides use: None sizes in ``keras.Input``,
``layer.input``/``layer.output``, a Sequential's symbolic graph, ``pop``, ``trainable`` and
``Model.from_config``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras import layers


def test_variable_length_input_reports_none_and_runs_on_any_length() -> None:
    tokens = keras.Input(shape=(None,), dtype="int32", name="tokens")
    assert tokens.shape == (None, None)
    embedded = layers.Embedding(50, 4)(tokens)
    assert embedded.shape == (None, None, 4)
    encoded = layers.LSTM(3)(embedded)
    assert encoded.shape == (None, 3)
    model = keras.Model(tokens, layers.Dense(2)(encoded))
    for length in (1, 5, 13):
        ids = torch.randint(0, 50, (3, length))
        out = model(ids)
        assert tuple(out.shape) == (3, 2)
        # the replayed graph is the layers applied in order, whatever the length
        want = model.layers[2](model.layers[1](model.layers[0](ids)))
        torch.testing.assert_close(out, want)


def test_variable_length_model_fits_and_predicts() -> None:
    tokens = keras.Input(shape=(None,))
    x = layers.GlobalAveragePooling1D()(layers.Embedding(20, 4)(tokens))
    model = keras.Model(tokens, layers.Dense(1)(x))
    model.compile(optimizer="sgd", loss="mse")
    data = np.random.default_rng(0).integers(0, 20, size=(16, 7))
    history = model.fit(data, np.zeros((16, 1), "float32"), epochs=1, batch_size=8, verbose=0)
    assert len(history.history["loss"]) == 1
    assert model.predict(data[:, :3], verbose=0).shape == (16, 1)


def test_images_of_any_size_keep_static_channels() -> None:
    images = keras.Input(shape=(None, None, 3))
    x = layers.Conv2D(5, 3, strides=2)(images)
    assert x.shape == (None, None, None, 5)
    pooled = layers.GlobalMaxPooling2D()(x)
    assert pooled.shape == (None, 5)
    model = keras.Model(images, pooled)
    assert tuple(model(torch.zeros(2, 11, 17, 3)).shape) == (2, 5)


def test_a_layer_that_needs_a_known_size_says_so() -> None:
    with pytest.raises(ValueError, match=r"variable \(None\) size"):
        layers.Dense(3)(keras.Input(shape=(None,)))
    with pytest.raises(ValueError, match="non-negative ints, or None"):
        keras.Input(shape=(-1, 3))


def test_variable_size_model_saves_and_loads(tmp_path: Any) -> None:
    tokens = keras.Input(shape=(None,))
    model = keras.Model(tokens, layers.GlobalAveragePooling1D()(layers.Embedding(10, 2)(tokens)))
    path = str(tmp_path / "v.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert loaded.inputs[0].shape == (None, None)
    ids = torch.randint(0, 10, (2, 9))
    torch.testing.assert_close(loaded(ids), model(ids))


def test_layer_output_builds_a_feature_extractor() -> None:
    inputs = keras.Input(shape=(4,))
    hidden = layers.Dense(3, activation="relu", name="hidden")
    out = layers.Dense(2)(hidden(inputs))
    model = keras.Model(inputs, out)
    assert hidden.input is inputs
    features = keras.Model(inputs=model.input, outputs=[layer.output for layer in model.layers])
    x = torch.randn(5, 4)
    h, o = features(x)
    torch.testing.assert_close(h, hidden(x))
    torch.testing.assert_close(o, model(x))


def test_layer_output_before_any_call_is_an_error() -> None:
    with pytest.raises(ValueError, match="'lonely' has never been called.*no defined output"):
        _ = layers.Dense(2, name="lonely").output


def test_sequential_with_an_input_has_a_symbolic_graph() -> None:
    model = keras.Sequential(
        [keras.Input(shape=(6,)), layers.Dense(4, name="a"), layers.Dense(3, name="mid"), layers.Dense(2)]
    )
    assert model.inputs[0].shape == (None, 6) and model.output.shape == (None, 2)
    every = keras.Model(inputs=model.inputs, outputs=[layer.output for layer in model.layers])
    one = keras.Model(inputs=model.inputs, outputs=model.get_layer(name="mid").output)
    x = torch.randn(3, 6)
    a, mid, last = every(x)
    torch.testing.assert_close(mid, model.layers[1](model.layers[0](x)))
    torch.testing.assert_close(last, model(x))
    torch.testing.assert_close(one(x), mid)
    assert model.get_layer(index=-1) is model.layers[2]
    with pytest.raises(ValueError, match="out of range"):
        model.get_layer(index=3)


def test_sequential_without_input_has_no_inputs() -> None:
    model = keras.Sequential([layers.Dense(2)])
    with pytest.raises(ValueError, match="has no defined inputs.*keras.Input"):
        _ = model.inputs


def test_sequential_pop_removes_the_last_layer() -> None:
    model = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(3), layers.Dense(2)])
    last = model.pop()
    assert isinstance(last, layers.Dense) and len(model.layers) == 1
    assert model.output.shape == (None, 3)
    assert tuple(model(torch.zeros(2, 4)).shape) == (2, 3)
    model.pop()
    with pytest.raises(IndexError, match="no layers"):
        model.pop()


def test_setting_trainable_freezes_built_layers_and_nested_models() -> None:
    model = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(3), layers.Dense(2)])
    for layer in model.layers[:-1]:
        layer.trainable = False
    assert len(model.trainable_weights) == 2 and model.layers[0].trainable is False
    base = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(3)])
    base.trainable = False
    top = keras.Sequential([base, layers.Dense(1)])
    top.compile(optimizer="sgd", loss="mse")
    before = [w.detach().clone() for w in base.weights]
    top.fit(np.ones((8, 4), "float32"), np.full((8, 1), 5.0, "float32"), epochs=2, verbose=0)
    for old, new in zip(before, base.weights):
        torch.testing.assert_close(old, new)
    assert len(top.trainable_weights) == 2


def test_unfreezing_keeps_weights_created_non_trainable() -> None:
    class Counter(layers.Layer):
        def build(self, input_shape: Any) -> None:
            self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")
            self.seen = self.add_weight(shape=(), initializer="zeros", trainable=False)

        def call(self, inputs: torch.Tensor) -> torch.Tensor:
            return inputs * self.w

    layer = Counter()
    layer(torch.zeros(1, 2))
    layer.trainable = False
    layer.trainable = True
    assert layer.w.requires_grad and not layer.seen.requires_grad


class CustomDense(layers.Layer):
    def __init__(self, units: int = 32) -> None:
        super().__init__()
        self.units = units

    def build(self, input_shape: Any) -> None:
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal")
        self.b = self.add_weight(shape=(self.units,), initializer="random_normal")

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return torch.matmul(inputs, self.w) + self.b

    def get_config(self) -> dict[str, Any]:
        return {"units": self.units}


def test_model_from_config_rebuilds_functional_and_sequential() -> None:
    inputs = keras.Input((4,))
    model = keras.Model(inputs, CustomDense(10)(inputs))
    new_model = keras.Model.from_config(model.get_config(), custom_objects={"CustomDense": CustomDense})
    assert new_model is not model and new_model.count_params() == model.count_params() == 50
    assert tuple(new_model(torch.zeros(2, 4)).shape) == (2, 10)
    seq = keras.Sequential([keras.Input(shape=(3,)), layers.Dense(2)])
    again = keras.Sequential.from_config(seq.get_config())
    assert isinstance(again, keras.Sequential) and again.count_params() == 8


def test_model_from_config_rejects_other_dicts() -> None:
    with pytest.raises(ValueError, match="no functional or Sequential model"):
        keras.Model.from_config({"units": 3})
    with pytest.raises(TypeError, match="get_config"):
        keras.Model.from_config("nope")  # type: ignore[arg-type]


def test_summary_wraps_long_layer_names_inside_the_table() -> None:
    from unison.keras.utils.summary_utils import summary_lines

    inputs = keras.Input(shape=(8, 8, 1))
    model = keras.Model(inputs, layers.GlobalMaxPooling2D()(layers.Conv2D(2, 3)(inputs)))
    lines = summary_lines(model)
    table = [line for line in lines if line.startswith(("│", "┃", "┏", "┡", "└"))]
    assert len({len(line) for line in table}) == 1  # every row as wide as the frame
    assert any("(GlobalMaxPooling2D)" in line for line in table) and all("\n" not in line for line in lines)


def test_summary_of_a_sequential_built_by_its_first_call_shows_shapes() -> None:
    from unison.keras.utils.summary_utils import summary_lines

    model = keras.Sequential([layers.Dense(2, activation="relu"), layers.Dense(4)])
    model(torch.ones(1, 4))
    rows = [line for line in summary_lines(model) if line.startswith("│")]
    assert "(None, 2)" in rows[0] and "(None, 4)" in rows[1]
