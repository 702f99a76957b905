"""``tf.train.experimental``: ``PythonState``; TF's checkpoint sharding policies are not built.

unison writes a checkpoint as one verified file (see :mod:`unison.train.checkpoint`), so TF's
sharding callbacks (``ShardingCallback``, ``ShardByTaskPolicy``, ``MaxShardSizePolicy``,
``ShardableTensor``) raise an error naming what to use instead.
"""

from __future__ import annotations

from unison.train.python_state import PythonState

__all__ = ["PythonState"]

_SHARDING = ("MaxShardSizePolicy", "ShardByTaskPolicy", "ShardableTensor", "ShardingCallback")


def __getattr__(name: str) -> object:
    if name in _SHARDING:
        raise AttributeError(
            f"unison does not implement tf.train.experimental.{name}: a tf.train.Checkpoint is one file here, "
            "not shards. For sharded model state use tf.distribute.experimental.ShardedCheckpoint (torch's "
            "distributed checkpoint). docs/tf_api.md lists what unison has of TF 2.21 and what is missing."
        )
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.train.experimental", name)
