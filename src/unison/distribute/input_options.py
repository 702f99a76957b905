"""``tf.distribute.InputOptions``, ``InputReplicationMode`` and ``experimental.ValueContext``.

unison runs one process per replica, so the choices TF offers for placing input (fetch to the
device or keep on the host, one pipeline per worker or per replica) come to the same thing:
this process's pipeline feeds its one replica, and batches are moved to the replica's device
(``experimental_fetch_to_device=False`` keeps them where the pipeline made them). The options
are validated as TF validates them, so a program that passes a wrong combination hears about it.

``distribute_values_from_function`` is ``strategy.experimental_distribute_values_from_function``:
``value_fn(ValueContext)`` is called for this process's replica and its result is this replica's
value (``strategy.run`` receives it as the per-replica argument).

Example:
    >>> import unison as tf
    >>> from unison.distribute.input_options import distribute_values_from_function
    >>> distribute_values_from_function(
    ...     tf.distribute.get_strategy(), lambda ctx: ctx.replica_id_in_sync_group * 10
    ... )
    0
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class InputReplicationMode(enum.Enum):
    """TF's ``tf.distribute.InputReplicationMode``: one input pipeline per worker or per replica."""

    PER_WORKER = "PER_WORKER"
    PER_REPLICA = "PER_REPLICA"


@dataclass(frozen=True)
class InputOptions:
    """Options for ``experimental_distribute_dataset`` / ``distribute_datasets_from_function`` (TF's).

    Args:
        experimental_fetch_to_device: move each batch to the replica's device (default True).
        experimental_replication_mode: ``InputReplicationMode.PER_WORKER`` (default) or
            ``PER_REPLICA`` (only with ``distribute_datasets_from_function``, as in TF).
        experimental_place_dataset_on_device: run the pipeline on the device (TF needs
            ``PER_REPLICA`` and no fetch for it); accepted and checked, pipelines run on the host.
        experimental_per_replica_buffer_size: batches prefetched per replica (TF's default 1).

    Example:
        >>> import unison as tf
        >>> tf.distribute.InputOptions(experimental_fetch_to_device=False).experimental_fetch_to_device
        False
    """

    experimental_fetch_to_device: bool | None = None
    experimental_replication_mode: InputReplicationMode = InputReplicationMode.PER_WORKER
    experimental_place_dataset_on_device: bool = False
    experimental_per_replica_buffer_size: int = 1

    def __post_init__(self) -> None:
        mode = self.experimental_replication_mode
        if not isinstance(mode, InputReplicationMode):
            raise ValueError(
                "experimental_replication_mode must be tf.distribute.InputReplicationMode.PER_WORKER or "
                f"PER_REPLICA. Received: experimental_replication_mode={mode!r}"
            )
        size = self.experimental_per_replica_buffer_size
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"experimental_per_replica_buffer_size must be an integer >= 0. Received: {size!r}")
        if self.experimental_place_dataset_on_device and self.experimental_fetch_to_device:
            raise ValueError(
                "experimental_place_dataset_on_device=True cannot be combined with experimental_fetch_to_device=True "
                "(the dataset is already on the device, as TF says). Set experimental_fetch_to_device=False."
            )
        if self.experimental_place_dataset_on_device and mode is not InputReplicationMode.PER_REPLICA:
            raise ValueError(
                "experimental_place_dataset_on_device=True needs experimental_replication_mode="
                "tf.distribute.InputReplicationMode.PER_REPLICA (one pipeline per device), as in TF."
            )

    @property
    def fetch_to_device(self) -> bool:
        """Whether batches go to the replica's device (TF's default: yes)."""
        return self.experimental_fetch_to_device is not False


def check_input_options(options: Any, method: str) -> InputOptions | None:
    """``options`` as an :class:`InputOptions` (or None), rejecting what TF rejects for ``method``."""
    if options is None:
        return None
    if not isinstance(options, InputOptions):
        raise TypeError(f"{method} takes options=tf.distribute.InputOptions(...). Received: {type(options).__name__}")
    if (
        method == "experimental_distribute_dataset"
        and options.experimental_replication_mode is InputReplicationMode.PER_REPLICA
    ):
        raise NotImplementedError(
            "InputReplicationMode.PER_REPLICA is only supported in distribute_datasets_from_function (as in TF). "
            "Use strategy.distribute_datasets_from_function(dataset_fn, options) instead."
        )
    return options


class ValueContext:
    """What ``value_fn`` of ``experimental_distribute_values_from_function`` learns (TF's).

    Args:
        replica_id_in_sync_group: the replica the value is for.
        num_replicas_in_sync: how many replicas train in lockstep.
    """

    def __init__(self, replica_id_in_sync_group: int = 0, num_replicas_in_sync: int = 1) -> None:
        self.replica_id_in_sync_group = replica_id_in_sync_group
        self.num_replicas_in_sync = num_replicas_in_sync

    def __repr__(self) -> str:
        return (
            f"tf.distribute.experimental.ValueContext(replica_id_in_sync_group={self.replica_id_in_sync_group}, "
            f"num_replicas_in_sync={self.num_replicas_in_sync})"
        )


def distribute_values_from_function(strategy: Any, value_fn: Callable[[ValueContext], Any]) -> Any:
    """This process's replica's value: ``value_fn(ValueContext(replica_id, num_replicas))``.

    Tensors the function returns are moved to the replica's device (TF places them there too).
    """
    if not callable(value_fn):
        raise TypeError(
            f"experimental_distribute_values_from_function needs a function of a ValueContext. Received: {value_fn!r}"
        )
    from unison.distribute.input import to_tensor

    ctx = ValueContext(strategy.extended.replica_id, strategy.num_replicas_in_sync)
    return to_tensor(value_fn(ctx), strategy.extended.device)
