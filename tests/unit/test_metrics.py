"""Metrics: Keras values, additive state for cross-replica SUM, 'accuracy' resolution."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from unison.keras import losses, metrics


def _probs(n: int, classes: int, seed: int = 0) -> torch.Tensor:
    return torch.softmax(torch.randn(n, classes, generator=torch.Generator().manual_seed(seed)), -1)


def test_mean_is_weighted_and_counts_samples() -> None:
    m = metrics.Mean("loss")
    m.update_state(torch.tensor([1.0, 2.0, 3.0]))
    m.update_state(torch.tensor([10.0]), sample_weight=torch.tensor([3.0]))
    assert m.result() == pytest.approx((1 + 2 + 3 + 30) / 6)
    assert m.state().tolist() == [36.0, 6.0]
    assert m.state().dtype == torch.float64 and m.num_state == 2


def test_mean_of_nothing_is_zero_and_reset_clears_state() -> None:
    m = metrics.Mean()
    assert m.result() == 0.0
    m.update_state(torch.tensor([4.0]))
    m.reset_state()
    assert m.state().tolist() == [0.0, 0.0]


def test_sparse_categorical_accuracy_value() -> None:
    acc = metrics.SparseCategoricalAccuracy()
    y_pred = torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
    acc.update_state(torch.tensor([1, 1, 1, 0]), y_pred)
    assert acc.result() == pytest.approx(0.75)
    assert acc.name == "sparse_categorical_accuracy"


def test_sparse_accuracy_accepts_float_labels_of_shape_batch_by_one() -> None:
    y_pred = torch.tensor([[0.1, 0.9], [0.8, 0.2]])
    got = metrics.sparse_categorical_accuracy(torch.tensor([[1.0], [1.0]]), y_pred)
    assert got.tolist() == [1.0, 0.0]


def test_state_is_additive_across_halves_like_two_replicas() -> None:
    y_true = torch.randint(0, 5, (40,), generator=torch.Generator().manual_seed(1))
    y_pred = _probs(40, 5)
    whole = metrics.SparseCategoricalAccuracy()
    whole.update_state(y_true, y_pred)
    first, second = metrics.SparseCategoricalAccuracy(), metrics.SparseCategoricalAccuracy()
    first.update_state(y_true[:13], y_pred[:13])  # uneven shards, as with a last batch
    second.update_state(y_true[13:], y_pred[13:])
    summed = first.state() + second.state()
    torch.testing.assert_close(summed, whole.state())
    assert whole.result_from_state(summed) == pytest.approx(whole.result())
    expected = (y_pred.argmax(-1) == y_true).double().mean().item()
    assert whole.result() == pytest.approx(expected)


def test_concatenated_states_of_several_metrics_reduce_together() -> None:
    ms = [metrics.Mean("loss"), metrics.get("mse"), metrics.BinaryAccuracy()]
    y_true = torch.tensor([[1.0], [0.0], [1.0]])
    y_pred = torch.tensor([[0.9], [0.6], [0.2]])
    ms[0].update_state(torch.tensor([0.5, 1.5, 2.5]))
    for m in ms[1:]:
        m.update_state(y_true, y_pred)
    state = torch.cat([m.state() for m in ms]) * 2  # SUM over two identical replicas
    offsets = np.cumsum([0] + [m.num_state for m in ms])
    results = [m.result_from_state(state[a:b]) for m, a, b in zip(ms, offsets[:-1], offsets[1:], strict=True)]
    assert results == pytest.approx([1.5, ((0.1**2) + 0.36 + 0.64) / 3, 1 / 3])


def test_update_state_does_not_synchronise(monkeypatch: pytest.MonkeyPatch) -> None:
    m = metrics.get("accuracy", (8,), (8, 3))
    loss = metrics.Mean("loss")

    def forbidden(*args, **kwargs):
        raise AssertionError("update_state must not read values back to the host")

    monkeypatch.setattr(torch.Tensor, "item", forbidden)
    monkeypatch.setattr(torch.Tensor, "tolist", forbidden)
    m.update_state(torch.arange(8) % 3, _probs(8, 3))
    loss.update_state(torch.rand(8, requires_grad=True))
    monkeypatch.undo()
    assert 0.0 <= m.result() <= 1.0 and loss.state()[1].item() == 8.0


@pytest.mark.parametrize(
    "y_true_shape, y_pred_shape, loss, expected",
    [
        ((32,), (32, 10), None, metrics.SparseCategoricalAccuracy),
        ((32, 1), (32, 10), None, metrics.SparseCategoricalAccuracy),
        ((32, 10), (32, 10), None, metrics.CategoricalAccuracy),
        ((32, 1), (32, 1), None, metrics.BinaryAccuracy),
        ((32,), (32,), None, metrics.BinaryAccuracy),
        ((32, 2), (32, 2), "binary_crossentropy", metrics.BinaryAccuracy),
        ((32, 2), (32, 2), losses.BinaryCrossentropy(), metrics.BinaryAccuracy),
        ((8, 5), (8, 5, 7), None, metrics.SparseCategoricalAccuracy),
    ],
)
def test_accuracy_resolution(y_true_shape, y_pred_shape, loss, expected) -> None:
    for name in ("accuracy", "acc"):
        m = metrics.get(name, y_true_shape, y_pred_shape, loss=loss)
        assert type(m) is expected
        assert m.name == name


def test_crossentropy_resolution_matches_the_sparse_loss() -> None:
    m = metrics.get("crossentropy", (4,), (4, 3))
    y_pred, y_true = _probs(4, 3), torch.tensor([0, 1, 2, 1])
    m.update_state(y_true, y_pred)
    expected = losses.sparse_categorical_crossentropy(y_true, y_pred).double().mean().item()
    assert m.name == "crossentropy" and m.result() == pytest.approx(expected, rel=1e-6)


def test_categorical_and_binary_accuracy_values() -> None:
    cat = metrics.get("categorical_accuracy")
    cat.update_state(torch.eye(3), torch.tensor([[0.5, 0.4, 0.1], [0.5, 0.4, 0.1], [0, 0, 1.0]]))
    assert cat.result() == pytest.approx(2 / 3)
    strict = metrics.BinaryAccuracy(threshold=0.8)
    strict.update_state(torch.tensor([1.0, 1.0]), torch.tensor([[0.9], [0.7]]))
    assert strict.result() == pytest.approx(0.5)


def test_top_k_counts_ties_and_sparse_matches_one_hot() -> None:
    y_pred = torch.tensor([[0.4, 0.3, 0.3, 0.0], [0.1, 0.2, 0.3, 0.4]])
    labels = torch.tensor([2, 0])
    sparse = metrics.SparseTopKCategoricalAccuracy(k=2)
    sparse.update_state(labels, y_pred)
    dense = metrics.TopKCategoricalAccuracy(k=2)
    dense.update_state(torch.eye(4)[labels], y_pred)
    assert sparse.result() == dense.result() == pytest.approx(0.5)
    assert metrics.SparseTopKCategoricalAccuracy(k=9)(labels, y_pred) == 1.0


def test_mse_and_mae_metrics_named_after_the_string() -> None:
    mse, mae = metrics.get("mse"), metrics.get("mean_absolute_error")
    y_true, y_pred = torch.tensor([[0.0, 2.0]]), torch.tensor([[1.0, 0.0]])
    mse.update_state(y_true, y_pred)
    mae.update_state(y_true, y_pred)
    assert (mse.name, mse.result()) == ("mse", pytest.approx(2.5))
    assert (mae.name, mae.result()) == ("mean_absolute_error", pytest.approx(1.5))
    assert isinstance(mse, metrics.MeanSquaredError)


def test_get_accepts_instances_classes_losses_and_callables() -> None:
    instance = metrics.BinaryAccuracy(name="bin")
    assert metrics.get(instance) is instance
    assert type(metrics.get(metrics.CategoricalAccuracy)) is metrics.CategoricalAccuracy
    assert metrics.get("SparseCategoricalAccuracy").name == "sparse_categorical_accuracy"

    def exact(y_true, y_pred):
        return (y_true == y_pred).float()

    wrapped = metrics.get(exact)
    wrapped.update_state(torch.tensor([1, 2, 3, 4]), torch.tensor([1, 0, 3, 0]))
    assert (wrapped.name, wrapped.result()) == ("exact", 0.5)
    from_loss = metrics.get(losses.MeanAbsoluteError())
    from_loss.update_state(torch.zeros(2, 1), torch.ones(2, 1))
    assert (from_loss.name, from_loss.result()) == ("mean_absolute_error", 1.0)


def test_get_unknown_string_lists_names_and_received_value() -> None:
    with pytest.raises(ValueError) as err:
        metrics.get("acuracy", (4,), (4, 2))
    message = str(err.value)
    assert "'accuracy'" in message and "'sparse_categorical_accuracy'" in message
    assert "Received: metric='acuracy'" in message


def test_bad_k_is_rejected() -> None:
    with pytest.raises(ValueError, match="k=0"):
        metrics.TopKCategoricalAccuracy(k=0)
