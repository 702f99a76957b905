"""Transformations that combine datasets: concatenate, zip, interleave/flat_map, sampling.

Example:
    >>> from unison.data.sources import Range
    >>> [int(x) for x in Range(2).concatenate(Range(3))]
    [0, 1, 0, 1, 2]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from unison.data import intraop, nest, threads
from unison.data.context import IterContext
from unison.data.dataset import Dataset, check_count, transformation
from unison.data.options import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from unison.data.transforms import _Unary, call


@transformation
class Concatenate(Dataset):
    def __init__(self, first: Dataset, second: Dataset) -> None:
        if not isinstance(second, Dataset):
            raise TypeError(f"concatenate() needs a Dataset. Received: {type(second).__name__}")
        self._inputs = (first, second)

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        first, second = self._inputs
        yield from first._iter(ctx)
        yield from second._iter(ctx)

    def _cardinality(self) -> int:
        a, b = (d._cardinality() for d in self._inputs)
        if INFINITE_CARDINALITY in (a, b):
            return INFINITE_CARDINALITY
        return UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in (a, b) else a + b


@transformation
class Zip(Dataset):
    def __init__(self, datasets: Any) -> None:
        leaves = nest.flatten(datasets)
        bad = [d for d in leaves if not isinstance(d, Dataset)]
        if bad or not leaves:
            raise TypeError(
                "Dataset.zip takes a (nested) tuple or dict of datasets. Received: "
                f"{type(bad[0]).__name__ if bad else 'nothing'}"
            )
        self._structure, self._inputs = datasets, tuple(leaves)

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        for values in zip(*(d._iter(ctx) for d in self._inputs)):
            yield nest.pack_as(self._structure, list(values))

    def _cardinality(self) -> int:
        ns = [d._cardinality() for d in self._inputs]
        finite = [n for n in ns if n >= 0]
        if finite:
            return min(finite) if UNKNOWN_CARDINALITY not in ns else UNKNOWN_CARDINALITY
        return UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in ns else INFINITE_CARDINALITY


@transformation
class Interleave(_Unary):
    """TF's interleave order: ``cycle_length`` open datasets, ``block_length`` elements from each
    in turn; an exhausted slot is refilled from the next input element when the cycle reaches it."""

    def __init__(
        self,
        input_dataset: Dataset,
        fn: Callable[..., Dataset],
        cycle_length: int | None,
        block_length: int | None,
        num_parallel_calls: int | None = None,
    ) -> None:
        super().__init__(input_dataset)
        if num_parallel_calls is not None and num_parallel_calls != AUTOTUNE:
            check_count("num_parallel_calls", num_parallel_calls, 1, "or tf.data.AUTOTUNE")
        self._parallel = num_parallel_calls not in (None, 1)
        self._fn = fn
        self._cycle = (
            os.cpu_count() or 1
            if cycle_length in (None, AUTOTUNE)
            else check_count("cycle_length", cycle_length, 1, "datasets open at once")
        )
        self._block = 1 if block_length is None else check_count("block_length", block_length, 1, "elements per turn")

    def _open(self, element: Any, index: int, ctx: IterContext) -> Iterator[Any]:
        try:
            ds = call(self._fn, element)
        except Exception as exc:  # noqa: BLE001 - the user's function: re-raised, annotated with the element
            raise threads.annotate(exc, "interleave", index) from None
        if not isinstance(ds, Dataset):
            raise TypeError(
                f"interleave()/flat_map()'s function must return a Dataset. Received: "
                f"{type(ds).__name__} for element {index}"
            )
        # a fresh context per opened dataset: no file sharding inside, seeds derived from the parent's
        opened = ds._iter(
            IterContext(seed_base=ctx.derive_seed("interleave", index), options=ds.options(), peek=ctx.peek)
        )
        if not self._parallel or ctx.peek:
            return opened
        # read ahead in a thread of its own: the open datasets of the cycle advance in parallel, and
        # the consumer still takes their elements in the cycle's order (TF's deterministic order)
        intra_op = intraop.for_pipeline(ctx.options.threading.max_intra_op_parallelism)
        return threads.prefetch(opened, 2 * self._block, intra_op=intra_op)

    def _spec(self) -> Any:
        # the spec of the dataset map_func returns (TF traces map_func and takes that dataset's spec):
        # flat_map(lambda w: w.batch(5)) has a (None,) batch dimension, not the first batch's size
        peek = IterContext(seed_base=0, options=self.options(), peek=True)
        first = next(iter(self._input._iter(peek)), _END)
        if first is _END:
            return Dataset._spec(self)
        opened = call(self._fn, first)
        if not isinstance(opened, Dataset):
            raise TypeError(
                f"interleave()/flat_map()'s function must return a Dataset. Received: {type(opened).__name__} "
                "for element 0"
            )
        return opened.element_spec

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        slots: list[Iterator[Any] | None] = [None] * self._cycle
        try:
            yield from self._cycle_through(slots, ctx)
        finally:
            for it in slots:  # stop the read-ahead threads of datasets not finished
                close = getattr(it, "close", None)
                if close is not None:
                    close()

    def _cycle_through(self, slots: list[Iterator[Any] | None], ctx: IterContext) -> Iterator[Any]:
        inputs = enumerate(self._input._iter(ctx))
        inputs_left = True
        slot = 0
        while True:
            if slots[slot] is None and inputs_left:
                nxt = next(inputs, None)
                if nxt is None:
                    inputs_left = False
                else:
                    slots[slot] = self._open(nxt[1], nxt[0], ctx)
            current = slots[slot]
            if current is None:
                if not inputs_left and all(s is None for s in slots):
                    return
            else:
                for _ in range(self._block):
                    element = next(current, _END)
                    if element is _END:
                        slots[slot] = None
                        break
                    yield element
            slot = (slot + 1) % self._cycle

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY


_END = object()


@transformation
class SampleFrom(Dataset):
    def __init__(
        self, datasets: Sequence[Dataset], weights: Sequence[float] | None, seed: int | None, stop_on_empty: bool
    ) -> None:
        self._inputs = tuple(datasets)
        if not self._inputs:
            raise ValueError("sample_from_datasets needs at least one dataset. Received: []")
        w = np.ones(len(self._inputs)) if weights is None else np.asarray(weights, dtype=np.float64)
        if w.shape != (len(self._inputs),) or (w < 0).any() or w.sum() <= 0:
            raise ValueError(
                f"weights must be {len(self._inputs)} non-negative numbers, not all 0. Received: weights={weights!r}"
            )
        self._weights, self._seed, self._stop = w / w.sum(), seed, stop_on_empty
        self._iterations = 0

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        seed = (
            ctx.derive_seed("sample", ctx.node_index(self), self._iterations)
            if self._seed is None
            else int(np.random.SeedSequence([int(self._seed), self._iterations]).generate_state(1)[0])
        )
        self._iterations += 0 if ctx.peek else 1
        rng = np.random.Generator(np.random.PCG64(seed))
        its = [d._iter(ctx) for d in self._inputs]
        w = self._weights.copy()
        while w.sum() > 0:
            k = int(rng.choice(len(its), p=w / w.sum()))
            element = next(its[k], _END)
            if element is _END:
                if self._stop:
                    return
                w[k] = 0.0
                continue
            yield element


@transformation
class ChooseFrom(Dataset):
    def __init__(self, datasets: Sequence[Dataset], choices: Dataset, stop_on_empty: bool) -> None:
        self._inputs = (*datasets, choices)
        self._stop = stop_on_empty

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        *sources, choices = self._inputs
        its = [d._iter(ctx) for d in sources]
        done = [False] * len(its)
        for i, choice in enumerate(choices._iter(ctx)):
            k = int(choice)
            if not 0 <= k < len(its):
                raise ValueError(f"choose_from_datasets: choice {i} is {k}, outside [0, {len(its)}).")
            element = next(its[k], _END) if not done[k] else _END
            if element is _END:
                done[k] = True
                if self._stop:
                    return
                continue
            yield element
