"""``ModelCheckpoint``: save the model or its weights during training, on the chief only."""

from __future__ import annotations

import contextlib
import math
import os
import warnings
from collections.abc import Callable
from typing import Any

from unison.core.atomic_io import temp_path_for
from unison.keras.callbacks._common import (
    check_mode,
    commit,
    infer_mode,
    is_chief,
    print_msg,
    remove_quietly,
    unknown_direction_error,
)
from unison.keras.callbacks.callback import Callback, Logs


class ModelCheckpoint(Callback):
    """Save the model (``model.save``) or its weights (``model.save_weights``) as it trains.

    ``filepath`` may contain ``str.format`` fields filled with the 1-based ``epoch``, the
    1-based ``batch`` (when saving every N batches) and the values in the logs, e.g.
    ``"ckpt/{epoch:02d}-{val_loss:.2f}.weights.pt"``.

    Contract in multi-replica training: every replica evaluates "is this the best so far"
    with the same reduced logs (so all agree), but only the chief replica
    (``model.distribute_strategy.extended.should_checkpoint``) creates directories, writes
    and prints. A file is written under a temporary name in the same directory, flushed to
    disk and renamed over ``filepath`` (atomic on POSIX and Windows), so a crash leaves the
    previous checkpoint or the new one, never a half-written file. This is done here rather
    than trusted to ``model.save_weights`` so that any writer the model uses is safe.

    Args:
        filepath: where to save; may contain formatting fields (see above).
        monitor: the quantity compared when ``save_best_only`` is True.
        verbose: 1 prints a line when the callback saves or skips.
        save_best_only: save only when ``monitor`` improves on the best value so far.
        save_weights_only: call ``model.save_weights`` instead of ``model.save``.
        mode: ``"min"``, ``"max"`` or ``"auto"`` (inferred from the monitored name).
        save_freq: ``"epoch"`` to save at the end of each epoch, or a positive integer N
            to save every N training batches.
        initial_value_threshold: the value the first saved checkpoint must beat when
            ``save_best_only`` is True.

    Raises:
        ValueError: for an empty ``filepath``, an unknown ``mode`` or ``save_freq``; at the
            start of training, for ``mode="auto"`` on a quantity whose direction is unknown
            (with ``save_best_only``); when saving, for a ``filepath`` field not in the logs.

    Example:
        >>> import os, tempfile
        >>> class M:
        ...     def save_weights(self, path):
        ...         open(path, "w").write("w")
        >>> ckpt = ModelCheckpoint(os.path.join(tempfile.mkdtemp(), "{epoch:02d}.w"),
        ...                        save_weights_only=True)
        >>> ckpt.set_model(M())
        >>> ckpt.on_epoch_end(2, {"val_loss": 0.5})
        >>> sorted(os.listdir(os.path.dirname(ckpt.filepath)))
        ['03.w']
    """

    def __init__(
        self,
        filepath: str | os.PathLike[str],
        monitor: str = "val_loss",
        verbose: int = 0,
        save_best_only: bool = False,
        save_weights_only: bool = False,
        mode: str = "auto",
        save_freq: str | int = "epoch",
        initial_value_threshold: float | None = None,
    ) -> None:
        super().__init__()
        self.filepath = os.fspath(filepath)
        if not self.filepath:
            raise ValueError(
                "ModelCheckpoint: filepath must be a non-empty path, e.g. "
                "'ckpt/{epoch:02d}.weights.pt'. Received: filepath=''"
            )
        check_mode("ModelCheckpoint", mode)
        if save_freq != "epoch" and (isinstance(save_freq, bool) or not isinstance(save_freq, int) or save_freq <= 0):
            raise ValueError(
                "ModelCheckpoint: save_freq must be 'epoch' (save at the end of every epoch) "
                "or a positive integer (save every that many batches). "
                f"Received: save_freq={save_freq!r}"
            )
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.mode = mode
        self.save_freq = save_freq
        self._save_every = None if save_freq == "epoch" else int(save_freq)
        self.initial_value_threshold = initial_value_threshold
        self._direction = mode if mode != "auto" else infer_mode(monitor)
        self.best: float | None = initial_value_threshold
        self._current_epoch = 0
        self._batches_since_save = 0
        self._last_batch_seen = -1

    def needs_batch_logs(self) -> bool:
        return self.save_freq != "epoch"

    def on_train_begin(self, logs: Logs | None = None) -> None:
        if self.save_best_only and self._direction is None:
            self._direction = infer_mode(self.monitor, self.model)
            if self._direction is None:
                raise unknown_direction_error("ModelCheckpoint", self.monitor)
        if self.best is None and self._direction is not None:
            self.best = math.inf if self._direction == "min" else -math.inf

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        self._current_epoch = epoch

    def on_train_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        if self._should_save_on_batch(batch):
            self._save_model(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        if self.save_freq == "epoch":
            self._save_model(epoch, None, logs)

    def _should_save_on_batch(self, batch: int) -> bool:
        if self._save_every is None:
            return False
        # Count batches from their indices, so a trainer that calls the hook only every
        # few batches (steps_per_execution) still saves at the right frequency.
        if batch <= self._last_batch_seen:
            self._batches_since_save += batch + 1  # a new epoch began
        else:
            self._batches_since_save += batch - self._last_batch_seen
        self._last_batch_seen = batch
        if self._batches_since_save >= self._save_every:
            self._batches_since_save = 0
            return True
        return False

    def _save_model(self, epoch: int, batch: int | None, logs: Logs | None) -> None:
        logs = logs or {}
        filepath = self._format_path(epoch, batch, logs)
        if not self._should_save(epoch, logs, filepath):
            return
        # A sharded model (keras.distribution.ModelParallel) gathers its weights on every replica
        # first: a collective the other replicas cannot join once only the chief goes on.
        gathered = getattr(self.model, "checkpoint_gathered", contextlib.nullcontext)
        with gathered():
            if not is_chief(self.model):
                return
            # A unison Model's chief-only halves of save_weights/save (the other replicas do not get
            # here, so they must not wait for them); any other model's own methods.
            if self.save_weights_only:
                writer = getattr(self.model, "write_weights_file", self.model.save_weights)
            else:
                writer = getattr(self.model, "write_model_file", self.model.save)
            _write_atomically(writer, filepath)
        if self.verbose > 0:
            print_msg(self.model, f"\nEpoch {epoch + 1}: finished saving model to {filepath}")

    def _should_save(self, epoch: int, logs: Logs, filepath: str) -> bool:
        if not self.save_best_only:
            if self.verbose > 0:
                print_msg(self.model, f"\nEpoch {epoch + 1}: saving model to {filepath}")
            return True
        current = logs.get(self.monitor)
        if current is None:
            if is_chief(self.model):
                warnings.warn(
                    f"Can save best model only with {self.monitor} available. "
                    f"Available: {', '.join(logs) or 'none'}. Saving anyway.",
                    stacklevel=3,
                )
            return True
        if self._direction is None:
            # on_train_begin was not called (a hand-driven loop): resolve now.
            self.on_train_begin()
        best_str = "None" if self.best is None else f"{self.best:.5f}"
        if self._improves(float(current)):
            if self.verbose > 0:
                print_msg(
                    self.model,
                    f"\nEpoch {epoch + 1}: {self.monitor} improved from {best_str} to "
                    f"{current:.5f}, saving model to {filepath}",
                )
            self.best = float(current)
            return True
        if self.verbose > 0:
            print_msg(self.model, f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best_str}")
        return False

    def _improves(self, current: float) -> bool:
        if self.best is None:
            return True
        if self._direction == "min":
            return current < self.best
        return current > self.best

    def _format_path(self, epoch: int, batch: int | None, logs: Logs) -> str:
        fields = dict(logs)
        fields["epoch"] = epoch + 1
        if batch is not None and "batch" not in logs:
            fields["batch"] = batch + 1
        try:
            return self.filepath.format(**fields)
        except (KeyError, IndexError) as e:
            raise ValueError(
                f"ModelCheckpoint: cannot fill the fields of filepath={self.filepath!r}: "
                f"{e!r} is not available. Available fields: {', '.join(sorted(fields))}. "
                "Use only 'epoch', 'batch' (with an integer save_freq) and names in the logs."
            ) from None


def _write_atomically(writer: Callable[[str], Any], filepath: str) -> None:
    directory = os.path.dirname(os.path.abspath(filepath))
    os.makedirs(directory, exist_ok=True)
    tmp = temp_path_for(filepath)
    try:
        writer(tmp)
        if not os.path.exists(tmp):
            raise RuntimeError(
                f"ModelCheckpoint asked the model to save to {tmp!r} but nothing was written "
                "there; model.save/save_weights must write exactly the path they are given."
            )
        commit(tmp, filepath)
    except BaseException:
        remove_quietly(tmp)
        raise
