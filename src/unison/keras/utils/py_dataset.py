"""``keras.utils.PyDataset`` (Keras 2's ``keras.utils.Sequence``): batches produced by Python code.

A subclass implements ``__len__`` (the number of batches) and ``__getitem__(index)``, which
returns one whole batch: ``(x, y)``, ``(x, y, sample_weight)`` or ``x`` (numpy arrays or
tensors, or lists/dicts of them for several inputs). ``fit`` trains on one item per step,
``steps_per_epoch`` defaults to ``len()``, ``shuffle=True`` shuffles the order of the batch
indices each epoch, ``on_epoch_begin()`` runs before and ``on_epoch_end()`` after each complete pass.

Under a distribution strategy each item is a *global* batch: every replica builds the same
PyDataset, reads the same item and keeps its own rows (as for a ``tf.data`` pipeline or a
``DataLoader``), so training matches one process on the same batches.

What ``workers`` / ``use_multiprocessing`` / ``max_queue_size`` do here: with ``workers > 1``
up to ``max_queue_size`` items are read ahead by a pool of ``workers`` threads (in order);
``use_multiprocessing=True`` is accepted and runs the same threads (no worker processes are
started: ``__getitem__`` that holds the GIL gains nothing from them).

Example:
    >>> import numpy as np
    >>> class Squares(PyDataset):
    ...     def __len__(self):
    ...         return 3
    ...     def __getitem__(self, index):
    ...         x = np.full((2, 1), index, "float32")
    ...         return x, x**2
    >>> data = Squares()
    >>> data.num_batches, data[2][1].ravel().tolist()
    (3, [4.0, 4.0])
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


class PyDataset:
    """Base class of datasets whose batches come from Python code (``__len__`` + ``__getitem__``).

    Args:
        workers: threads that read items ahead (1: read each item when it is needed).
        use_multiprocessing: accepted for Keras compatibility; the items are still read by threads.
        max_queue_size: how many items the threads may read ahead of training.

    Example:
        >>> import numpy as np
        >>> class Ones(PyDataset):
        ...     def __init__(self, **kwargs):
        ...         super().__init__(**kwargs)
        ...     def __len__(self):
        ...         return 2
        ...     def __getitem__(self, index):
        ...         return np.ones((4, 3), "float32"), np.zeros((4, 1), "float32")
        >>> Ones(workers=2).workers
        2
    """

    def __init__(self, workers: int = 1, use_multiprocessing: bool = False, max_queue_size: int = 10) -> None:
        for name, value in (("workers", workers), ("max_queue_size", max_queue_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"PyDataset {name} must be an integer >= 1. Received: {name}={value!r}.")
        self._workers = workers
        self._use_multiprocessing = bool(use_multiprocessing)
        self._max_queue_size = max_queue_size

    # A subclass that forgets super().__init__() still works with Keras's defaults.
    @property
    def workers(self) -> int:
        return int(self.__dict__.get("_workers", 1))

    @workers.setter
    def workers(self, value: int) -> None:
        self._workers = value

    @property
    def use_multiprocessing(self) -> bool:
        return bool(self.__dict__.get("_use_multiprocessing", False))

    @use_multiprocessing.setter
    def use_multiprocessing(self, value: bool) -> None:
        self._use_multiprocessing = value

    @property
    def max_queue_size(self) -> int:
        return int(self.__dict__.get("_max_queue_size", 10))

    @max_queue_size.setter
    def max_queue_size(self, value: int) -> None:
        self._max_queue_size = value

    def __getitem__(self, index: int) -> Any:
        """Batch number ``index``: ``(x, y)``, ``(x, y, sample_weight)`` or ``x``."""
        raise NotImplementedError(
            f"{type(self).__name__} must define __getitem__(self, index) returning the batch at that index: "
            "(x, y), (x, y, sample_weight) or x."
        )

    def __len__(self) -> int:
        """The number of batches in one epoch."""
        raise NotImplementedError(
            f"{type(self).__name__} must define __len__(self) returning the number of batches (or the "
            "num_batches property returning None for an endless dataset, with steps_per_epoch in fit())."
        )

    @property
    def num_batches(self) -> int | None:
        """Batches per epoch: ``len(self)``; override it to return ``None`` for an endless dataset
        (``fit`` then needs ``steps_per_epoch``)."""
        return len(self)

    def __iter__(self) -> Iterator[Any]:
        """The batches in order (Keras 2's ``Sequence.__iter__``)."""
        for index in range(len(self)):
            yield self[index]

    def on_epoch_begin(self) -> None:
        """Called before each pass over the batches (Keras 3.4+)."""

    def on_epoch_end(self) -> None:
        """Called after each complete pass over the batches (override it to reshuffle your data)."""


Sequence = PyDataset  # Keras 2's name (keras.utils.Sequence)

__all__ = ["PyDataset", "Sequence"]
