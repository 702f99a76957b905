"""``map`` in worker processes, for functions that hold the GIL (opt-in).

Threads cannot run a function in parallel when it holds the GIL (small torch or numpy ops per
element spend most of their time in Python). For such a function set
``options.threading.worker_processes = k``: a ``map`` with ``num_parallel_calls`` whose input is
index-backed (``from_tensor_slices``/``range``, then shuffle/repeat/take/skip/shard) then runs in
``k`` forked processes, as ``torch.utils.data.DataLoader(num_workers=k)`` does. Only row indices
travel to the workers (they inherit the arrays and the function at fork); results come back as
numpy buffers. Order is the input's order. Each worker seeds torch/numpy/random differently (as
DataLoader does), so random augmentations differ between workers.

Side effects of the function (appending to a list, counters) stay in the workers.

Example::

    options = tf.data.Options()
    options.threading.worker_processes = 2
    ds = ds.map(augment, num_parallel_calls=tf.data.AUTOTUNE).with_options(options)
"""

from __future__ import annotations

import collections
import multiprocessing as mp
import os
import random
import secrets
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from unison.data import nest, threads

_WORKER: dict[str, Any] = {}  # per worker process only: set by _init in the forked child


def available() -> bool:
    return "fork" in mp.get_all_start_methods()


def _init(columns: Any, fn: Callable[[Any], Any], seed: int) -> None:
    torch.set_num_threads(1)  # k workers x all cores would oversubscribe (DataLoader does the same)
    mixed = (seed + os.getpid() * 7919) % (2**63)
    torch.manual_seed(mixed)
    np.random.seed(mixed % (2**32))
    random.seed(mixed)
    _WORKER.update(columns=columns, leaves=nest.flatten(columns), fn=fn)


def _to_wire(leaf: Any) -> Any:
    return ("t", leaf.numpy()) if isinstance(leaf, torch.Tensor) else ("n", leaf)


def _from_wire(item: Any) -> Any:
    kind, value = item
    return torch.from_numpy(value) if kind == "t" else value


def _run(first: int, indices: list[int], stack: bool) -> tuple[str, Any]:
    columns, leaves, fn = _WORKER["columns"], _WORKER["leaves"], _WORKER["fn"]
    out: list[Any] = []
    for offset, i in enumerate(indices):
        element = nest.pack_as(columns, [nest.row(leaf, i) for leaf in leaves])
        try:
            result = fn(element)
        except Exception as exc:  # noqa: BLE001 - the user's function: re-raised, annotated with the element
            return "error", (first + offset, exc, traceback.format_exc())
        out.append(result)
    if stack:  # a whole batch made here: one transfer, no per-element work in the consumer
        try:
            out = [nest.stack(out)]
        except Exception as exc:  # noqa: BLE001 - the user's function: re-raised, annotated with the element
            return "error", (first, exc, traceback.format_exc())
    return "ok", [nest.map_structure(_to_wire, r) for r in out]


def process_map(columns: Any, tasks: Iterator[list[int]], fn: Callable[[Any], Any], workers: int,
                stack: bool = False) -> Iterator[Any]:
    """``fn`` on the rows each task names, in ``workers`` forked processes, in order.

    With ``stack`` each task is one batch: the worker stacks its results and sends one element.
    """
    pool = mp.get_context("fork").Pool(workers, initializer=_init,
                                       initargs=(columns, fn, secrets.randbits(62)))
    pending: collections.deque[Any] = collections.deque()
    limit = 2 * workers

    def drain_one() -> Iterator[Any]:
        status, value = pending.popleft().get()
        if status == "error":
            index, exc, text = value
            exc.add_note(f"Traceback in the worker process:\n{text}")
            raise threads.annotate(exc, "map", index)
        for item in value:
            yield _unwire(item)

    try:
        first = 0
        while True:
            block = next(tasks, None)
            if block:
                pending.append(pool.apply_async(_run, (first, block, stack)))
                first += len(block)
            if pending and (len(pending) >= limit or not block):
                yield from drain_one()
            if not block and not pending:
                return
    finally:
        pool.terminate()
        pool.join()


def element_tasks(index_chunks: Iterator[torch.Tensor], size: int = 32) -> Iterator[list[int]]:
    """Row indices in lists of ``size`` (one task per list)."""
    flat = (i for c in index_chunks for i in c.tolist())
    while True:
        block = [i for _, i in zip(range(size), flat)]
        if not block:
            return
        yield block


def _unwire(item: Any) -> Any:
    if isinstance(item, tuple) and len(item) == 2 and item[0] in ("t", "n") and isinstance(item[1], np.ndarray):
        return _from_wire(item)
    if isinstance(item, dict):
        return {k: _unwire(v) for k, v in item.items()}
    if isinstance(item, tuple):
        return nest._rebuild(item, [_unwire(v) for v in item])
    return item
