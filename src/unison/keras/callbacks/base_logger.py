"""``BaseLogger`` (Keras 2, ``tf_keras``): epoch averages of the batch logs, weighted by batch size."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from unison.keras.callbacks.callback import Callback, Logs


class BaseLogger(Callback):
    """Average each batch log over an epoch, weighting a batch by its ``size`` log (Keras 2).

    A batch's logs count ``size * num_steps`` samples (``size`` defaults to 0, ``num_steps`` to
    1); at the epoch's end each name of ``params["metrics"]`` seen in a batch becomes its
    weighted mean in the epoch logs, or its last value for the ``stateful_metrics``. Keras 2's
    ``fit`` added it by itself; unison's ``fit`` reports reduced metrics directly, so this is
    for programs that drive callbacks themselves or add it on purpose.

    Args:
        stateful_metrics: names logged as they are (their last batch value), not averaged.

    Raises:
        ZeroDivisionError: at the epoch's end, when averaged logs came with no ``size`` (as in
            Keras 2, which divides by the zero samples seen).

    Example:
        >>> logger = BaseLogger()
        >>> logger.set_params({"metrics": ["loss"]})
        >>> logger.on_epoch_begin(0)
        >>> logger.on_batch_end(0, {"size": 2, "loss": 1.0})
        >>> logger.on_batch_end(1, {"size": 1, "loss": 4.0})
        >>> logs = {}
        >>> logger.on_epoch_end(0, logs)
        >>> logs
        {'loss': 2.0}
    """

    def __init__(self, stateful_metrics: Iterable[str] | None = None) -> None:
        super().__init__()
        self.stateful_metrics = set(stateful_metrics or [])
        self.seen: float = 0
        self.totals: dict[str, Any] = {}

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        self.seen = 0
        self.totals = {}

    def on_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        logs = logs or {}
        batch_size = logs.get("size", 0)
        # several steps per call (steps_per_execution) count all their samples
        self.seen += batch_size * logs.get("num_steps", 1)
        for key, value in logs.items():
            if key in self.stateful_metrics:
                self.totals[key] = value
            else:
                self.totals[key] = self.totals.get(key, 0) + value * batch_size

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        if logs is None:
            return
        for key in (self.params or {}).get("metrics", []):
            if key in self.totals:
                logs[key] = self.totals[key] if key in self.stateful_metrics else self.totals[key] / self.seen
