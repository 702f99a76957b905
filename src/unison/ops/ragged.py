"""``tf.RaggedTensor`` as ``tf.strings`` returns it: rows of different lengths, one ragged axis.

TF's ``tf.strings.split``/``unicode_split``/``unicode_decode``/``bytes_split`` of a batch of
strings return a ``RaggedTensor`` whose row ``i`` holds the pieces of string ``i``. unison keeps
TF's layout: ``values`` (every row's items, concatenated: a numpy object array of strings, or a
torch tensor of numbers) and ``row_splits`` (int64, row ``i`` is ``values[row_splits[i]:row_splits[i+1]]``).
Only one ragged axis (the rows of a 1-D batch) is supported; there are no ragged kernels (math on
a ``RaggedTensor`` is not supported): use ``to_tensor()`` (padded) or iterate the rows.

Example:
    >>> import unison as tf
    >>> rt = tf.strings.split(["a b", "c"])
    >>> rt.to_list()
    [['a', 'b'], ['c']]
    >>> rt.row_lengths().tolist(), rt.to_tensor(default_value="").tolist()
    ([2, 1], [['a', 'b'], ['c', '']])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch


class RaggedTensor:
    """Rows of different lengths: ``values`` cut by ``row_splits`` (TF's ``RaggedTensor``, one ragged axis).

    Build one with :meth:`from_row_splits` or :meth:`from_row_lengths` (TF's constructors);
    ``tf.strings`` functions return them for batches.
    """

    def __init__(self, values: Any, row_splits: torch.Tensor) -> None:
        splits = torch.as_tensor(row_splits, dtype=torch.int64)
        n = len(values)
        if splits.ndim != 1 or len(splits) < 1 or int(splits[0]) != 0 or int(splits[-1]) != n:
            raise ValueError(
                "row_splits must be a 1-D int64 vector that starts at 0 and ends at len(values) "
                f"({n}). Received: row_splits={splits.tolist()}"
            )
        if bool((splits[1:] < splits[:-1]).any()):
            raise ValueError(f"row_splits must be sorted in ascending order. Received: row_splits={splits.tolist()}")
        self.values = values
        self.row_splits = splits

    @classmethod
    def from_row_splits(
        cls, values: Any, row_splits: Any, name: str | None = None, validate: bool = True
    ) -> RaggedTensor:
        """``tf.RaggedTensor.from_row_splits``: row ``i`` is ``values[row_splits[i]:row_splits[i + 1]]``."""
        return cls(_as_values(values), torch.as_tensor(np.asarray(row_splits), dtype=torch.int64))

    @classmethod
    def from_row_lengths(
        cls, values: Any, row_lengths: Any, name: str | None = None, validate: bool = True
    ) -> RaggedTensor:
        """``tf.RaggedTensor.from_row_lengths``: row ``i`` holds the next ``row_lengths[i]`` values."""
        lengths = torch.as_tensor(np.asarray(row_lengths), dtype=torch.int64)
        return cls(_as_values(values), torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)]))

    @property
    def flat_values(self) -> Any:
        """Every row's items, concatenated (TF's ``flat_values``; the same as ``values`` here)."""
        return self.values

    @property
    def dtype(self) -> Any:
        """``tf.string`` for strings, else the torch dtype of the values."""
        from unison.ops.dtypes import string

        return string if isinstance(self.values, np.ndarray) else self.values.dtype

    @property
    def shape(self) -> tuple[int, None]:
        """``(nrows, None)``: the row axis is ragged."""
        return (self.nrows(), None)

    @property
    def ragged_rank(self) -> int:
        return 1

    def nrows(self) -> int:
        """The number of rows."""
        return len(self.row_splits) - 1

    def row_lengths(self) -> torch.Tensor:
        """The length of each row (int64)."""
        return self.row_splits[1:] - self.row_splits[:-1]

    def value_rowids(self) -> torch.Tensor:
        """The row of each value (int64)."""
        return torch.repeat_interleave(torch.arange(self.nrows()), self.row_lengths())

    def __len__(self) -> int:
        return self.nrows()

    def __getitem__(self, i: int) -> Any:
        if not isinstance(i, (int, np.integer)):
            raise TypeError(f"A RaggedTensor is indexed by a row number. Received: {i!r}; use to_tensor() first.")
        n = self.nrows()
        if not -n <= int(i) < n:
            raise IndexError(f"Row {i} is out of range for a RaggedTensor of {n} rows.")
        i = int(i) % n
        return self.values[int(self.row_splits[i]) : int(self.row_splits[i + 1])]

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(self.nrows()))

    def to_list(self) -> list[list[Any]]:
        """The rows as nested Python lists (strings stay ``str``/``bytes``)."""
        return [row.tolist() for row in self]

    def numpy(self) -> np.ndarray:
        """A 1-D numpy object array whose items are the rows (as TF's ``RaggedTensor.numpy()``)."""
        out = np.empty(self.nrows(), dtype=object)
        for i, row in enumerate(self):
            out[i] = row if isinstance(row, np.ndarray) else row.numpy()
        return out

    def to_tensor(self, default_value: Any = None, shape: Sequence[int | None] | None = None) -> Any:
        """Rows padded with ``default_value`` (``""``/``b""`` or 0 by default) to the longest, or to ``shape``.

        Returns a numpy object array for strings, a torch tensor for numbers; rows longer than
        ``shape[1]`` are cut.
        """
        lengths = self.row_lengths().tolist()
        rows = self.nrows() if shape is None or shape[0] is None else int(shape[0])
        width = max(lengths, default=0) if shape is None or shape[-1] is None else int(shape[-1])
        if isinstance(self.values, np.ndarray):
            fill = default_value
            if fill is None:
                fill = b"" if self.values.size and isinstance(self.values[0], bytes) else ""
            out: Any = np.full((rows, width), fill, dtype=object)
        else:
            out = torch.full((rows, width), 0 if default_value is None else default_value, dtype=self.values.dtype)
        for i in range(min(rows, self.nrows())):
            row = self[i][:width]
            out[i, : len(row)] = row
        return out

    def __repr__(self) -> str:
        return f"<tf.RaggedTensor {self.to_list()}>"


def _as_values(values: Any) -> Any:
    if isinstance(values, torch.Tensor):
        return values
    arr = np.asarray(values, dtype=object if _is_strings(values) else None)
    if arr.dtype == object:
        return arr
    return torch.from_numpy(np.ascontiguousarray(arr))


def _is_strings(values: Any) -> bool:
    arr = np.asarray(values)
    return arr.dtype.kind in "OUS"


__all__ = ["RaggedTensor"]
