"""``map(fn, num_parallel_calls=...)`` followed by ``batch``: each worker thread copies its result
into the batch being filled (TF's map-and-batch fusion).

Why: an image pipeline's elements are large (a 224x224x3 float32 image is 602 KB). Stacked by the
consumer once a batch's worth has come back, every element is copied again by one thread, from
another core's cache, while that thread holds back the next batch; copied by the worker that
made it, the copy is done in parallel, while the element is still in that core's cache, and its
memory goes back to the allocator at once, warm for the next element (measured in
benchmarks/image_files_vs_tf.py's AUTOTUNE pipeline; see BENCHMARKS.md).

The first element of a batch to finish decides: a tensor (or a flat tuple of tensors) of at least
:data:`FILL_MIN_BYTES` gets a buffer of ``batch_size`` rows of its shape and
dtype, and each element of that batch is copied into its row. An element that does not fit (another
shape or structure) comes back as itself and the batch is stacked as before, so errors and ragged
batching are unchanged. Small elements are stacked as before. Only for a deterministic map (the
rows are placed by element index); a non-deterministic one batches in the order elements finish.

Example:
    >>> import torch
    >>> batches = map_into_batches(iter(range(5)), lambda i: torch.full((200, 100), float(i)), 2, 2, False)
    >>> [tuple(b.shape) for b in batches]
    [(2, 200, 100), (2, 200, 100), (1, 200, 100)]
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import torch

from unison.data import intraop, nest, threads

# Elements of at least this many bytes are copied into their batch as they come (images: 602 KB each
# at 224x224x3 float32) rather than kept until the batch is full and stacked (see the module notes;
# after a sequential map, unison.data.batching does the same in the consuming thread). Small elements
# (labels, rows of numbers) are stacked once per batch: one copy call per element would cost more
# than the copying.
FILL_MIN_BYTES = 64 * 1024


def dense_parts(element: Any) -> tuple[torch.Tensor, ...] | None:
    """The tensors of an element that is a dense tensor or a flat tuple of them, else None."""
    parts = element if type(element) is tuple else (element,)
    for p in parts:
        if type(p) is not torch.Tensor or p.layout != torch.strided or p.requires_grad:
            return None
    return parts


_PLACED = object()  # a worker's answer for an element it copied into its batch's buffers
_UNFILLED = object()  # a batch whose first finished element is not large dense tensors: stacked


class _Buffers:
    """The buffers of the batches being filled, by batch number, shared by the worker threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.lock = threading.Lock()
        self.batches: dict[int, Any] = {}

    def place(self, index: int, element: Any) -> bool:
        """Copy element ``index`` into its row (True), or leave it to be stacked (False)."""
        number, row = divmod(index, self.size)
        with self.lock:
            filling = self.batches.get(number)
            if filling is None:
                parts = dense_parts(element)
                if not parts or sum(p.nelement() * p.element_size() for p in parts) < FILL_MIN_BYTES:
                    self.batches[number] = _UNFILLED
                    return False
                filling = [torch.empty((self.size, *p.shape), dtype=p.dtype, device=p.device) for p in parts]
                filling = self.batches[number] = (type(element) is tuple, filling)
        if filling is _UNFILLED:
            return False
        is_tuple, buffers = filling
        parts = dense_parts(element)
        if parts is None or len(parts) != len(buffers) or (type(element) is tuple) != is_tuple:
            return False
        for p, b in zip(parts, buffers):
            if p.shape != b.shape[1:] or p.dtype != b.dtype or p.device != b.device:
                return False
        for p, b in zip(parts, buffers):
            b[row].copy_(p)  # outside the lock: the copies of one batch's rows run in parallel
        return True

    def take(self, number: int, results: list[Any], stack: Callable[[list[Any]], Any]) -> Any:
        """Batch ``number`` from its workers' answers (``_PLACED`` or the element itself)."""
        with self.lock:
            filling = self.batches.pop(number, _UNFILLED)
        count = len(results)
        if filling is _UNFILLED:
            return stack(results)
        is_tuple, buffers = filling
        if all(r is _PLACED for r in results):
            out = [b if count == self.size else b[:count] for b in buffers]
            return tuple(out) if is_tuple else out[0]
        rows = []  # some elements did not fit: stacked, the placed ones read back from their rows
        for row, r in enumerate(results):
            if r is _PLACED:
                parts = tuple(b[row] for b in buffers)
                r = parts if is_tuple else parts[0]
            rows.append(r)
        return stack(rows)


class _Failed:
    """An exception raised for one element (by the function, or by the input while reading it)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class _Pull:
    """The state the worker threads and the consumer share: workers take the next element under
    the lock, run the function outside it and report under it; the consumer is woken once per
    finished batch (not once per element, as a future per element would)."""

    def __init__(self, elements: Iterator[Any], size: int, ahead: int) -> None:
        self.elements, self.size, self.ahead = elements, size, ahead
        self.cond = threading.Condition()
        self.next_index = 0  # the next element a worker takes
        self.total: int | None = None  # elements in all, once the input is exhausted
        self.consumed = 0  # batches handed to the consumer
        self.done: dict[int, int] = {}  # batch number -> elements finished
        self.results: dict[int, Any] = {}  # element index -> _PLACED, the element, or _Failed
        self.stopped = False
        self.broken: tuple[str, BaseException] | None = None  # a worker that died outside the function

    def take_next(self) -> tuple[int, Any] | None:
        """The next element and its index, or None when there is none (or the pipeline stopped)."""
        with self.cond:
            while (
                not self.stopped and self.total is None and self.next_index // self.size >= self.consumed + self.ahead
            ):
                # memory bound: at most ``ahead`` batches in the making; a consumer that dropped its
                # iterator without closing it never makes room, so the wait also ends at exit
                self.cond.wait(timeout=0.1)
                if not threading.main_thread().is_alive():
                    self.stopped = True
            if self.stopped or self.total is not None:
                return None
            index = self.next_index
            try:
                element = next(self.elements)
            except StopIteration:
                self.total = index
                self.cond.notify_all()
                return None
            except BaseException as exc:  # noqa: BLE001 - the input's error, raised to the consumer in order
                self.total = index + 1
                self._finish(index, _Failed(exc))
                return None
            self.next_index = index + 1
            return index, element

    def report(self, index: int, value: Any) -> None:
        with self.cond:
            self._finish(index, value)

    def _finish(self, index: int, value: Any) -> None:
        self.results[index] = value
        number = index // self.size
        self.done[number] = self.done.get(number, 0) + 1
        if self.done[number] == self.size or self.total is not None:
            self.cond.notify_all()

    def batch_results(self, number: int) -> list[Any] | None:
        """The finished results of batch ``number`` in order (waiting for them), None after the last."""
        first = number * self.size
        with self.cond:
            while True:
                if self.total is not None and first >= self.total:
                    return None
                last = first + self.size if self.total is None else min(first + self.size, self.total)
                if self.done.get(number, 0) == last - first:
                    break
                if self.stopped:  # the workers stopped (the process is exiting): no more batches
                    return None
                if self.broken is not None:
                    name, error = self.broken
                    raise RuntimeError(
                        f"The map worker thread {name!r} of a unison.data pipeline stopped while making batch "
                        f"{number} ({type(error).__name__}: {error}); its elements cannot come. This is a bug; "
                        "please report it."
                    ) from error
                self.cond.wait(timeout=0.1)
            out = [self.results.pop(i) for i in range(first, last)]
            del self.done[number]
            self.consumed = number + 1
            self.cond.notify_all()  # workers waiting for room may go on
            return out

    def died(self, error: BaseException) -> None:
        """The calling worker stopped on an error of this module's own (not the function's)."""
        with self.cond:
            self.broken = (threading.current_thread().name, error)
            self.cond.notify_all()

    def stop(self) -> None:
        with self.cond:
            self.stopped = True
            self.cond.notify_all()


def map_into_batches(
    elements: Iterator[Any],
    fn: Callable[[Any], Any],
    workers: int,
    size: int,
    drop_remainder: bool,
    stack: Callable[[list[Any]], Any] | None = None,
    intra_op: int = 1,
    ahead: int = 2,
) -> Iterator[Any]:
    """Batches of ``size`` of ``fn`` applied to ``elements`` by ``workers`` threads, in order,
    each large result copied into its batch by the worker that made it (see the module notes).
    ``stack`` makes a batch of a list of elements (default: :func:`unison.data.nest.stack`); at
    most ``ahead`` batches are in the making. An exception from ``fn`` or from ``elements`` is
    raised where its element's batch would be, naming the element."""
    buffers = _Buffers(size)
    stacker = stack or (lambda rows: nest.stack(rows, frozenset()))
    pull = _Pull(elements, size, ahead)

    def work() -> None:
        try:
            intraop.set_for_this_thread(intra_op)
            while True:
                item = pull.take_next()
                if item is None:
                    return
                index, element = item
                try:
                    result = fn(element)
                    value = _PLACED if buffers.place(index, result) else result
                except BaseException as exc:  # noqa: BLE001 - the user's function: raised to the consumer, annotated
                    value = _Failed(threads.annotate(exc, "map", index))
                del element, item
                pull.report(index, value)
        except BaseException as exc:  # noqa: BLE001 - never a silent hang: the consumer raises it, naming this thread
            pull.died(exc)

    # Not daemon threads (said explicitly: a thread inherits the flag of the one that starts it, and a
    # prefetch thread is a daemon): at exit the interpreter waits for them, each finishing at most its
    # current element. A daemon thread that Python's finalisation stops inside a torch call unwinds
    # through torch's C++ frames and aborts the process ("terminate called without an active
    # exception", exit status 134).
    pool = [threading.Thread(target=work, name=f"unison-data-map-batch-{k}", daemon=False) for k in range(workers)]
    for thread in pool:
        thread.start()
    try:
        number = 0
        while True:
            results = pull.batch_results(number)
            if results is None:
                return
            for value in results:
                if isinstance(value, _Failed):
                    raise value.error
            if len(results) < size and drop_remainder:
                return
            yield buffers.take(number, results, stacker)
            number += 1
    finally:
        pull.stop()
        for thread in pool:
            thread.join(timeout=0.0 if pull.total is None else 5.0)


__all__ = ["map_into_batches"]
