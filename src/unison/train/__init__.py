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
    "BytesList",
    "Checkpoint",
    "CheckpointLoadStatus",
    "CheckpointManager",
    "CheckpointReader",
    "CorruptCheckpointError",
    "Example",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "SequenceExample",
    "latest_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
]


_EXAMPLE_NAMES = (
    "BytesList",
    "Example",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "SequenceExample",
)


def __getattr__(name: str) -> object:
    if name in _EXAMPLE_NAMES:  # protobuf message classes: built on first use (import unison stays light)
        from unison.ops import example

        return getattr(example, name)
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.train", name)
