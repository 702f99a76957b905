"""Losses: Keras values per example, stability on probabilities, label checks, registry."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from unison.keras import activations, losses

EPS = 1e-7


def _np_sparse_ce(labels: np.ndarray, probs: np.ndarray) -> np.ndarray:
    p = np.clip(probs, EPS, 1 - EPS)
    p = p / p.sum(-1, keepdims=True)
    return -np.log(p[np.arange(len(labels)), labels])


def test_sparse_ce_matches_numpy_reference_per_example() -> None:
    probs = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3]], dtype=np.float64)
    labels = np.array([0, 2, 0])
    got = losses.resolve("sparse_categorical_crossentropy").per_example(torch.tensor(labels), torch.tensor(probs))
    assert got.shape == (3,)
    np.testing.assert_allclose(got.numpy(), _np_sparse_ce(labels, probs), rtol=1e-6)


def test_sparse_ce_accepts_float_labels_of_shape_batch_by_one() -> None:
    probs = torch.tensor([[0.6, 0.4], [0.25, 0.75]])
    loss = losses.SparseCategoricalCrossentropy()
    a = loss.per_example(torch.tensor([0, 1]), probs)
    b = loss.per_example(torch.tensor([[0.0], [1.0]]), probs)
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(a, -torch.log(torch.tensor([0.6, 0.75])))


def test_per_example_is_not_averaged_and_call_is_the_batch_mean() -> None:
    logits = torch.randn(5, 4, generator=torch.Generator().manual_seed(0))
    labels = torch.tensor([0, 1, 2, 3, 0])
    loss = losses.SparseCategoricalCrossentropy(from_logits=True)
    per_example = loss.per_example(labels, logits)
    torch.testing.assert_close(per_example, F.cross_entropy(logits, labels, reduction="none"))
    torch.testing.assert_close(loss(labels, logits), per_example.sum() / 5)


def test_softmax_output_uses_attached_logits_for_a_confident_prediction() -> None:
    logits = torch.tensor([[200.0, 0.0, -50.0], [1.0, 2.0, 3.0]], requires_grad=True)
    probs = activations.get("softmax")(logits)
    labels = torch.tensor([1, 2])
    got = losses.resolve("sparse_categorical_crossentropy").per_example(labels, probs)
    expected = -torch.log_softmax(logits, dim=-1)[[0, 1], [1, 2]]
    assert torch.isfinite(got).all()
    torch.testing.assert_close(got, expected)
    assert got[0].item() == pytest.approx(200.0)
    got.sum().backward()
    assert torch.isfinite(logits.grad).all()


def test_plain_probabilities_fall_back_to_clipping() -> None:
    probs = torch.softmax(torch.tensor([[200.0, 0.0, -50.0]]), dim=-1).clone()
    got = losses.sparse_categorical_crossentropy(torch.tensor([1]), probs)
    # Clipped to 1e-7 (then renormalised), as Keras does without logits.
    assert got.item() == pytest.approx(-math.log(EPS / (1 - EPS + 2 * EPS)), rel=1e-5)


def test_categorical_ce_with_softmax_output_and_label_smoothing() -> None:
    logits = torch.tensor([[2.0, -1.0, 0.5], [30.0, -30.0, 0.0]])
    y_true = torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    loss = losses.CategoricalCrossentropy(label_smoothing=0.1)
    got = loss.per_example(y_true, activations.get("softmax")(logits))
    smoothed = y_true * 0.9 + 0.1 / 3
    expected = -(smoothed * torch.log_softmax(logits, -1)).sum(-1)
    torch.testing.assert_close(got, expected)


def test_categorical_ce_normalises_probabilities_like_keras() -> None:
    y_pred = np.array([[0.2, 0.2, 0.6]]) * 2.0  # sums to 2
    got = losses.categorical_crossentropy(torch.tensor([[0.0, 0.0, 1.0]]), torch.tensor(y_pred))
    assert got.item() == pytest.approx(-math.log(0.6), rel=1e-6)


def test_binary_ce_matches_numpy_and_aligns_label_rank() -> None:
    y_pred = np.array([[0.9], [0.2], [1.0]], dtype=np.float64)
    y_true = np.array([1.0, 0.0, 0.0])
    got = losses.resolve("binary_crossentropy").per_example(torch.tensor(y_true), torch.tensor(y_pred))
    p = np.clip(y_pred[:, 0], EPS, 1 - EPS)
    expected = -(y_true * np.log(p) + (1 - y_true) * np.log(1 - p))
    assert got.shape == (3,)  # not (3, 3): labels of shape (batch,) must not broadcast
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)


def test_binary_ce_on_sigmoid_output_uses_logits() -> None:
    logits = torch.tensor([[50.0], [-3.0]])
    probs = activations.get("sigmoid")(logits)
    got = losses.BinaryCrossentropy().per_example(torch.tensor([[0.0], [1.0]]), probs)
    torch.testing.assert_close(got, torch.tensor([50.0, 3.0 + math.log1p(math.exp(-3.0))]))


def test_binary_ce_label_smoothing_and_mean_over_last_axis() -> None:
    y_true = torch.tensor([[1.0, 0.0]])
    logits = torch.tensor([[0.3, -0.2]])
    got = losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.2).per_example(y_true, logits)
    smoothed = torch.tensor([[0.9, 0.1]])
    expected = F.binary_cross_entropy_with_logits(logits, smoothed, reduction="none").mean(-1)
    torch.testing.assert_close(got, expected)


def test_from_logits_true_on_softmax_output_warns_and_uses_logits() -> None:
    logits = torch.tensor([[1.0, 2.0]])
    with pytest.warns(UserWarning, match="does not represent logits"):
        got = losses.sparse_categorical_crossentropy(torch.tensor([0]), activations.Softmax()(logits), from_logits=True)
    torch.testing.assert_close(got, F.cross_entropy(logits, torch.tensor([0]), reduction="none"))


@pytest.mark.parametrize("name, fn", [("mse", lambda d: (d**2).mean(-1)), ("mae", lambda d: d.abs().mean(-1))])
def test_regression_losses_average_the_last_axis_per_example(name, fn) -> None:
    y_true = torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    y_pred = torch.tensor([[1.5, 1.0, 3.0], [2.0, -2.0, 1.0]])
    torch.testing.assert_close(losses.resolve(name).per_example(y_true, y_pred), fn(y_pred - y_true))


def test_mse_with_one_dimensional_targets_gives_one_value_per_example() -> None:
    got = losses.MeanSquaredError().per_example(torch.tensor([1.0, 2.0]), torch.tensor([[0.0], [4.0]]))
    torch.testing.assert_close(got, torch.tensor([1.0, 4.0]))


def test_empty_shard_gives_empty_per_example_losses() -> None:
    got = losses.SparseCategoricalCrossentropy().per_example(
        torch.zeros(0, dtype=torch.long), activations.Softmax()(torch.zeros(0, 10))
    )
    assert got.shape == (0,)


def test_half_precision_predictions_are_computed_in_float32() -> None:
    probs = torch.tensor([[0.3, 0.7]], dtype=torch.bfloat16)
    got = losses.sparse_categorical_crossentropy(torch.tensor([1]), probs)
    assert got.dtype == torch.float32


def test_sparse_check_targets_reports_out_of_range_label() -> None:
    loss = losses.resolve("sparse_categorical_crossentropy")
    loss.check_targets(np.arange(10, dtype=np.uint8), 10)
    with pytest.raises(ValueError) as err:
        loss.check_targets(np.array([0, 3, 10]), 10)
    message = str(err.value)
    assert "label value of 10" in message and "[0, 10)" in message
    assert "sparse_categorical_crossentropy" in message and "10 outputs" in message


@pytest.mark.parametrize(
    "labels, needle",
    [
        (torch.tensor([0, -1]), "label value of -1"),
        (np.array([0.0, 1.5]), "not an integer"),
        (np.array([0.0, np.nan]), "NaN"),
        (np.eye(3), "categorical_crossentropy"),
    ],
)
def test_sparse_check_targets_rejects_bad_labels(labels, needle) -> None:
    with pytest.raises(ValueError, match=needle):
        losses.SparseCategoricalCrossentropy().check_targets(labels, 3)


def test_sparse_standalone_call_checks_labels() -> None:
    with pytest.raises(ValueError, match="label value of 2"):
        losses.SparseCategoricalCrossentropy()(torch.tensor([2]), torch.tensor([[0.5, 0.5]]))


def test_categorical_check_targets_suggests_sparse_for_integer_labels() -> None:
    loss = losses.CategoricalCrossentropy()
    loss.check_targets(np.eye(4), 4)
    with pytest.raises(ValueError, match="sparse_categorical_crossentropy") as err:
        loss.check_targets(np.array([0, 1, 3]), 4)
    assert "(3,)" in str(err.value)


def test_binary_check_targets_requires_labels_in_unit_interval() -> None:
    loss = losses.BinaryCrossentropy()
    loss.check_targets(np.array([0.0, 0.5, 1.0]), 1)
    with pytest.raises(ValueError, match=r"label value of 2 .*\[0, 1\]"):
        loss.check_targets(np.array([0, 1, 2]), 1)


def test_other_losses_do_not_check_targets() -> None:
    losses.MeanSquaredError().check_targets(np.array([-5.0, 1e6]), 1)


@pytest.mark.parametrize(
    "identifier, cls",
    [
        ("sparse_categorical_crossentropy", losses.SparseCategoricalCrossentropy),
        ("SparseCategoricalCrossentropy", losses.SparseCategoricalCrossentropy),
        ("categorical_crossentropy", losses.CategoricalCrossentropy),
        ("binary_crossentropy", losses.BinaryCrossentropy),
        ("mse", losses.MeanSquaredError),
        ("mean_squared_error", losses.MeanSquaredError),
        ("mae", losses.MeanAbsoluteError),
        ("MeanAbsoluteError", losses.MeanAbsoluteError),
    ],
)
def test_get_resolves_keras_names(identifier, cls) -> None:
    assert type(losses.resolve(identifier)) is cls


def test_get_returns_instances_and_wraps_callables() -> None:
    instance = losses.BinaryCrossentropy(from_logits=True)
    assert losses.resolve(instance) is instance

    def squared(y_true, y_pred):
        return (y_true - y_pred) ** 2

    wrapped = losses.resolve(squared)
    assert wrapped.name == "squared"
    torch.testing.assert_close(wrapped.per_example(torch.zeros(2, 2), torch.ones(2, 2)), torch.ones(2))


def test_wrapped_callable_that_averages_the_batch_is_the_batch_loss() -> None:
    # Keras 3 reduces whatever the function returns: a scalar is the batch's loss.
    loss = losses.resolve(lambda y_true, y_pred: ((y_true - y_pred) ** 2).mean())
    assert loss.per_example(torch.zeros(4, 2), torch.ones(4, 2)).tolist() == [1.0] * 4
    with pytest.raises(ValueError, match="one loss per example"):
        losses.resolve(lambda y_true, y_pred: torch.zeros(3)).per_example(torch.zeros(4, 2), torch.ones(4, 2))


def test_get_unknown_string_lists_names_and_received_value() -> None:
    with pytest.raises(ValueError) as err:
        losses.resolve("sparse_categorical_crossentropi")
    message = str(err.value)
    assert "'sparse_categorical_crossentropy'" in message and "'mse'" in message
    assert "Received: loss='sparse_categorical_crossentropi'" in message


def test_get_rejects_non_callable() -> None:
    with pytest.raises(ValueError, match="Received: loss=3"):
        losses.resolve(3)


def test_label_smoothing_is_validated() -> None:
    with pytest.raises(ValueError, match="label_smoothing=1.5"):
        losses.CategoricalCrossentropy(label_smoothing=1.5)


def test_get_gives_the_function_for_a_function_name_and_an_instance_for_a_class_name():
    # Keras's losses.get: get("mean_squared_error") is the per-example function
    assert losses.get("mean_squared_error") is losses.mean_squared_error
    assert isinstance(losses.get("MeanSquaredError"), losses.MeanSquaredError)
    assert losses.get(None) is None
    with pytest.raises(ValueError, match="Unknown loss function"):
        losses.get("mean_sqared_error")
