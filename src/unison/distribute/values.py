"""``tf.distribute``'s value types for ``isinstance`` checks, ``RunOptions`` and ``experimental_set_strategy``.

``DistributedDataset`` and ``DistributedIterator`` are the interfaces of what
``strategy.experimental_distribute_dataset``/``distribute_datasets_from_function`` return and of
their iterators; unison's classes are registered with them, so ``isinstance`` answers as in TF.

``DistributedValues`` is the interface of TF's per-replica containers (``PerReplica``,
``MirroredVariable``), which hold the values of every replica a process drives. unison runs one
process per replica, so ``strategy.run``, a distributed iterator and a variable created in a
strategy's scope give this replica's own value, a plain tensor: not a ``DistributedValues``, which
is also what TF gives with a single replica. The class stays a base for user code that defines
its own containers.

Example:
    >>> import unison as tf
    >>> strategy = tf.distribute.get_strategy()
    >>> ds = strategy.experimental_distribute_dataset([1, 2])
    >>> isinstance(ds, tf.distribute.DistributedDataset), isinstance(iter(ds), tf.distribute.DistributedIterator)
    (True, True)
"""

from __future__ import annotations

import abc
import contextlib
from typing import Any, NamedTuple

from unison.distribute.input import DistributedDataset as _Dataset
from unison.distribute.input import PerReplicaDataset as _PerReplicaDataset
from unison.distribute.iterator_state import DistributedIterator as _Iterator


class DistributedValues(abc.ABC):  # noqa: B024 - TF's interface has no abstract methods either
    """Base class for values held per replica (TF's ``tf.distribute.DistributedValues``)."""


class PerReplica(DistributedValues):
    """``tf.types.experimental.distributed.PerReplica``: values that differ per replica (TF's interface)."""


class Mirrored(DistributedValues):
    """``tf.types.experimental.distributed.Mirrored``: values kept equal on every replica (TF's interface)."""


class DistributedDataset(abc.ABC):
    """What ``experimental_distribute_dataset``/``distribute_datasets_from_function`` return."""

    @abc.abstractmethod
    def __iter__(self) -> Any:
        """A :class:`DistributedIterator` over this replica's batches."""

    @property
    def element_spec(self) -> Any:
        """The type specification of an element of this dataset (per replica)."""
        raise NotImplementedError


class DistributedIterator(abc.ABC):
    """An iterator over a :class:`DistributedDataset` (``get_next``, ``get_next_as_optional``)."""

    @abc.abstractmethod
    def get_next(self) -> Any:
        """This replica's next batch; ``tf.errors.OutOfRangeError`` at the end."""

    def get_next_as_optional(self) -> Any:
        """This replica's next batch as an ``Optional``."""
        raise NotImplementedError

    @property
    def element_spec(self) -> Any:
        """The type specification of the elements (per replica)."""
        raise NotImplementedError


DistributedDataset.register(_Dataset)
DistributedDataset.register(_PerReplicaDataset)
DistributedIterator.register(_Iterator)


class RunOptions(NamedTuple):
    """``tf.distribute.RunOptions``: options for ``strategy.run`` (TPU/XLA settings in TF).

    unison compiles no XLA programs and splits batches itself, so ``run`` accepts these options
    and the results do not depend on them.
    """

    experimental_enable_dynamic_batch_size: bool = True
    experimental_bucketizing_dynamic_shape: bool = False
    experimental_xla_options: Any = None


# The strategy made current by experimental_set_strategy, with its open scope.
_SET: list[tuple[Any, contextlib.AbstractContextManager[Any]]] = []


def experimental_set_strategy(strategy: Any) -> None:
    """``tf.distribute.experimental_set_strategy``: make ``strategy`` current without a ``with`` block.

    ``None`` undoes it. As in TF, calling it inside a ``strategy.scope()`` is an error.

    Raises:
        RuntimeError: inside a strategy's scope.
    """
    from unison.distribute import strategy as _strategy

    own = [_SET[0][0]] if _SET else []
    if _strategy._STACK != own:  # noqa: SLF001 - the scope stack this module's scope joins
        raise RuntimeError(
            "Must not be called inside a `tf.distribute.Strategy` scope: leave the `with strategy.scope():` "
            "block first, or use the scope instead of experimental_set_strategy."
        )
    if _SET:
        _, scope = _SET.pop()
        scope.__exit__(None, None, None)
    if strategy is not None:
        scope = strategy.scope()
        scope.__enter__()
        _SET.append((strategy, scope))


__all__ = [
    "DistributedDataset",
    "DistributedIterator",
    "DistributedValues",
    "Mirrored",
    "PerReplica",
    "RunOptions",
    "experimental_set_strategy",
]
