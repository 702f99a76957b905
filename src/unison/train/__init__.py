"""``tf.train``: checkpoints (``Checkpoint``, ``CheckpointManager``, ``latest_checkpoint``).

See :mod:`unison.train.checkpoint` for the file format and who writes.
"""

from __future__ import annotations

from unison.train.checkpoint import (
    Checkpoint,
    CheckpointLoadStatus,
    CorruptCheckpointError,
    latest_checkpoint,
)
from unison.train.manager import CheckpointManager
from unison.train.reader import CheckpointReader, list_variables, load_checkpoint, load_variable

__all__ = [
    "Checkpoint",
    "CheckpointLoadStatus",
    "CheckpointManager",
    "CheckpointReader",
    "CorruptCheckpointError",
    "latest_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
]


def __getattr__(name: str) -> object:
    from unison._unsupported import unsupported

    raise unsupported("tf.train", name)
