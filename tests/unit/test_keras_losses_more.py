"""Keras's Huber, LogCosh, KLDivergence, Poisson, CosineSimilarity and hinge losses, the function
spellings (mse, kld, logcosh ...), and the wrapper of user loss functions (rank alignment, scalars)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras import losses

Y_TRUE = [[0.0, 1.0], [0.0, 0.0]]
Y_PRED = [[0.6, 0.4], [0.4, 0.6]]


def _t(x: list[list[float]]) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float64)


def test_huber_is_quadratic_inside_delta_and_linear_outside() -> None:
    # errors 0.5 (inside) and 2.0 (outside delta=1): 0.5*0.25 and 1*2 - 0.5
    got = losses.huber(_t([[0.0, 0.0]]), _t([[0.5, 2.0]]))
    assert got.tolist() == pytest.approx([(0.125 + 1.5) / 2])
    got = losses.Huber(delta=3.0).per_example(_t([[0.0, 0.0]]), _t([[0.5, 4.0]]))
    assert got.tolist() == pytest.approx([(0.125 + (3 * 4.0 - 0.5 * 9)) / 2])


def test_huber_rejects_a_non_positive_delta() -> None:
    with pytest.raises(ValueError, match="delta"):
        losses.Huber(delta=0)


def test_log_cosh_matches_log_of_cosh_and_does_not_overflow() -> None:
    got = losses.log_cosh(_t(Y_TRUE), _t(Y_PRED))
    expected = [np.mean([math.log(math.cosh(p - t)) for t, p in zip(tr, pr)]) for tr, pr in zip(Y_TRUE, Y_PRED)]
    assert got.tolist() == pytest.approx(expected)
    big = losses.log_cosh(torch.tensor([[0.0]]), torch.tensor([[1000.0]]))
    assert big.item() == pytest.approx(1000.0 - math.log(2.0))


def test_kl_divergence_clips_both_sides_as_keras() -> None:
    got = losses.kld(_t(Y_TRUE), _t(Y_PRED))

    def kl(t: list[float], p: list[float]) -> float:
        return sum(min(max(a, 1e-7), 1) * math.log(min(max(a, 1e-7), 1) / min(max(b, 1e-7), 1)) for a, b in zip(t, p))

    assert got.tolist() == pytest.approx([kl(t, p) for t, p in zip(Y_TRUE, Y_PRED)])
    # Keras's documented value for the KLDivergence metric on these inputs
    assert float(got.mean()) == pytest.approx(0.45814306, rel=1e-6)


def test_poisson_loss() -> None:
    got = losses.poisson(_t(Y_TRUE), _t(Y_PRED))
    expected = [np.mean([p - t * math.log(p + 1e-7) for t, p in zip(tr, pr)]) for tr, pr in zip(Y_TRUE, Y_PRED)]
    assert got.tolist() == pytest.approx(expected)


def test_cosine_similarity_loss_is_negative_and_respects_axis() -> None:
    got = losses.CosineSimilarity().per_example(_t([[0.0, 1.0], [1.0, 1.0]]), _t([[1.0, 0.0], [1.0, 1.0]]))
    assert got.tolist() == pytest.approx([0.0, -1.0])
    # axis=0: compare the columns
    col = losses.cosine_similarity(_t([[1.0, 0.0], [0.0, 1.0]]), _t([[1.0, 1.0], [0.0, 1.0]]), axis=0)
    assert col.tolist() == pytest.approx([-1.0, -1 / math.sqrt(2)])


def test_hinge_family_with_zero_one_labels_converted() -> None:
    # Keras's documented metric values for these inputs: 1.3, 1.86, 1.4
    assert float(losses.hinge(_t(Y_TRUE), _t(Y_PRED)).mean()) == pytest.approx(1.3)
    assert float(losses.squared_hinge(_t(Y_TRUE), _t(Y_PRED)).mean()) == pytest.approx(1.86)
    assert float(losses.categorical_hinge(_t(Y_TRUE), _t(Y_PRED)).mean()) == pytest.approx(1.4)
    # labels already in {-1, 1} are used as they are
    assert losses.hinge(_t([[-1.0, 1.0]]), _t([[0.5, 0.5]])).tolist() == pytest.approx([(1.5 + 0.5) / 2])


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("huber", losses.Huber),
        ("huber_loss", losses.Huber),
        ("kld", losses.KLDivergence),
        ("KLD", losses.KLDivergence),
        ("kl_divergence", losses.KLDivergence),
        ("logcosh", losses.LogCosh),
        ("log_cosh", losses.LogCosh),
        ("poisson", losses.Poisson),
        ("cosine_similarity", losses.CosineSimilarity),
        ("hinge", losses.Hinge),
        ("squared_hinge", losses.SquaredHinge),
        ("categorical_hinge", losses.CategoricalHinge),
        ("Huber", losses.Huber),
    ],
)
def test_string_names_resolve(name: str, cls: type) -> None:
    assert isinstance(losses.resolve(name), cls)


def test_function_spellings_are_keras_functions() -> None:
    assert losses.mse is losses.MSE is losses.mean_squared_error
    assert losses.mae is losses.MAE and losses.mape is losses.MAPE and losses.msle is losses.MSLE
    assert losses.kld is losses.KLD is losses.kl_divergence is losses.kullback_leibler_divergence
    assert losses.logcosh is losses.log_cosh
    assert keras.losses.huber is losses.huber


def test_crossentropy_functions_take_axis_and_ignore_class() -> None:
    probs = torch.tensor([[0.9, 0.2], [0.1, 0.8]])  # classes along axis 0
    got = losses.categorical_crossentropy(torch.tensor([[1.0, 0.0], [0.0, 1.0]]), probs, axis=0)
    assert got.tolist() == pytest.approx([-math.log(0.9), -math.log(0.8)], rel=1e-5)
    sparse = losses.sparse_categorical_crossentropy(
        torch.tensor([0, 1]), torch.tensor([[0.9, 0.1], [0.2, 0.8]]), ignore_class=1
    )
    assert sparse.tolist() == pytest.approx([-math.log(0.9), 0.0], rel=1e-5)


def test_compile_with_a_loss_function_trains() -> None:
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(-1, 1)
    y = 2 * x
    for loss in (keras.losses.mse, keras.losses.huber, "logcosh"):
        model = keras.Sequential([keras.layers.Dense(1, input_shape=(1,))])
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss=loss)
        history = model.fit(x, y, epochs=3, batch_size=8, verbose=0)
        assert history.history["loss"][-1] < history.history["loss"][0]


def test_user_function_sees_aligned_ranks() -> None:
    seen: list[tuple[int, ...]] = []

    def fn(y_true: torch.Tensor, y_pred: torch.Tensor) -> torch.Tensor:
        seen.append(tuple((y_true - y_pred).shape))
        return (y_true - y_pred).square()

    wrapper = losses.LossFunctionWrapper(fn)
    got = wrapper.per_example(torch.zeros(16), torch.ones(16, 1))
    assert seen == [(16, 1)]  # not (16, 16)
    assert got.tolist() == [1.0] * 16


def test_squeeze_or_expand_to_same_rank_squeezes_higher_ranks() -> None:
    a, b = losses.squeeze_or_expand_to_same_rank(torch.zeros(4, 3), torch.zeros(4, 3, 1))
    assert (tuple(a.shape), tuple(b.shape)) == ((4, 3), (4, 3))
    a, b = losses.squeeze_or_expand_to_same_rank(torch.zeros(4, 3), torch.zeros(4, 3, 2))
    assert (tuple(a.shape), tuple(b.shape)) == ((4, 3), (4, 3, 2))  # no size-1 axis: unchanged


def test_user_function_returning_a_scalar_is_the_batch_loss() -> None:
    def contrastive(y_true: torch.Tensor, y_pred: torch.Tensor) -> torch.Tensor:
        return torch.mean((y_true - y_pred) ** 2)  # keras.io's siamese example reduces itself

    loss = losses.resolve(contrastive)
    y_true, y_pred = torch.tensor([0.0, 1.0, 1.0, 0.0]), torch.tensor([[0.5], [0.5], [1.0], [0.0]])
    assert float(loss(y_true, y_pred)) == pytest.approx(0.125)
    # a sample weight cannot apply per example: the scalar is scaled by the mean weight, as Keras 3
    assert float(loss(y_true, y_pred, sample_weight=torch.tensor([1.0, 0.0, 1.0, 0.0]))) == pytest.approx(0.0625)


def test_compile_with_a_scalar_user_loss_trains() -> None:
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(-1, 1)
    y = (x[:, 0] > 0).astype(np.float32)  # shape (batch,) against outputs (batch, 1)

    def mean_sq(y_true: torch.Tensor, y_pred: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.square(y_true - y_pred))

    model = keras.Sequential([keras.layers.Dense(1, activation="sigmoid", input_shape=(1,))])
    model.compile(optimizer=keras.optimizers.SGD(0.5), loss=mean_sq)
    before = model.evaluate(x, y, verbose=0)
    expected = float(np.mean((y[:, None] - model.predict(x, verbose=0)) ** 2))
    assert before == pytest.approx(expected, rel=1e-5)
    model.fit(x, y, epochs=5, batch_size=8, verbose=0)
    assert model.evaluate(x, y, verbose=0) < before


def test_wrong_length_result_still_explains() -> None:
    loss = losses.resolve(lambda t, p: torch.zeros(3))
    with pytest.raises(ValueError, match="one loss per example"):
        loss.per_example(torch.zeros(4), torch.zeros(4, 1))


def test_binary_focal_crossentropy_matches_keras_example_and_options() -> None:
    got = losses.binary_focal_crossentropy(_t(Y_TRUE), _t(Y_PRED), gamma=2)
    assert got.tolist() == pytest.approx([0.330, 0.206], abs=5e-4)

    def reference(t: float, p: float, gamma: float, alpha: float | None) -> float:
        bce = -(t * math.log(p) + (1 - t) * math.log(1 - p))
        p_t = t * p + (1 - t) * (1 - p)
        weight = 1.0 if alpha is None else t * alpha + (1 - t) * (1 - alpha)
        return weight * (1 - p_t) ** gamma * bce

    logits = _t([[0.3, -1.2]])
    probs = torch.sigmoid(logits)[0].tolist()
    loss = losses.BinaryFocalCrossentropy(apply_class_balancing=True, alpha=0.3, gamma=1.5, from_logits=True)
    expected = np.mean([reference(t, p, 1.5, 0.3) for t, p in zip([1.0, 0.0], probs)])
    assert float(loss(_t([[1.0, 0.0]]), logits)) == pytest.approx(expected)
    assert isinstance(losses.resolve("binary_focal_crossentropy"), losses.BinaryFocalCrossentropy)
    with pytest.raises(ValueError, match="label_smoothing"):
        losses.BinaryFocalCrossentropy(label_smoothing=2.0)
