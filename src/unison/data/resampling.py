"""``Dataset.random``, ``Dataset.rejection_resample``, ``Dataset.ignore_errors`` and ``Dataset.snapshot``
(and their ``tf.data.experimental`` spellings ``RandomDataset``, ``rejection_resample``,
``ignore_errors``, ``snapshot``).

- ``random(seed)``: int64 scalars in ``[0, 2**32)`` without end. The same seed gives the same stream
  (not TF's Philox numbers: unison draws from NumPy's PCG64); iterating a seeded dataset again
  repeats it unless ``rerandomize_each_iteration=True``; an unseeded one draws its seed once, when
  it is made, so it too repeats across iterations, as TF's does.
- ``rejection_resample(class_func, target_dist, initial_dist=None, seed=None)``: ``(class, element)``
  pairs whose classes follow ``target_dist``. Each element is kept with probability
  ``a[c] = (target[c] / initial[c]) / max_k(target[k] / initial[k])``; without ``initial_dist`` the
  class frequencies seen so far stand for it (TF estimates them online too).
- ``ignore_errors(log_warning=False)``: an element whose ``map`` function or ``filter`` predicate
  raised upstream is dropped instead of ending the iteration. (In TF an error under a ``batch``
  drops that whole batch; here the failing element is dropped before it is batched.)
- ``snapshot(path)``: the first complete iteration kept on disk under ``path``, one folder per
  pipeline (see :func:`Snapshot`).

Example:
    >>> import unison as tf
    >>> ds = tf.data.Dataset.from_tensor_slices([1.0, 0.0, 4.0]).map(
    ...     lambda x: tf.debugging.check_numerics(1.0 / x, "inf"))
    >>> [float(v) for v in ds.ignore_errors()]
    [1.0, 0.25]
    >>> [int(v) for v in tf.data.Dataset.random(seed=1).take(2)] == [int(v) for v in tf.data.Dataset.random(seed=1).take(2)]
    True
"""

from __future__ import annotations

import copy
import hashlib
import os
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from unison.data.context import IterContext
from unison.data.dataset import Dataset, transformation
from unison.data.options import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from unison.data.specs import TensorSpec
from unison.errors import InvalidArgumentError

__all__ = [
    "IgnoreErrors",
    "RandomDataset",
    "RejectionResample",
    "Snapshot",
    "ignore_errors",
    "rejection_resample",
    "snapshot",
]


@transformation
class RandomDataset(Dataset):
    """``tf.data.Dataset.random(seed)`` / ``tf.data.experimental.RandomDataset``: random int64s forever."""

    def __init__(self, seed: int | None = None, rerandomize_each_iteration: bool | None = None) -> None:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer, torch.Tensor))):
            raise TypeError(f"Dataset.random: seed must be an integer or None. Received: seed={seed!r}")
        self._seed = int(seed) if seed is not None else secrets.randbits(63)
        self._rerandomize = bool(rerandomize_each_iteration)
        self._iterations = 0

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        epoch = self._iterations if self._rerandomize else 0
        self._iterations += 1
        rng = np.random.default_rng([self._seed & (2**63 - 1), epoch])
        while True:
            for value in rng.integers(0, 2**32, size=256, dtype=np.int64).tolist():
                yield torch.tensor(value, dtype=torch.int64)

    def _cardinality(self) -> int:
        return INFINITE_CARDINALITY

    def _spec(self) -> Any:
        return TensorSpec((), torch.int64)


def _distribution(value: Any, what: str) -> np.ndarray:
    dist = np.asarray(value.numpy() if isinstance(value, torch.Tensor) else value, dtype=np.float64)
    if dist.ndim != 1 or dist.size == 0:
        raise InvalidArgumentError(
            f"rejection_resample: {what} must be a non-empty 1-D list of class probabilities. "
            f"Received shape {list(dist.shape)}."
        )
    if (dist < 0).any() or not np.isfinite(dist).all():
        raise InvalidArgumentError(
            f"rejection_resample: {what} must hold probabilities >= 0. Received: {dist.tolist()}"
        )
    return dist


@transformation
class RejectionResample(Dataset):
    """``(class, element)`` pairs of ``input_dataset``, kept at random so the classes follow ``target_dist``."""

    def __init__(
        self,
        input_dataset: Dataset,
        class_func: Callable[..., Any],
        target_dist: Any,
        initial_dist: Any = None,
        seed: int | None = None,
    ) -> None:
        if not callable(class_func):
            raise TypeError(f"rejection_resample() needs class_func to be a function. Received: {class_func!r:.60}")
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._class_func = class_func
        self._target = _distribution(target_dist, "target_dist")
        self._initial = None if initial_dist is None else _distribution(initial_dist, "initial_dist")
        if self._initial is not None and self._initial.shape != self._target.shape:
            raise InvalidArgumentError(
                f"rejection_resample: target_dist and initial_dist must have one entry per class; their shapes "
                f"{list(self._target.shape)} and {list(self._initial.shape)} differ."
            )
        self._seed = seed

    def _accept(self, initial: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(initial > 0, self._target / initial, 0.0)
        top = ratio.max()
        return ratio / top if top > 0 else ratio

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        from unison.data.transforms import call

        seed = self._seed if self._seed is not None else ctx.derive_seed("rejection_resample", ctx.node_index(self))
        rng = np.random.default_rng(int(seed) & (2**63 - 1))
        fixed = None if self._initial is None else self._accept(self._initial)
        counts = np.zeros(self._target.shape)
        for element in self._input._iter(ctx):
            label = call(self._class_func, element)
            c = int(label)
            if not 0 <= c < self._target.size:
                raise InvalidArgumentError(
                    f"rejection_resample: class_func returned class {c}, outside the {self._target.size} classes "
                    "of target_dist."
                )
            if fixed is None:
                counts[c] += 1
                accept = self._accept(counts / counts.sum())
            else:
                accept = fixed
            if rng.random() < accept[c]:
                yield (label if isinstance(label, torch.Tensor) else torch.tensor(label)), element

    def _cardinality(self) -> int:
        return INFINITE_CARDINALITY if self._input._cardinality() == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY


@transformation
class IgnoreErrors(Dataset):
    """The input's elements, those whose upstream ``map``/``filter`` function raised left out."""

    def __init__(self, input_dataset: Dataset, log_warning: bool = False) -> None:
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._log_warning = bool(log_warning)

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        # the nodes above this one see the flag; those after it (a later map) still raise, as in TF
        inner = copy.copy(ctx)
        inner.ignore_errors = "log" if self._log_warning else "silent"
        yield from self._input._iter(inner)

    def _cardinality(self) -> int:
        return INFINITE_CARDINALITY if self._input._cardinality() == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY


def ignore_errors(log_warning: bool = False) -> Callable[[Dataset], Dataset]:
    """``tf.data.experimental.ignore_errors``: a transformation for ``ds.apply`` (``ds.ignore_errors()``)."""
    return lambda dataset: IgnoreErrors(dataset, log_warning)


def rejection_resample(
    class_func: Callable[..., Any], target_dist: Any, initial_dist: Any = None, seed: int | None = None
) -> Callable[[Dataset], Dataset]:
    """``tf.data.experimental.rejection_resample``: a transformation for ``ds.apply``."""
    return lambda dataset: RejectionResample(dataset, class_func, target_dist, initial_dist, seed)


def _fingerprint(dataset: Dataset) -> str:
    """A name for a pipeline: its nodes' types, plain arguments and functions' bytecode, hashed.

    TF names a snapshot by its graph's fingerprint, so that another pipeline given the same path
    writes a snapshot of its own; this is the same idea on unison's pipeline objects.
    """
    digest = hashlib.sha256()

    def visit(node: Any, depth: int) -> None:
        digest.update(f"{depth}:{type(node).__qualname__};".encode())
        for key, value in sorted(vars(node).items()):
            if isinstance(value, (bool, int, float, str, bytes, type(None))):
                digest.update(f"{key}={value!r};".encode())
            elif callable(value) and hasattr(value, "__code__"):
                code = value.__code__
                digest.update(f"{key}:{code.co_code.hex()}{code.co_consts!r};".encode())
            elif isinstance(value, torch.Tensor) and value.numel() <= 4096:
                digest.update(f"{key}:{value.tolist()!r};".encode())
            elif isinstance(value, np.ndarray) and value.size <= 4096:
                digest.update(f"{key}:{value.tolist()!r};".encode())
        for child in getattr(node, "_inputs", ()):
            visit(child, depth + 1)

    visit(dataset, 0)
    return str(int.from_bytes(digest.digest()[:8], "little") >> 1)


@transformation
def Snapshot(  # noqa: N802 - registered under the name Dataset.snapshot builds
    dataset: Dataset, path: str, compression: str | None = "AUTO", reader_func: Any = None, shard_func: Any = None
) -> Dataset:
    """``Dataset.snapshot(path)``: the elements of the first complete iteration, kept under ``path``.

    A later iteration, in this process or another, reads them from
    ``<path>/<fingerprint>/snapshot.unison-cache`` instead of running the pipeline (what
    ``cache(filename)`` does, one folder per pipeline as TF's). ``compression`` and ``shard_func``
    only shape TF's files and are accepted as such; a ``reader_func`` would reorder the shards
    TF writes, and unison writes one file, so it is refused.
    """
    if reader_func is not None:
        raise ValueError(
            "Dataset.snapshot(reader_func=...) is not supported: unison keeps a snapshot as one file, not "
            "shards to interleave. Reorder after it instead: ds.snapshot(path).shuffle(...) or .interleave(...)."
        )
    if compression is not None and not isinstance(compression, str):
        raise TypeError(f"Dataset.snapshot: compression must be a string or None. Received: {compression!r}")
    from unison.data.cache import Cache

    return Cache(dataset, os.path.join(os.fspath(path), _fingerprint(dataset), "snapshot"))


def snapshot(
    path: str, compression: str | None = "AUTO", reader_func: Any = None, shard_func: Any = None
) -> Callable[[Dataset], Dataset]:
    """``tf.data.experimental.snapshot``: a transformation for ``ds.apply`` (``ds.snapshot(path)``)."""
    return lambda dataset: Snapshot(dataset, path, compression, reader_func, shard_func)
