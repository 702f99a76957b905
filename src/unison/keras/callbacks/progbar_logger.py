"""``ProgbarLogger``: prints the ``Epoch i/n`` lines and the progress bar."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from unison.keras.callbacks._common import is_chief
from unison.keras.callbacks.callback import Callback, Logs
from unison.keras.utils.io_utils import is_interactive_logging_enabled, print_msg
from unison.keras.utils.progbar import Progbar


class ProgbarLogger(Callback):
    """Prints progress and metrics in Keras 3's format, on the chief replica only.

    ``fit``/``evaluate``/``predict`` add one when ``verbose`` is not 0. Its verbosity,
    epoch count and steps per epoch come from ``params``. Batch logs may be absent (the
    trainer computes them only when a callback needs them): the bar then advances without
    metrics, and the final line of each epoch shows the full epoch logs. Inside ``fit``,
    validation is silent; its ``val_`` metrics appear on the epoch's line.

    Args:
        count_mode: Keras 2's ``"steps"`` or ``"samples"`` (checked; the bar counts steps, as Keras 3's).
        stateful_metrics: Keras 2's argument, accepted and unused (every metric shows its running value).
        stream: where to print; ``None`` means ``sys.stdout`` when a bar starts.

    Example:
        >>> import io
        >>> out = io.StringIO()
        >>> logger = ProgbarLogger(stream=out)
        >>> logger.set_params({"verbose": 2, "epochs": 2, "steps": 1})
        >>> logger.on_train_begin()
        >>> logger.on_epoch_begin(0)
        >>> logger.on_train_batch_end(0)
        >>> logger.on_epoch_end(0, {"loss": 0.25})
        >>> out.getvalue().splitlines()[0]
        'Epoch 1/2'
    """

    def __init__(
        self, count_mode: str = "steps", stateful_metrics: Any = None, *, stream: TextIO | None = None
    ) -> None:
        # count_mode/stateful_metrics: Keras 2's arguments (Keras 3 takes none); the bar counts steps
        if count_mode not in ("steps", "samples"):
            raise ValueError(f'Unknown `count_mode`: {count_mode!r}. Expected "steps" or "samples".')
        super().__init__()
        self.stream = stream
        self.verbose = 1
        self.epochs = 1
        self.target: int | None = None
        self.seen = 0
        self.progbar: Progbar | None = None
        self._called_in_fit = False

    def set_params(self, params: dict[str, Any]) -> None:
        super().set_params(params)
        verbose = params.get("verbose", 1)
        self.verbose = 1 if verbose == "auto" else int(verbose)
        self.epochs = int(params.get("epochs") or 1)
        self.target = params.get("steps")

    def on_train_begin(self, logs: Logs | None = None) -> None:
        # Validation inside fit is silent: its numbers go on the epoch line.
        self._called_in_fit = True

    def on_train_end(self, logs: Logs | None = None) -> None:
        self._called_in_fit = False

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        self._start_bar()
        # Keras 3 prints the epoch header only when there is more than one epoch.
        if self._active() and self.epochs > 1:
            out = self._out()
            if out is sys.stdout and not is_interactive_logging_enabled():
                print_msg(f"Epoch {epoch + 1}/{self.epochs}")  # to the logger, as Keras
                return
            out.write(f"Epoch {epoch + 1}/{self.epochs}\n")
            out.flush()

    def on_train_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        self._advance(batch, logs)

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        self._finish(logs)

    def on_test_begin(self, logs: Logs | None = None) -> None:
        if not self._called_in_fit:
            self._start_bar()

    def on_test_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        if not self._called_in_fit:
            self._advance(batch, logs)

    def on_test_end(self, logs: Logs | None = None) -> None:
        if not self._called_in_fit:
            self._finish(logs)

    def on_predict_begin(self, logs: Logs | None = None) -> None:
        self._start_bar()

    def on_predict_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        # Predictions are outputs, not metrics: never show them.
        self._advance(batch, None)

    def on_predict_end(self, logs: Logs | None = None) -> None:
        self._finish(None)

    def needs_batch_logs(self) -> bool:
        # The bar shows batch metrics when they are there but does not ask for them.
        return False

    def _active(self) -> bool:
        return self.verbose > 0 and is_chief(self.model)

    def _out(self) -> TextIO:
        return self.stream if self.stream is not None else sys.stdout

    def _start_bar(self) -> Progbar:
        self.seen = 0
        self.progbar = Progbar(
            target=self.target,
            verbose=self.verbose if self._active() else 0,
            unit_name="step",
            stream=self._out(),
        )
        return self.progbar

    def _advance(self, batch: int, logs: Logs | None) -> None:
        progbar = self.progbar if self.progbar is not None else self._start_bar()
        self.seen = batch + 1
        if self.verbose == 1:
            progbar.update(self.seen, self._values(progbar, logs), finalize=False)

    def _finish(self, logs: Logs | None) -> None:
        progbar = self.progbar if self.progbar is not None else self._start_bar()
        if progbar.target is None:
            # Unknown length (a generator): now we know it.
            progbar.target = self.seen
        progbar.update(progbar.target, self._values(progbar, logs), finalize=True)

    @staticmethod
    def _values(progbar: Progbar, logs: Logs | None) -> list[tuple[str, Any]]:
        if not logs:
            return []
        # Logs already hold running metric results: show them as they are, not averaged
        # again; sorted, so the order is the same on every line and matches Keras 3.
        progbar.stateful_metrics.update(logs)
        return sorted(logs.items())
