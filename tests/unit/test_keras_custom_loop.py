"""The Keras surface of custom training loops: apply_gradients, minimize, iterations, learning
rates and schedules, loss reductions (both Keras dialects), metric results as tensors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf
from unison import keras


def test_apply_gradients_steps_counts_and_clears_grads():
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    b = torch.nn.Parameter(torch.tensor([0.5]))
    opt = keras.optimizers.SGD(learning_rate=0.1)
    it = opt.apply_gradients(zip([torch.tensor([1.0, -1.0]), None], [w, b]))
    assert torch.allclose(w, torch.tensor([0.9, 2.1])) and b.item() == 0.5  # None: left unchanged
    assert int(it) == 1 and int(opt.iterations) == 1 and opt.iterations.numpy() == 1
    assert w.grad is None  # Keras does not accumulate between calls


def test_apply_gradients_names_the_variable_with_a_wrong_gradient_shape():
    w = torch.nn.Parameter(torch.zeros(3, 2))
    opt = keras.optimizers.Adam()
    with pytest.raises(ValueError, match=r"#0 of the list \(shape \(3, 2\)\) has shape \(2, 3\)"):
        opt.apply_gradients([(torch.zeros(2, 3), w)])
    with pytest.raises(ValueError, match="no \\(gradient, variable\\) pairs"):
        opt.apply_gradients([])


def test_apply_gradients_refuses_a_variable_it_was_not_built_for():
    a, b = torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2))
    opt = keras.optimizers.SGD()
    opt.apply_gradients([(torch.ones(2), a)])
    with pytest.raises(ValueError, match="built for other variables"):
        opt.apply_gradients([(torch.ones(2), b)])


def test_custom_loop_with_apply_gradients_equals_torch_adam():
    torch.manual_seed(0)
    model = keras.Sequential([keras.layers.Dense(4, activation="relu", input_shape=(3,)), keras.layers.Dense(2)])
    reference = [p.detach().clone().requires_grad_(True) for p in model.parameters()]
    ref_opt = torch.optim.Adam(reference, lr=0.01, eps=1e-7)
    opt = keras.optimizers.Adam(learning_rate=0.01)
    x, y = torch.randn(8, 3), torch.randint(0, 2, (8,))
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    for step in range(1, 6):
        loss = loss_fn(y, model(x, training=True))
        grads = torch.autograd.grad(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        w1, b1, w2, b2 = reference
        lin = torch.nn.functional.linear
        logits = lin(torch.relu(lin(x, w1.t(), b1)), w2.t(), b2)  # Keras kernels are (in, units)
        ref_opt.zero_grad()
        torch.nn.functional.cross_entropy(logits, y).backward()
        ref_opt.param_groups[0]["eps"] = 1e-7 / (1 - 0.999**step) ** 0.5  # Keras adds it before the bias correction
        ref_opt.step()
    for got, want in zip(model.trainable_variables, reference):
        assert torch.allclose(got, want, atol=1e-6)


def test_minimize_with_autograd_and_with_a_callable_loss():
    w = torch.nn.Parameter(torch.tensor([3.0]))
    opt = keras.optimizers.SGD(learning_rate=0.5)
    opt.minimize((w**2).sum(), [w])  # grad 6 -> 3 - 3 = 0
    assert w.item() == pytest.approx(0.0)
    w2 = torch.nn.Parameter(torch.tensor([1.0]))
    opt2 = keras.optimizers.SGD(learning_rate=0.25)
    opt2.minimize(lambda: (w2**2).sum(), lambda: [w2])
    assert w2.item() == pytest.approx(0.5)
    with pytest.raises(ValueError, match="minimize\\(\\) needs a loss"):
        keras.optimizers.SGD().minimize(torch.tensor(1.0), [w])


def test_learning_rate_reads_like_a_keras_variable_and_is_assignable():
    opt = keras.optimizers.Adam(learning_rate=0.001)
    assert opt.learning_rate.numpy() == np.float32(0.001) and float(opt.learning_rate) == 0.001
    w = torch.nn.Parameter(torch.zeros(1))
    opt.apply_gradients([(torch.ones(1), w)])
    opt.learning_rate = 0.5
    assert opt.torch_optimizer.param_groups[0]["lr"] == 0.5 and opt.learning_rate == 0.5
    opt.learning_rate.assign(0.25)  # Keras 3's variable spelling
    assert opt.torch_optimizer.param_groups[0]["lr"] == 0.25


def test_schedule_sets_the_rate_before_each_step():
    schedule = keras.optimizers.schedules.PiecewiseConstantDecay([1], [1.0, 0.1])
    opt = keras.optimizers.SGD(learning_rate=schedule)
    w = torch.nn.Parameter(torch.zeros(1))
    seen = []
    for _ in range(3):
        opt.apply_gradients([(torch.ones(1), w)])
        seen.append(round(float(opt.learning_rate), 6))
    assert seen == [1.0, 1.0, 0.1]  # steps 0 and 1 at 1.0, step 2 past the boundary
    assert w.item() == pytest.approx(-2.1)


def test_schedules_match_keras_formulas():
    s = keras.optimizers.schedules
    assert s.ExponentialDecay(1.0, 10, 0.5)(5) == pytest.approx(0.5**0.5)
    assert s.InverseTimeDecay(1.0, 10, 1.0, staircase=True)(15) == pytest.approx(0.5)
    assert s.CosineDecay(1.0, 100)(50) == pytest.approx(0.5)
    assert s.CosineDecay(0.0, 10, warmup_target=1.0, warmup_steps=10)(5) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="one more element"):
        s.PiecewiseConstantDecay([1, 2], [1.0])

    class Halving(s.LearningRateSchedule):
        def __call__(self, step):
            return torch.tensor(1.0) / (2 ** float(step))

    opt = keras.optimizers.SGD(learning_rate=Halving())
    w = torch.nn.Parameter(torch.zeros(1))
    opt.apply_gradients([(torch.ones(1), w)])
    opt.apply_gradients([(torch.ones(1), w)])
    assert w.item() == pytest.approx(-1.5)


def test_schedule_drives_fit_too():
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    model.compile(optimizer=keras.optimizers.SGD(keras.optimizers.schedules.ExponentialDecay(0.1, 1, 0.5)), loss="mse")
    model.fit(np.ones((8, 2), "float32"), np.ones((8, 1), "float32"), batch_size=4, epochs=1, verbose=0)
    assert int(model.optimizer.iterations) == 2
    assert float(model.optimizer.learning_rate) == pytest.approx(0.1 * 0.5)  # rate of the last step


def test_legacy_optimizers_are_the_same_classes():
    assert keras.optimizers.legacy.SGD is keras.optimizers.SGD
    assert isinstance(tf.keras.optimizers.legacy.RMSprop(learning_rate=0.1), keras.optimizers.Optimizer)


@pytest.mark.parametrize(
    "reduction, expected",
    [
        (keras.losses.Reduction.NONE, [1.0, 3.0]),
        (None, [1.0, 3.0]),
        ("sum", 4.0),
        (keras.losses.Reduction.SUM_OVER_BATCH_SIZE, 2.0),
        ("auto", 2.0),
        ("sum_over_batch_size", 2.0),
    ],
)
def test_loss_reductions_of_both_keras_dialects(reduction, expected):
    loss = keras.losses.MeanAbsoluteError(reduction=reduction)
    out = loss(torch.zeros(2, 1), torch.tensor([[1.0], [3.0]]))
    assert out.tolist() == expected


def test_unknown_reduction_lists_the_valid_ones():
    with pytest.raises(ValueError, match="Received: reduction='avg'"):
        keras.losses.SparseCategoricalCrossentropy(reduction="avg")


def test_metric_result_is_a_tensor_and_both_reset_names_work():
    m = keras.metrics.SparseCategoricalAccuracy()
    m.update_state(torch.tensor([0, 1]), torch.tensor([[0.9, 0.1], [0.8, 0.2]]))
    result = m.result()
    assert isinstance(result, torch.Tensor) and result.dim() == 0
    assert result.numpy() == np.float32(0.5) and float(result * 100) == 50.0
    assert f"{result * 100}" == "50.0"  # the tutorials' print formatting
    m.reset_states()
    assert float(m.result()) == 0.0
    m.update_state(torch.tensor([1]), torch.tensor([[0.1, 0.9]]))
    m.reset_state()
    assert float(m.result()) == 0.0


def test_accuracy_precision_recall_auc():
    acc = keras.metrics.Accuracy()
    acc.update_state(torch.tensor([1, 2, 3, 4]), torch.tensor([0, 2, 3, 4]))
    assert float(acc.result()) == 0.75
    y, p = torch.tensor([0, 0, 1, 1, 1]), torch.tensor([0.1, 0.6, 0.4, 0.7, 0.9])
    precision, recall = keras.metrics.Precision(), keras.metrics.Recall()
    precision.update_state(y, p)
    recall.update_state(y, p)
    assert float(precision.result()) == pytest.approx(2 / 3) and float(recall.result()) == pytest.approx(2 / 3)
    auc = keras.metrics.AUC(num_thresholds=1000)
    auc.update_state(y, p)
    # exact ROC AUC: fraction of (positive, negative) pairs ranked correctly = 5/6
    assert float(auc.result()) == pytest.approx(5 / 6, abs=1e-3)
    assert keras.metrics.get("auc").__class__.__name__ == "AUC"


def test_model_call_training_flag_and_variable_lists():
    model = keras.Sequential(
        [
            keras.layers.Dense(8, input_shape=(4,)),
            keras.layers.Dropout(0.5),
            keras.layers.BatchNormalization(),
            keras.layers.Dense(2),
        ]
    )
    x = torch.ones(16, 4)
    model.train()
    out_eval = model(x, training=False)
    assert torch.equal(out_eval, model(x, training=False))  # no dropout, running statistics
    assert model.training  # the mode is restored after the call
    assert not torch.equal(model(x, training=True), model(x, training=True))  # dropout active
    assert len(model.trainable_variables) == 6 and model.trainable_weights == model.trainable_variables
    assert len(model.non_trainable_weights) == 2  # BatchNorm's moving mean and variance
    assert len(model.weights) == len(model.variables) == 8
