"""``tf.train``: checkpoints (``Checkpoint``, ``CheckpointManager``, ``latest_checkpoint``), ``ClusterSpec``,
``Coordinator``, ``ExponentialMovingAverage`` and the ``Example`` protos.

See :mod:`unison.train.checkpoint` for the file format and who writes.
"""

from __future__ import annotations

from unison.cluster.spec import ClusterSpec
from unison.train import experimental
from unison.train.checkpoint import (
    Checkpoint,
    CheckpointLoadStatus,
    CorruptCheckpointError,
    latest_checkpoint,
)
from unison.train.checkpoint_utils import CheckpointOptions, checkpoints_iterator, get_checkpoint_state
from unison.train.coordinator import Coordinator
from unison.train.manager import CheckpointManager
from unison.train.moving_averages import ExponentialMovingAverage
from unison.train.reader import CheckpointReader, list_variables, load_checkpoint, load_variable

__all__ = [
    "BytesList",
    "Checkpoint",
    "CheckpointLoadStatus",
    "CheckpointManager",
    "CheckpointOptions",
    "CheckpointReader",
    "CheckpointView",
    "ClusterDef",
    "ClusterSpec",
    "Coordinator",
    "CorruptCheckpointError",
    "Example",
    "ExponentialMovingAverage",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "JobDef",
    "SequenceExample",
    "ServerDef",
    "checkpoints_iterator",
    "experimental",
    "get_checkpoint_state",
    "latest_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
    "TrackableView",
]


_EXAMPLE_NAMES = (
    "BytesList",
    "Example",
    "ExponentialMovingAverage",
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
    if name in ("ClusterDef", "JobDef", "ServerDef"):
        from unison.ops import train_protos

        return getattr(train_protos, name)
    if name == "TrackableView":
        from unison.train.trackable_view import TrackableView

        return TrackableView
    if name == "CheckpointView":
        from unison.train.checkpoint_view import CheckpointView

        return CheckpointView
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.train", name)
