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

__all__ = ["Checkpoint", "CheckpointLoadStatus", "CheckpointManager", "CorruptCheckpointError", "latest_checkpoint"]


def __getattr__(name: str) -> object:
    from unison._unsupported import unsupported

    raise unsupported("tf.train", name)
