"""What keras.io's "training & evaluation with the built-in methods" guide uses: a ``Loss``
subclass with ``call``, a ``Metric`` subclass with ``add_variable``, ``class_weight``, the
percentage and logarithmic errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras import layers, losses, metrics


class CustomMSE(keras.losses.Loss):
    def __init__(self, regularization_factor: float = 0.1, name: str = "custom_mse") -> None:
        super().__init__(name=name)
        self.regularization_factor = regularization_factor

    def call(self, y_true: Any, y_pred: Any) -> torch.Tensor:
        mse = torch.mean(torch.square(y_true - y_pred), dim=-1)
        reg = torch.mean(torch.square(0.5 - y_pred), dim=-1)
        return mse + reg * self.regularization_factor


def test_a_loss_subclass_with_call_is_reduced_as_keras_reduces_it() -> None:
    y_true = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    y_pred = torch.tensor([[0.5, 0.5], [1.0, 1.0]])
    # example 0: mse 0.25, reg 0 -> 0.25; example 1: mse 0.5, reg 0.25 -> 0.525
    assert CustomMSE().per_example(y_true, y_pred).tolist() == pytest.approx([0.25, 0.525])
    assert float(CustomMSE()(y_true, y_pred)) == pytest.approx((0.25 + 0.525) / 2)
    model = keras.Sequential([keras.Input(shape=(2,)), layers.Dense(2)])
    model.compile(optimizer="sgd", loss=CustomMSE())
    logged = model.evaluate(y_pred.numpy(), y_true.numpy(), verbose=0)
    want = float(CustomMSE()(y_true, model(y_pred)))
    assert logged == pytest.approx(want, rel=1e-5)


def test_a_loss_subclass_without_call_says_what_to_implement() -> None:
    class Empty(keras.losses.Loss):
        pass

    with pytest.raises(NotImplementedError, match="must implement call"):
        Empty()(torch.zeros(2, 1), torch.zeros(2, 1))


class CategoricalTruePositives(keras.metrics.Metric):
    def __init__(self, name: str = "categorical_true_positives", **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.true_positives = self.add_variable(shape=(), name="ctp", initializer="zeros")

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        hits = (torch.as_tensor(y_true).reshape(-1).long() == torch.argmax(y_pred, dim=1)).float()
        if sample_weight is not None:
            hits = hits * torch.as_tensor(sample_weight, dtype=torch.float32)
        self.true_positives.assign_add(hits.sum())

    def result(self) -> Any:
        return self.true_positives

    def reset_state(self) -> None:
        self.true_positives.assign(0.0)


def test_a_metric_with_variables_logs_and_resets_per_epoch() -> None:
    m = CategoricalTruePositives()
    m.update_state(torch.tensor([0, 1, 1]), torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3]]))
    assert float(m.result()) == 2.0
    assert m.state().tolist() == [2.0]
    # the summed state of several replicas, read through the user's result()
    assert m.result_from_state(torch.tensor([7.0], dtype=torch.float64)) == 7.0
    assert float(m.result()) == 2.0  # reading a summed state leaves the metric as it was
    m.reset_state()
    assert float(m.result()) == 0.0

    x = np.eye(4, dtype="float32")[[0, 1, 2, 3] * 4]
    y = np.array([0, 1, 0, 1] * 4)
    model = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(2)])
    model.compile(
        optimizer="sgd",
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[CategoricalTruePositives()],
    )
    history = model.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
    hits = float((model.predict(x, verbose=0).argmax(1) == y).sum())
    logged = history.history["categorical_true_positives"]
    assert len(logged) == 2 and all(0 <= v <= 16 for v in logged)  # reset each epoch, else > 16
    assert model.evaluate(x, y, verbose=0)[1] == hits


def test_metric_variables_created_keras_2_style() -> None:
    class Total(keras.metrics.Metric):
        def __init__(self) -> None:
            super().__init__(name="total")
            self.total = self.add_weight(name="total", initializer="zeros", aggregation="sum")

        def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
            self.total.assign_add(torch.as_tensor(y_pred, dtype=torch.float32).sum())

        def result(self) -> Any:
            return self.total

    m = Total()
    m.update_state(None, [1.0, 2.0])
    assert float(m.result()) == 3.0 and m.variables == [m.total]
    m.reset_state()  # the base class resets to the initial value
    assert float(m.result()) == 0.0
    with pytest.raises(ValueError, match="aggregation"):
        m.add_variable(shape=(), aggregation="only_first_replica")


def test_class_weight_equals_the_matching_sample_weight() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3)).astype("float32")
    y = rng.integers(0, 3, size=32)
    weights = {0: 1.0, 1: 3.0, 2: 0.5}
    results = []
    for kwargs in ({"class_weight": weights}, {"sample_weight": np.array([weights[int(c)] for c in y])}):
        torch.manual_seed(0)
        model = keras.Sequential([keras.Input(shape=(3,)), layers.Dense(3)])
        model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0, **kwargs)
        results.append((history.history["loss"], model.get_weights()))
    assert results[0][0] == pytest.approx(results[1][0])
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_class_weight_reads_one_hot_labels_and_checks_its_argument() -> None:
    from unison.keras.trainers.loop import class_weight_to_sample_weight

    one_hot = np.eye(3)[[2, 0, 1]]
    assert class_weight_to_sample_weight({2: 4.0}, one_hot, np.array([1.0, 1.0, 0.5])).tolist() == [4.0, 1.0, 0.5]
    with pytest.raises(TypeError, match="dict mapping class ids"):
        class_weight_to_sample_weight([1.0, 2.0], np.zeros(2))
    with pytest.raises(ValueError, match="one array"):
        class_weight_to_sample_weight({0: 1.0}, [np.zeros(2), np.zeros(2)])


def test_percentage_and_logarithmic_errors() -> None:
    y_true = torch.tensor([[2.0, 4.0], [1.0, 1.0]])
    y_pred = torch.tensor([[1.0, 5.0], [1.0, 3.0]])
    # row 0: (50% + 25%) / 2; row 1: (0% + 200%) / 2
    assert losses.mean_absolute_percentage_error(y_true, y_pred).tolist() == pytest.approx([37.5, 100.0])
    want = ((np.log1p([1.0, 5.0, 1.0, 3.0]) - np.log1p([2.0, 4.0, 1.0, 1.0])) ** 2).reshape(2, 2).mean(1)
    assert losses.mean_squared_logarithmic_error(y_true, y_pred).tolist() == pytest.approx(want.tolist())
    m = metrics.MeanAbsolutePercentageError()
    m.update_state(y_true, y_pred)
    assert float(m.result()) == pytest.approx(68.75)
    assert isinstance(losses.resolve("mape"), losses.MeanAbsolutePercentageError)
    assert float(metrics.get("msle", y_true_shape=(2, 2), y_pred_shape=(2, 2))(y_true, y_pred)) == pytest.approx(
        want.mean()
    )
