"""The ``Callback`` base class (Keras 3 semantics)."""

from __future__ import annotations

from typing import Any

Logs = dict[str, Any]

# Hooks whose logs the trainer computes per batch only on request (it costs a collective).
_BATCH_LOG_HOOKS = ("on_batch_end", "on_train_batch_end", "on_test_batch_end")


class Callback:
    """Base class of objects that hook into ``fit``, ``evaluate`` and ``predict``.

    Subclass it and override the hooks you need; every hook does nothing by default.
    ``on_train_batch_begin``/``on_train_batch_end`` call the older aliases
    ``on_batch_begin``/``on_batch_end``, as in Keras.

    Contract in multi-replica training: every replica runs the same callbacks with the same,
    already cross-replica-reduced logs, so decisions (stop, change the learning rate) agree
    everywhere; only the chief replica (``model.distribute_strategy.extended.should_checkpoint``)
    should print or write files.

    Batch hooks receive ``logs=None`` or ``{}`` unless some callback needs per-batch metric
    values: a subclass that overrides ``on_train_batch_end``, ``on_batch_end`` or
    ``on_test_batch_end`` is taken to need them (see ``CallbackList.needs_batch_logs``).

    Attributes:
        model: the model being trained (set by ``set_model``), or None.
        params: the trainer's parameters, ``{'verbose', 'epochs', 'steps'}`` (``set_params``).

    Example:
        >>> class CountEpochs(Callback):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.count = 0
        ...     def on_epoch_end(self, epoch, logs=None):
        ...         self.count += 1
        >>> cb = CountEpochs()
        >>> cb.on_epoch_end(0, {"loss": 0.5})
        >>> cb.count
        1
    """

    def __init__(self) -> None:
        self.model: Any = None
        self.params: dict[str, Any] = {}

    def set_params(self, params: dict[str, Any]) -> None:
        """Receive the trainer's parameters (``verbose``, ``epochs``, ``steps``)."""
        self.params = params

    def set_model(self, model: Any) -> None:
        """Receive the model the callback acts on."""
        self.model = model

    def needs_batch_logs(self) -> bool:
        """Whether this callback reads metric values in batch-end hooks.

        The default answers True when a subclass overrides a batch-end hook; a subclass that
        overrides one but reads no metrics may answer False to save a collective per batch.
        """
        return any(getattr(type(self), hook) is not getattr(Callback, hook) for hook in _BATCH_LOG_HOOKS)

    def on_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        """Alias of ``on_train_batch_begin`` kept for older callbacks."""

    def on_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        """Alias of ``on_train_batch_end`` kept for older callbacks."""

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        """Called at the start of epoch ``epoch`` (0-based) during ``fit``."""

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        """Called at the end of an epoch with its metrics; validation ones prefixed ``val_``."""

    def on_train_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        """Called before training batch ``batch`` (0-based within the epoch)."""
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        """Called after a training batch with the epoch's metrics so far (or no logs)."""
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        """Called before a batch of ``evaluate`` or of validation in ``fit``."""

    def on_test_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        """Called after a batch of ``evaluate`` or of validation in ``fit``."""

    def on_predict_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        """Called before a batch of ``predict``."""

    def on_predict_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        """Called after a batch of ``predict``; ``logs`` may hold ``{'outputs': ...}``."""

    def on_train_begin(self, logs: Logs | None = None) -> None:
        """Called once at the start of ``fit``."""

    def on_train_end(self, logs: Logs | None = None) -> None:
        """Called once at the end of ``fit`` with the last epoch's logs."""

    def on_test_begin(self, logs: Logs | None = None) -> None:
        """Called at the start of ``evaluate`` or of validation in ``fit``."""

    def on_test_end(self, logs: Logs | None = None) -> None:
        """Called at the end of ``evaluate`` or of validation with its metrics."""

    def on_predict_begin(self, logs: Logs | None = None) -> None:
        """Called at the start of ``predict``."""

    def on_predict_end(self, logs: Logs | None = None) -> None:
        """Called at the end of ``predict``."""
