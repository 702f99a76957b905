"""``tf.queue``: TF's queues of tensor tuples, usable across threads as in eager TF.

``enqueue`` blocks while the queue is full, ``dequeue`` while it is empty (both wake when another
thread acts or the queue is closed); a closed queue refuses ``enqueue`` (``CancelledError``) and an
empty closed one ends ``dequeue`` with ``OutOfRangeError``, TF's end-of-input signal. Elements are
tuples of tensors of the queue's ``dtypes`` (a dict with ``names``); one component comes back as a
tensor. ``PaddingFIFOQueue`` pads ``dequeue_many`` batches to the longest element,
``PriorityQueue`` returns the lowest int64 priority (the first component) first, and
``RandomShuffleQueue`` returns a random element, keeping ``min_after_dequeue`` until closed.

Example:
    >>> import unison as tf
    >>> q = tf.queue.FIFOQueue(3, tf.int32)
    >>> q.enqueue_many([[1, 2, 3]])
    >>> q.dequeue().item(), q.size().item()
    (1, 2)
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from unison.errors import CancelledError, InvalidArgumentError, OutOfRangeError
from unison.ops.dtypes import as_dtype, to_tensor

__all__ = ["FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "RandomShuffleQueue"]


class QueueBase:
    """``tf.queue.QueueBase``: the queue behaviour the four queues share (FIFO order here)."""

    def __init__(
        self,
        capacity: int,
        dtypes: Any,
        shapes: Any = None,
        names: Sequence[str] | None = None,
        shared_name: str | None = None,
        name: str = "fifo_queue",
    ) -> None:
        dtype_list = list(dtypes) if isinstance(dtypes, (list, tuple)) else [dtypes]
        self._dtypes = [as_dtype(d) for d in dtype_list]
        self._names = list(names) if names is not None else None
        if self._names is not None and len(self._names) != len(self._dtypes):
            raise ValueError(f"Queue names ({len(self._names)}) must match dtypes ({len(self._dtypes)}).")
        if shapes is None:
            self._shapes: list[Any] | None = None
        else:
            shape_list = list(shapes) if shapes and isinstance(shapes[0], (list, tuple)) or not shapes else [shapes]
            if len(dtype_list) > 1 and len(shape_list) != len(dtype_list):
                raise ValueError(f"Queue shapes ({len(shape_list)}) must match dtypes ({len(dtype_list)}).")
            self._shapes = [None if s is None else list(s) for s in shape_list]
        self._capacity = int(capacity)
        self._name = name
        self._items: list[tuple[torch.Tensor, ...]] = []
        self._closed = False
        self._cancelled = False
        self._lock = threading.Condition()

    # --- description ---------------------------------------------------------------------------
    @property
    def dtypes(self) -> list[Any]:
        return list(self._dtypes)

    @property
    def shapes(self) -> list[Any]:
        return [None if s is None else tuple(s) for s in (self._shapes or [None] * len(self._dtypes))]

    @property
    def names(self) -> list[str] | None:
        return self._names

    @property
    def name(self) -> str:
        return self._name

    # --- elements ------------------------------------------------------------------------------
    def _components(self, vals: Any, many: bool) -> list[torch.Tensor]:
        if self._names is not None:
            if not isinstance(vals, dict) or set(vals) != set(self._names):
                raise ValueError(f"This queue has names {self._names}: enqueue a dict with exactly those keys.")
            vals = [vals[n] for n in self._names]
        elif not isinstance(vals, (list, tuple)) or (
            len(self._dtypes) == 1 and not many and not isinstance(vals, tuple)
        ):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Expected {len(self._dtypes)} components to enqueue. Received {len(vals)}.")
        out = []
        for i, (v, d) in enumerate(zip(vals, self._dtypes)):
            t = to_tensor(v)
            if isinstance(t, torch.Tensor) and t.dtype != d:
                if (
                    t.is_floating_point() == d.is_floating_point
                    and t.dtype in (torch.int32, torch.float32)
                    and d.itemsize >= t.dtype.itemsize
                ):
                    t = t.to(d)  # a Python number given for a wider dtype, as TF converts it
                else:
                    raise InvalidArgumentError(
                        None, None, f"Queue component {i}: expected {d}, received {t.dtype}. Cast it first."
                    )
            shape = self._shapes[i] if self._shapes is not None else None
            element_shape = list(t.shape[1:] if many else t.shape)
            if shape is not None and (
                len(shape) != len(element_shape) or any(s is not None and s != e for s, e in zip(shape, element_shape))
            ):
                raise ValueError(f"Queue component {i}: shape {element_shape} is not the queue's shape {shape}.")
            out.append(t)
        return out

    def _put(self, element: tuple[torch.Tensor, ...]) -> None:
        with self._lock:
            while len(self._items) >= self._capacity and not self._closed:
                self._lock.wait()
            if self._closed:
                raise CancelledError(None, None, f"Queue '{self._name}' is closed: enqueue is refused.")
            self._items.append(element)
            self._lock.notify_all()

    def enqueue(self, vals: Any, name: str | None = None) -> None:
        """Adds one element (blocks while the queue is full)."""
        self._put(tuple(self._components(vals, many=False)))

    def enqueue_many(self, vals: Any, name: str | None = None) -> None:
        """Adds the elements along the first axis of each component."""
        components = self._components(vals, many=True)
        counts = {int(c.shape[0]) for c in components}
        if len(counts) != 1:
            raise ValueError(f"enqueue_many: components have different first dimensions {sorted(counts)}.")
        for i in range(counts.pop()):
            self._put(tuple(c[i] for c in components))

    def _pick(self) -> int:
        return 0

    def _ready(self) -> bool:
        return bool(self._items)

    def _take(self, n: int, up_to: bool) -> list[tuple[torch.Tensor, ...]]:
        taken: list[tuple[torch.Tensor, ...]] = []
        with self._lock:
            while len(taken) < n:
                while not self._ready() and not self._closed:
                    self._lock.wait()
                if not self._items:
                    if up_to and taken:
                        break
                    self._items[:0] = taken  # TF returns what it took to the queue when it fails
                    raise OutOfRangeError(
                        None,
                        None,
                        f"Queue '{self._name}' is closed and has insufficient elements "
                        f"(requested {n}, current size {len(self._items)}).",
                    )
                taken.append(self._items.pop(self._pick()))
                self._lock.notify_all()
        return taken

    def _result(self, components: list[torch.Tensor]) -> Any:
        if self._names is not None:
            return dict(zip(self._names, components))
        return components[0] if len(components) == 1 else components

    def dequeue(self, name: str | None = None) -> Any:
        """Removes and returns one element (blocks while the queue is empty and open)."""
        return self._result(list(self._take(1, up_to=False)[0]))

    def _batch(self, elements: list[tuple[Any, ...]]) -> list[Any]:
        return [_stack([e[i] for e in elements]) for i in range(len(self._dtypes))]

    def _check_shapes(self, api: str) -> None:
        if self._shapes is None or any(s is None for s in self._shapes):
            raise InvalidArgumentError(
                None,
                None,
                f"{type(self).__name__}'s {api} requires the components to have specified shapes (as TF). "
                "Create the queue with shapes=[...].",
            )

    def dequeue_many(self, n: int, name: str | None = None) -> Any:
        """Removes ``n`` elements, stacked along a new first axis (the queue needs ``shapes``)."""
        self._check_shapes("DequeueMany")
        return self._result(self._batch(self._take(int(n), up_to=False)))

    def dequeue_up_to(self, n: int, name: str | None = None) -> Any:
        """Like ``dequeue_many``, but a closed queue gives what is left (at least one element)."""
        self._check_shapes("DequeueUpTo")
        return self._result(self._batch(self._take(int(n), up_to=True)))

    def size(self, name: str | None = None) -> torch.Tensor:
        """The number of elements in the queue (int32)."""
        with self._lock:
            return torch.tensor(len(self._items), dtype=torch.int32)

    def close(self, cancel_pending_enqueues: bool = False, name: str | None = None) -> None:
        """Refuses further enqueues; dequeues take what is left, then end with OutOfRangeError."""
        with self._lock:
            self._closed = True
            self._cancelled = self._cancelled or cancel_pending_enqueues
            self._lock.notify_all()

    def is_closed(self, name: str | None = None) -> torch.Tensor:
        with self._lock:
            return torch.tensor(self._closed)


def _stack(parts: list[Any]) -> Any:
    if all(isinstance(p, torch.Tensor) for p in parts):
        return torch.stack(parts)
    return to_tensor(np.stack([np.asarray(p, dtype=object) for p in parts]))  # tf.string components


class FIFOQueue(QueueBase):
    """``tf.queue.FIFOQueue``: first in, first out."""


class PaddingFIFOQueue(QueueBase):
    """``tf.queue.PaddingFIFOQueue``: FIFO; ``dequeue_many`` pads each component to the longest element."""

    def __init__(
        self,
        capacity: int,
        dtypes: Any,
        shapes: Any,
        names: Any = None,
        shared_name: Any = None,
        name: str = "padding_fifo_queue",
    ) -> None:
        super().__init__(capacity, dtypes, shapes, names, shared_name, name)
        if self._shapes is None:
            raise ValueError("PaddingFIFOQueue needs shapes (use None for the dimensions to pad).")

    def _batch(self, elements: list[tuple[Any, ...]]) -> list[Any]:
        out = []
        for i in range(len(self._dtypes)):
            parts = [e[i] for e in elements]
            if not all(isinstance(p, torch.Tensor) for p in parts):
                out.append(_stack(parts))  # strings: TF pads them with b"" (scalars need none)
                continue
            longest = [max(int(p.shape[d]) for p in parts) for d in range(parts[0].dim())]
            padded = []
            for p in parts:
                pad: list[int] = []
                for d in reversed(range(p.dim())):
                    pad += [0, longest[d] - int(p.shape[d])]
                padded.append(torch.nn.functional.pad(p, pad) if pad else p)
            out.append(torch.stack(padded))
        return out


class PriorityQueue(QueueBase):
    """``tf.queue.PriorityQueue``: the element with the lowest int64 priority (its first component) first."""

    def __init__(
        self,
        capacity: int,
        types: Any,
        shapes: Any = None,
        names: Any = None,
        shared_name: Any = None,
        name: str = "priority_queue",
    ) -> None:
        type_list = list(types) if isinstance(types, (list, tuple)) else [types]
        shape_list = None if shapes is None else [(), *list(shapes)]
        super().__init__(capacity, [torch.int64, *type_list], shape_list, names, shared_name, name)

    def _pick(self) -> int:
        priorities = [int(e[0]) for e in self._items]
        return priorities.index(min(priorities))


class RandomShuffleQueue(QueueBase):
    """``tf.queue.RandomShuffleQueue``: a random element; keeps ``min_after_dequeue`` of them until closed."""

    def __init__(
        self,
        capacity: int,
        min_after_dequeue: int,
        dtypes: Any,
        shapes: Any = None,
        names: Any = None,
        seed: int | None = None,
        shared_name: Any = None,
        name: str = "random_shuffle_queue",
    ) -> None:
        super().__init__(capacity, dtypes, shapes, names, shared_name, name)
        self._min_after = int(min_after_dequeue)
        self._random = random.Random(seed)

    def _ready(self) -> bool:
        return len(self._items) > self._min_after

    def _pick(self) -> int:
        return self._random.randrange(len(self._items))
