"""``CSVLogger``: one CSV row per epoch, written by the chief only."""

from __future__ import annotations

import collections.abc
import csv
import io
import os
from typing import Any

import numpy as np

from unison.core.atomic_io import atomic_write_text
from unison.keras.callbacks._common import is_chief
from unison.keras.callbacks.callback import Callback, Logs


def _cell(value: Any) -> Any:
    # Sequences (per-class metrics) become one "[a, b]" cell; scalars stay numbers.
    if isinstance(value, str):
        return value
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    if isinstance(value, collections.abc.Iterable):
        return f"[{', '.join(map(str, value))}]"
    return value


class CSVLogger(Callback):
    """Write each epoch's logs as one row of a CSV file: ``epoch`` (0-based), then metrics.

    Columns are the sorted names of the first epoch's logs, then (when those have no ``val_``
    name) a ``val_`` column for each, as Keras writes them; a missing value is written as ``NA``. Only
    the chief replica writes. After every epoch the whole file is rewritten under a
    temporary name and renamed into place, so the file on disk is always complete.

    Args:
        filename: path of the CSV file, e.g. ``"run/log.csv"``.
        separator: the field delimiter.
        append: keep the rows already in the file (continuing a run) instead of starting a
            new file; no second header is written under an existing one.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "log.csv")
        >>> logger = CSVLogger(path)
        >>> logger.on_train_begin()
        >>> logger.on_epoch_end(0, {"loss": 0.5, "accuracy": 0.75})
        >>> open(path).read().splitlines()
        ['epoch,accuracy,loss,val_accuracy,val_loss', '0,0.75,0.5,NA,NA']
    """

    def __init__(self, filename: str | os.PathLike[str], separator: str = ",", append: bool = False) -> None:
        super().__init__()
        if not isinstance(separator, str) or len(separator) != 1:
            raise ValueError(
                "CSVLogger: separator must be a single character such as ',' or '\\t'. "
                f"Received: separator={separator!r}"
            )
        self.filename = os.fspath(filename)
        self.sep = separator
        self.append = append
        self.keys: list[str] | None = None
        self._prefix = ""
        self._rows = io.StringIO()
        self._writer: Any = None

    def on_train_begin(self, logs: Logs | None = None) -> None:
        self.keys = None
        self._rows = io.StringIO()
        self._writer = None
        self._prefix = ""
        if self.append and is_chief(self.model) and os.path.exists(self.filename):
            with open(self.filename, newline="", encoding="utf-8") as f:
                self._prefix = f.read()
            if self._prefix and not self._prefix.endswith("\n"):
                self._prefix += "\n"

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        if not is_chief(self.model):
            return
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            # As Keras (3 and 2): without val_ keys in the first epoch's logs (no validation yet,
            # validation_freq > 1), a val_ column per key, written as NA until validation runs.
            if not any(key.startswith("val_") for key in self.keys):
                self.keys.extend([f"val_{key}" for key in self.keys])
        if self._writer is None:
            self._writer = csv.DictWriter(
                self._rows,
                fieldnames=["epoch", *self.keys],
                delimiter=self.sep,
                lineterminator="\n",
                extrasaction="ignore",
            )
            if not self._prefix.strip():
                self._writer.writeheader()
        row = {"epoch": epoch, **{key: _cell(logs.get(key, "NA")) for key in self.keys}}
        self._writer.writerow(row)
        atomic_write_text(self.filename, self._prefix + self._rows.getvalue())

    def on_train_end(self, logs: Logs | None = None) -> None:
        self._writer = None
