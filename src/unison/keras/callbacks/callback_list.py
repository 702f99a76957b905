"""``CallbackList``: one object the trainer calls, which calls every callback."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from unison.keras.callbacks.callback import Callback, Logs
from unison.keras.callbacks.history import History
from unison.keras.callbacks.progbar_logger import ProgbarLogger


def _pythonify(logs: Logs | None) -> Logs:
    # Metric values may arrive as 0-d tensors or numpy scalars; callbacks (CSV, formatting,
    # comparisons) want plain floats. Sorted, so every consumer sees the same order.
    result: Logs = {}
    for key, value in sorted((logs or {}).items()):
        if isinstance(value, dict):
            result.update(_pythonify(value))
            continue
        try:
            result[key] = float(value)
        except (TypeError, ValueError):
            result[key] = value
    return result


class CallbackList(Callback):
    """Dispatches every hook to a list of callbacks, in order.

    Args:
        callbacks: the user's callbacks.
        add_history: append a ``History`` if none is in ``callbacks``.
        add_progbar: append a ``ProgbarLogger`` if none is in ``callbacks``.
        model: the model the callbacks act on; ``model.history`` is set to the History.
        **params: the trainer's parameters (``verbose``, ``epochs``, ``steps``), given to
            every callback through ``set_params``.

    Example:
        >>> cbs = CallbackList([], add_history=True, verbose=0, epochs=1, steps=2)
        >>> cbs.on_train_begin()
        >>> cbs.on_epoch_end(0, {"loss": 0.5})
        >>> cbs.history.history
        {'loss': [0.5]}
        >>> cbs.needs_batch_logs()
        False
    """

    def __init__(
        self,
        callbacks: Iterable[Callback] | None = None,
        add_history: bool = False,
        add_progbar: bool = False,
        model: Any = None,
        **params: Any,
    ) -> None:
        super().__init__()
        self.callbacks: list[Callback] = list(callbacks) if callbacks else []
        for index, callback in enumerate(self.callbacks):
            if not isinstance(callback, Callback):
                raise TypeError(
                    "Every callback must be an instance of unison.keras.callbacks.Callback. "
                    f"Received: callbacks[{index}]={callback!r} "
                    f"(of type {type(callback).__name__})"
                )
        self.history: History | None = next((cb for cb in self.callbacks if isinstance(cb, History)), None)
        self.progbar: ProgbarLogger | None = next((cb for cb in self.callbacks if isinstance(cb, ProgbarLogger)), None)
        if self.history is None and add_history:
            self.history = History()
            self.callbacks.append(self.history)
        if self.progbar is None and add_progbar:
            self.progbar = ProgbarLogger()
            self.callbacks.append(self.progbar)
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def __iter__(self) -> Iterator[Callback]:
        return iter(self.callbacks)

    def __len__(self) -> int:
        return len(self.callbacks)

    def append(self, callback: Callback) -> None:
        """Add a callback at the end (it gets the current model and params)."""
        if self.model is not None:
            callback.set_model(self.model)
        if self.params:
            callback.set_params(self.params)
        self.callbacks.append(callback)

    def set_params(self, params: dict[str, Any]) -> None:
        super().set_params(params)
        for callback in self.callbacks:
            callback.set_params(params)

    def set_model(self, model: Any) -> None:
        super().set_model(model)
        if self.history is not None:
            model.history = self.history
        for callback in self.callbacks:
            callback.set_model(model)

    def needs_batch_logs(self) -> bool:
        """Whether any callback reads metric values at batch end.

        History and ProgbarLogger never ask: without per-batch values the bar just advances.
        The trainer uses this to skip the per-batch cross-replica reduction of metrics.
        """
        return any(
            callback.needs_batch_logs()
            for callback in self.callbacks
            if not isinstance(callback, (History, ProgbarLogger))
        )

    def _call(self, hook: str, *args: Any, logs: Logs) -> None:
        for callback in self.callbacks:
            getattr(callback, hook)(*args, logs)

    def on_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        self._call("on_batch_begin", batch, logs=logs or {})

    def on_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        self._call("on_batch_end", batch, logs=_pythonify(logs))

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        self._call("on_epoch_begin", epoch, logs=logs or {})

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        # One shared dict: what a callback adds (e.g. learning_rate) reaches the later
        # ones, History included, as in Keras.
        self._call("on_epoch_end", epoch, logs=_pythonify(logs))

    def on_train_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        self._call("on_train_batch_begin", batch, logs=logs or {})

    def on_train_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        self._call("on_train_batch_end", batch, logs=_pythonify(logs))

    def on_test_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        self._call("on_test_batch_begin", batch, logs=logs or {})

    def on_test_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        self._call("on_test_batch_end", batch, logs=_pythonify(logs))

    def on_predict_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        self._call("on_predict_batch_begin", batch, logs=logs or {})

    def on_predict_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        # Outputs are arrays, not metrics: pass them untouched.
        self._call("on_predict_batch_end", batch, logs=logs or {})

    def on_train_begin(self, logs: Logs | None = None) -> None:
        self._call("on_train_begin", logs=logs or {})

    def on_train_end(self, logs: Logs | None = None) -> None:
        self._call("on_train_end", logs=_pythonify(logs))

    def on_test_begin(self, logs: Logs | None = None) -> None:
        self._call("on_test_begin", logs=logs or {})

    def on_test_end(self, logs: Logs | None = None) -> None:
        self._call("on_test_end", logs=_pythonify(logs))

    def on_predict_begin(self, logs: Logs | None = None) -> None:
        self._call("on_predict_begin", logs=logs or {})

    def on_predict_end(self, logs: Logs | None = None) -> None:
        self._call("on_predict_end", logs=logs or {})
