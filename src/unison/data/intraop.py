"""Intra-op threads of the ops a pipeline's functions run: one per calling thread by default.

A pipeline's parallelism comes from its own workers, one element each
(``options.threading.max_intra_op_parallelism`` bounds each worker's ops, 1 when unset). torch
instead parallelises every large op over all cores with OpenMP; a decode-and-resize ``map`` then
asks for ``cores x workers`` threads, and on a machine whose cores are busy OpenMP's spinning
barriers make a 0.4 MP bilinear resize 5-8x slower
(measured: 30 ms instead of 5 ms on a loaded 2-core host).

:func:`limited` sets the OpenMP thread count of the *calling thread only* (OpenMP's
``nthreads-var`` is per thread) for the duration of a block, and puts the previous value back;
``torch.set_num_threads`` would change every thread of the process, the training loop's too.
Where torch's parallel backend is not OpenMP (or its ``libgomp`` cannot be found) the block
runs unchanged.

Example:
    >>> import torch

from unison.core.contention import openmp_runtime_paths
    >>> with limited(1):
    ...     inside = torch.get_num_threads()
    >>> inside == 1 or not available()
    True
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
from collections.abc import Iterator
from typing import Any

import torch

from unison.core.contention import openmp_runtime_paths


@functools.lru_cache(maxsize=1)
def _openmp() -> Any:
    """torch's own OpenMP runtime (the ``libgomp`` it loaded), or None."""
    if "OpenMP" not in torch.__config__.parallel_info():
        return None
    for path in openmp_runtime_paths(("libgomp", "libiomp")):  # none off Linux
        try:
            lib = ctypes.CDLL(path)
            lib.omp_get_max_threads.restype = ctypes.c_int
            lib.omp_set_num_threads.argtypes = [ctypes.c_int]
            return lib
        except (OSError, AttributeError):
            continue
    return None


def available() -> bool:
    """Whether :func:`limited` can bound the calling thread's intra-op threads here."""
    return _openmp() is not None


@contextlib.contextmanager
def limited(threads: int) -> Iterator[None]:
    """Run the block with at most ``threads`` intra-op threads in this thread (``<= 0``: no limit)."""
    lib = _openmp() if threads > 0 else None
    if lib is None:
        yield
        return
    torch.get_num_threads()  # torch's per-thread lazy set-up first, so it cannot override us later
    previous = lib.omp_get_max_threads()
    if previous <= threads:
        yield
        return
    lib.omp_set_num_threads(threads)
    try:
        yield
    finally:
        lib.omp_set_num_threads(previous)


def set_for_this_thread(threads: int) -> None:
    """Bound the calling thread's intra-op threads for good (a pipeline's own worker threads)."""
    lib = _openmp() if threads > 0 else None
    if lib is not None:
        torch.get_num_threads()  # torch's per-thread lazy set-up first, so it cannot override us later
        lib.omp_set_num_threads(threads)


def bounded(source: Iterator[Any], threads: int) -> Iterator[Any]:
    """The items of ``source``, each produced under :func:`limited` (``threads``); closing this
    generator closes ``source``."""
    try:
        while True:
            with limited(threads):
                try:
                    item = next(source)
                except StopIteration:
                    return
            yield item
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()


def for_pipeline(max_intra_op_parallelism: int | None) -> int:
    """The intra-op threads a pipeline's functions get: the option's value, or 1 when unset."""
    return int(max_intra_op_parallelism) if max_intra_op_parallelism else 1


__all__ = ["available", "bounded", "for_pipeline", "limited", "set_for_this_thread"]
