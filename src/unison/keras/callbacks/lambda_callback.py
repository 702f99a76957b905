"""``LambdaCallback``: a callback made of plain functions (Keras 3's ``keras.callbacks.LambdaCallback``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from unison.keras.callbacks.callback import _BATCH_LOG_HOOKS, Callback

# The hooks a keyword may replace: Keras's named arguments plus any other hook by its name.
_HOOKS = tuple(name for name in vars(Callback) if name.startswith("on_"))
_PER_BATCH = tuple(name for name in _HOOKS if "batch" in name)


class LambdaCallback(Callback):
    """Run the given functions at the matching points of ``fit``/``evaluate``/``predict``.

    The functions take Keras's arguments: ``on_epoch_begin(epoch, logs)``,
    ``on_epoch_end(epoch, logs)``, ``on_train_batch_begin(batch, logs)``,
    ``on_train_batch_end(batch, logs)``, ``on_train_begin(logs)``, ``on_train_end(logs)``; any
    other hook may be given by its name (``on_batch_end=...``, ``on_test_end=...``). As with
    every callback, each replica runs them with the same reduced logs, so a function that sets
    ``model.stop_training`` acts everywhere; the other replicas' prints go to their logs.

    Example:
        >>> seen = []
        >>> cb = LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append((epoch, logs["loss"])))
        >>> cb.on_epoch_end(0, {"loss": 0.5})
        >>> seen
        [(0, 0.5)]
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # fit calls batch hooks only for callbacks whose class overrides one (a per-step Python
        # call costs time), so a LambdaCallback given a batch function gets a class that does.
        positional = dict(zip(("on_train_batch_begin", "on_train_batch_end"), args[4:6]))
        wants = any({**positional, **kwargs}.get(hook) is not None for hook in _PER_BATCH)
        return super().__new__(_LambdaCallbackWithBatchHooks if cls is LambdaCallback and wants else cls)

    def __init__(
        self,
        on_epoch_begin: Callable[..., Any] | None = None,
        on_epoch_end: Callable[..., Any] | None = None,
        on_train_begin: Callable[..., Any] | None = None,
        on_train_end: Callable[..., Any] | None = None,
        on_train_batch_begin: Callable[..., Any] | None = None,
        on_train_batch_end: Callable[..., Any] | None = None,
        **kwargs: Callable[..., Any],
    ) -> None:
        super().__init__()
        unknown = sorted(k for k in kwargs if k not in _HOOKS)
        if unknown:
            raise TypeError(
                f"LambdaCallback got unknown hooks {unknown}. Expected callback hook names such as "
                f"{', '.join(_HOOKS[:6])}, ... (see keras.callbacks.Callback)."
            )
        given = {
            "on_epoch_begin": on_epoch_begin,
            "on_epoch_end": on_epoch_end,
            "on_train_begin": on_train_begin,
            "on_train_end": on_train_end,
            "on_train_batch_begin": on_train_batch_begin,
            "on_train_batch_end": on_train_batch_end,
            **kwargs,
        }
        for name, fn in given.items():
            if fn is None:
                continue
            if not callable(fn):
                raise TypeError(f"LambdaCallback({name}=...) needs a function. Received: {name}={fn!r}")
            # An instance attribute shadows the class's no-op hook, as in Keras.
            setattr(self, name, fn)

    def needs_batch_logs(self) -> bool:
        """True when a batch-end function was given (it reads the batch's metrics)."""
        return any(name in self.__dict__ for name in _BATCH_LOG_HOOKS)


def _default_hook(name: str) -> Callable[..., None]:
    base = getattr(Callback, name)

    def hook(self: Callback, batch: int, logs: Any = None) -> None:
        base(self, batch, logs=logs)  # a hook not given keeps Callback's behaviour (aliases included)

    hook.__name__ = name
    return hook


# The instance's functions shadow these class hooks; the class only tells fit to call batch hooks.
_LambdaCallbackWithBatchHooks = type(
    "LambdaCallback", (LambdaCallback,), {name: _default_hook(name) for name in _PER_BATCH}
)

__all__ = ["LambdaCallback"]
