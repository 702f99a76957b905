"""``Layer.get_config``/``from_config`` in Keras 3's layout (``keras/layers/layer_config.py``).

The key sets are compared with Keras 3 in ``tests/conformance/test_vs_keras_layer_configs.py``;
here: every layer's config rebuilds an equal layer, models rebuild from configs, custom layers
keep working, and what cannot be listed is reported.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from unison import keras


def _first_layer(cls: type) -> Any:
    for args in ((), (4,), (4, 3)):
        try:
            return cls(*args)
        except Exception:  # noqa: BLE001 - the next argument list
            continue
    return None


def _without_name(config: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k != "name"}


def test_every_layer_rebuilds_from_its_config() -> None:
    checked = 0
    for name in sorted(n for n in dir(keras.layers) if n[0].isupper()):
        cls = getattr(keras.layers, name)
        if not isinstance(cls, type) or name in ("Lambda", "InputSpec"):
            continue
        layer = _first_layer(cls)
        if layer is None or not hasattr(layer, "get_config"):
            continue
        config = layer.get_config()
        assert {"name", "dtype"} <= set(config), name  # and trainable, as Keras: not for HashedCrossing, InputLayer
        again = type(layer).from_config(config)
        assert _without_name(again.get_config()) == _without_name(config), name
        checked += 1
    assert checked > 100  # the layers constructible with those arguments


def test_defaults_and_serialised_values() -> None:
    config = keras.layers.Conv2D(4, 3).get_config()
    assert config["kernel_size"] == (3, 3) and config["strides"] == (1, 1)
    assert config["data_format"] == "channels_last" and config["activation"] == "linear"
    assert config["kernel_initializer"] == keras.initializers.serialize(keras.initializers.GlorotUniform())
    assert config["kernel_constraint"] is None and config["activity_regularizer"] is None
    assert config["dtype"] == {
        "module": "keras",
        "class_name": "DTypePolicy",
        "config": {"name": "float32"},
        "registered_name": None,
    }


def test_trainable_dtype_and_objects_round_trip() -> None:
    layer = keras.layers.Dense(
        3,
        activation="relu",
        kernel_regularizer=keras.regularizers.L2(0.5),
        kernel_constraint=keras.constraints.MaxNorm(2.0),
        dtype="float64",
    )
    layer.trainable = False
    config = layer.get_config()
    assert config["trainable"] is False and config["dtype"]["config"]["name"] == "float64"
    assert config["kernel_regularizer"]["class_name"] == "L2"
    assert config["kernel_constraint"]["module"] == "keras.constraints"
    again = keras.layers.Dense.from_config(config)
    assert again.trainable is False and again.dtype_policy.name == "float64"
    assert _without_name(again.get_config()) == _without_name(config)
    config.update(dtype=None, trainable=True)
    penalised = keras.layers.Dense.from_config(config)
    penalised(torch.ones(2, 4))
    assert float(penalised.losses[0].detach()) > 0.0  # the L2 penalty deserialised from its dict


def test_custom_objects_stay_objects() -> None:
    def my_activation(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    class MyInit(keras.initializers.Initializer):
        def __call__(self, shape: Any, dtype: Any = None) -> torch.Tensor:
            return torch.ones(shape)

    init = MyInit()
    config = keras.layers.Dense(2, activation=my_activation, kernel_initializer=init).get_config()
    # Keras's names would not load back: the objects stay, and model saving names them
    assert config["activation"] is my_activation and config["kernel_initializer"] is init
    assert keras.layers.Dense(2, activation=torch.tanh).get_config()["activation"] is torch.tanh


class _NoKwargs(keras.layers.Layer):
    def __init__(self, units: int = 2, scale: float = 1.5) -> None:
        super().__init__()
        self.units, self.scale = units, scale

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return inputs * self.scale


class _Extended(keras.layers.Dense):
    def __init__(self, units: int, factor: float = 2.0, **kwargs: Any) -> None:
        super().__init__(units, **kwargs)
        self.factor = factor

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "note": "kept"}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> _Extended:
        config = dict(config)
        config.pop("note")
        return super().from_config(config)  # type: ignore[return-value]


def test_custom_layers_keep_working() -> None:
    layer = _NoKwargs(scale=3.0)
    layer.trainable = False
    config = layer.get_config()
    assert config["units"] == 2 and config["scale"] == 3.0
    again = _NoKwargs.from_config(config)  # no **kwargs: name and trainable are set after construction
    assert again.scale == 3.0 and again.trainable is False and again.name == layer.name
    extended = _Extended(3, factor=4.0, activation="tanh").get_config()
    assert extended["note"] == "kept" and extended["factor"] == 4.0 and extended["use_bias"] is True
    rebuilt = _Extended.from_config(extended)
    assert rebuilt.factor == 4.0 and rebuilt.get_config()["activation"] == "tanh"


def test_models_rebuild_from_configs(tmp_path: Any) -> None:
    torch.manual_seed(0)
    inputs = keras.Input((6, 4))
    x = keras.layers.Conv1D(3, 2, kernel_regularizer="l2")(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.LSTM(2, dropout=0.1)(x)
    outputs = keras.layers.Dense(1, activation="sigmoid")(keras.layers.Dropout(0.2)(x))
    model = keras.Model(inputs, outputs)
    model.layers[1].trainable = False
    data = np.random.default_rng(0).normal(size=(2, 6, 4)).astype("float32")
    expected = model.predict(data, verbose=0)
    clone = keras.models.clone_model(model)
    assert clone.layers[1].trainable is False
    assert len(clone.trainable_weights) == len(model.trainable_weights)  # the frozen layer's weights stay frozen
    from_json = keras.models.model_from_json(model.to_json())
    for rebuilt in (clone, from_json, keras.Model.from_config(model.get_config())):
        rebuilt.set_weights(model.get_weights())
        np.testing.assert_allclose(rebuilt.predict(data, verbose=0), expected, rtol=1e-5, atol=1e-6)
    model.save(str(tmp_path / "m.keras"))
    loaded = keras.models.load_model(str(tmp_path / "m.keras"))
    np.testing.assert_allclose(loaded.predict(data, verbose=0), expected, rtol=1e-5, atol=1e-6)
    assert loaded.layers[1].trainable is False


def test_activity_regularizer_round_trips_through_the_config() -> None:
    assert keras.layers.Conv2D(2, 3, activity_regularizer=None).get_config()["activity_regularizer"] is None
    config = keras.layers.Conv2D(2, 3, activity_regularizer=keras.regularizers.L2(0.25)).get_config()
    assert config["activity_regularizer"]["class_name"] == "L2"
    rebuilt = keras.layers.Conv2D.from_config(config)
    assert rebuilt.activity_regularizer.get_config() == {"l2": 0.25}


def test_positional_extras_cannot_be_named() -> None:
    class Star(keras.layers.Layer):
        def __init__(self, *sizes: int, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.sizes = sizes

    assert Star().get_config()["trainable"] is True
    with pytest.raises(ValueError, match="Pass them by keyword"):
        Star(1, 2).get_config()


def test_input_layer_config_is_keras_3s() -> None:
    layer = keras.layers.InputLayer(batch_shape=(2, 4), dtype="int32", name="ids")
    config = layer.get_config()
    assert config == {
        "batch_shape": (2, 4),
        "dtype": "int32",
        "sparse": False,
        "ragged": False,
        "name": "ids",
        "optional": False,
    }
    again = keras.layers.InputLayer.from_config(config)
    assert again.shape == (4,) and again.batch_size == 2
    with pytest.raises(ValueError, match="sparse=True"):
        keras.layers.InputLayer(shape=(3,), sparse=True)
    with pytest.raises(ValueError, match="not both"):
        keras.layers.InputLayer(shape=(3,), batch_shape=(None, 3))


def test_conv2d_groups_are_checked() -> None:
    with pytest.raises(ValueError, match="filters must be evenly divisible"):
        keras.layers.Conv2D(3, 3, groups=2)
    with pytest.raises(ValueError, match="input channels must be evenly divisible"):
        keras.layers.Conv2D(4, 3, groups=2)(torch.ones(1, 5, 5, 3))


def test_conv_lstm_mask_shape_is_checked() -> None:
    layer = keras.layers.ConvLSTM1D(2, 3)
    with pytest.raises(ValueError, match=r"mask of shape \(batch, timesteps\)"):
        layer(torch.ones(2, 4, 5, 3), mask=torch.ones(2, 3, dtype=torch.bool))


def test_listed_arguments_unison_lacks_are_refused_when_set() -> None:
    # Keras lists these at their off setting; unison takes that setting and refuses the others
    assert keras.layers.Dense(2, quantization_config=None).get_config()["quantization_config"] is None
    with pytest.raises(ValueError, match="no quantized Dense"):
        keras.layers.Dense(2, quantization_config={"mode": "int8"})
    with pytest.raises(ValueError, match="no quantized Embedding"):
        keras.layers.Embedding(4, 2, quantization_config={"mode": "int8"})
    with pytest.raises(ValueError, match="sparse=True"):
        keras.layers.Hashing(4, sparse=True)
    with pytest.raises(ValueError, match="renorm=True"):
        keras.layers.BatchNormalization(renorm=True)
    bn = keras.layers.BatchNormalization(gamma_regularizer="l2")
    bn(torch.ones(2, 3))
    assert len(bn.losses) == 1  # the gamma penalty


@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("RandomRotation", {"factor": 0.2}),
        ("RandomShear", {"x_factor": 0.4, "y_factor": (0.1, 0.3)}),
        ("RandomBrightness", {"factor": 0.2}),
        ("RandomPosterization", {"factor": 3}),
        ("Solarization", {"addition_factor": 0.3}),
        ("RandomSharpness", {"factor": 0.2}),
        ("ZeroPadding2D", {"padding": (1, 2)}),
        ("StringLookup", {}),
        ("Hashing", {"num_bins": 3, "dtype": "int32"}),
        ("HashedCrossing", {"num_bins": 3, "output_mode": "one_hot"}),
    ],
)
def test_keras_forms_of_arguments_load_back(name: str, kwargs: dict[str, Any]) -> None:
    # get_config saves Keras 3's forms ((-f, f) ranges, pairs of pairs, "[UNK]", an int64 policy);
    # from_config takes them and saves them again unchanged
    cls = getattr(keras.layers, name)
    config = cls(**kwargs).get_config()
    assert _without_name(cls.from_config(config).get_config()) == _without_name(config)


def test_a_loaded_shear_factor_keeps_its_range() -> None:
    layer = keras.layers.RandomShear.from_config(keras.layers.RandomShear(x_factor=0.4).get_config())
    assert layer.x_factor == (-0.4, 0.4)
    with pytest.raises(ValueError, match=r"x_factor.*range \[0, 1\]"):
        keras.layers.RandomShear(x_factor=(-0.4, 0.3))  # only the saved (-f, f) form may be negative


def test_unit_range_factors_refuse_negatives() -> None:
    # Keras's RandomSharpness and RandomInvert take factors in [0, 1] (0.2 is the range (0, 0.2))
    for cls in (keras.layers.RandomSharpness, keras.layers.RandomInvert):
        assert cls(factor=0.2).factor == (0.0, 0.2)
        with pytest.raises(ValueError, match=r"range \[0, 1\]\. Received: factor=-0.3"):
            cls(factor=-0.3)


def test_hashing_outputs_take_the_given_dtype() -> None:
    ids = keras.layers.Hashing(3, dtype="int32")(np.array(["a", "b"]))
    assert ids.dtype == torch.int32
    crossed = keras.layers.HashedCrossing(3)((np.array(["a"]), np.array([1])))
    assert crossed.dtype == torch.int64
    with pytest.raises(ValueError, match="numeric dtype, such as 'int64'"):
        keras.layers.Hashing(3, dtype="string")
