"""Keras metrics added on top of the losses and confusion counts, checked against the values
Keras documents for the same inputs (or computed by hand), and their additive, all-reducible state."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras import metrics

Y_TRUE = [[0.0, 1.0], [0.0, 0.0]]
Y_PRED = [[1.0, 1.0], [0.0, 0.0]]
Y_PRED_P = [[0.6, 0.4], [0.4, 0.6]]


@pytest.mark.parametrize(
    ("metric", "y_pred", "expected"),
    [
        (metrics.LogCoshError(), Y_PRED, 0.10844523),
        (metrics.Poisson(), Y_PRED, 0.49999997),
        (metrics.KLDivergence(), Y_PRED_P, 0.45814306),
        (metrics.Hinge(), Y_PRED_P, 1.3),
        (metrics.SquaredHinge(), Y_PRED_P, 1.86),
        (metrics.CategoricalHinge(), Y_PRED_P, 1.4),
        (metrics.RootMeanSquaredError(), Y_PRED, 0.5),
    ],
)
def test_keras_documented_values(metric: metrics.Metric, y_pred: list[list[float]], expected: float) -> None:
    metric.update_state(torch.tensor(Y_TRUE), torch.tensor(y_pred))
    assert float(metric.result()) == pytest.approx(expected, rel=1e-5)


def test_cosine_similarity_metric_is_positive() -> None:
    m = metrics.CosineSimilarity(axis=1)
    m.update_state(torch.tensor([[0.0, 1.0], [1.0, 1.0]]), torch.tensor([[1.0, 0.0], [1.0, 1.0]]))
    assert float(m.result()) == pytest.approx(0.5)


def test_rmse_with_sample_weight() -> None:
    m = metrics.RootMeanSquaredError()
    m.update_state(torch.tensor([[0.0], [0.0]]), torch.tensor([[1.0], [3.0]]), sample_weight=torch.tensor([3.0, 1.0]))
    assert float(m.result()) == pytest.approx(np.sqrt((3 * 1 + 1 * 9) / 4))


def test_r2_score_matches_keras_example_and_sums_across_batches() -> None:
    m = metrics.R2Score()
    m.update_state(torch.tensor([[1.0], [4.0]]), torch.tensor([[2.0], [4.0]]))
    m.update_state(torch.tensor([[3.0]]), torch.tensor([[4.0]]))
    assert float(m.result()) == pytest.approx(0.57142854, rel=1e-6)


def test_r2_score_several_outputs_and_adjusted() -> None:
    y = np.array([[1.0, 2.0], [2.0, 5.0], [3.0, 4.0], [5.0, 1.0], [6.0, 3.0]])
    p = np.array([[1.5, 2.0], [2.0, 4.0], [3.5, 4.5], [4.0, 1.0], [6.0, 2.0]])
    r2 = 1 - ((y - p) ** 2).sum(0) / ((y - y.mean(0)) ** 2).sum(0)
    m = metrics.R2Score()
    m.update_state(torch.tensor(y), torch.tensor(p))
    assert float(m.result()) == pytest.approx(r2.mean())
    weighted = metrics.R2Score(class_aggregation="variance_weighted_average")
    weighted.update_state(torch.tensor(y), torch.tensor(p))
    var = ((y - y.mean(0)) ** 2).sum(0)
    assert float(weighted.result()) == pytest.approx((r2 * var).sum() / var.sum())
    adjusted = metrics.R2Score(num_regressors=2)
    adjusted.update_state(torch.tensor(y), torch.tensor(p))
    assert float(adjusted.result()) == pytest.approx(1 - (1 - r2.mean()) * 4 / 2)


def test_r2_score_rejects_per_output_aggregation() -> None:
    with pytest.raises(ValueError, match="class_aggregation"):
        metrics.R2Score(class_aggregation=None)


def test_iou_family_matches_keras_examples() -> None:
    m = metrics.MeanIoU(num_classes=2)
    m.update_state(torch.tensor([0, 0, 1, 1]), torch.tensor([0, 1, 0, 1]))
    assert float(m.result()) == pytest.approx(0.33333334, rel=1e-6)
    m = metrics.IoU(num_classes=2, target_class_ids=[0])
    m.update_state(
        torch.tensor([0, 0, 1, 1]), torch.tensor([0, 1, 0, 1]), sample_weight=torch.tensor([0.3, 0.3, 0.3, 0.1])
    )
    assert float(m.result()) == pytest.approx(0.3 / (0.6 + 0.6 - 0.3), rel=1e-6)
    m = metrics.BinaryIoU(target_class_ids=[0, 1], threshold=0.3)
    m.update_state(torch.tensor([0, 1, 0, 1]), torch.tensor([0.1, 0.2, 0.4, 0.7]))
    assert float(m.result()) == pytest.approx(0.33333334, rel=1e-6)
    m = metrics.OneHotMeanIoU(num_classes=3)
    m.update_state(
        torch.eye(3)[[0, 2, 1, 1]], torch.tensor([[0.8, 0.1, 0.1], [0.2, 0.3, 0.5], [0.1, 0.2, 0.7], [0.0, 0.9, 0.1]])
    )
    # classes: 0 -> iou 1; 1 -> tp 1, pred 1, true 2 -> 1/2; 2 -> tp 1, pred 2, true 1 -> 1/2
    assert float(m.result()) == pytest.approx(2 / 3, rel=1e-6)


def test_mean_iou_ignore_class() -> None:
    m = metrics.MeanIoU(num_classes=2, ignore_class=1)
    m.update_state(torch.tensor([0, 0, 1, 1]), torch.tensor([0, 1, 0, 1]))
    # only the two label-0 positions count: class 0 iou 1/2, class 1 iou 0/1
    assert float(m.result()) == pytest.approx(0.25, rel=1e-6)


def test_f1_and_fbeta_match_keras_examples() -> None:
    y_true = torch.tensor([[1, 1, 1], [1, 0, 0], [1, 1, 0]])
    y_pred = torch.tensor([[0.2, 0.6, 0.7], [0.2, 0.6, 0.6], [0.6, 0.8, 0.0]])
    f1 = metrics.F1Score(threshold=0.5)
    f1.update_state(y_true, y_pred)
    assert f1.result().tolist() == pytest.approx([0.5, 0.8, 0.6666667], rel=1e-5)
    fb = metrics.FBetaScore(beta=2.0, threshold=0.5)
    fb.update_state(y_true, y_pred)
    assert fb.result().tolist() == pytest.approx([0.3846154, 0.90909094, 0.8333334], rel=1e-5)
    macro = metrics.F1Score(average="macro", threshold=0.5)
    macro.update_state(y_true, y_pred)
    assert float(macro.result()) == pytest.approx(np.mean([0.5, 0.8, 2 / 3]), rel=1e-5)
    micro = metrics.F1Score(average="micro", threshold=0.5)
    micro.update_state(y_true, y_pred)
    tp, fp, fn = 4, 2, 2  # pooled over classes
    assert float(micro.result()) == pytest.approx(2 * tp / (2 * tp + fp + fn), rel=1e-5)


def test_f1_without_average_gives_the_per_class_vector_to_fit() -> None:
    assert metrics.F1Score().result_from_state(torch.zeros(12, dtype=torch.float64)).shape == (3,)
    with pytest.raises(ValueError, match="average"):
        metrics.F1Score(average="mean")


def test_confusion_counts() -> None:
    y_true, y_pred = torch.tensor([0, 1, 1, 1]), torch.tensor([1.0, 1.0, 0.0, 0.7])
    got = {}
    for cls in (metrics.TruePositives, metrics.FalsePositives, metrics.FalseNegatives, metrics.TrueNegatives):
        m = cls()
        m.update_state(y_true, y_pred)
        got[m.name] = float(m.result())
    assert got == {"true_positives": 2.0, "false_positives": 1.0, "false_negatives": 1.0, "true_negatives": 0.0}


@pytest.mark.parametrize(
    ("metric", "y_true", "y_pred", "expected"),
    [
        (metrics.PrecisionAtRecall(0.5), [0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8], 0.5),
        (metrics.SensitivityAtSpecificity(0.5), [0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8], 0.5),
        (metrics.SpecificityAtSensitivity(0.5), [0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8], 0.66666667),
        (metrics.RecallAtPrecision(0.8), [0, 0, 1, 1], [0, 0.5, 0.3, 0.9], 0.5),
    ],
)
def test_constrained_threshold_metrics_match_keras_examples(
    metric: metrics.Metric, y_true: list[int], y_pred: list[float], expected: float
) -> None:
    metric.update_state(torch.tensor(y_true), torch.tensor(y_pred))
    assert float(metric.result()) == pytest.approx(expected, rel=1e-6)


def test_states_add_like_a_sum_all_reduce() -> None:
    # two "replicas" see half the data each; summing their states gives the whole-data result
    y = torch.tensor([[1.0], [4.0], [3.0], [2.0]])
    p = torch.tensor([[2.0], [4.0], [4.0], [2.5]])
    for make in (metrics.R2Score, metrics.RootMeanSquaredError, lambda: metrics.MeanIoU(num_classes=5)):
        whole, a, b = make(), make(), make()
        whole.update_state(y, p)
        a.update_state(y[:2], p[:2])
        b.update_state(y[2:], p[2:])
        assert a.result_from_state(a.state() + b.state()) == pytest.approx(float(whole.result()), rel=1e-6)


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("logcosh", metrics.LogCoshError),
        ("kld", metrics.KLDivergence),
        ("poisson", metrics.Poisson),
        ("root_mean_squared_error", metrics.RootMeanSquaredError),
        ("r2_score", metrics.R2Score),
        ("cosine_similarity", metrics.CosineSimilarity),
        ("RootMeanSquaredError", metrics.RootMeanSquaredError),
        ("categorical_hinge", metrics.CategoricalHinge),
    ],
)
def test_string_names(name: str, cls: type) -> None:
    m = metrics.get(name)
    assert isinstance(m, cls)


def test_fit_logs_new_metrics() -> None:
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(-1, 1)
    y = 2 * x
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(1,))])
    model.compile(optimizer="sgd", loss="mse", metrics=[metrics.RootMeanSquaredError(), metrics.R2Score(), "logcosh"])
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    assert {"root_mean_squared_error", "r2_score", "logcosh"} <= set(history.history)
    pred = model.predict(x, verbose=0)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert logs["root_mean_squared_error"] == pytest.approx(float(np.sqrt(np.mean((pred - y) ** 2))), rel=1e-4)
    r2 = 1 - ((y - pred) ** 2).sum() / ((y - y.mean()) ** 2).sum()
    assert logs["r2_score"] == pytest.approx(float(r2), rel=1e-4)


def test_metric_function_spellings() -> None:
    assert metrics.mse is keras.losses.mean_squared_error and metrics.MAE is keras.losses.mean_absolute_error
    assert metrics.kld is keras.losses.kl_divergence and metrics.logcosh is keras.losses.log_cosh
    # the metric's cosine similarity is positive (the loss is its negative)
    assert metrics.cosine_similarity(torch.tensor([[1.0, 0.0]]), torch.tensor([[2.0, 0.0]])).tolist() == [1.0]
    m = metrics.get(metrics.mae)
    m.update_state(torch.tensor([[1.0], [2.0]]), torch.tensor([[0.0], [0.0]]))
    assert float(m.result()) == pytest.approx(1.5)


def test_a_lazily_sized_metric_on_one_output_of_several_evaluates_like_the_metric_alone():
    # R2Score sizes its state on its first batch; the per-output wrapper must follow that size
    rng = np.random.default_rng(0)
    inputs = keras.Input((3,))
    model = keras.Model(inputs, [keras.layers.Dense(2, name="a")(inputs), keras.layers.Dense(2, name="b")(inputs)])
    model.compile("sgd", ["mse", "mse"], metrics=[[keras.metrics.R2Score()], []])
    x = rng.random((16, 3)).astype("float32")
    ya, yb = rng.random((16, 2)).astype("float32"), rng.random((16, 2)).astype("float32")
    logs = model.evaluate(x, [ya, yb], batch_size=4, verbose=0, return_dict=True)
    alone = keras.metrics.R2Score()
    alone.update_state(ya, model.predict(x, verbose=0)[0])
    assert logs["a_r2_score"] == pytest.approx(float(alone.result()), rel=1e-5)
