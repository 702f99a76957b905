"""The background work of a pipeline: ``map`` in a thread pool and ``prefetch`` in a thread.

torch and numpy release the GIL in their kernels, so threads overlap real work. A function
that holds the GIL (pure Python, small arrays per element) gains nothing from threads: over
in-memory arrays such a ``map`` runs in worker processes instead (:mod:`unison.data.processes`,
chosen by ``AUTOTUNE`` when a ``batch`` follows; see docs/data.md).

Both are generators: when the consumer drops its iterator (or it is garbage-collected, or a
``KeyboardInterrupt`` unwinds it) the generator's ``finally`` stops the threads. An exception
raised by the user's function reaches the consumer as the same exception, with its original
traceback and a note naming the element index.

Example:
    >>> list(parallel_map(iter(range(5)), lambda x: x * x, 2, True))
    [0, 1, 4, 9, 16]
"""

from __future__ import annotations

import atexit
import collections
import concurrent.futures as cf
import itertools
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from unison.data import intraop

_END = object()

# An element whose function takes at least this much CPU goes to the pool on its own (see
# parallel_map): the per-task cost (~20 us) is small beside it, and short tasks that block between
# elements get their cores' time on a host that other programs keep busy.
SLOW_ELEMENT_S = 2e-4


def annotate(exc: BaseException, what: str, index: int) -> BaseException:
    """Add a note naming the element to an exception from a user's function (kept once)."""
    note = f"(raised by the function passed to Dataset.{what} on element {index} of its input)"
    if note not in getattr(exc, "__notes__", ()):
        if sys.version_info >= (3, 11):
            exc.add_note(note)
        else:  # Python 3.10 has no add_note: keep the note where 3.11's traceback would print it from
            exc.__notes__ = [*getattr(exc, "__notes__", ()), note]  # type: ignore[attr-defined]
    return exc


def parallel_map(
    source: Iterator[Any],
    fn: Callable[[Any], Any],
    workers: int,
    deterministic: bool,
    what: str = "map",
    chunk: int = 8,
    intra_op: int = 1,
) -> Iterator[Any]:
    """``fn`` on every item of ``source`` with ``workers`` threads, in order unless not ``deterministic``.

    Cheap items go to the pool ``chunk`` at a time, so that the pool's per-task cost (a future, a
    lock, a wake-up) is paid once per chunk, not once per element. Items whose ``fn`` takes
    :data:`SLOW_ELEMENT_S` of CPU or more (decoding and resizing an image) go one at a time: the
    task cost is then noise, and a worker that waits for its next item between elements, as TF's
    do, keeps its share of the cores on a busy host (measured on 2 shared cores at load 11: a
    decode-and-resize map in 2 threads used 0.19 of a core in runs of many elements, 0.26-0.85
    with one element per task). The first items go one at a time until their cost is known. Up to
    ``2 * workers`` tasks are in flight, which bounds memory. Each worker thread runs torch's ops
    with ``intra_op`` threads (see :mod:`unison.data.intraop`).
    """
    pool = cf.ThreadPoolExecutor(
        max_workers=workers,
        thread_name_prefix="unison-data-map",
        initializer=intraop.set_for_this_thread,
        initargs=(intra_op,),
    )
    pending: collections.deque[tuple[int, cf.Future[list[Any]]]] = collections.deque()
    limit = 2 * workers
    cost = [0.0, 0]  # CPU seconds in fn, elements timed: the per-element cost picks the task size
    lock = threading.Lock()

    def run(first: int, items: list[Any]) -> list[Any]:
        out = []
        start = time.thread_time()
        for offset, item in enumerate(items):
            try:
                out.append(fn(item))
            except Exception as exc:  # noqa: BLE001 - the user's function: re-raised, annotated with the element
                raise annotate(exc, what, first + offset) from None
        spent = time.thread_time() - start
        with lock:
            cost[0] += spent
            cost[1] += len(items)
        return out

    def task_size() -> int:
        with lock:
            seconds, count = cost
        return 1 if count == 0 or seconds >= SLOW_ELEMENT_S * count else chunk

    try:
        index = 0
        while True:
            items = list(itertools.islice(source, task_size()))
            if items:
                pending.append((index, pool.submit(run, index, items)))
                index += len(items)
            if len(pending) >= limit or (not items and pending):
                if deterministic:
                    yield from pending.popleft()[1].result()
                else:
                    yield from _completed(pending)
            if not items and not pending:
                return
    finally:
        for _, fut in pending:
            fut.cancel()
        pool.shutdown(wait=False, cancel_futures=True)


def _completed(pending: collections.deque[tuple[int, cf.Future[list[Any]]]]) -> Iterator[Any]:
    done, _ = cf.wait([f for _, f in pending], return_when=cf.FIRST_COMPLETED)
    for item in [p for p in pending if p[1] in done]:
        pending.remove(item)
        yield from item[1].result()


# The prefetch threads still running, so that the process stops them before it exits: a daemon
# thread still inside a torch op while the process tears its libraries down aborted it ("terminate
# called without an active exception", exit status 134) when a program exited with a dataset
# iterator still open (measured: 1 exit in 10 of a script that took one batch of an image pipeline).
_LIVE: dict[threading.Thread, threading.Event] = {}
_LIVE_LOCK = threading.Lock()


@atexit.register
def _stop_at_exit() -> None:
    """Ask every live prefetch thread to stop and give each up to 2 s to finish its current element."""
    with _LIVE_LOCK:
        live = list(_LIVE.items())
    for _, stop in live:
        stop.set()
    for thread, _ in live:
        thread.join(timeout=2.0)


def prefetch(source: Iterator[Any], size: int, intra_op: int = 1) -> Iterator[Any]:
    """Items of ``source`` produced ahead by a daemon thread into a queue of ``size`` items."""
    q: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=max(1, size))
    stop = threading.Event()

    def put(item: tuple[str, Any]) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)  # a timeout so a stop request is seen while the queue is full
                return True
            except queue.Full:
                continue
        return False

    def fill(src: Iterator[Any]) -> None:
        intraop.set_for_this_thread(intra_op)  # this thread runs only the pipeline's work
        try:
            for item in src:
                if not put(("item", item)):
                    return
            put(("end", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, which re-raises it
            put(("error", exc))
        finally:
            try:
                close = getattr(src, "close", None)
                if close is not None:
                    close()
            finally:
                with _LIVE_LOCK:
                    _LIVE.pop(threading.current_thread(), None)

    thread = threading.Thread(target=fill, args=(source,), name="unison-data-prefetch", daemon=True)
    del source  # only the thread holds the upstream iterator: it closes it when it stops
    with _LIVE_LOCK:
        _LIVE[thread] = stop
    thread.start()
    try:
        while True:
            try:
                kind, value = q.get(timeout=0.1)
            except queue.Empty:
                if not thread.is_alive() and q.empty():
                    raise RuntimeError(
                        "The prefetch thread of a unison.data pipeline stopped without "
                        "a result. This is a bug; please report it."
                    ) from None
                continue
            if kind == "item":
                yield value
            elif kind == "end":
                return
            else:
                raise value
    finally:
        stop.set()
        thread.join(timeout=5.0)


__all__ = ["annotate", "parallel_map", "prefetch"]
