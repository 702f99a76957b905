"""Element-wise and order transformations: map, filter, shuffle, repeat, take, skip, shard,
cache, prefetch, enumerate, concatenate, interleave, zip, sampling.

Order transformations on an index-backed input (see :mod:`unison.data.dataset`) transform the
stream of row indices instead of elements; the element path runs the same code on elements,
so both orders are identical.

Example:
    >>> from unison.data.sources import Range
    >>> [int(x) for x in Range(10).shard(3, 1)]
    [1, 4, 7]
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import torch

from unison.data import intraop, nest, processes, threads
from unison.data.context import IterContext
from unison.data.dataset import Dataset, check_count, transformation
from unison.data.options import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Options,
)
from unison.data.shuffle_buffer import buffer_shuffle, shuffle_blocks
from unison.ops.determinism import require_seed

_CHUNK = 4096
# AUTOTUNE starts worker processes only for at least this many elements: starting two workers
# (a fork of a large process each) costs tens of milliseconds, about 2000 small elements' work.
AUTO_PROCESSES_MIN_ELEMENTS = 4096


def call(fn: Callable[..., Any], element: Any) -> Any:
    """Call a user function TF's way: a tuple element is unpacked into positional arguments."""
    return fn(*element) if isinstance(element, tuple) and not hasattr(element, "_fields") else fn(element)


def _has_strings(columns: Any) -> bool:
    """Whether an index-backed input has a string component (file names, serialized records)."""
    for leaf in nest.flatten(columns):
        dtype = getattr(leaf, "dtype", None)
        if isinstance(dtype, np.dtype) and dtype.kind in "OSU":
            return True
    return False


_FINAL_LEAVES = frozenset(nest.COMPOSITES)  # leaves as_leaf returns as they are


def _as_result(value: Any) -> Any:
    if type(value) is tuple and all(type(v) is torch.Tensor and not v.requires_grad for v in value):
        return value  # the usual (x, y) result needs no conversion
    if type(value) is dict:  # a parser's features (tensors, SparseTensors): nothing to convert either
        for v in value.values():
            if not (type(v) in _FINAL_LEAVES or (type(v) is torch.Tensor and not v.requires_grad)):
                return nest.as_element(value)
        return value
    if isinstance(value, list):
        value = tuple(value)  # TF turns a returned list into a tuple of components
    return nest.as_element(value)


class _Unary(Dataset):
    def __init__(self, input_dataset: Dataset) -> None:
        if not isinstance(input_dataset, Dataset):
            raise TypeError(f"Expected a tf.data.Dataset. Received: {type(input_dataset).__name__}")
        self._input = input_dataset
        self._inputs = (input_dataset,)

    def _cardinality(self) -> int:
        return self._input._cardinality()


class _IndexOp(_Unary):
    """An order transformation: index-backed when its input is."""

    def _columns(self) -> Any:
        return self._input._columns()

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        if self._columns() is not None:
            yield from Dataset._iter(self, ctx)
        else:
            yield from self._order(lambda: self._input._iter(ctx), ctx)

    def _index_chunks(self, ctx: IterContext) -> Iterator[np.ndarray]:
        yield from _rechunk(self._order(lambda: _ints(self._input._index_chunks(ctx)), ctx))

    def _order(self, source: Callable[[], Iterator[Any]], ctx: IterContext) -> Iterator[Any]:
        raise NotImplementedError

    def _spec(self) -> Any:
        return self._input._spec()


def _ints(chunks: Iterable[np.ndarray]) -> Iterator[int]:
    for chunk in chunks:
        yield from chunk.tolist()


def _rechunk(ints: Iterator[int]) -> Iterator[np.ndarray]:
    while True:
        block = list(itertools.islice(ints, _CHUNK))
        if not block:
            return
        yield np.asarray(block, dtype=np.int64)


@transformation
class Take(_IndexOp):
    def __init__(self, input_dataset: Dataset, count: int) -> None:
        super().__init__(input_dataset)
        self._count = check_count("count", count, -1, "-1 takes everything")

    def _index_chunks(self, ctx: IterContext) -> Iterator[np.ndarray]:
        left = self._count
        for chunk in self._input._index_chunks(ctx):
            if left == 0:
                return
            part = chunk if left < 0 else chunk[:left]
            left -= 0 if left < 0 else len(part)
            yield part

    def _order(self, source: Callable[[], Iterator[Any]], ctx: IterContext) -> Iterator[Any]:
        return source() if self._count < 0 else itertools.islice(source(), self._count)

    def _cardinality(self) -> int:
        n = self._input._cardinality()
        if self._count < 0:
            return n
        if n == INFINITE_CARDINALITY:
            return self._count
        return UNKNOWN_CARDINALITY if n == UNKNOWN_CARDINALITY else min(n, self._count)


@transformation
class Skip(_IndexOp):
    def __init__(self, input_dataset: Dataset, count: int) -> None:
        super().__init__(input_dataset)
        self._count = check_count("count", count, -1, "-1 skips everything")

    def _index_chunks(self, ctx: IterContext) -> Iterator[np.ndarray]:
        if self._count < 0:
            return
        left = self._count
        for chunk in self._input._index_chunks(ctx):
            if left:
                cut = min(left, len(chunk))
                chunk, left = chunk[cut:], left - cut
            if len(chunk):
                yield chunk

    def _order(self, source: Callable[[], Iterator[Any]], ctx: IterContext) -> Iterator[Any]:
        return iter(()) if self._count < 0 else itertools.islice(source(), self._count, None)

    def _cardinality(self) -> int:
        n = self._input._cardinality()
        if n < 0:
            return n
        return 0 if self._count < 0 else max(0, n - self._count)


@transformation
class Shard(_IndexOp):
    def __init__(self, input_dataset: Dataset, num_shards: int, index: int) -> None:
        super().__init__(input_dataset)
        self._num = check_count("num_shards", num_shards, 1, "how many shards")
        index = index.item() if isinstance(index, torch.Tensor) else index
        if not isinstance(index, int) or not 0 <= index < self._num:
            raise ValueError(
                f"shard index must be in [0, num_shards) = [0, {self._num}). "
                f"Received: index={index!r}, num_shards={self._num}"
            )
        self._index = index

    def _index_chunks(self, ctx: IterContext) -> Iterator[np.ndarray]:
        offset = 0
        for chunk in self._input._index_chunks(ctx):
            first = (self._index - offset) % self._num
            offset += len(chunk)
            part = chunk[first :: self._num]
            if len(part):
                yield part

    def _order(self, source: Callable[[], Iterator[Any]], ctx: IterContext) -> Iterator[Any]:
        return itertools.islice(source(), self._index, None, self._num)

    def _cardinality(self) -> int:
        n = self._input._cardinality()
        if n < 0:
            return n
        return n // self._num + (1 if self._index < n % self._num else 0)


@transformation
class Repeat(_IndexOp):
    def __init__(self, input_dataset: Dataset, count: int | None) -> None:
        super().__init__(input_dataset)
        self._count = -1 if count is None else check_count("count", count, -1, "-1 or None repeats forever")

    def _repeats(self) -> Iterable[int]:
        return itertools.count() if self._count < 0 else range(self._count)

    def _index_chunks(self, ctx: IterContext) -> Iterator[np.ndarray]:
        for _ in self._repeats():
            empty = True
            for chunk in self._input._index_chunks(ctx):
                empty = False
                yield chunk
            if empty:
                return  # repeating an empty dataset forever yields nothing (as TF)

    def _order(self, source: Callable[[], Iterator[Any]], ctx: IterContext) -> Iterator[Any]:
        for _ in self._repeats():
            empty = True
            for element in source():
                empty = False
                yield element
            if empty:
                return

    def _cardinality(self) -> int:
        n = self._input._cardinality()
        if n == 0 or self._count == 0:
            return 0
        if self._count < 0:
            return INFINITE_CARDINALITY
        return n if n < 0 else n * self._count


@transformation
class Shuffle(_IndexOp):
    """Shuffle with a buffer. A fixed ``seed`` gives a fixed sequence of orders (one per
    iteration when ``reshuffle_each_iteration``); unison's random stream is its own, so the
    order differs from TF's for the same seed."""

    def __init__(self, input_dataset: Dataset, buffer_size: int, seed: int | None, reshuffle: bool) -> None:
        super().__init__(input_dataset)
        if isinstance(buffer_size, int) and not isinstance(buffer_size, bool) and buffer_size < 1:
            # TF refuses it too ("buffer_size must be greater than zero"); -1 is AUTOTUNE, which
            # shuffle does not take: it was read as a buffer of a million elements
            raise ValueError(
                f"Dataset.shuffle: `buffer_size` must be an integer >= 1 (the elements held in the shuffle "
                f"buffer). Received: buffer_size={buffer_size}. Fix: pass the dataset's size for a full shuffle "
                "(dataset.cardinality()), or a smaller buffer such as 10000."
            )
        self._buffer = check_count("buffer_size", buffer_size, 1, "elements held in the shuffle buffer")
        require_seed(seed)  # TF: an unseeded shuffle is refused while op determinism is on
        self._seed, self._reshuffle = seed, bool(reshuffle)
        self._iterations = 0

    def _seed_for(self, ctx: IterContext) -> int:
        epoch = self._iterations if self._reshuffle else 0
        if not ctx.peek:
            self._iterations += 1
        if self._seed is not None:
            return int(np.random.SeedSequence([int(self._seed) & (2**63 - 1), epoch]).generate_state(1)[0])
        return ctx.derive_seed("shuffle", ctx.node_index(self), epoch)

    def _order(self, source: Callable[[], Iterator[Any]], ctx: IterContext) -> Iterator[Any]:
        return buffer_shuffle(source(), self._buffer, self._seed_for(ctx))

    def _index_chunks(self, ctx: IterContext) -> Iterator[np.ndarray]:
        yield from shuffle_blocks(self._input._index_chunks(ctx), self._buffer, self._seed_for(ctx))


@transformation
class Map(_Unary):
    def __init__(
        self, input_dataset: Dataset, fn: Callable[..., Any], num_parallel_calls: int | None, deterministic: bool | None
    ) -> None:
        super().__init__(input_dataset)
        if not callable(fn):
            raise TypeError(f"map() needs a function. Received: {type(fn).__name__}")
        if num_parallel_calls is not None and num_parallel_calls != AUTOTUNE:
            check_count("num_parallel_calls", num_parallel_calls, 1, "or tf.data.AUTOTUNE")
        self._fn, self._calls, self._deterministic = fn, num_parallel_calls, deterministic

    def element_fn(self) -> Callable[[Any], Any]:
        """The function applied to one element, results normalised (what workers run)."""
        return lambda element: _as_result(call(self._fn, element))

    def process_workers(self, ctx: IterContext, fused: bool = False) -> int:
        """Worker processes for this map (0: threads or sequential), see :mod:`unison.data.processes`.

        ``options.threading.worker_processes`` = k asks for k processes (0: threads only). Unset,
        ``num_parallel_calls=AUTOTUNE`` picks processes (one per usable core) for a map over
        in-memory arrays that a ``batch`` follows (each worker makes whole batches), when at
        least :data:`AUTO_PROCESSES_MIN_ELEMENTS` elements (or an infinite stream) pay for
        starting the workers, two or more cores are usable and CUDA is not initialised in this
        process (a forked child cannot use it).
        """
        if self._calls in (None, 1) or ctx.peek or self._input._columns() is None or not processes.available():
            return 0
        asked = ctx.options.threading.worker_processes
        if asked is not None:
            if isinstance(asked, bool) or not isinstance(asked, int) or asked < 0:
                raise ValueError(
                    "options.threading.worker_processes must be None (AUTOTUNE decides), 0 (threads) "
                    f"or a positive number of processes. Received: {asked!r}"
                )
            return asked
        if self._calls != AUTOTUNE or not fused or torch.cuda.is_initialized() or _has_strings(self._input._columns()):
            # strings in: file names or encoded records, whose read/decode/resize ops release the GIL,
            # so threads run them in parallel and the (large, decoded) results need no transfer
            return 0
        cores = processes.usable_cores()
        n = self._input._cardinality()
        if cores < 2 or 0 <= n < AUTO_PROCESSES_MIN_ELEMENTS:
            return 0
        return min(cores, ctx.options.threading.private_threadpool_size or cores)

    def sequential(self) -> bool:
        """Whether this map runs its function in the iterating thread, one element at a time."""
        return self._calls is None or self._calls == 1

    def deterministic(self, ctx: IterContext) -> bool:
        return ctx.options.is_deterministic if self._deterministic is None else self._deterministic

    def threaded_map(self, ctx: IterContext) -> tuple[Iterator[Any], Callable[[Any], Any], int, int] | None:
        """For a ``batch`` that follows: ``(input elements, function, worker threads, intra-op
        threads)`` where this map runs in threads, deterministically, errors not ignored (the
        workers then copy their results into the batch: :mod:`unison.data.map_batch`); else None."""
        if self.sequential() or ctx.ignore_errors or not self.deterministic(ctx) or self.process_workers(ctx, True):
            return None
        workers = ctx.options.threads if self._calls == AUTOTUNE else int(self._calls or 1)
        intra_op = intraop.for_pipeline(ctx.options.threading.max_intra_op_parallelism)
        return self._input._iter(ctx), self.element_fn(), workers, intra_op

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        source = self._input._iter(ctx)
        if self._calls is None or self._calls == 1:
            for index, element in enumerate(source):
                try:
                    result = _as_result(call(self._fn, element))
                except Exception as exc:  # noqa: BLE001 - the user's function: re-raised, annotated with the element
                    if ctx.drops(exc, "map function"):
                        continue
                    raise threads.annotate(exc, "map", index) from None
                yield result
            return
        workers = ctx.options.threads if self._calls == AUTOTUNE else int(self._calls)
        deterministic = self.deterministic(ctx)
        if ctx.ignore_errors:  # threads: a failed element comes back as a marker and is dropped
            yield from _without_dropped(source, self._fn, ctx, workers, deterministic)
            return
        procs = self.process_workers(ctx)
        columns = self._input._columns()
        if procs:
            close = getattr(source, "close", None)
            if close is not None:
                close()  # the workers read the rows themselves: only indices leave this process
            yield from processes.process_map(
                columns,
                processes.element_tasks(self._input._index_chunks(ctx)),
                self.element_fn(),
                procs,
                deterministic=deterministic,
            )
            return
        yield from threads.parallel_map(
            source,
            lambda el: _as_result(call(self._fn, el)),
            workers,
            deterministic,
            intra_op=intraop.for_pipeline(ctx.options.threading.max_intra_op_parallelism),
        )


_DROPPED = object()


def _without_dropped(
    source: Iterator[Any], fn: Callable[..., Any], ctx: IterContext, workers: int, deterministic: bool
) -> Iterator[Any]:
    def attempt(element: Any) -> Any:
        try:
            return _as_result(call(fn, element))
        except Exception as exc:  # noqa: BLE001 - dropped under ignore_errors (logged when asked)
            ctx.drops(exc, "map function")
            return _DROPPED

    mapped = threads.parallel_map(
        source,
        attempt,
        workers,
        deterministic,
        intra_op=intraop.for_pipeline(ctx.options.threading.max_intra_op_parallelism),
    )
    return (result for result in mapped if result is not _DROPPED)


@transformation
class Filter(_Unary):
    def __init__(self, input_dataset: Dataset, predicate: Callable[..., Any]) -> None:
        super().__init__(input_dataset)
        if not callable(predicate):
            raise TypeError(f"filter() needs a function. Received: {type(predicate).__name__}")
        self._predicate = predicate

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        for index, element in enumerate(self._input._iter(ctx)):
            try:
                keep = call(self._predicate, element)
            except Exception as exc:  # noqa: BLE001 - the user's function: re-raised, annotated with the element
                if ctx.drops(exc, "filter predicate"):
                    continue
                raise threads.annotate(exc, "filter", index) from None
            if isinstance(keep, torch.Tensor):
                if keep.numel() != 1 or keep.dtype != torch.bool:
                    raise TypeError(
                        f"filter()'s predicate must return a scalar boolean. Received a tensor of "
                        f"shape {tuple(keep.shape)} and dtype {keep.dtype} on element {index}."
                    )
                keep = bool(keep)
            if keep:
                yield element

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _spec(self) -> Any:
        return self._input._spec()


@transformation
class Enumerate(_Unary):
    def __init__(self, input_dataset: Dataset, start: int) -> None:
        super().__init__(input_dataset)
        self._start = int(start)

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        for i, element in enumerate(self._input._iter(ctx), self._start):
            yield torch.tensor(i, dtype=torch.int64), element


@transformation
class Prefetch(_Unary):
    def __init__(self, input_dataset: Dataset, buffer_size: int) -> None:
        super().__init__(input_dataset)
        self._size = (
            4
            if buffer_size == AUTOTUNE
            else check_count("buffer_size", buffer_size, 0, "elements prepared ahead, or tf.data.AUTOTUNE")
        )

    def _columns(self) -> Any:
        return None  # iterated through the thread, never as indices

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        source = self._input._iter(ctx)
        if self._size == 0:
            yield from source
            return
        yield from threads.prefetch(
            source, self._size, intra_op=intraop.for_pipeline(ctx.options.threading.max_intra_op_parallelism)
        )

    def _spec(self) -> Any:
        return self._input._spec()


@transformation
class WithOptions(_Unary):
    def __init__(self, input_dataset: Dataset, options: Options) -> None:
        super().__init__(input_dataset)
        self._own_options = options

    def _columns(self) -> Any:
        return self._input._columns()

    def _index_chunks(self, ctx: IterContext) -> Iterator[np.ndarray]:
        return self._input._index_chunks(ctx)

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        return self._input._iter(ctx)

    def _spec(self) -> Any:
        return self._input._spec()
