"""``SwapEMAWeights``: evaluate and predict with the optimizer's moving averages of the weights."""

from __future__ import annotations

from typing import Any

from unison.keras.callbacks.callback import Callback, Logs
from unison.keras.optimizers.after_step import copy_weights_to_averages, swap_ema_weights


class SwapEMAWeights(Callback):
    """Swap the weights with their moving averages (``optimizer(use_ema=True)``) around
    evaluation and prediction, as Keras 3's callback does.

    The validation of ``fit`` (and ``evaluate``/``predict`` given this callback) runs with the
    averages; training continues from the raw weights. With ``swap_on_epoch=True`` the swap also
    happens at each epoch end (callbacks after this one, e.g. ``ModelCheckpoint``, see the averages)
    and is undone at the next epoch's start. ``fit`` ends with the averages in the model either way.

    Args:
        swap_on_epoch: also swap at the end of every epoch.

    Raises:
        ValueError: at the start of training, when the model's optimizer has ``use_ema=False``.

    Example:
        >>> from unison import keras
        >>> cb = keras.callbacks.SwapEMAWeights(swap_on_epoch=True)
        >>> cb.swap_on_epoch
        True
    """

    def __init__(self, swap_on_epoch: bool = False) -> None:
        super().__init__()
        self.swap_on_epoch = bool(swap_on_epoch)
        self._ema_in_model = False

    def _optimizer(self) -> Any:
        optimizer = getattr(self.model, "optimizer", None)
        inner = getattr(optimizer, "inner_optimizer", optimizer)
        if not getattr(inner, "use_ema", False):
            raise ValueError(
                "SwapEMAWeights needs an optimizer that keeps moving averages of the weights. Compile "
                "with e.g. keras.optimizers.Adam(use_ema=True). Received: "
                f"optimizer={type(optimizer).__name__} with use_ema=False"
            )
        return optimizer

    def _swap(self) -> None:
        if swap_ema_weights(self._optimizer(), self.model.trainable_weights):
            self._ema_in_model = not self._ema_in_model

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        if self.swap_on_epoch and self._ema_in_model:
            self._swap()

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        if self.swap_on_epoch and not self._ema_in_model:
            self._swap()
            if epoch == self.params.get("epochs", 0) - 1:
                # fit's end sets the weights to the averages: the averages must hold the EMA values,
                # which the model holds now.
                copy_weights_to_averages(self._optimizer(), self.model.trainable_weights)

    def _before_eval(self) -> None:
        if not self._ema_in_model:
            self._swap()  # before the first update there are no averages yet: nothing to swap

    def _after_eval(self) -> None:
        if self._ema_in_model:
            self._swap()

    def on_test_begin(self, logs: Logs | None = None) -> None:
        self._before_eval()

    def on_test_end(self, logs: Logs | None = None) -> None:
        self._after_eval()

    def on_predict_begin(self, logs: Logs | None = None) -> None:
        self._before_eval()

    def on_predict_end(self, logs: Logs | None = None) -> None:
        self._after_eval()
