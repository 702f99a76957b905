"""``tf.data.experimental.dense_to_ragged_batch``: batches whose variable-length components are RaggedTensors.

A component whose ``element_spec`` has an unknown dimension becomes a ``tf.RaggedTensor`` (rows of
their own lengths); components of fully known shape are stacked as dense tensors, as in TF.

Example:
    >>> import unison as tf
    >>> ds = tf.data.Dataset.from_generator(
    ...     lambda: iter([[1, 2], [3]]), output_signature=tf.TensorSpec([None], tf.int32))
    >>> next(iter(ds.apply(tf.data.experimental.dense_to_ragged_batch(2)))).to_list()
    [[1, 2], [3]]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch

from unison.data.context import IterContext
from unison.data.dataset import Dataset
from unison.errors import InvalidArgumentError
from unison.ops import tree
from unison.ops.ragged import RaggedTensor

__all__ = ["dense_to_ragged_batch"]


class _RaggedBatch(Dataset):
    def __init__(self, input_dataset: Dataset, batch_size: int, drop_remainder: bool, row_splits_dtype: Any) -> None:
        self._input, self._inputs = input_dataset, (input_dataset,)
        self._batch, self._drop = int(batch_size), bool(drop_remainder)
        self._splits_dtype = row_splits_dtype
        specs = tree.flatten(input_dataset.element_spec)
        self._ragged = [spec.shape is None or any(d is None for d in spec.shape) for spec in specs]

    def _combine(self, rows: list[Any]) -> Any:
        structure = rows[0]
        columns = list(zip(*(tree.flatten(r) for r in rows)))
        out = []
        for ragged, column in zip(self._ragged, columns):
            parts = [torch.as_tensor(c) for c in column]
            if ragged and parts[0].dim() >= 1:
                values = torch.cat(parts) if parts else torch.zeros(0)
                lengths = torch.tensor([p.shape[0] for p in parts], dtype=torch.int64)
                out.append(RaggedTensor.from_row_lengths(values, lengths))
            else:
                out.append(torch.stack(parts))
        return tree.pack_sequence_as(structure, out)

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        rows: list[Any] = []
        for element in self._input._iter(ctx):
            rows.append(element)
            if len(rows) == self._batch:
                yield self._combine(rows)
                rows = []
        if rows and not self._drop:
            yield self._combine(rows)


def dense_to_ragged_batch(
    batch_size: int, drop_remainder: bool = False, row_splits_dtype: Any = torch.int64
) -> Callable[[Dataset], Dataset]:
    """For ``ds.apply``: batches of ``batch_size`` elements; variable-length components become RaggedTensors."""
    if int(batch_size) <= 0:
        raise InvalidArgumentError(
            None, None, f"dense_to_ragged_batch: batch_size must be > 0. Received: {batch_size}."
        )
    return lambda dataset: _RaggedBatch(dataset, batch_size, drop_remainder, row_splits_dtype)
