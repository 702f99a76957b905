"""``tf.data.Dataset``: the base class and every method TF programs call on a dataset.

A dataset is a recipe; ``iter(dataset)`` runs it. Each method returns a new dataset (the
transformation classes live in :mod:`unison.data.transforms`, :mod:`unison.data.batching`,
:mod:`unison.data.combine`, :mod:`unison.data.cache`, :mod:`unison.data.sources`, and register
themselves here with :func:`transformation`: this module imports none of them). Elements are torch tensors nested in tuples and dicts as TF nests
them; strings stay numpy arrays.

Fast path: a pipeline that starts from in-memory arrays (``from_tensor_slices``, ``range``) and
only shuffles, repeats, takes, skips or shards keeps a stream of *row indices*; ``batch`` then
gathers each batch with one index operation per component. The element-by-element path computes
the same indices, so both give the same elements in the same order.

Example:
    >>> import numpy as np
    >>> ds = Dataset.from_tensor_slices((np.arange(6), np.arange(6) * 10)).batch(4)
    >>> [x.tolist() for x, _ in ds]
    [[0, 1, 2, 3], [4, 5]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Iterator as PyIterator
from typing import Any, TypeVar

import numpy as np
import torch

from unison.data import intraop, nest
from unison.data.context import IterContext
from unison.data.options import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Options,
)
from unison.errors import EndOfSequenceError, InvalidArgumentError
from unison.ops import tree

_UNSUPPORTED = {
    "save": "cache(filename)",
    "load": "cache(filename) on the same pipeline",
    "sparse_batch": "padded_batch()",
    "from_tensor_slices_sparse": "from_tensor_slices() on dense arrays",
    "distribute": "strategy.experimental_distribute_dataset()",
    "ragged_batch": "padded_batch()",
}


# The transformations are Dataset subclasses in transforms.py, batching.py, combine.py, cache.py and
# sources.py, which import this module for the base class; so this module imports none of them (TF
# keeps that circle, dataset_ops <-> batch_op; unison cuts it). Each registers its classes here with
# @transformation when it loads (data/__init__.py imports every one), and the methods below build
# them by name.
_TRANSFORMATIONS: dict[str, Callable[..., Dataset]] = {}

_Builder = TypeVar("_Builder", bound=Callable[..., "Dataset"])


def transformation(builder: _Builder) -> _Builder:
    """Register a class (or function) that builds a dataset under its own name, for the methods here."""
    _TRANSFORMATIONS[builder.__name__] = builder
    return builder


def _build(name: str, *args: Any, **kwargs: Any) -> Dataset:
    builder = _TRANSFORMATIONS.get(name)
    if builder is None:  # only a module loaded without its package could get here
        raise RuntimeError(
            f"The dataset transformation {name} is not registered. Import unison.data (it loads every "
            "transformation module) before building datasets."
        )
    return builder(*args, **kwargs)


def _unsupported(owner: str, name: str) -> AttributeError:
    if name in _UNSUPPORTED:
        return AttributeError(
            f"Dataset.{name} is not supported by unison.data. Use {_UNSUPPORTED[name]} instead (see docs/data.md)."
        )
    return AttributeError(f"'{owner}' object has no attribute '{name}'")


# TF's class names for the nodes, as its ``repr(dataset)`` prints them (``<_MapDataset element_spec=...>``):
# programs print datasets, and a repr that names the same transformation reads the same in both.
_TF_CLASS_NAMES = {
    "TensorSlices": "_TensorSliceDataset",
    "FromTensors": "_TensorDataset",
    "Range": "_RangeDataset",
    "Counter": "_RangeDataset",
    "Map": "_MapDataset",
    "Batch": "_BatchDataset",
    "PaddedBatch": "_PaddedBatchDataset",
    "Shuffle": "_ShuffleDataset",
    "Repeat": "_RepeatDataset",
    "Take": "_TakeDataset",
    "Skip": "_SkipDataset",
    "Filter": "_FilterDataset",
    "Prefetch": "_PrefetchDataset",
    "Cache": "CacheDataset",
    "Zip": "_ZipDataset",
    "Enumerate": "_ZipDataset",
    "Concatenate": "_ConcatenateDataset",
    "Interleave": "_InterleaveDataset",
    "Shard": "_ShardDataset",
    "TextLineDataset": "TextLineDatasetV2",
    "TFRecordDataset": "TFRecordDatasetV2",
    "CsvDataset": "CsvDatasetV2",
    "FromGenerator": "_FlatMapDataset",
    "Unbatch": "_UnbatchDataset",
    "Window": "_WindowDataset",
    "IgnoreErrors": "_IgnoreErrorsDataset",
    "WithOptions": "_OptionsDataset",
    "SampleFrom": "_DirectedInterleaveDataset",
    "Scan": "_ScanDataset",
    "TakeWhile": "_TakeWhileDataset",
    "Unique": "_UniqueDataset",
}


class _DatasetType(type):
    """Names TF has on ``tf.data.Dataset`` itself (``Dataset.random``) fail with the nearest way."""

    def __getattr__(cls, name: str) -> Any:
        raise _unsupported(cls.__name__, name)


class Dataset(metaclass=_DatasetType):
    """A sequence of elements built from sources and transformations (TF's ``tf.data.Dataset``)."""

    _inputs: tuple[Dataset, ...] = ()
    _TF_NAME: str | None = None  # TF's class name where the node's own class does not tell it

    # --- what each node implements ----------------------------------------------------------
    def _iter(self, ctx: IterContext) -> PyIterator[Any]:
        """Elements one by one. Index-backed nodes derive it from :meth:`_index_chunks`."""
        columns = self._columns()
        if columns is None:
            raise NotImplementedError(type(self).__name__)
        leaves = nest.flatten(columns)
        for chunk in self._index_chunks(ctx):
            for i in chunk.tolist():
                yield nest.pack_as(columns, [nest.row(leaf, i) for leaf in leaves])

    def _columns(self) -> Any:
        """The arrays this node's elements are rows of, or ``None`` (not index-backed)."""
        return None

    def _index_chunks(self, ctx: IterContext) -> PyIterator[np.ndarray]:
        """Row indices of the elements, in order, as numpy int64 chunks (index-backed nodes only)."""
        raise NotImplementedError(type(self).__name__)

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _spec(self) -> Any:
        """The element spec; by default the spec of the first element."""
        from unison.data.specs import TensorSpec

        first = next(iter(self._iter(IterContext(seed_base=0, options=self.options(), peek=True))), None)
        if first is None:
            raise ValueError(f"Cannot tell the element_spec of an empty {type(self).__name__}.")
        return tree.map_structure(TensorSpec.from_tensor, first, lists=False)

    # --- iteration ----------------------------------------------------------------------------
    def __iter__(self) -> Iterator:
        return Iterator(self, IterContext(options=self.options()))

    def _iterate(self, ctx: IterContext) -> PyIterator[Any]:
        """The pipeline's elements, each made with the pipeline's intra-op threads (see
        :mod:`unison.data.intraop`); the consumer's own code between elements keeps its threads."""
        return intraop.bounded(self._iter(ctx), intraop.for_pipeline(ctx.options.threading.max_intra_op_parallelism))

    def as_numpy_iterator(self) -> NumpyIterator:
        """Iterate with every leaf as numpy (scalars as numpy scalars), as TF's method."""
        return NumpyIterator(self)

    def get_single_element(self) -> Any:
        """The only element of a one-element dataset (an error when it has none or several)."""
        it = iter(self)
        first = next(it, None)
        if first is None or next(it, None) is not None:
            raise InvalidArgumentError(
                "get_single_element() needs a dataset of exactly one element. Received a dataset "
                f"with {'no' if first is None else 'more than one'} element. Use take(1) or batch()."
            )
        return first

    def reduce(self, initial_state: Any, reduce_func: Callable[[Any, Any], Any]) -> Any:
        """Fold the elements: ``state = reduce_func(state, element)``, from ``initial_state``."""
        state = nest.as_element(initial_state)
        for element in self:
            state = nest.as_element(reduce_func(state, element))
        return state

    def cardinality(self) -> torch.Tensor:
        """Number of elements, ``tf.data.INFINITE_CARDINALITY`` (-1) or ``UNKNOWN_CARDINALITY`` (-2)."""
        return torch.tensor(self._cardinality(), dtype=torch.int64)

    def __len__(self) -> int:
        """The number of elements; ``TypeError`` when infinite or unknown (as TF)."""
        n = self._cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self) -> bool:
        return True  # a dataset is a recipe; its truth does not depend on its length (as in TF)

    @property
    def element_spec(self) -> Any:
        """The nest of :class:`~unison.data.specs.TensorSpec` describing one element."""
        return self._spec()

    def options(self) -> Options:
        """The options set with ``with_options`` anywhere upstream (later settings win)."""
        merged = Options()
        for d in self._inputs:
            merged = merged.merge(d.options())
        own = getattr(self, "_own_options", None)
        return merged.merge(own) if own is not None else merged

    def __getattr__(self, name: str) -> Any:
        raise _unsupported(type(self).__name__, name)

    def __repr__(self) -> str:
        """``<_MapDataset element_spec=TensorSpec(...)>``: TF's class name for the node and its spec."""
        name = self._TF_NAME or _TF_CLASS_NAMES.get(type(self).__name__, type(self).__name__)
        if name == "_MapDataset" and getattr(self, "_calls", None) not in (None, 1):
            name = "_ParallelMapDataset"
        try:
            spec = self.element_spec
        except Exception:  # noqa: BLE001 - a repr must not fail; the spec of some inputs needs a read
            return f"<{name}>"
        return f"<{name} element_spec={spec!r}>"

    # --- sources ------------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors: Any, name: str | None = None) -> Dataset:
        """One element per row of ``tensors`` (a nest of arrays sharing their first dimension)."""
        return _build("TensorSlices", tensors)

    @staticmethod
    def from_tensors(tensors: Any, name: str | None = None) -> Dataset:
        """A dataset of exactly one element, ``tensors``."""
        return _build("FromTensors", tensors)

    @staticmethod
    def from_generator(
        generator: Callable[..., Any],
        output_types: Any = None,
        output_shapes: Any = None,
        args: Sequence[Any] | None = None,
        output_signature: Any = None,
        name: str | None = None,
    ) -> Dataset:
        """Elements yielded by ``generator(*args)``, checked against ``output_signature``."""
        return _build("FromGenerator", generator, output_types, output_shapes, args, output_signature)

    @staticmethod
    def range(*args: int, dtype: Any = torch.int64, name: str | None = None) -> Dataset:
        """``range(stop)``, ``range(start, stop[, step])`` as int64 scalars."""
        return _build("Range", *args, dtype=dtype)

    @staticmethod
    def zip(*datasets: Any, name: str | None = None) -> Dataset:
        """Elements of several datasets side by side (a nest of datasets -> a nest of elements)."""
        return _build("Zip", datasets[0] if len(datasets) == 1 else datasets)

    @staticmethod
    def sample_from_datasets(
        datasets: Sequence[Dataset],
        weights: Sequence[float] | None = None,
        seed: int | None = None,
        stop_on_empty_dataset: bool = False,
        rerandomize_each_iteration: bool | None = None,
    ) -> Dataset:
        """Elements drawn at random from ``datasets`` with probabilities ``weights``."""
        return _build("SampleFrom", datasets, weights, seed, stop_on_empty_dataset)

    @staticmethod
    def choose_from_datasets(
        datasets: Sequence[Dataset], choice_dataset: Dataset, stop_on_empty_dataset: bool = True
    ) -> Dataset:
        """Element ``i`` comes from ``datasets[choice_dataset[i]]``."""
        return _build("ChooseFrom", datasets, choice_dataset, stop_on_empty_dataset)

    @staticmethod
    def list_files(
        file_pattern: str | Sequence[str], shuffle: bool | None = None, seed: int | None = None, name: str | None = None
    ) -> Dataset:
        """File names matching the glob ``file_pattern`` (shuffled unless ``shuffle=False``)."""
        return _build("list_files", file_pattern, shuffle, seed)

    # --- transformations ------------------------------------------------------------------------
    def map(
        self,
        map_func: Callable[..., Any],
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
    ) -> Dataset:
        """``map_func`` on every element (a tuple element is unpacked into arguments)."""
        return _build("Map", self, map_func, num_parallel_calls, deterministic)

    def filter(self, predicate: Callable[..., Any], name: str | None = None) -> Dataset:
        """Keep the elements for which ``predicate`` is true."""
        return _build("Filter", self, predicate)

    def batch(
        self,
        batch_size: int,
        drop_remainder: bool = False,
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
    ) -> Dataset:
        """Consecutive elements stacked into batches of ``batch_size``."""
        return _build("Batch", self, batch_size, drop_remainder)

    def padded_batch(
        self,
        batch_size: int,
        padded_shapes: Any = None,
        padding_values: Any = None,
        drop_remainder: bool = False,
        name: str | None = None,
    ) -> Dataset:
        """Batches whose components are padded to a common shape."""
        return _build("PaddedBatch", self, batch_size, padded_shapes, padding_values, drop_remainder)

    def unbatch(self, name: str | None = None) -> Dataset:
        """Split every batch back into its rows."""
        return _build("Unbatch", self)

    def rebatch(
        self, batch_size: int | Sequence[int], drop_remainder: bool = False, name: str | None = None
    ) -> Dataset:
        """Re-cut a batched dataset into batches of ``batch_size`` (or the cycle of a list of sizes)."""
        return _build("Rebatch", self, batch_size, drop_remainder)

    def shuffle(
        self,
        buffer_size: int,
        seed: int | None = None,
        reshuffle_each_iteration: bool | None = None,
        name: str | None = None,
    ) -> Dataset:
        """Randomly shuffle with a buffer of ``buffer_size`` elements (TF's buffer semantics)."""
        return _build(
            "Shuffle", self, buffer_size, seed, True if reshuffle_each_iteration is None else reshuffle_each_iteration
        )

    def repeat(self, count: int | None = None, name: str | None = None) -> Dataset:
        """Repeat ``count`` times (``None`` or -1: forever)."""
        return _build("Repeat", self, count)

    def take(self, count: int, name: str | None = None) -> Dataset:
        """The first ``count`` elements (-1: all)."""
        return _build("Take", self, count)

    def skip(self, count: int, name: str | None = None) -> Dataset:
        """All but the first ``count`` elements (-1: skip everything)."""
        return _build("Skip", self, count)

    def shard(self, num_shards: int, index: int, name: str | None = None) -> Dataset:
        """Every ``num_shards``-th element, starting at ``index``."""
        return _build("Shard", self, num_shards, index)

    def cache(self, filename: str = "", name: str | None = None) -> Dataset:
        """Keep the elements of the first full iteration (in memory, or in ``filename``)."""
        return _build("Cache", self, filename)

    def prefetch(self, buffer_size: int, name: str | None = None) -> Dataset:
        """Prepare up to ``buffer_size`` elements ahead in a background thread."""
        return _build("Prefetch", self, buffer_size)

    def enumerate(self, start: int = 0, name: str | None = None) -> Dataset:
        """``(index, element)`` pairs, the index an int64 scalar."""
        return _build("Enumerate", self, start)

    def concatenate(self, dataset: Dataset, name: str | None = None) -> Dataset:
        """This dataset's elements, then ``dataset``'s (same structure)."""
        return _build("Concatenate", self, dataset)

    def interleave(
        self,
        map_func: Callable[..., Dataset],
        cycle_length: int | None = None,
        block_length: int | None = None,
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
    ) -> Dataset:
        """Elements of ``map_func(element)`` datasets, ``block_length`` at a time from ``cycle_length`` of them.

        With ``num_parallel_calls`` the ``cycle_length`` open datasets are read ahead each in its own
        thread (files read and decoded in parallel); the order stays TF's deterministic order (which
        ``deterministic=False`` also allows).
        """
        return _build("Interleave", self, map_func, cycle_length, block_length, num_parallel_calls)

    @staticmethod
    def counter(start: int = 0, step: int = 1, dtype: Any = torch.int64, name: str | None = None) -> Dataset:
        """``start, start + step, ...`` forever (TF's ``Dataset.counter``)."""
        from unison.ops.dtypes import as_dtype

        return _build("Counter", start, step, as_dtype(dtype))

    @staticmethod
    def random(
        seed: int | None = None, rerandomize_each_iteration: bool | None = None, name: str | None = None
    ) -> Dataset:
        """Random int64 scalars in ``[0, 2**32)`` without end (see :mod:`unison.data.resampling`)."""
        return _build("RandomDataset", seed, rerandomize_each_iteration)

    def rejection_resample(
        self,
        class_func: Callable[..., Any],
        target_dist: Any,
        initial_dist: Any = None,
        seed: int | None = None,
        name: str | None = None,
    ) -> Dataset:
        """``(class, element)`` pairs kept at random so that the classes follow ``target_dist``."""
        return _build("RejectionResample", self, class_func, target_dist, initial_dist, seed)

    def snapshot(
        self,
        path: str,
        compression: str | None = "AUTO",
        reader_func: Callable[..., Any] | None = None,
        shard_func: Callable[..., Any] | None = None,
        name: str | None = None,
    ) -> Dataset:
        """The first complete iteration kept under ``path``; later ones (any process) read it back."""
        return _build("Snapshot", self, path, compression, reader_func, shard_func)

    def ignore_errors(self, log_warning: bool = False, name: str | None = None) -> Dataset:
        """The elements, without those whose upstream ``map``/``filter`` function raised."""
        return _build("IgnoreErrors", self, log_warning)

    def scan(self, initial_state: Any, scan_func: Callable[..., Any], name: str | None = None) -> Dataset:
        """``scan_func(state, element) -> (new_state, output)`` over the elements, from ``initial_state``."""
        return _build("Scan", self, initial_state, scan_func)

    def take_while(self, predicate: Callable[..., Any], name: str | None = None) -> Dataset:
        """The elements up to (not including) the first for which ``predicate`` is False."""
        return _build("TakeWhile", self, predicate)

    def unique(self, name: str | None = None) -> Dataset:
        """Each distinct element (int or string scalars) once, in order of first occurrence."""
        return _build("Unique", self)

    def window(
        self,
        size: int,
        shift: int | None = None,
        stride: int = 1,
        drop_remainder: bool = False,
        name: str | None = None,
    ) -> Dataset:
        """Windows of ``size`` elements, ``shift`` apart (default ``size``), each a nest of datasets."""
        return _build("Window", self, size, shift, stride, drop_remainder)

    def group_by_window(
        self,
        key_func: Callable[..., Any],
        reduce_func: Callable[..., Dataset],
        window_size: int | None = None,
        window_size_func: Callable[..., Any] | None = None,
        name: str | None = None,
    ) -> Dataset:
        """Windows of up to ``window_size`` elements with one int64 key, each reduced to a dataset."""
        return _build("GroupByWindow", self, key_func, reduce_func, window_size, window_size_func)

    def bucket_by_sequence_length(
        self,
        element_length_func: Callable[..., Any],
        bucket_boundaries: list[int],
        bucket_batch_sizes: list[int],
        padded_shapes: Any = None,
        padding_values: Any = None,
        pad_to_bucket_boundary: bool = False,
        no_padding: bool = False,
        drop_remainder: bool = False,
        name: str | None = None,
    ) -> Dataset:
        """Padded batches of elements of similar length: one batch size per length bucket."""
        return _build(
            "bucket_by_sequence_length",
            self,
            element_length_func,
            bucket_boundaries,
            bucket_batch_sizes,
            padded_shapes,
            padding_values,
            pad_to_bucket_boundary,
            no_padding,
            drop_remainder,
        )

    def flat_map(self, map_func: Callable[..., Dataset], name: str | None = None) -> Dataset:
        """The elements of ``map_func(element)`` for each element, in order."""
        flat = _build("Interleave", self, map_func, 1, 1)
        flat._TF_NAME = "_FlatMapDataset"  # an interleave of one, named as TF's
        return flat

    def apply(self, transformation_func: Callable[[Dataset], Dataset]) -> Dataset:
        """``transformation_func(self)``; it must return a dataset."""
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError(f"apply()'s function must return a Dataset. Received: {type(out).__name__}")
        return out

    def with_options(self, options: Options, name: str | None = None) -> Dataset:
        """This dataset with ``options`` (merged with upstream options; later wins)."""
        if not isinstance(options, Options):
            raise TypeError(f"with_options expects a tf.data.Options. Received: {type(options).__name__}")
        return _build("WithOptions", self, options)


class Iterator:
    """What ``iter(dataset)`` returns; drop it (or ``close()``) and its threads stop.

    It is checkpointable, as TF's iterator: ``tf.train.Checkpoint(iterator=it)`` saves its
    position (elements consumed) and the seed of its unseeded shuffles; restoring rebuilds the
    pipeline with that seed and skips to the position, so the next element is the one the saved
    iterator would have produced. Skipping re-runs the pipeline up to there (TF restores its
    buffers instead): cheap for in-memory data, one pass over the consumed part for files.
    """

    restores_own_position = True  # tf.train.Checkpoint hands it its state: it checks the pipeline itself

    def __init__(self, dataset: Dataset, ctx: IterContext) -> None:
        self._dataset = dataset
        self._ctx = ctx
        # Shuffle/sample nodes count the iterations started on them (each one draws a new order):
        # which count this iterator uses is part of its state, or a restore would draw another order.
        self._counts = {id(n): n._iterations for n in _counting_nodes(dataset)}
        self._gen = dataset._iterate(ctx)
        self._consumed = 0

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> Any:
        value = next(self._gen)
        self._consumed += 1
        return nest.user_element(value)

    def get_next(self) -> Any:
        """The next element; at the end TF's ``tf.errors.OutOfRangeError`` (also a ``StopIteration``)."""
        try:
            return self.__next__()
        except StopIteration:
            raise EndOfSequenceError("End of sequence") from None

    def get_next_as_optional(self) -> Optional:
        """The next element as an :class:`Optional` (empty at the end) instead of ``StopIteration``."""
        try:
            return Optional(self.__next__())
        except StopIteration:
            return Optional()

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The position and shuffle seed, for ``tf.train.Checkpoint`` (TF's iterator state)."""
        counts = [self._counts.get(id(n), 0) for n in _counting_nodes(self._dataset)]
        return {
            "consumed": torch.tensor(self._consumed, dtype=torch.int64),
            "seed_base": torch.tensor(self._ctx.seed_base, dtype=torch.int64),
            "iterations": torch.tensor(counts, dtype=torch.int64),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from a saved position: rebuild the pipeline with the saved seed and skip to it."""
        consumed, seed = int(state["consumed"]), int(state["seed_base"])
        nodes = _counting_nodes(self._dataset)
        saved = [int(c) for c in state.get("iterations", torch.zeros(len(nodes), dtype=torch.int64)).tolist()]
        if len(saved) != len(nodes):
            raise ValueError(
                f"The checkpoint's iterator comes from a pipeline with {len(saved)} shuffle/sample steps; this one has "
                f"{len(nodes)}. Restore it into an iterator of the same dataset."
            )
        self.close()
        now = [n._iterations for n in nodes]
        for node, count in zip(nodes, saved):
            node._iterations = count  # replay the saved iteration's orders
        try:
            self._ctx = IterContext(seed_base=seed, file_shard=self._ctx.file_shard, options=self._ctx.options)
            self._counts = {id(n): c for n, c in zip(nodes, saved)}
            self._gen = self._dataset._iterate(self._ctx)
            for done in range(consumed):
                if next(self._gen, _NOTHING) is _NOTHING:
                    raise ValueError(
                        f"The checkpoint's iterator had consumed {consumed} elements, but this dataset ends after "
                        f"{done}. Restore it into an iterator of the same dataset."
                    )
        finally:
            for node, before, count in zip(nodes, now, saved):
                node._iterations = max(before, count + 1)  # later iterations still draw new orders
        self._consumed = consumed

    @property
    def element_spec(self) -> Any:
        return self._dataset.element_spec

    def close(self) -> None:
        """Stop the pipeline's threads now (they also stop when the iterator is collected)."""
        close = getattr(self._gen, "close", None)
        if close is not None:
            close()


_NOTHING = object()


class NumpyIterator:
    """``tf.data.NumpyIterator``: what ``ds.as_numpy_iterator()`` returns, elements as NumPy values."""

    def __init__(self, dataset: Dataset) -> None:
        self._elements = iter(dataset)

    def __iter__(self) -> NumpyIterator:
        return self

    def __next__(self) -> Any:
        return tree.map_structure(nest.to_numpy, next(self._elements), lists=False)

    next = __next__


def _counting_nodes(dataset: Any) -> list[Any]:
    """The pipeline's nodes that count their iterations (shuffle, sample), in a fixed order."""
    found: list[Any] = []
    seen: set[int] = set()

    def visit(node: Any) -> None:
        if id(node) in seen or not isinstance(node, Dataset):
            return
        seen.add(id(node))
        if isinstance(getattr(node, "_iterations", None), int):
            found.append(node)
        for value in vars(node).values():
            for item in value if isinstance(value, (list, tuple)) else (value,):
                visit(item)

    visit(dataset)
    return found


class Optional:
    """A value that may be absent (TF's ``tf.experimental.Optional``): ``has_value()``, ``get_value()``."""

    def __init__(self, value: Any = _NOTHING) -> None:
        self._value = value

    def has_value(self) -> bool:
        return self._value is not _NOTHING

    def get_value(self) -> Any:
        if self._value is _NOTHING:
            # TF's class: InvalidArgumentError ("The optional does not have a value")
            raise InvalidArgumentError(
                None, None, "The Optional has no value (the iterator reached its end). Check has_value() first."
            )
        return self._value

    @staticmethod
    def empty(element_spec: Any = None) -> Optional:
        return Optional()

    @staticmethod
    def from_value(value: Any) -> Optional:
        return Optional(value)


def check_count(name: str, value: Any, low: int, what: str) -> int:
    """An integer argument ``>= low`` or a clear error naming it."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"`{name}` must be an integer >= {low} ({what}). Received: {name}={value!r}")
    return value


__all__ = ["AUTOTUNE", "Dataset", "Iterator", "Optional", "check_count"]
