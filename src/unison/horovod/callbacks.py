"""Horovod's Keras callbacks (``hvd.callbacks.*``) for ``model.fit`` under ``unison launch``.

- :class:`BroadcastGlobalVariablesCallback`: every process starts from ``root_rank``'s weights
  and optimizer state (broadcast after the first batch, as Horovod does, when the optimizer's
  state exists).
- :class:`MetricAverageCallback`: the epoch's logs averaged over processes (each process's
  metrics describe only its own data under Horovod).
- :class:`LearningRateScheduleCallback` / :class:`LearningRateWarmupCallback`: Horovod's
  learning-rate multipliers, with the gradual warm-up of Goyal et al. (2017).

Example:
    >>> import unison as hvd
    >>> hvd.init()
    >>> callbacks = [hvd.callbacks.BroadcastGlobalVariablesCallback(0),
    ...              hvd.callbacks.MetricAverageCallback(),
    ...              hvd.callbacks.LearningRateWarmupCallback(initial_lr=0.002, warmup_epochs=3)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from unison.horovod.basics import _comm, broadcast_optimizer_state
from unison.horovod.tape import broadcast_variables
from unison.keras.callbacks import Callback

Logs = dict[str, Any]


def _model_weights(model: Any) -> list[torch.Tensor]:
    variables = getattr(model, "variables", None)
    if callable(variables):
        variables = variables()
    if variables is None:
        variables = list(model.parameters()) + list(model.buffers())
    return list(variables)


def _torch_optimizer(model: Any) -> torch.optim.Optimizer | None:
    optimizer = getattr(model, "optimizer", None)
    built = getattr(optimizer, "torch_optimizer", None) if optimizer is not None else None
    return built if isinstance(built, torch.optim.Optimizer) else None


class BroadcastGlobalVariablesCallback(Callback):
    """Give every process ``root_rank``'s model weights and optimizer state.

    Horovod's semantics: the broadcast runs at the end of the first batch (after the first
    update, so the optimizer's slots exist); from then on every process holds the same model.

    Args:
        root_rank: the process whose values everyone gets.
        device: accepted for Horovod compatibility.
    """

    def __init__(self, root_rank: int, device: str = "") -> None:
        super().__init__()
        if isinstance(root_rank, bool) or not isinstance(root_rank, int) or root_rank < 0:
            raise ValueError(
                f"BroadcastGlobalVariablesCallback: root_rank must be a rank >= 0. Received: {root_rank!r}"
            )
        self.root_rank = root_rank
        self.device = device
        self.broadcast_done = False

    def needs_batch_logs(self) -> bool:
        return False  # reads no metrics

    def on_train_begin(self, logs: Logs | None = None) -> None:
        # unison builds most models before fit's first step: then the first step already starts
        # from root_rank's weights (Horovod's broadcast after it still runs, for the optimizer).
        weights = _model_weights(self.model)
        if weights and not any(torch.nn.parameter.is_lazy(w) for w in weights):
            broadcast_variables(weights, root_rank=self.root_rank)

    def on_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        if self.broadcast_done:
            return
        broadcast_variables(_model_weights(self.model), root_rank=self.root_rank)
        optimizer = _torch_optimizer(self.model)
        if optimizer is not None:
            broadcast_optimizer_state(optimizer, root_rank=self.root_rank)
        self.broadcast_done = True


class MetricAverageCallback(Callback):
    """Average the epoch's metrics (``logs``) over all processes, in place, at the end of each epoch.

    Put it before callbacks that read metrics (``ReduceLROnPlateau``, ``ModelCheckpoint``, ...).
    """

    def __init__(self, device: str = "") -> None:
        super().__init__()
        self.device = device

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        if not logs:
            return
        comm = _comm()
        if not comm.is_distributed:
            return
        names = sorted(k for k, v in logs.items() if _is_number(v))
        # every process must send the same metrics in the same order: check, then one all-reduce
        seen = comm.all_gather_object(names, name="MetricAverageCallback.names")
        if any(other != names for other in seen):
            raise ValueError(
                f"MetricAverageCallback: the processes logged different metrics at epoch {epoch}: {seen}. "
                "Every process must compile the same metrics and run the same validation."
            )
        values = torch.tensor([float(logs[k]) for k in names], dtype=torch.float64)
        comm.all_reduce(values, name="MetricAverageCallback")
        for k, v in zip(names, (values / comm.world_size).tolist()):
            logs[k] = v


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    return isinstance(value, torch.Tensor) and value.numel() == 1


class LearningRateScheduleCallback(Callback):
    """Set the learning rate to ``initial_lr * multiplier(epoch)`` between two epochs.

    Horovod's semantics: ``multiplier`` is a constant or a function of the epoch; with
    ``staircase=True`` the rate changes at the first batch of each epoch, otherwise every batch
    with a fractional epoch ``epoch + batch / steps_per_epoch``. Outside
    ``[start_epoch, end_epoch)`` the rate is left alone. With ``momentum_correction``, an
    optimizer with momentum (SGD) has its momentum scaled by ``new_lr / old_lr`` for the batch
    in which the rate changes. The epoch's logs get ``lr``.

    Args:
        initial_lr: the base learning rate (required).
        multiplier: a number, or ``f(epoch) -> number``.
        start_epoch, end_epoch: the epochs (0-based, end exclusive; ``None``: no end) it acts in.
        staircase: change once per epoch (default) or every batch.
        momentum_correction: see above.
        steps_per_epoch: batches per epoch; default: ``fit``'s.
    """

    def __init__(
        self,
        initial_lr: float,
        multiplier: float | Callable[[float], float],
        start_epoch: int = 0,
        end_epoch: int | None = None,
        staircase: bool = True,
        momentum_correction: bool = True,
        steps_per_epoch: int | None = None,
    ) -> None:
        super().__init__()
        if initial_lr is None or isinstance(initial_lr, bool) or not isinstance(initial_lr, (int, float)):
            raise ValueError(
                f"{type(self).__name__}: initial_lr is required: the learning rate the multiplier scales, e.g. "
                f"initial_lr=0.001 * hvd.size(). Received: initial_lr={initial_lr!r}"
            )
        if steps_per_epoch is not None and (not isinstance(steps_per_epoch, int) or steps_per_epoch < 1):
            raise ValueError(f"steps_per_epoch must be an integer >= 1 or None. Received: {steps_per_epoch!r}")
        self.initial_lr = float(initial_lr)
        if callable(multiplier):
            self.multiplier: Callable[[float], float] = multiplier
            self.staircase = staircase
        else:
            constant = float(multiplier)
            self.multiplier = lambda epoch: constant
            self.staircase = True  # a constant needs setting once per epoch
        self.start_epoch = start_epoch
        self.end_epoch = end_epoch
        self.momentum_correction = momentum_correction
        self.steps_per_epoch = steps_per_epoch
        self.current_epoch = 0
        self._restore_momentum: float | None = None

    def needs_batch_logs(self) -> bool:
        return False

    def on_train_begin(self, logs: Logs | None = None) -> None:
        if not self.staircase and not self.steps_per_epoch:
            steps = self.params.get("steps")
            if not steps:
                raise ValueError(
                    f"{type(self).__name__} could not tell the number of steps per epoch (fit got data of unknown "
                    "length). Pass steps_per_epoch= to the callback or to fit()."
                )
            self.steps_per_epoch = int(steps)

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        self.current_epoch = epoch

    def _in_scope(self) -> bool:
        return self.current_epoch >= self.start_epoch and (
            self.end_epoch is None or self.current_epoch < self.end_epoch
        )

    def on_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        if not self._in_scope():
            return
        if self.staircase:
            if batch == 0:
                self._adjust(float(self.current_epoch))
        else:
            self._adjust(self.current_epoch + batch / float(self.steps_per_epoch or 1))

    def on_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        if self._restore_momentum is not None:
            self._set_momentum(self._restore_momentum)
            self._restore_momentum = None

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        if logs is not None:
            logs["lr"] = float(self.model.optimizer.learning_rate)

    def _adjust(self, epoch: float) -> None:
        optimizer = self.model.optimizer
        old = float(optimizer.learning_rate)
        new = self.initial_lr * float(self.multiplier(epoch))
        optimizer.learning_rate = new
        momentum = self._momentum()
        if self.momentum_correction and momentum and old > 0:
            self._restore_momentum = momentum
            self._set_momentum(momentum * new / old)

    def _momentum(self) -> float | None:
        torch_opt = _torch_optimizer(self.model)
        if torch_opt is None or "momentum" not in torch_opt.param_groups[0]:
            return None
        return float(torch_opt.param_groups[0]["momentum"])

    def _set_momentum(self, value: float) -> None:
        torch_opt = _torch_optimizer(self.model)
        if torch_opt is not None:
            for group in torch_opt.param_groups:
                if "momentum" in group:
                    group["momentum"] = value


class LearningRateWarmupCallback(LearningRateScheduleCallback):
    """Gradual warm-up: from ``initial_lr / size()`` to ``initial_lr`` over ``warmup_epochs``.

    Horovod's schedule (Goyal et al., 2017): at fractional epoch ``e`` the rate is
    ``initial_lr / size * (e' * (size - 1) / warmup_epochs + 1)`` with ``e' = e + 1/steps_per_epoch``,
    so the last batch of the warm-up runs at ``initial_lr``. With ``verbose``, the end of the
    warm-up is printed (``Epoch N: finished gradual learning rate warmup to X.``).

    Args:
        initial_lr: the rate after warm-up (usually ``base_lr * hvd.size()``).
        warmup_epochs: epochs the warm-up lasts.
        momentum_correction, steps_per_epoch: as in :class:`LearningRateScheduleCallback`.
        verbose: 1 prints the end of the warm-up.

    Example:
        >>> import unison as hvd
        >>> hvd.init()
        >>> cb = hvd.callbacks.LearningRateWarmupCallback(initial_lr=0.004, warmup_epochs=2, steps_per_epoch=10)
        >>> round(cb.multiplier(1.9) * 0.004, 6)   # one process: already at initial_lr
        0.004
    """

    def __init__(
        self,
        initial_lr: float,
        warmup_epochs: int = 5,
        momentum_correction: bool = True,
        steps_per_epoch: int | None = None,
        verbose: int = 0,
    ) -> None:
        if isinstance(warmup_epochs, bool) or not isinstance(warmup_epochs, (int, float)) or warmup_epochs <= 0:
            raise ValueError(f"warmup_epochs must be a number > 0. Received: warmup_epochs={warmup_epochs!r}")
        self.warmup_epochs = warmup_epochs
        super().__init__(
            initial_lr,
            self._warmup,
            start_epoch=0,
            end_epoch=int(warmup_epochs),
            staircase=False,
            momentum_correction=momentum_correction,
            steps_per_epoch=steps_per_epoch,
        )
        self.verbose = verbose

    def _warmup(self, epoch: float) -> float:
        size = _comm().world_size
        epoch += 1.0 / float(self.steps_per_epoch or 1)  # round numbers at the end of each epoch
        return 1.0 / size * (epoch * (size - 1) / self.warmup_epochs + 1)

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        super().on_epoch_end(epoch, logs)
        if self.end_epoch is not None and epoch == self.end_epoch - 1 and self.verbose > 0:
            print(
                f"\nEpoch {epoch + 1}: finished gradual learning rate warmup to {float(self.model.optimizer.learning_rate):g}."
            )


__all__ = [
    "BroadcastGlobalVariablesCallback",
    "LearningRateScheduleCallback",
    "LearningRateWarmupCallback",
    "MetricAverageCallback",
]
