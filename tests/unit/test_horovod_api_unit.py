"""Horovod's API in one process (`import unison as hvd`): values, Horovod's rules, and every user error."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import unison as hvd
from unison import keras


@pytest.fixture(autouse=True)
def _init() -> None:
    hvd.init()


def test_one_process_collectives_are_the_identity_with_horovod_scaling() -> None:
    x = torch.tensor([1.0, 2.0])
    assert hvd.allreduce(x).tolist() == [1.0, 2.0]
    assert hvd.allreduce(x, op=hvd.Sum, prescale_factor=3.0, postscale_factor=0.5).tolist() == [1.5, 3.0]
    assert hvd.allreduce(torch.tensor([7, 9])).tolist() == [7, 9]  # integers keep their dtype
    assert hvd.grouped_allreduce([x, torch.ones(1, dtype=torch.float64)])[1].dtype == torch.float64
    assert hvd.allgather(torch.ones(2, 3)).shape == (2, 3)
    assert hvd.broadcast(x, 0).tolist() == [1.0, 2.0]
    assert hvd.alltoall(torch.arange(3), splits=[3])[1].tolist() == [3]
    assert hvd.reducescatter(torch.ones(3, 2)).shape == (3, 2)
    assert hvd.allgather_object("a") == ["a"] and hvd.broadcast_object({"k": 1}) == {"k": 1}
    assert hvd.join() == 0 and hvd.is_initialized()
    assert (hvd.cross_rank(), hvd.cross_size()) == (0, 1)
    handle = hvd.allreduce_async(x)
    assert hvd.poll(handle) and hvd.synchronize(handle).tolist() == [1.0, 2.0]


def test_allreduce_is_differentiable_and_leaves_its_input_alone() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = hvd.allreduce(x * 3.0, op=hvd.Sum, postscale_factor=2.0)
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]  # d(2 * 3x)/dx, the postscale applies to the gradient too
    assert x.tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: hvd.allreduce([1.0]), TypeError, r"expects a torch tensor. Received: list"),
        (lambda: hvd.allreduce(torch.ones(1), op="max"), ValueError, r"Unknown op 'max'"),
        (lambda: hvd.allreduce(torch.ones(1), average=True, op=hvd.Sum), ValueError, r"not both"),
        (lambda: hvd.allreduce(torch.ones(1), compression="gzip"), ValueError, r"unknown compression 'gzip'"),
        (lambda: hvd.allreduce(torch.ones(1), process_set=object()), NotImplementedError, r"global_process_set"),
        (lambda: hvd.allgather(torch.tensor(1.0)), ValueError, r"at least one dimension"),
        (lambda: hvd.broadcast(torch.ones(1), root_rank=3), ValueError, r"root_rank must be a rank of the job, 0..0"),
        (lambda: hvd.alltoall(torch.arange(3), splits=[1, 1]), ValueError, r"add up to the tensor's first dimension"),
        (lambda: hvd.reducescatter(torch.ones(2), op=hvd.Adasum), ValueError, r"unison.Average or unison.Sum"),
        (lambda: hvd.synchronize(42), TypeError, r"handle from an \*_async call"),
    ],
)
def test_collective_mistakes_are_named(call: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        call()


def test_allreduce_allows_the_global_process_set() -> None:
    assert hvd.allreduce(torch.ones(1), process_set=hvd.global_process_set).tolist() == [1.0]


def test_distributed_gradient_tape_delegates_and_checks() -> None:
    w = hvd.Variable([1.0, 2.0])
    with hvd.DistributedGradientTape(hvd.GradientTape()) as tape:  # Horovod allows wrapping before `with`
        loss = hvd.reduce_sum(w * w)
    assert tape.gradient(loss, {"w": w})["w"].tolist() == [2.0, 4.0]  # the sources' structure is kept
    with pytest.raises(TypeError, match="wraps a tf.GradientTape. Received: int"):
        hvd.DistributedGradientTape(3)
    with pytest.raises(ValueError, match="only supported with op=hvd.Average"):
        hvd.DistributedGradientTape(hvd.GradientTape(), op=hvd.Sum, gradient_predivide_factor=2.0)
    with pytest.raises(ValueError, match="gradient_predivide_factor must be a number > 0"):
        hvd.DistributedGradientTape(hvd.GradientTape(), gradient_predivide_factor=0)


def test_broadcast_variables_checks_its_input() -> None:
    with pytest.raises(TypeError, match="element 1 is str"):
        hvd.broadcast_variables([torch.ones(1), "w"])
    with pytest.raises(ValueError, match="root_rank must be in 0..0"):
        hvd.broadcast_variables([torch.ones(1)], root_rank=1)


def test_distributed_optimizer_wraps_keras_and_torch_optimizers() -> None:
    inner = keras.optimizers.SGD(0.05, momentum=0.9)
    opt = hvd.DistributedOptimizer(inner, backward_passes_per_step=1, average_aggregated_gradients=True)
    assert isinstance(opt, keras.optimizers.Optimizer) and opt.name == "DistributedSGD"
    assert opt.momentum == 0.9 and float(opt.learning_rate) == pytest.approx(0.05)
    opt.learning_rate = 0.2
    assert float(inner.learning_rate) == pytest.approx(0.2)  # one learning rate: the inner optimizer's
    model = torch.nn.Linear(2, 1)
    torch_opt = opt.build(list(model.parameters()))
    assert isinstance(torch_opt, hvd.DistributedOptimizer) and torch_opt.optimizer is inner.torch_optimizer
    plain = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1))
    assert isinstance(plain, hvd.DistributedOptimizer)
    with pytest.raises(ValueError, match="already a hvd.DistributedOptimizer"):
        hvd.DistributedOptimizer(opt)
    with pytest.raises(ValueError, match="Unknown op 'median'"):
        hvd.DistributedOptimizer(keras.optimizers.Adam(), op="median")
    with pytest.raises(TypeError, match="wraps a torch.optim.Optimizer. Received: str"):
        hvd.DistributedOptimizer("adam")


class _Model:
    """What the learning-rate callbacks touch: model.optimizer (a Keras optimizer)."""

    def __init__(self, momentum: float = 0.0) -> None:
        self.optimizer = keras.optimizers.SGD(1.0, momentum=momentum)
        self.optimizer.build([torch.nn.Parameter(torch.zeros(1))])


def test_warmup_follows_horovods_formula() -> None:
    cb = hvd.callbacks.LearningRateWarmupCallback(initial_lr=0.4, warmup_epochs=2, steps_per_epoch=4, verbose=0)
    cb.set_model(_Model())
    cb.on_train_begin()
    cb.on_epoch_begin(0)
    cb.on_batch_begin(0)
    # one process: 0.4 / 1 * (e' * 0 / 2 + 1) = 0.4 at every batch
    assert float(cb.model.optimizer.learning_rate) == pytest.approx(0.4)
    assert cb._warmup(0.0) == pytest.approx(1.0)


def test_schedule_callback_staircase_and_momentum_correction() -> None:
    cb = hvd.callbacks.LearningRateScheduleCallback(initial_lr=0.5, multiplier=lambda e: 0.1**e, start_epoch=1)
    model = _Model(momentum=0.9)
    cb.set_model(model)
    cb.on_train_begin()
    cb.on_epoch_begin(0)
    cb.on_batch_begin(0)
    assert float(model.optimizer.learning_rate) == pytest.approx(1.0)  # before start_epoch: untouched
    cb.on_epoch_begin(1)
    cb.on_batch_begin(0)
    torch_opt = model.optimizer.torch_optimizer
    assert float(model.optimizer.learning_rate) == pytest.approx(0.05)
    assert torch_opt.param_groups[0]["momentum"] == pytest.approx(0.9 * 0.05 / 1.0)  # corrected for this batch
    cb.on_batch_end(0)
    assert torch_opt.param_groups[0]["momentum"] == pytest.approx(0.9)  # and restored after it
    cb.on_batch_begin(1)
    assert float(model.optimizer.learning_rate) == pytest.approx(0.05)  # staircase: once per epoch
    logs: dict[str, Any] = {}
    cb.on_epoch_end(1, logs)
    assert logs["lr"] == pytest.approx(0.05)


def test_callback_mistakes_are_named() -> None:
    with pytest.raises(ValueError, match="initial_lr is required"):
        hvd.callbacks.LearningRateWarmupCallback(initial_lr=None)
    with pytest.raises(ValueError, match="warmup_epochs must be a number > 0"):
        hvd.callbacks.LearningRateWarmupCallback(initial_lr=0.1, warmup_epochs=0)
    with pytest.raises(ValueError, match="root_rank must be a rank >= 0"):
        hvd.callbacks.BroadcastGlobalVariablesCallback(-1)
    cb = hvd.callbacks.LearningRateWarmupCallback(initial_lr=0.1)
    cb.set_params({"epochs": 1, "steps": None})
    with pytest.raises(ValueError, match="Pass steps_per_epoch="):
        cb.on_train_begin()


def test_metric_average_is_a_no_op_alone() -> None:
    logs = {"loss": 0.25, "accuracy": 0.5}
    hvd.callbacks.MetricAverageCallback().on_epoch_end(0, logs)
    assert logs == {"loss": 0.25, "accuracy": 0.5}


def test_sync_batch_norm_alone_is_batch_norm() -> None:
    torch.manual_seed(0)
    x = torch.randn(6, 4, 5)
    sync, plain = hvd.SyncBatchNorm(4), torch.nn.BatchNorm1d(4)
    torch.testing.assert_close(sync(x), plain(x))
    torch.testing.assert_close(sync.running_var, plain.running_var)
    with pytest.raises(ValueError, match=r"at least 2 dimensions .* Received: shape \(4,\)"):
        sync(torch.ones(4))
