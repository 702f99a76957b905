"""``EarlyStopping``: stop training when a monitored quantity stops improving."""

from __future__ import annotations

import math
import warnings
from typing import Any

from unison.keras.callbacks._common import (
    check_mode,
    infer_mode,
    is_chief,
    print_msg,
    unknown_direction_error,
)
from unison.keras.callbacks.callback import Callback, Logs


class EarlyStopping(Callback):
    """Stop training when ``monitor`` has not improved for ``patience`` epochs.

    At the end of every epoch the monitored value is compared with the best so far; an
    improvement must beat it by more than ``min_delta``. Every replica takes the same
    decision (the logs are already reduced across replicas) and sets
    ``model.stop_training``; only the chief prints.

    Args:
        monitor: quantity to watch, e.g. ``"val_loss"`` or ``"val_accuracy"``.
        min_delta: smallest change that counts as an improvement.
        patience: epochs without improvement after which training stops.
        verbose: 1 prints a message when training stops or weights are restored.
        mode: ``"min"``, ``"max"`` or ``"auto"`` (inferred from the name, as Keras does).
        baseline: a value the monitored quantity must beat; until it does, the patience
            counter keeps running.
        restore_best_weights: at the end of training, put back the weights of the best
            epoch (``model.get_weights``/``model.set_weights``).
        start_from_epoch: epochs of warm-up before monitoring starts.

    Raises:
        ValueError: for an unknown ``mode``, a negative ``patience``/``start_from_epoch``,
            or ``mode="auto"`` on a quantity whose direction cannot be inferred.

    Example:
        >>> stop = EarlyStopping(monitor="loss", patience=1)
        >>> class M:
        ...     stop_training = False
        >>> stop.set_model(M())
        >>> stop.on_train_begin()
        >>> for epoch, loss in enumerate([0.5, 0.6]):
        ...     stop.on_epoch_end(epoch, {"loss": loss})
        >>> stop.model.stop_training, stop.stopped_epoch
        (True, 1)
    """

    def __init__(
        self,
        monitor: str = "val_loss",
        min_delta: float = 0,
        patience: int = 0,
        verbose: int = 0,
        mode: str = "auto",
        baseline: float | None = None,
        restore_best_weights: bool = False,
        start_from_epoch: int = 0,
    ) -> None:
        super().__init__()
        check_mode("EarlyStopping", mode)
        if patience < 0:
            raise ValueError(
                f"EarlyStopping: patience must be a number of epochs >= 0. Received: patience={patience!r}"
            )
        if start_from_epoch < 0:
            raise ValueError(
                f"EarlyStopping: start_from_epoch must be >= 0. Received: start_from_epoch={start_from_epoch!r}"
            )
        self.monitor = monitor
        self.min_delta = abs(min_delta)
        self.patience = patience
        self.verbose = verbose
        self.mode = mode
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        # Resolved now when the name is enough, else at on_train_begin from model.metrics.
        self._direction = mode if mode != "auto" else infer_mode(monitor)
        self.wait = 0
        self.stopped_epoch = 0
        self.best_epoch = 0
        self.best = math.inf
        self.best_weights: list[Any] | None = None

    def on_train_begin(self, logs: Logs | None = None) -> None:
        # Reset, so one instance can serve several fit() calls.
        if self._direction is None:
            self._direction = infer_mode(self.monitor, self.model)
            if self._direction is None:
                raise unknown_direction_error("EarlyStopping", self.monitor)
        self.wait = 0
        self.stopped_epoch = 0
        self.best_epoch = 0
        self.best = math.inf if self._direction == "min" else -math.inf
        self.best_weights = None

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        current = self._monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            # Until something improves, the first monitored epoch is the best one.
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch

        self.wait += 1
        if self._improves(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            # The counter restarts only when the baseline is beaten too.
            if self.baseline is None or self._improves(current, self.baseline):
                self.wait = 0
            return

        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs: Logs | None = None) -> None:
        if self.stopped_epoch > 0 and self.verbose > 0:
            print_msg(self.model, f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print_msg(
                    self.model,
                    f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.",
                )
            self.model.set_weights(self.best_weights)

    def _improves(self, value: float, reference: float) -> bool:
        # Beat the reference by more than min_delta in the improving direction.
        if self._direction == "min":
            return value + self.min_delta < reference
        return value - self.min_delta > reference

    def _monitor_value(self, logs: Logs | None) -> float | None:
        logs = logs or {}
        value = logs.get(self.monitor)
        if value is None and is_chief(self.model):
            warnings.warn(
                f"Early stopping conditioned on metric `{self.monitor}` which is not "
                f"available. Available metrics are: {','.join(logs)}",
                stacklevel=2,
            )
        return value
