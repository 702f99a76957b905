"""Callbacks that set ``model.optimizer.learning_rate``: a schedule, or a plateau rule."""

from __future__ import annotations

import inspect
import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from unison.keras.callbacks._common import check_mode, is_chief, print_msg
from unison.keras.callbacks.callback import Callback, Logs


def _current_lr(model: Any) -> float:
    return float(model.optimizer.learning_rate)


class LearningRateScheduler(Callback):
    """Set the learning rate at the start of every epoch from ``schedule(epoch, lr)``.

    ``schedule`` receives the 0-based epoch and the current learning rate and returns the
    new one (a one-argument ``schedule(epoch)`` is accepted too). Every replica calls it
    with the same arguments, so all replicas use the same rate. The rate in use is added
    to the epoch's logs as ``learning_rate`` (and so to ``History``).

    Args:
        schedule: ``(epoch: int, lr: float) -> float``.
        verbose: 1 prints the new rate at each epoch (chief only).

    Raises:
        TypeError: if ``schedule`` is not callable, or (at an epoch start) returns something
            that is not a real number.

    Example:
        >>> def schedule(epoch, lr):
        ...     return lr if epoch < 1 else lr * 0.5
        >>> class Opt:
        ...     learning_rate = 0.1
        >>> class M:
        ...     optimizer = Opt()
        >>> cb = LearningRateScheduler(schedule)
        >>> cb.set_model(M())
        >>> for epoch in range(3):
        ...     cb.on_epoch_begin(epoch)
        >>> cb.model.optimizer.learning_rate
        0.025
    """

    def __init__(self, schedule: Callable[..., float], verbose: int = 0) -> None:
        super().__init__()
        if not callable(schedule):
            raise TypeError(
                "LearningRateScheduler: schedule must be a function (epoch, lr) -> new lr. "
                f"Received: schedule={schedule!r} (of type {type(schedule).__name__})"
            )
        self.schedule = schedule
        self.verbose = verbose

    def _call_schedule(self, epoch: int, lr: float) -> Any:
        # Decide from the signature rather than by catching TypeError, which would also
        # swallow a TypeError raised inside the user's function.
        try:
            inspect.signature(self.schedule).bind(epoch, lr)
        except TypeError:
            return self.schedule(epoch)
        except ValueError:
            pass  # builtins without a signature: use the documented two-argument form
        return self.schedule(epoch, lr)

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is None or not hasattr(optimizer, "learning_rate"):
            raise ValueError(
                "LearningRateScheduler needs a compiled model whose optimizer has a "
                f"`learning_rate`. Received: optimizer={optimizer!r}"
            )
        new_lr = self._call_schedule(epoch, _current_lr(self.model))
        if isinstance(new_lr, bool) or not isinstance(new_lr, (numbers.Real, np.floating)):
            raise TypeError(
                "The output of the `schedule` function should be a float. "
                f"Received: {new_lr!r} (of type {type(new_lr).__name__}) at epoch {epoch}"
            )
        optimizer.learning_rate = float(new_lr)
        if self.verbose > 0:
            print_msg(
                self.model,
                f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {float(new_lr)}.",
            )

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        if logs is not None:
            logs["learning_rate"] = _current_lr(self.model)


class ReduceLROnPlateau(Callback):
    """Multiply the learning rate by ``factor`` when ``monitor`` stops improving.

    After ``patience`` epochs without an improvement larger than ``min_delta`` the rate
    becomes ``max(lr * factor, min_lr)``, then ``cooldown`` epochs pass before counting
    again. All replicas see the same reduced logs and reduce together. The rate used during
    the epoch (before any reduction) is added to the epoch's logs as ``learning_rate``.

    Args:
        monitor: quantity to watch.
        factor: multiplier, ``0 <= factor < 1``.
        patience: epochs without improvement before a reduction.
        verbose: 1 prints each reduction (chief only).
        mode: ``"min"``, ``"max"`` or ``"auto"`` (``max`` when the name contains
            ``acc``, else ``min``, as Keras does).
        min_delta: smallest change that counts as an improvement.
        cooldown: epochs to wait after a reduction before counting again.
        min_lr: lower bound of the learning rate.

    Raises:
        ValueError: for ``factor`` outside ``[0, 1)``, an unknown ``mode`` or a negative
            ``patience``/``cooldown``/``min_lr``.

    Example:
        >>> class Opt:
        ...     learning_rate = 1.0
        >>> class M:
        ...     optimizer = Opt()
        >>> cb = ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1)
        >>> cb.set_model(M())
        >>> cb.on_train_begin()
        >>> for epoch, loss in enumerate([1.0, 1.0, 1.0]):
        ...     cb.on_epoch_end(epoch, {"loss": loss})
        >>> cb.model.optimizer.learning_rate
        0.25
    """

    def __init__(
        self,
        monitor: str = "val_loss",
        factor: float = 0.1,
        patience: int = 10,
        verbose: int = 0,
        mode: str = "auto",
        min_delta: float = 1e-4,
        cooldown: int = 0,
        min_lr: float = 0.0,
    ) -> None:
        super().__init__()
        if not 0 <= factor < 1.0:
            raise ValueError(
                f"ReduceLROnPlateau: factor must be >= 0 and < 1.0 (new_lr = lr * factor). Received: factor={factor!r}"
            )
        check_mode("ReduceLROnPlateau", mode)
        for name, value in (("patience", patience), ("cooldown", cooldown), ("min_lr", min_lr)):
            if value < 0:
                raise ValueError(f"ReduceLROnPlateau: {name} must be >= 0. Received: {name}={value!r}")
        self.monitor = monitor
        self.factor = factor
        self.patience = patience
        self.verbose = verbose
        self.mode = mode
        self.min_delta = min_delta
        self.cooldown = cooldown
        self.min_lr = min_lr
        self._reset()

    def _reset(self) -> None:
        self._maximize = self.mode == "max" or (self.mode == "auto" and "acc" in self.monitor)
        self.best = -math.inf if self._maximize else math.inf
        self.cooldown_counter = 0
        self.wait = 0

    def _improves(self, current: float) -> bool:
        if self._maximize:
            return current > self.best + self.min_delta
        return current < self.best - self.min_delta

    def in_cooldown(self) -> bool:
        """Whether the callback is waiting after a reduction."""
        return self.cooldown_counter > 0

    def on_train_begin(self, logs: Logs | None = None) -> None:
        self._reset()

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        logs = logs if logs is not None else {}
        logs["learning_rate"] = _current_lr(self.model)
        current = logs.get(self.monitor)
        if current is None:
            if is_chief(self.model):
                warnings.warn(
                    f"Learning rate reduction is conditioned on metric `{self.monitor}` "
                    f"which is not available. Available metrics are: {','.join(logs)}.",
                    stacklevel=2,
                )
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._improves(current):
            self.best = current
            self.wait = 0
            return
        if self.in_cooldown():
            return
        self.wait += 1
        if self.wait < self.patience:
            return
        old_lr = _current_lr(self.model)
        # Compare in float32, the precision the optimizer keeps, so a rate already at
        # min_lr is not "reduced" forever by rounding noise.
        if old_lr > np.float32(self.min_lr):
            new_lr = max(old_lr * self.factor, self.min_lr)
            self.model.optimizer.learning_rate = new_lr
            if self.verbose > 0:
                print_msg(
                    self.model,
                    f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}.",
                )
            self.cooldown_counter = self.cooldown
            self.wait = 0
