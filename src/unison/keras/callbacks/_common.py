"""Helpers shared by the callbacks: who may print and write, atomic files, monitor modes.

In multi-replica training every replica runs the same callbacks with identical,
already-reduced logs, so decisions come out the same everywhere; only the chief replica
prints and writes files (N processes writing one file would race). These helpers are the one place that rule lives.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

from unison.core.atomic_io import fsync_directory
from unison.errors import format_choices

MODES = ("auto", "min", "max")

# Name fragments of metrics that improve upwards / downwards, for mode="auto".
_UP_HINTS = ("acc", "auc", "precision", "recall", "f1", "fbeta", "iou", "r2")
_DOWN_HINTS = (
    "loss",
    "error",
    "crossentropy",
    "hinge",
    "divergence",
    "mse",
    "mae",
    "mape",
    "msle",
    "logcosh",
    "poisson",
)


def is_chief(model: Any) -> bool:
    """Whether this process may print and write files for ``model``.

    A model without a ``distribute_strategy`` (or no model yet) is single-process: chief.

    Example:
        >>> is_chief(object())
        True
    """
    strategy = getattr(model, "distribute_strategy", None)
    if strategy is None:
        return True
    return bool(strategy.extended.should_checkpoint)


def print_msg(model: Any, message: str) -> None:
    """Print ``message`` on the chief replica only."""
    if is_chief(model):
        sys.stdout.write(message + "\n")
        sys.stdout.flush()


def commit(tmp: str, path: str) -> None:
    """Flush ``tmp`` (a file or a directory tree) to disk and move it onto ``path`` atomically.

    Single files are written through :mod:`unison.core.atomic_io`; this is for what a model's own
    ``save`` wrote under a temporary name, which may be a directory tree.
    """
    if os.path.isdir(tmp):
        for root, _, files in os.walk(tmp):
            for name in files:
                _fsync_file(os.path.join(root, name))
        if os.path.isdir(path):
            # A directory cannot be renamed over a non-empty one; this swap is the only
            # non-atomic step, and it happens after the new copy is complete on disk.
            shutil.rmtree(path)
    else:
        _fsync_file(tmp)
    os.replace(tmp, path)
    fsync_directory(os.path.dirname(os.path.abspath(path)))


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_quietly(path: str) -> None:
    """Delete a leftover temporary file or directory, ignoring one that is not there."""
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.exists(path):
        os.remove(path)


def check_mode(owner: str, mode: str) -> str:
    """Return ``mode`` if it is one of ``MODES``, else raise a ValueError naming it."""
    if mode not in MODES:
        raise ValueError(
            f"{owner}: mode must be one of {format_choices(MODES)}. Received: mode={mode!r}. "
            "Use 'min' for quantities that should decrease (losses), 'max' for ones that "
            "should increase (accuracy), or 'auto' to infer it from the monitored name."
        )
    return mode


def infer_mode(monitor: str, model: Any = None) -> str | None:
    """Direction ('min' or 'max') in which ``monitor`` improves, or None if unknown.

    A metric object on ``model.metrics`` with a ``direction``/``_direction`` of ``"up"`` or
    ``"down"`` wins; otherwise the name decides, as in Keras.

    Example:
        >>> infer_mode("val_accuracy"), infer_mode("loss"), infer_mode("zebra")
        ('max', 'min', None)
    """
    name = monitor.removeprefix("val_")
    for metric in getattr(model, "metrics", None) or ():
        direction = getattr(metric, "direction", getattr(metric, "_direction", None))
        if getattr(metric, "name", None) == name and direction in ("up", "down"):
            return "max" if direction == "up" else "min"
    lowered = name.lower()
    if lowered == "loss" or lowered.endswith("_loss"):
        return "min"
    if any(hint in lowered for hint in _UP_HINTS):
        return "max"
    if any(hint in lowered for hint in _DOWN_HINTS):
        return "min"
    return None


def unknown_direction_error(owner: str, monitor: str) -> ValueError:
    """The error for ``mode='auto'`` on a quantity whose direction cannot be inferred."""
    return ValueError(
        f"{owner} received monitor={monitor!r} with mode='auto', but cannot tell whether "
        "that quantity should be maximized or minimized. Pass mode='max' to keep the "
        "highest value or mode='min' to keep the lowest."
    )
