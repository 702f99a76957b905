"""fit/evaluate/predict of functional models with several inputs and outputs (Keras's names in the logs)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import unison as tf

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "distributed"))
from multi_io_fns import multi_io_data, multi_io_fit, multi_io_model  # noqa: E402

keras = tf.keras
pytestmark = pytest.mark.timeout(120)


def test_list_inputs_and_outputs_from_arrays_log_keras_names_and_weight_the_losses() -> None:
    res = multi_io_fit(None, 96, 16)
    logs = res["history"]
    assert sorted(logs) == ["cls_accuracy", "cls_loss", "loss", "reg_loss", "reg_mae"]
    # the total is the weighted sum of the outputs' losses (one epoch, every example once)
    assert logs["loss"][0] == pytest.approx(logs["cls_loss"][0] + 0.5 * logs["reg_loss"][0], rel=1e-5)
    ev = res["evaluate"]
    assert ev["loss"] == pytest.approx(ev["cls_loss"] + 0.5 * ev["reg_loss"], rel=1e-5)
    cls, reg = res["predict"]
    assert cls.shape == (96, 3) and reg.shape == (96, 1)


def test_the_dataset_of_tuples_trains_as_the_arrays_do() -> None:
    arrays = multi_io_fit(None, 96, 16)
    dataset = multi_io_fit(None, 96, 16, source="dataset")
    for got, want in zip(dataset["weights"], arrays["weights"]):
        np.testing.assert_allclose(got, want, atol=1e-6)
    assert dataset["history"]["loss"][0] == pytest.approx(arrays["history"]["loss"][0], rel=1e-6)


def test_dict_inputs_and_outputs_from_arrays_and_datasets() -> None:
    torch.manual_seed(0)
    model = multi_io_model(as_dict=True)
    model.compile(
        optimizer="adam",
        loss={"cls": "sparse_categorical_crossentropy", "reg": "mse"},
        loss_weights={"reg": 2.0},
        metrics={"cls": "accuracy"},
    )
    xa, xb, yc, yr = multi_io_data(64)
    x, y = {"a": xa, "b": xb}, {"cls": yc, "reg": yr}
    history = model.fit(x, y, batch_size=16, epochs=3, verbose=0, validation_data=(x, y))
    assert sorted(history.history) == [
        "cls_accuracy",
        "cls_loss",
        "loss",
        "reg_loss",
        "val_cls_accuracy",
        "val_cls_loss",
        "val_loss",
        "val_reg_loss",
    ]
    assert history.history["loss"][-1] < history.history["loss"][0]
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
    from_ds = model.evaluate(ds, verbose=0, return_dict=True)
    from_arrays = model.evaluate(x, y, batch_size=16, verbose=0, return_dict=True)
    assert from_ds == pytest.approx(from_arrays, rel=1e-5)
    assert from_arrays["loss"] == pytest.approx(from_arrays["cls_loss"] + 2.0 * from_arrays["reg_loss"], rel=1e-5)
    out = model.predict(ds, verbose=0)
    assert sorted(out) == ["cls", "reg"] and out["cls"].shape == (64, 3)
    np.testing.assert_allclose(out["reg"], model.predict(x, batch_size=5, verbose=0)["reg"], atol=1e-6)


def test_one_loss_for_every_output_and_a_flat_metric_list() -> None:
    model = multi_io_model(as_dict=False)
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    xa, xb, yc, yr = multi_io_data(32)
    logs = model.evaluate([xa, xb], [np.zeros((32, 3), "float32"), yr], verbose=0, return_dict=True)
    assert sorted(logs) == ["cls_loss", "cls_mae", "loss", "reg_loss", "reg_mae"]


def test_per_output_compile_arguments_that_do_not_fit_the_outputs() -> None:
    model = multi_io_model(as_dict=False)
    with pytest.raises(ValueError, match="got a list of 3 entries for a model with 2 outputs"):
        model.compile(optimizer="sgd", loss=["mse", "mse", "mse"])
    with pytest.raises(ValueError, match="names outputs \\['nope'\\]"):
        model.compile(optimizer="sgd", loss={"cls": "mse", "nope": "mse"})
    with pytest.raises(ValueError, match="gives none of the outputs"):
        model.compile(optimizer="sgd", loss=[None, None])
    single = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    with pytest.raises(ValueError, match="the model has one output"):
        single.compile(optimizer="sgd", loss=["mse", "mae"])
    dict_model = multi_io_model(as_dict=True)
    dict_model.compile(optimizer="sgd", loss={"cls": "sparse_categorical_crossentropy", "reg": "mse"})
    xa, xb, yc, yr = multi_io_data(8)
    with pytest.raises(ValueError, match="no entry for output 'reg'"):
        dict_model.fit({"a": xa, "b": xb}, {"cls": yc, "other": yr}, verbose=0)
