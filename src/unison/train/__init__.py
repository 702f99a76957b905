"""``tf.train``: checkpoints (``Checkpoint``, ``CheckpointManager``, ``latest_checkpoint``)."""

from __future__ import annotations

__all__: list[str] = []


def __getattr__(name: str) -> object:
    from unison._unsupported import unsupported

    raise unsupported("tf.train", name)
