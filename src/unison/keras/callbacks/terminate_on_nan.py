"""``TerminateOnNaN``: stop training when the loss becomes NaN or infinite."""

from __future__ import annotations

import math
from typing import Any

from unison.keras.callbacks._common import print_msg
from unison.keras.callbacks.callback import Callback, Logs


def _invalid(loss: Any) -> bool:
    try:
        return not math.isfinite(float(loss))
    except (TypeError, ValueError):
        return False


class TerminateOnNaN(Callback):
    """Stop training when the ``loss`` in the logs is NaN or infinite.

    Checked after every training batch (which makes the trainer compute the reduced loss
    per batch) and at every epoch end. The reduced loss is the same on every replica, so
    all replicas stop together; only the chief prints.

    Args:
        raise_error: raise a ``RuntimeError`` at once instead of setting
            ``model.stop_training`` (which lets other callbacks' ``on_train_end`` run).

    Example:
        >>> class M:
        ...     stop_training = False
        >>> cb = TerminateOnNaN()
        >>> cb.set_model(M())
        >>> cb.on_train_batch_end(3, {"loss": float("nan")})
        Batch 3: Invalid loss, terminating training
        >>> cb.model.stop_training
        True
    """

    def __init__(self, raise_error: bool = False) -> None:
        super().__init__()
        self.raise_error = raise_error

    def on_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        self._check((logs or {}).get("loss"), f"batch {batch}", f"Batch {batch}")

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        self._check((logs or {}).get("loss"), f"epoch {epoch + 1}", f"Epoch {epoch + 1}")

    def _check(self, loss: Any, where: str, label: str) -> None:
        if loss is None or not _invalid(loss):
            return
        if self.raise_error:
            raise RuntimeError(
                f"NaN or Inf loss encountered at {where}. Loss value: {loss}. Terminating training immediately."
            )
        print_msg(self.model, f"{label}: Invalid loss, terminating training")
        self.model.stop_training = True
