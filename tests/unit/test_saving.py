"""model.save('x.keras') / keras.models.load_model: architecture + weights + compile arguments."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
import torch

import unison as tf
from unison import keras
from unison.keras.saving import SavingError
from unison.keras.saving.weights_file import WeightsFileError

pytestmark = pytest.mark.timeout(120)


def _functional() -> keras.Model:
    ids = keras.Input(shape=(6,), dtype="int64", name="ids")
    emb = keras.layers.Embedding(20, 4, name="emb")(ids)
    pooled = torch.mean(emb, dim=1)
    dense = keras.layers.Dense(8, activation="relu", name="hidden")(pooled[:, :3] * 2.0)
    out = keras.layers.Dense(3, activation="softmax", name="probs")(keras.layers.Dropout(0.1)(dense))
    return keras.Model(ids, out)


def test_functional_round_trip_same_outputs_and_compile(tmp_path: Any) -> None:
    model = _functional()
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    x = torch.randint(0, 20, (5, 6))
    model.eval(), loaded.eval()
    torch.testing.assert_close(loaded(x), model(x))
    assert [type(m).__name__ for m in loaded.layers] == [type(m).__name__ for m in model.layers]
    assert loaded._compiled and isinstance(loaded.optimizer, keras.optimizers.Adam)
    assert abs(float(loaded.optimizer.learning_rate.numpy()) - 0.01) < 1e-9
    rng = np.random.default_rng(0)
    hist = loaded.fit(rng.integers(0, 20, (64, 6)), rng.integers(0, 3, 64), epochs=1, verbose=0)
    assert np.isfinite(hist.history["loss"][0])


def test_sequential_round_trip_and_multi_input_graph(tmp_path: Any) -> None:
    seq = keras.Sequential(
        [
            keras.layers.InputLayer(input_shape=(4, 4)),
            keras.layers.Reshape((16,)),
            keras.layers.Dense(5, activation="tanh"),
            keras.layers.Dense(2),
        ]
    )
    seq.save(tmp_path / "s.keras")
    again = keras.models.load_model(tmp_path / "s.keras")
    x = torch.randn(3, 4, 4)
    torch.testing.assert_close(again(x), seq(x))
    assert not again._compiled
    a, b = keras.Input(shape=(3,), name="a"), keras.Input(shape=(2,), name="b")
    inner = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    out = keras.layers.Concatenate(axis=-1)([inner(a), b])
    graph = keras.Model({"a": a, "b": b}, [out, keras.layers.Dense(1)(out)])
    graph.save(str(tmp_path / "g.keras"))
    g2 = keras.models.load_model(str(tmp_path / "g.keras"))
    feed = {"a": torch.randn(4, 3), "b": torch.randn(4, 2)}
    for got, want in zip(g2(feed), graph(feed)):
        torch.testing.assert_close(got, want)


def test_load_model_inside_and_outside_a_strategy_scope(tmp_path: Any) -> None:
    model = _functional()
    model.save(str(tmp_path / "m.keras"))
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    with strategy.scope():
        inside = keras.models.load_model(str(tmp_path / "m.keras"))
    assert inside.distribute_strategy is strategy
    x = torch.randint(0, 20, (2, 6))
    model.eval(), inside.eval()
    torch.testing.assert_close(inside(x), model(x))


def test_clone_model_same_architecture_new_weights() -> None:
    model = _functional()
    clone = keras.models.clone_model(model)
    assert clone is not model and clone.count_params() == model.count_params()
    assert not torch.equal(clone.get_layer("hidden").kernel, model.get_layer("hidden").kernel)


def test_layer_get_config_from_config() -> None:
    layer = keras.layers.Dense(4, activation="relu", use_bias=False, name="d")
    config = layer.get_config()
    # Keras's layout: every constructor argument (defaults applied), name, trainable and dtype
    assert {k: config[k] for k in ("units", "activation", "use_bias", "name", "trainable")} == {
        "units": 4,
        "activation": "relu",
        "use_bias": False,
        "name": "d",
        "trainable": True,
    }
    assert config["bias_initializer"]["class_name"] == "Zeros" and config["kernel_regularizer"] is None
    copy = keras.layers.Dense.from_config(config)
    assert copy.units == 4 and copy.name == "d" and not copy.use_bias


class Custom(keras.Model):
    def __init__(self, units: int = 3, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.units = units
        self.dense = keras.layers.Dense(units, input_shape=(2,))
        self.build((1, 2))

    def call(self, inputs: Any) -> Any:
        return self.dense(inputs)

    def get_config(self) -> dict[str, Any]:
        return {"units": self.units}


class NoConfig(keras.Model):
    def __init__(self) -> None:
        super().__init__()
        self.dense = keras.layers.Dense(2, input_shape=(2,))
        self.build((1, 2))

    def call(self, inputs: Any) -> Any:
        return self.dense(inputs)


def test_subclassed_models_need_custom_objects_or_get_config(tmp_path: Any) -> None:
    path = str(tmp_path / "c.keras")
    Custom(units=3).save(path)
    with pytest.raises(SavingError, match=r"custom_objects=\{'Custom': Custom\}"):
        keras.models.load_model(path)
    loaded = keras.models.load_model(path, custom_objects={"Custom": Custom})
    assert isinstance(loaded, Custom) and loaded.units == 3
    plain = NoConfig()
    plain.save(str(tmp_path / "n.keras"))  # weights still save (Keras 3), the architecture cannot
    with pytest.raises(SavingError, match="NoConfig.*save_weights"):
        keras.models.load_model(str(tmp_path / "n.keras"))
    fresh = NoConfig()
    fresh.load_weights(str(tmp_path / "n.keras"))
    torch.testing.assert_close(fresh.dense.kernel, plain.dense.kernel)


def test_weights_files_keep_working_and_are_not_models(tmp_path: Any) -> None:
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    model.save_weights(str(tmp_path / "w.weights.h5"))
    with pytest.raises(SavingError, match="holds weights only.*load_weights"):
        keras.models.load_model(str(tmp_path / "w.weights.h5"))
    # tf.keras's model.save("my_model") / ("m.h5") paths hold the whole model, as in TF
    for name in ("my_model", "m.h5"):
        model.save(str(tmp_path / name))
        loaded = keras.models.load_model(str(tmp_path / name))
        for a, b in zip(loaded.get_weights(), model.get_weights()):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(FileNotFoundError):
        keras.models.load_model(str(tmp_path / "absent.keras"))
    model.save(str(tmp_path / "m.keras"))
    with open(tmp_path / "m.keras", "r+b") as fh:
        fh.seek(os.path.getsize(tmp_path / "m.keras") - 10)
        fh.write(b"XXXXXXXXXX")
    with pytest.raises(WeightsFileError, match="m.keras"):
        keras.models.load_model(str(tmp_path / "m.keras"))


def test_unsavable_arguments_and_unknown_classes(tmp_path: Any) -> None:
    model = keras.Sequential([keras.layers.Dense(2, activation=torch.tanh, input_shape=(3,))])
    model.save(str(tmp_path / "f.keras"))
    with pytest.raises(SavingError, match="activation='relu'"):
        keras.models.load_model(str(tmp_path / "f.keras"))
    with pytest.raises(SavingError, match="not built"):
        keras.Sequential([keras.layers.Dense(2)]).save(str(tmp_path / "u.keras"))
    from unison.keras.saving import from_config

    with pytest.raises(SavingError, match="Unknown layer or model class 'Nope'"):
        from_config({"class_name": "Nope", "config": {}})
    with pytest.raises(SavingError, match="outside torch and operator"):
        from unison.keras.saving.serialization import _resolve_function

        _resolve_function("os.system")


def test_training_resumes_from_a_saved_model(tmp_path: Any) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 4)).astype("float32")
    y = (x[:, 0] > 0).astype("int64")
    torch.manual_seed(0)
    model = keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(4,)), keras.layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy")
    model.fit(x, y, batch_size=32, epochs=1, shuffle=False, verbose=0)
    model.save(str(tmp_path / "r.keras"))
    loaded = keras.models.load_model(str(tmp_path / "r.keras"))
    assert int(loaded.optimizer.iterations) == 3
    model.fit(x, y, batch_size=32, epochs=1, shuffle=False, verbose=0)
    loaded.fit(x, y, batch_size=32, epochs=1, shuffle=False, verbose=0)
    for got, want in zip(loaded.get_weights(), model.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_to_json_model_from_json_and_keras_saving_names() -> None:
    model = _functional()
    text = model.to_json()
    again = keras.models.model_from_json(text)
    assert again.count_params() == model.count_params() and again.to_json() == text
    assert keras.saving.load_model is keras.models.load_model
    with pytest.raises(SavingError, match="JSON text"):
        keras.models.model_from_json("not json")


def test_initializer_and_regularizer_arguments_save(tmp_path: Any) -> None:
    layer = keras.layers.Dense(
        3,
        input_shape=(2,),
        kernel_initializer=keras.initializers.GlorotUniform(seed=3),
        kernel_regularizer=keras.regularizers.l2(1e-4),
    )
    model = keras.Sequential([layer])
    model.save(str(tmp_path / "r.keras"))
    again = keras.models.load_model(str(tmp_path / "r.keras"))
    config = again.layers[0].get_config()
    # get_config gives Keras's serialised dicts, as keras.initializers/regularizers.serialize write them
    assert config["kernel_initializer"]["class_name"] == "GlorotUniform"
    assert config["kernel_initializer"]["config"]["seed"] == 3
    assert config["kernel_regularizer"]["config"]["l2"] == pytest.approx(1e-4)
    torch.testing.assert_close(again.losses[0], model.losses[0])
    from unison.keras.saving import from_config

    with pytest.raises(SavingError, match="refusing"):
        from_config(
            {
                "class_name": "Dense",
                "config": {"units": 1, "kernel_initializer": {"__object__": "os.system", "config": {}}},
            }
        )
