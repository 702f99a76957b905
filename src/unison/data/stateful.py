"""Transformations that carry state across elements: scan, take_while, unique, window, group_by_window
and bucket_by_sequence_length (TF's ``Dataset`` methods of the same names).

Each runs in the consuming thread, element after element, as TF's do; compared with TensorFlow by
``tests/conformance/test_vs_tf_data.py``.

Example:
    >>> import unison as tf
    >>> ds = tf.data.Dataset.range(5).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s + x))
    >>> [int(v) for v in ds]
    [0, 1, 3, 6, 10]
    >>> [int(v) for v in tf.data.Dataset.from_tensor_slices([1, 2, 1, 3, 2]).unique()]
    [1, 2, 3]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from unison.data import nest
from unison.data.context import IterContext
from unison.data.dataset import Dataset, transformation
from unison.data.options import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from unison.data.transforms import _as_result, _Unary, call
from unison.errors import InvalidArgumentError
from unison.ops import tree
from unison.ops.dtypes import to_tensor


def _function(fn: Any, what: str) -> Callable[..., Any]:
    if not callable(fn):
        raise TypeError(f"{what} needs a function. Received: {type(fn).__name__}")
    return fn


@transformation
class Scan(_Unary):
    """``ds.scan(initial_state, scan_func)``: ``scan_func(state, element) -> (new_state, output)``."""

    def __init__(self, input_dataset: Dataset, initial_state: Any, scan_func: Callable[..., Any]) -> None:
        super().__init__(input_dataset)
        self._initial = initial_state
        self._fn = _function(scan_func, "scan()")

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        state = self._initial
        for element in self._input._iter(ctx):
            args = (
                (state, *element)
                if isinstance(element, tuple) and not hasattr(element, "_fields")
                else (state, element)
            )
            result = self._fn(*args)
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise TypeError(
                    "scan()'s function must return (new_state, output_element). Received: "
                    f"{type(result).__name__}{'' if not isinstance(result, (tuple, list)) else f' of {len(result)}'}"
                )
            state, output = result
            yield _as_result(output)


@transformation
class TakeWhile(_Unary):
    """``ds.take_while(predicate)``: elements until the predicate first returns False."""

    def __init__(self, input_dataset: Dataset, predicate: Callable[..., Any]) -> None:
        super().__init__(input_dataset)
        self._predicate = _function(predicate, "take_while()")

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        for element in self._input._iter(ctx):
            keep = call(self._predicate, element)
            if isinstance(keep, torch.Tensor) and (keep.numel() != 1 or keep.dtype != torch.bool):
                raise TypeError(
                    f"take_while()'s predicate must return a scalar boolean. Received {keep.dtype} {list(keep.shape)}."
                )
            if not bool(keep):
                return
            yield element

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _spec(self) -> Any:
        return self._input._spec()


def _key(element: Any) -> Any:
    if isinstance(element, torch.Tensor):
        if element.dim() != 0:
            raise TypeError(f"unique() takes a dataset of scalars. Received an element of shape {list(element.shape)}.")
        if element.is_floating_point():
            raise TypeError(f"unique() takes int32, int64 or string elements. Received {element.dtype}.")
        return element.item()
    if isinstance(element, np.ndarray) and element.ndim == 0:  # strings
        return element.item()
    if isinstance(element, (str, bytes)):
        return element
    raise TypeError(f"unique() takes a dataset of scalar int or string elements. Received {type(element).__name__}.")


@transformation
class Unique(_Unary):
    """``ds.unique()``: each distinct element once, in order of first occurrence."""

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        seen: set[Any] = set()
        for element in self._input._iter(ctx):
            key = _key(element)
            if key not in seen:
                seen.add(key)
                yield element

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _spec(self) -> Any:
        return self._input._spec()


class _Elements(Dataset):
    """A window of elements already produced: the dataset ``group_by_window`` hands ``reduce_func``."""

    def __init__(self, elements: list[Any]) -> None:
        self._elements = elements

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        yield from self._elements

    def _cardinality(self) -> int:
        return len(self._elements)


@transformation
class Window(_Unary):
    """``ds.window(size, shift, stride, drop_remainder)``: each element a nest of datasets.

    Window ``k`` holds input elements ``k*shift + j*stride`` for ``j < size``; its element is the
    input's structure with each component replaced by a dataset of that component's values (TF's
    "nest of datasets"), so ``flat_map(lambda x: x.batch(size))`` turns windows into batches. The input
    is read lazily (only as far as the current window needs), so infinite inputs work.

    Example:
        >>> import unison as tf
        >>> [[int(x) for x in w] for w in tf.data.Dataset.range(5).window(3, shift=2)]
        [[0, 1, 2], [2, 3, 4], [4]]
    """

    def __init__(self, input_dataset: Dataset, size: int, shift: int | None, stride: int, drop_remainder: bool) -> None:
        super().__init__(input_dataset)
        for what, value in (("size", size), ("shift", size if shift is None else shift), ("stride", stride)):
            if int(value) < 1:
                raise InvalidArgumentError(
                    f"window(): `{what}` must be greater than zero. Received {what}={int(value)}. "
                    "Pass a positive number of elements."
                )
        self._size = int(size)
        self._shift = int(size if shift is None else shift)
        self._stride = int(stride)
        self._drop = bool(drop_remainder)

    def _window(self, elements: list[Any]) -> Any:
        template = elements[0]
        columns = list(zip(*(nest.flatten(e) for e in elements), strict=True))
        return nest.pack_as(template, [_WindowComponent(list(c)) for c in columns])

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        source = self._input._iter(ctx)
        buffer: deque[Any] = deque()  # input elements from index `base` on
        base = 0
        exhausted = False
        start = 0
        span = (self._size - 1) * self._stride + 1
        while True:
            while not exhausted and base + len(buffer) < start + span:
                element = next(source, _NONE)
                if element is _NONE:
                    exhausted = True
                else:
                    buffer.append(element)
            picked = [buffer[i - base] for i in range(start, start + span, self._stride) if i - base < len(buffer)]
            if not picked or (self._drop and len(picked) < self._size):
                return
            yield self._window(picked)
            start += self._shift
            while buffer and base < start:
                buffer.popleft()
                base += 1

    def _cardinality(self) -> int:
        n = self._input._cardinality()
        if n < 0:
            return n
        if self._drop:
            span = (self._size - 1) * self._stride + 1
            return 0 if n < span else (n - span) // self._shift + 1
        return (n + self._shift - 1) // self._shift

    def _spec(self) -> Any:
        from unison.data.experimental_more import DatasetSpec

        return tree.map_structure(DatasetSpec, self._input.element_spec, lists=False)


_NONE = object()


class _WindowComponent(_Elements):
    """One component of a window: a finite dataset of tensors (TF prints it as a ``_VariantDataset``)."""

    _TF_NAME = "_VariantDataset"


@transformation
class GroupByWindow(_Unary):
    """``ds.group_by_window(key_func, reduce_func, window_size)``: windows of elements with one key."""

    def __init__(
        self,
        input_dataset: Dataset,
        key_func: Callable[..., Any],
        reduce_func: Callable[..., Dataset],
        window_size: int | None,
        window_size_func: Callable[..., Any] | None,
    ) -> None:
        super().__init__(input_dataset)
        if (window_size is None) == (window_size_func is None):
            raise ValueError("group_by_window() needs exactly one of window_size and window_size_func.")
        self._key = _function(key_func, "group_by_window(key_func=)")
        self._reduce = _function(reduce_func, "group_by_window(reduce_func=)")
        self._size = window_size
        self._size_func = window_size_func

    def _window(self, key: int) -> int:
        size = self._size if self._size_func is None else int(self._size_func(torch.tensor(key, dtype=torch.int64)))
        if size is None or int(size) < 1:
            raise ValueError(f"group_by_window(): the window size must be >= 1. Received {size} for key {key}.")
        return int(size)

    def _emit(self, key: int, elements: list[Any]) -> Iterator[Any]:
        window = _Elements(elements)
        result = self._reduce(torch.tensor(key, dtype=torch.int64), window)
        if not isinstance(result, Dataset):
            raise TypeError(f"group_by_window()'s reduce_func must return a Dataset. Received {type(result).__name__}.")
        yield from result._iter(IterContext(seed_base=0, options=result.options()))

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        groups: dict[int, list[Any]] = {}
        for element in self._input._iter(ctx):
            key_value = call(self._key, element)
            key = int(key_value)
            if isinstance(key_value, torch.Tensor) and key_value.dtype != torch.int64:
                raise TypeError(
                    f"group_by_window()'s key_func must return an int64 scalar. Received {key_value.dtype}."
                )
            bucket = groups.setdefault(key, [])
            bucket.append(element)
            if len(bucket) >= self._window(key):
                del groups[key]
                yield from self._emit(key, bucket)
        for key in sorted(groups):  # what is left, by ascending key (TF keeps its groups in a sorted map)
            yield from self._emit(key, groups[key])

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _spec(self) -> Any:
        return Dataset._spec(self)


@transformation
class Counter(Dataset):
    """``Dataset.counter(start, step, dtype)``: ``start, start + step, ...`` without end."""

    def __init__(self, start: int, step: int, dtype: torch.dtype) -> None:
        self._start, self._step, self._dtype = int(start), int(step), dtype

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        value = self._start
        while True:
            yield torch.tensor(value, dtype=self._dtype)
            value += self._step

    def _cardinality(self) -> int:
        return INFINITE_CARDINALITY


@transformation
def FromList(elements: list[Any]) -> Dataset:  # noqa: N802 - registered under the name the method builds
    """``tf.data.experimental.from_list``: one element per list item (each a tensor or a nest of them)."""
    items = list(elements)
    if not items:
        raise ValueError("from_list() needs at least one element: TF cannot tell the element_spec of an empty list.")
    # a list inside the list is one tensor, as in TF (only tuples and dicts are structure)
    return _Elements([_as_result(to_tensor(item) if isinstance(item, list) else item) for item in items])


@transformation
def bucket_by_sequence_length(
    dataset: Dataset,
    element_length_func: Callable[..., Any],
    bucket_boundaries: list[int],
    bucket_batch_sizes: list[int],
    padded_shapes: Any = None,
    padding_values: Any = None,
    pad_to_bucket_boundary: bool = False,
    no_padding: bool = False,
    drop_remainder: bool = False,
) -> Dataset:
    """TF's ``bucket_by_sequence_length``: batches of elements of similar length, each padded."""
    boundaries = [int(b) for b in bucket_boundaries]
    sizes = [int(b) for b in bucket_batch_sizes]
    if len(sizes) != len(boundaries) + 1:
        raise ValueError(
            f"bucket_by_sequence_length: len(bucket_batch_sizes) must be len(bucket_boundaries) + 1 = "
            f"{len(boundaries) + 1}. Received {len(sizes)}."
        )
    if boundaries != sorted(boundaries):
        raise ValueError(f"bucket_by_sequence_length: bucket_boundaries must be sorted. Received {boundaries}.")
    edges = np.array(boundaries, dtype=np.int64)
    element_spec = dataset.element_spec if pad_to_bucket_boundary else None

    def bucket_of(*element: Any) -> torch.Tensor:
        length = int(element_length_func(*element))
        return torch.tensor(int(np.searchsorted(edges, length, side="right")), dtype=torch.int64)

    def batch(bucket: torch.Tensor, window: Dataset) -> Dataset:
        size = sizes[int(bucket)]
        if no_padding:
            return window.batch(size, drop_remainder=drop_remainder)
        shapes = padded_shapes
        if pad_to_bucket_boundary:
            if int(bucket) == len(boundaries):
                raise ValueError(
                    "bucket_by_sequence_length(pad_to_bucket_boundary=True): an element is at least as long as "
                    f"the last boundary {boundaries[-1]}; add a larger boundary."
                )
            limit = boundaries[int(bucket)] - 1
            shapes = tree.map_structure(
                lambda spec: [limit if d is None else d for d in spec.shape], element_spec, lists=False
            )
        return window.padded_batch(
            size, padded_shapes=shapes, padding_values=padding_values, drop_remainder=drop_remainder
        )

    return dataset.group_by_window(bucket_of, batch, window_size_func=lambda b: sizes[int(b)])


__all__ = [
    "Counter",
    "FromList",
    "GroupByWindow",
    "Scan",
    "TakeWhile",
    "Unique",
    "Window",
    "bucket_by_sequence_length",
]
