"""``tf.train.experimental``: ``PythonState`` and TF's checkpoint sharding callbacks.

``ShardingCallback``, ``ShardByTaskPolicy``, ``MaxShardSizePolicy`` and ``ShardableTensor``
(:mod:`unison.train.sharding`) decide how ``tf.train.Checkpoint`` spreads its values over files,
given as ``tf.train.CheckpointOptions(experimental_sharding_callback=...)``.

Example:
    >>> import unison as tf
    >>> tf.train.experimental.ShardByTaskPolicy().description
    'Split tensors into shards based on their device spec task.'
"""

from __future__ import annotations

from unison.train.python_state import PythonState
from unison.train.sharding import MaxShardSizePolicy, ShardableTensor, ShardByTaskPolicy, ShardingCallback

__all__ = ["MaxShardSizePolicy", "PythonState", "ShardByTaskPolicy", "ShardableTensor", "ShardingCallback"]


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.train.experimental", name)
