"""Keras 2's (``tf_keras``) enqueuers: ``SequenceEnqueuer``, ``OrderedEnqueuer``, ``GeneratorEnqueuer``.

An enqueuer reads a ``keras.utils.Sequence`` (or a generator) ahead of its consumer on worker
threads: ``start(workers, max_queue_size)`` begins, ``get()`` yields the items, ``stop()`` ends.
``OrderedEnqueuer`` yields the sequence's items in index order (a new order per epoch with
``shuffle=True``), epoch after epoch, calling ``on_epoch_end()`` between epochs;
``GeneratorEnqueuer`` yields what the generator gives and ends with it.

The workers are threads in both modes: ``use_multiprocessing=True`` is accepted (the items are
the same) but runs threads too, since torch tensors and the sequence are shared in memory.

Example:
    >>> from unison.keras.utils import Sequence
    >>> class Squares(Sequence):
    ...     def __len__(self):
    ...         return 3
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> enqueuer = OrderedEnqueuer(Squares())
    >>> enqueuer.start(workers=2, max_queue_size=4)
    >>> stream = enqueuer.get()
    >>> [next(stream) for _ in range(5)]
    [0, 1, 4, 0, 1]
    >>> enqueuer.stop()
"""

from __future__ import annotations

import concurrent.futures
import itertools
import queue
import random
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["GeneratorEnqueuer", "OrderedEnqueuer", "SequenceEnqueuer"]

_UIDS = itertools.count()


class SequenceEnqueuer:
    """Base class of the enqueuers: a reader thread fills a queue of pending items.

    Subclasses implement ``_run()`` (put futures into ``self.queue`` until ``stop_signal`` is
    set) and ``get()``.

    Args:
        sequence: what is read (a ``Sequence`` or a generator).
        use_multiprocessing: accepted for Keras 2's signature; the workers are threads.
    """

    def __init__(self, sequence: Any, use_multiprocessing: bool = False) -> None:
        self.sequence = sequence
        self.use_multiprocessing = use_multiprocessing
        self.uid = next(_UIDS)
        self.workers = 0
        self.executor: concurrent.futures.ThreadPoolExecutor | None = None
        self.queue: queue.Queue[Any] | None = None
        self.run_thread: threading.Thread | None = None
        self.stop_signal: threading.Event | None = None

    def is_running(self) -> bool:
        """Whether ``start()`` was called and ``stop()`` not yet."""
        return self.stop_signal is not None and not self.stop_signal.is_set()

    def start(self, workers: int = 1, max_queue_size: int = 10) -> None:
        """Start ``workers`` worker threads reading up to ``max_queue_size`` items ahead.

        Raises:
            ValueError: ``workers`` is not a positive integer.
        """
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"`workers` must be an integer >= 1. Received: workers={workers!r}")
        self.workers = workers
        self.queue = queue.Queue(max_queue_size)
        self.stop_signal = threading.Event()
        self.executor = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix=f"enqueuer-{self.uid}")
        self.run_thread = threading.Thread(target=self._run, daemon=True, name=f"enqueuer-{self.uid}-run")
        self.run_thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Stop the reader and wait up to ``timeout`` seconds for it; pending items are dropped."""
        if self.stop_signal is None:
            return
        self.stop_signal.set()
        if self.queue is not None:
            with self.queue.mutex:  # unblock a reader waiting for room
                self.queue.queue.clear()
                self.queue.unfinished_tasks = 0
                self.queue.not_full.notify_all()
        if self.run_thread is not None and self.run_thread is not threading.current_thread():
            self.run_thread.join(timeout)
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
        self.run_thread = None

    def __del__(self) -> None:
        if self.is_running():
            self.stop()

    def _put(self, future: Any) -> bool:
        """Queue ``future`` unless stopped (waiting for room); ``False`` once stopped."""
        assert self.queue is not None and self.stop_signal is not None
        while not self.stop_signal.is_set():
            try:
                self.queue.put(future, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        """Submit reads and queue their futures (subclasses)."""

    def get(self) -> Any:
        """The stream of items (subclasses)."""


class OrderedEnqueuer(SequenceEnqueuer):
    """Reads a ``Sequence`` ahead on threads and yields its items in order, epoch after epoch.

    Args:
        sequence: a ``keras.utils.Sequence`` (``__len__``, ``__getitem__``, ``on_epoch_end``).
        use_multiprocessing: accepted; the workers are threads.
        shuffle: a new random order of the indices each epoch.

    Example:
        >>> enqueuer = OrderedEnqueuer([10, 20])
        >>> enqueuer.start()
        >>> stream = enqueuer.get()
        >>> next(stream), next(stream), next(stream)
        (10, 20, 10)
        >>> enqueuer.stop()
    """

    def __init__(self, sequence: Any, use_multiprocessing: bool = False, shuffle: bool = False) -> None:
        super().__init__(sequence, use_multiprocessing)
        self.shuffle = shuffle

    def _run(self) -> None:
        assert self.executor is not None and self.stop_signal is not None and self.queue is not None
        while True:
            order = list(range(len(self.sequence)))
            if self.shuffle:
                random.shuffle(order)
            for i in order:
                if self.stop_signal.is_set():
                    return
                try:
                    future = self.executor.submit(self.sequence.__getitem__, i)
                except RuntimeError:  # the executor was shut down by stop()
                    return
                if not self._put(future):
                    return
            # the epoch ends once its items were consumed
            while self.queue.unfinished_tasks and not self.stop_signal.is_set():
                self.stop_signal.wait(0.01)
            if self.stop_signal.is_set():
                return
            on_epoch_end = getattr(self.sequence, "on_epoch_end", None)
            if on_epoch_end is not None:
                on_epoch_end()

    def get(self) -> Iterator[Any]:
        """Yield the items (``None`` items are skipped, as in Keras 2) until ``stop()``.

        Raises:
            Exception: what ``__getitem__`` raised (the enqueuer stops first).
        """
        while self.is_running():
            assert self.queue is not None
            try:
                future = self.queue.get(block=True, timeout=0.5)
            except queue.Empty:
                continue
            try:
                item = future.result()
            except Exception:
                self.stop()
                raise
            if self.is_running():
                self.queue.task_done()
            if item is not None:
                yield item


class GeneratorEnqueuer(SequenceEnqueuer):
    """Reads a generator on threads; ``get()`` yields its items and ends with it (call ``stop()`` after).

    With several workers the generator is called from several threads (it must be thread-safe)
    and the order of the items may change; one worker keeps it.

    Args:
        generator: the generator (or iterator).
        use_multiprocessing: accepted; the workers are threads.
        random_seed: accepted for Keras 2's signature (it seeded the worker processes).

    Example:
        >>> enqueuer = GeneratorEnqueuer(iter([1, 2, 3]))
        >>> enqueuer.start()
        >>> list(enqueuer.get())
        [1, 2, 3]
    """

    def __init__(self, generator: Any, use_multiprocessing: bool = False, random_seed: int | None = None) -> None:
        super().__init__(generator, use_multiprocessing)
        self.random_seed = random_seed
        self._lock = threading.Lock()

    def _next(self) -> Any:
        with self._lock:  # a Python generator cannot run in two threads at once
            return next(self.sequence)

    def _run(self) -> None:
        assert self.executor is not None and self.stop_signal is not None
        while not self.stop_signal.is_set():
            try:
                future = self.executor.submit(self._next)
            except RuntimeError:
                return
            if not self._put(future):
                return
            # a finished generator ends the stream: stop submitting once it raised
            try:
                future.result()
            except BaseException:
                return

    def get(self) -> Iterator[Any]:
        """Yield the generator's items until it ends (then the enqueuer stops) or ``stop()``.

        Raises:
            Exception: what the generator raised (the enqueuer stops first).
        """
        while self.is_running():
            assert self.queue is not None
            try:
                future = self.queue.get(block=True, timeout=0.5)
            except queue.Empty:
                continue
            try:
                item = future.result()
            except StopIteration:
                return  # the stream ends; the enqueuer runs until stop(), as in Keras 2
            except Exception:
                self.stop()
                raise
            if item is not None:
                yield item
