"""``History``: the object ``fit`` returns."""

from __future__ import annotations

from typing import Any

from unison.keras.callbacks.callback import Callback, Logs


class History(Callback):
    """Records every epoch's logs; ``fit`` adds one automatically and returns it.

    Attributes:
        history: metric name -> list of per-epoch values (``val_`` names for validation).
        epoch: the epoch indices recorded, 0-based.
        params: the trainer's parameters (``verbose``, ``epochs``, ``steps``).

    Example:
        >>> h = History()
        >>> h.on_train_begin()
        >>> h.on_epoch_end(0, {"loss": 0.5, "val_loss": 0.6})
        >>> h.on_epoch_end(1, {"loss": 0.4, "val_loss": 0.5})
        >>> h.history["loss"], h.epoch
        ([0.5, 0.4], [0, 1])
    """

    def __init__(self) -> None:
        super().__init__()
        self.history: dict[str, list[Any]] = {}
        self.epoch: list[int] = []

    def on_train_begin(self, logs: Logs | None = None) -> None:
        self.epoch = []

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        self.epoch.append(epoch)
        for name, value in (logs or {}).items():
            self.history.setdefault(name, []).append(value)
        if self.model is not None:
            # Keras exposes the latest run as model.history.
            self.model.history = self
