"""keras.saving.register_keras_serializable / custom_object_scope and load_model of custom objects."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from unison import keras
from unison.errors import SavingError

pytestmark = pytest.mark.timeout(120)


@keras.saving.register_keras_serializable(package="Test")
class Scale(keras.layers.Layer):
    """Multiplies by a learned vector, times a constant factor."""

    def __init__(self, factor: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = factor

    def build(self, input_shape: Any) -> None:
        self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")

    def call(self, x: Any) -> Any:
        return x * self.w * self.factor

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "factor": self.factor}


@keras.saving.register_keras_serializable(package="Test")
class ScaledMSE(keras.losses.Loss):
    def __init__(self, scale: float = 1.0, name: str = "scaled_mse", **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.scale = scale

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return self.scale * torch.mean((y_true - y_pred) ** 2, dim=-1)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "scale": self.scale}


@keras.saving.register_keras_serializable(package="Test", name="abs_err")
def abs_err(y_true: Any, y_pred: Any) -> Any:
    return torch.mean(torch.abs(y_true - y_pred), dim=-1)


class Unregistered(keras.layers.Layer):
    def call(self, x: Any) -> Any:
        return x + 1


def unregistered_loss(y_true: Any, y_pred: Any) -> Any:
    return torch.mean((y_true - y_pred) ** 2, dim=-1)


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 3)).astype("float32")
    return x, (x @ np.array([[1.0], [2.0], [-1.0]], "float32")).astype("float32")


def test_registered_names_and_lookup() -> None:
    assert keras.saving.get_registered_name(Scale) == "Test>Scale"
    assert keras.saving.get_registered_name(abs_err) == "Test>abs_err"
    assert keras.saving.get_registered_object("Test>Scale") is Scale
    assert keras.utils.get_registered_object("Test>abs_err") is abs_err
    assert keras.saving.get_registered_name(Unregistered) == "Unregistered"
    assert keras.saving.get_registered_object("Unregistered") is None
    assert keras.saving.get_registered_object("Unregistered", custom_objects={"Unregistered": Unregistered}) is (
        Unregistered
    )
    assert keras.saving.get_custom_objects()["Test>ScaledMSE"] is ScaledMSE
    assert keras.utils.register_keras_serializable is keras.saving.register_keras_serializable


def test_registered_layer_loss_and_metric_round_trip_without_custom_objects(tmp_path: Any) -> None:
    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.layers.Dense(4, input_shape=(3,)), Scale(factor=0.5), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss=ScaledMSE(scale=2.0), metrics=[abs_err])
    x, y = _data()
    model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    path = str(tmp_path / "x.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded.layers[1], Scale) and loaded.layers[1].factor == 0.5
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    want = model.evaluate(x, y, verbose=0, return_dict=True)
    got = loaded.evaluate(x, y, verbose=0, return_dict=True)
    assert set(got) == set(want) == {"loss", "abs_err"}
    for key in want:
        assert got[key] == pytest.approx(want[key], rel=1e-6)
    pred = model.predict(x, verbose=0)
    assert got["loss"] == pytest.approx(2.0 * float(np.mean((y - pred) ** 2)), rel=1e-5)  # scale=2 restored


def test_unregistered_layer_error_names_the_class_and_the_fixes(tmp_path: Any) -> None:
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,)), Unregistered()])
    path = str(tmp_path / "u.keras")
    model.save(path)
    with pytest.raises(SavingError, match=r"'Unregistered'.*register_keras_serializable.*custom_objects="):
        keras.models.load_model(path)
    x = _data()[0]
    with keras.saving.custom_object_scope({"Unregistered": Unregistered}):
        scoped = keras.models.load_model(path)
    np.testing.assert_allclose(scoped.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    given = keras.models.load_model(path, custom_objects={"Unregistered": Unregistered})
    assert isinstance(given.layers[1], Unregistered)


def test_unregistered_loss_function_needs_custom_objects_or_compile_false(tmp_path: Any) -> None:
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer="sgd", loss=unregistered_loss)
    path = str(tmp_path / "f.keras")
    model.save(path)
    with pytest.raises(SavingError, match=r"'unregistered_loss'.*register_keras_serializable.*compile=False"):
        keras.models.load_model(path)
    assert keras.models.load_model(path, compile=False).count_params() == 4
    loaded = keras.models.load_model(path, custom_objects={"unregistered_loss": unregistered_loss})
    x, y = _data()
    assert loaded.evaluate(x, y, verbose=0) == pytest.approx(model.evaluate(x, y, verbose=0), rel=1e-6)


def test_registration_mistakes() -> None:
    with pytest.raises(ValueError, match="without '>'"):
        keras.saving.register_keras_serializable(package="a>b")
    with pytest.raises(ValueError, match="must define get_config"):

        @keras.saving.register_keras_serializable(package="Test")
        class NoConfig:
            pass

    with pytest.raises(ValueError, match="already registered"):

        @keras.saving.register_keras_serializable(package="Test", name="Scale")
        class Other(keras.layers.Layer):
            pass

    with pytest.raises(TypeError, match="dicts of"):
        keras.saving.custom_object_scope(["Scale"])  # type: ignore[arg-type]


def test_builtin_functions_save_by_their_keras_names(tmp_path: Any) -> None:
    import unison as tf

    model = keras.Sequential(
        [
            keras.layers.Dense(2, input_shape=(3,), activation=keras.activations.relu),
            keras.layers.Dense(1, activation=tf.nn.relu),
        ]
    )
    model.compile(optimizer="adam", loss=keras.losses.mean_squared_error)
    path = str(tmp_path / "b.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    x, y = _data()
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    assert loaded.evaluate(x, y, verbose=0) == pytest.approx(model.evaluate(x, y, verbose=0), rel=1e-6)
