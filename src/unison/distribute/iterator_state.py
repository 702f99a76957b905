"""A checkpointable distributed iterator: ``tf.train.Checkpoint(iterator=iter(dist_dataset))``.

``iter()`` of ``strategy.experimental_distribute_dataset(ds)`` or of
``strategy.distribute_datasets_from_function(fn)`` over a ``tf.data`` pipeline returns a
:class:`PipelineIterator`. Its ``state_dict`` is the pipeline's exact position
(:class:`unison.data.iterator_state.PipelinePosition`): the seed base of the unseeded shuffles,
the shuffle counters when the iteration began and the batches consumed. Restoring rebuilds the
iteration with that seed and those counters and draws the consumed batches again, so the next
batch, shuffle buffer and random stream included, is the one the saved iterator would have given
(TF's documented semantics; TF restores buffers from the file, unison replays them).

The position is counted in steps of global batches, so a checkpoint written by N replicas
restores on M when the dataset is distributed by batch (``experimental_distribute_dataset``).

Example:
    >>> import torch, unison as tf
    >>> strategy = tf.distribute.get_strategy()
    >>> ds = strategy.experimental_distribute_dataset(tf.data.Dataset.range(12).shuffle(12).batch(4))
    >>> it = iter(ds)
    >>> _ = next(it)
    >>> state = it.state_dict()
    >>> expected = next(it).tolist()
    >>> again = iter(ds)
    >>> again.load_state_dict(state)
    >>> next(again).tolist() == expected
    True
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch

from unison.data.iterator_state import counters, set_counters
from unison.errors import EndOfSequenceError

_END = object()


class DistributedIterator:
    """``iter(distributed_dataset)``: ``next()``, ``get_next()``, ``get_next_as_optional()`` (TF's)."""

    def __init__(self, batches: Iterator[Any], element_spec: Any = None) -> None:
        self._batches = batches
        self._element_spec = element_spec

    @property
    def element_spec(self) -> Any:
        """The per-replica spec of the elements (TF's ``DistributedIterator.element_spec``)."""
        if self._element_spec is None:
            raise AttributeError(
                "element_spec is only known for the iterator of a tf.data Dataset (a list, a DataLoader or "
                "a generator has no spec). Build the input with tf.data.Dataset to get one."
            )
        return self._element_spec

    def __iter__(self) -> DistributedIterator:
        return self

    def __next__(self) -> Any:
        return next(self._batches)

    def get_next(self) -> Any:
        """This replica's next batch; at the end ``tf.errors.OutOfRangeError`` (also a ``StopIteration``)."""
        try:
            return next(self._batches)
        except StopIteration:
            raise EndOfSequenceError("End of sequence") from None

    def get_next_as_optional(self) -> Any:
        """This replica's next batch as an ``Optional`` (``has_value()`` is False at the end)."""
        from unison.data.dataset import Optional

        try:
            return Optional.from_value(next(self._batches))
        except StopIteration:
            return Optional.empty()

    def close(self) -> None:
        """Stop the pipeline's threads now (they also stop when the iterator is collected)."""
        close = getattr(self._batches, "close", None)
        if close is not None:
            close()


class PipelineIterator(DistributedIterator):
    """A :class:`DistributedIterator` over a ``tf.data`` pipeline whose position can be saved.

    Args:
        make: ``make(seed_base)`` starts an iteration and returns this replica's batches.
        pipeline: the ``tf.data`` dataset (its shuffle counters are part of the position).
        seed_base: the seed base of this iteration's unseeded shuffles.
        element_spec: the per-replica element spec.
    """

    restores_own_position = True  # tf.train.Checkpoint hands it its state: it checks the pipeline itself

    def __init__(
        self, make: Callable[[int], Iterator[Any]], pipeline: Any, seed_base: int, element_spec: Any = None
    ) -> None:
        self._make, self._pipeline = make, pipeline
        self._seed_base = int(seed_base)
        self._start = counters(pipeline)
        self._consumed = 0
        super().__init__(self._counted(make(self._seed_base)), element_spec)

    def _counted(self, batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            self._consumed += 1
            yield batch

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The exact position: seed base, shuffle counters at the start, batches consumed."""
        return {
            "seed_base": torch.tensor(self._seed_base, dtype=torch.int64),
            "counters": torch.tensor(self._start, dtype=torch.int64),
            "consumed": torch.tensor(self._consumed, dtype=torch.int64),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue at a saved position (replay the saved iteration up to it).

        Raises:
            ValueError: the state comes from another pipeline (another number of shuffle
                steps), or this dataset ends before the saved position.
        """
        try:
            seed = int(state["seed_base"])
            saved = [int(c) for c in torch.as_tensor(state["counters"]).reshape(-1).tolist()]
            consumed = int(state["consumed"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(
                f"The checkpoint's distributed iterator state is not one this iterator wrote ({exc}). "
                "Restore it into iter() of the same distributed dataset."
            ) from exc
        before = counters(self._pipeline)
        set_counters(self._pipeline, saved, where="tf.train.Checkpoint(iterator=...)")
        self.close()
        self._seed_base, self._start, self._consumed = seed, saved, 0
        self._batches = self._counted(self._make(seed))
        for done in range(consumed):
            if next(self._batches, _END) is _END:
                raise ValueError(
                    f"The checkpoint's iterator had consumed {consumed} batches, but this distributed dataset "
                    f"ends after {done}. Restore it into an iterator of the same dataset."
                )
        # Iterations started after this one still draw new orders (never one already used).
        now = counters(self._pipeline)
        set_counters(self._pipeline, [max(a, b) for a, b in zip(now, before)], where="tf.train.Checkpoint")


__all__ = ["PipelineIterator"]
