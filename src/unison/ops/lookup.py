"""``tf.lookup``: hash tables from keys (strings or integers) to values, as recommenders use them.

Integer keys are looked up with torch kernels (sorted keys + ``searchsorted``); string keys go
through a Python dict (strings are numpy object arrays in unison, so there is no torch kernel
for them). ``StaticVocabularyTable`` sends an out-of-vocabulary key to
``vocab_size + Fingerprint64(key) % num_oov_buckets``, TF's FarmHash bucket (integer keys are
hashed as their decimal strings, as TF does), so the ids match TF's.

Example:
    >>> import unison as tf
    >>> init = tf.lookup.KeyValueTensorInitializer(["a", "b"], [7, 8])
    >>> table = tf.lookup.StaticHashTable(init, default_value=-1)
    >>> table.lookup(tf.constant(["b", "z"])).tolist()
    [8, -1]
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import as_dtype, string, to_tensor
from unison.ops.farmhash import fingerprint64


def _as_bytes(value: Any) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def _tensor(values: Any, dtype: Any = None) -> Any:
    """Keys or values as a torch tensor, or a 1-D-or-more numpy object array of bytes for strings."""
    t = to_tensor(values, dtype)
    if isinstance(t, np.ndarray):
        from unison.ops.string_tensor import StringTensor

        flat = np.asarray(t, dtype=object)
        out = np.empty(flat.shape, dtype=object)
        out.reshape(-1)[:] = [_as_bytes(v) for v in flat.reshape(-1)]
        return StringTensor(out)
    return t


class _Store:
    """Keys -> values with a vectorised lookup; the one store every table here uses."""

    def __init__(self, key_dtype: Any, value_dtype: Any) -> None:
        self.key_dtype, self.value_dtype = key_dtype, value_dtype
        self.text_keys = key_dtype is string
        self.text_values = value_dtype is string
        self.data: dict[Any, Any] = {}
        self._sorted: tuple[torch.Tensor, Any] | None = None

    def put(self, keys: Any, values: Any) -> None:
        k, v = _tensor(keys, self.key_dtype), _tensor(values, self.value_dtype)
        if len(np.asarray(k).reshape(-1)) != len(np.asarray(v).reshape(-1)):
            raise InvalidArgumentError(None, None, "tf.lookup: `keys` and `values` must have the same number of items.")
        items = np.asarray(k).reshape(-1).tolist()
        vals = np.asarray(v).reshape(-1).tolist()
        self.data.update(zip(items, vals))
        self._sorted = None

    def drop(self, keys: Any) -> None:
        for key in np.asarray(_tensor(keys, self.key_dtype)).reshape(-1).tolist():
            self.data.pop(key, None)
        self._sorted = None

    def export(self) -> tuple[Any, Any]:
        keys, vals = list(self.data), list(self.data.values())
        return self._make(keys, self.key_dtype, self.text_keys), self._make(vals, self.value_dtype, self.text_values)

    @staticmethod
    def _make(items: list[Any], dtype: Any, text: bool) -> Any:
        if text:
            from unison.ops.string_tensor import StringTensor

            return StringTensor(np.asarray(items, dtype=object).reshape(-1))
        return torch.tensor(items, dtype=dtype).reshape(-1)

    def get(self, keys: Any, default: Any) -> tuple[Any, Any]:
        """(values, found) in the keys' shape; ``default`` fills the keys not found."""
        k = _tensor(keys, self.key_dtype)
        shape = tuple(np.asarray(k).shape)
        picked: Any
        if self.text_keys:
            flat = np.asarray(k, dtype=object).reshape(-1).tolist()
            found = torch.tensor([key in self.data for key in flat], dtype=torch.bool)
            picked = [self.data.get(key) for key in flat]
        else:
            if self._sorted is None:
                sk = torch.tensor(list(self.data), dtype=self.key_dtype)
                order = torch.argsort(sk)
                vals = self._make(list(self.data.values()), self.value_dtype, self.text_values)
                self._sorted = (sk[order], vals[order.numpy()] if self.text_values else vals[order])
            sk, sv = self._sorted
            q = k.reshape(-1)
            pos = torch.searchsorted(sk, q).clamp(max=max(len(sk) - 1, 0))
            found = (sk[pos] == q) if len(sk) else torch.zeros(len(q), dtype=torch.bool)
            picked = None if not len(sk) else (sv[pos.numpy()] if self.text_values else sv[pos])
        fill = _tensor(default, self.value_dtype)
        if self.text_values:
            out = np.asarray(picked if picked is not None else [None] * len(found), dtype=object)
            out = np.where(found.numpy(), out, np.broadcast_to(np.asarray(fill, dtype=object).reshape(-1), out.shape))
            from unison.ops.string_tensor import StringTensor

            return StringTensor(out.reshape(shape)), found.reshape(shape)
        if isinstance(picked, list):
            vals_t = torch.tensor([0 if p is None else p for p in picked], dtype=self.value_dtype)
        else:
            vals_t = picked if picked is not None else torch.zeros(len(found), dtype=self.value_dtype)
        fill_t = fill.to(self.value_dtype).reshape(-1) if isinstance(fill, torch.Tensor) else fill
        return torch.where(found, vals_t, fill_t).reshape(shape), found.reshape(shape)


class KeyValueTensorInitializer:
    """``tf.lookup.KeyValueTensorInitializer``: a table's contents from a keys and a values tensor."""

    def __init__(
        self, keys: Any, values: Any, key_dtype: Any = None, value_dtype: Any = None, name: Any = None
    ) -> None:
        self._keys = _tensor(keys, key_dtype)
        self._values = _tensor(values, value_dtype)
        if len(np.asarray(self._keys).reshape(-1)) != len(np.asarray(self._values).reshape(-1)):
            raise InvalidArgumentError(
                None,
                None,
                "tf.lookup.KeyValueTensorInitializer: `keys` and `values` must have the same number of items. "
                f"Received {np.asarray(self._keys).size} keys and {np.asarray(self._values).size} values.",
            )
        self.key_dtype = string if isinstance(self._keys, np.ndarray) else self._keys.dtype
        self.value_dtype = string if isinstance(self._values, np.ndarray) else self._values.dtype

    def _contents(self) -> tuple[Any, Any]:
        return self._keys, self._values


class TextFileIndex:
    """``tf.lookup.TextFileIndex``: the special column numbers of ``TextFileInitializer``."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


class TextFileInitializer:
    """``tf.lookup.TextFileInitializer``: keys and values from the columns of a text file
    (``TextFileIndex.WHOLE_LINE`` is the line, ``TextFileIndex.LINE_NUMBER`` its number)."""

    def __init__(
        self,
        filename: Any,
        key_dtype: Any,
        key_index: int,
        value_dtype: Any,
        value_index: int,
        vocab_size: int | None = None,
        delimiter: str = "\t",
        name: Any = None,
        value_index_offset: int = 0,
    ) -> None:
        self.filename = filename.decode() if isinstance(filename, bytes) else str(filename)
        self.key_dtype, self.value_dtype = as_dtype(key_dtype), as_dtype(value_dtype)
        self.key_index, self.value_index = int(key_index), int(value_index)
        self.vocab_size, self.delimiter, self.value_index_offset = vocab_size, delimiter, int(value_index_offset)
        for which, index, dtype in (
            ("key", self.key_index, self.key_dtype),
            ("value", self.value_index, self.value_dtype),
        ):
            if index == TextFileIndex.LINE_NUMBER and dtype not in (torch.int64, torch.int32):
                raise ValueError(
                    f"tf.lookup.TextFileInitializer: a LINE_NUMBER {which} must be int64. Received {dtype}"
                )

    def _contents(self) -> tuple[Any, Any]:
        with open(self.filename, "rb") as f:
            lines = f.read().decode("utf-8").splitlines()
        if self.vocab_size is not None:
            lines = lines[: int(self.vocab_size)]

        def column(index: int, dtype: Any) -> Any:
            if index == TextFileIndex.LINE_NUMBER:
                return torch.arange(len(lines), dtype=dtype) + self.value_index_offset
            cells = (
                lines if index == TextFileIndex.WHOLE_LINE else [_cell(line, index, self.delimiter) for line in lines]
            )
            if dtype is string:
                return _tensor(np.asarray(cells, dtype=object).reshape(-1))
            return torch.tensor([float(c) if dtype.is_floating_point else int(c) for c in cells], dtype=dtype)

        return column(self.key_index, self.key_dtype), column(self.value_index, self.value_dtype)


def _cell(line: str, index: int, delimiter: str) -> str:
    parts = line.split(delimiter)
    if index >= len(parts):
        raise InvalidArgumentError(
            None, None, f"tf.lookup.TextFileInitializer: line {line!r} has no column {index} (delimiter {delimiter!r})."
        )
    return parts[index]


class _Table:
    """What every table answers: ``lookup``, ``size``, ``export``, ``key_dtype``, ``value_dtype``."""

    _store: _Store
    _default: Any

    @property
    def key_dtype(self) -> Any:
        return self._store.key_dtype

    @property
    def value_dtype(self) -> Any:
        return self._store.value_dtype

    @property
    def default_value(self) -> Any:
        return self._default

    def lookup(self, keys: Any, name: Any = None) -> Any:
        """The value of each key (``default_value`` for a missing one), in the keys' shape."""
        return self._store.get(keys, self._default)[0]

    def __getitem__(self, keys: Any) -> Any:
        return self.lookup(keys)

    def size(self, name: Any = None) -> torch.Tensor:
        """The number of entries (int64)."""
        return torch.tensor(len(self._store.data), dtype=torch.int64)

    def export(self, name: Any = None) -> tuple[Any, Any]:
        """``(keys, values)`` of every entry."""
        return self._store.export()


class StaticHashTable(_Table):
    """``tf.lookup.StaticHashTable``: an immutable table filled by an initializer."""

    def __init__(
        self, initializer: Any, default_value: Any, name: Any = None, experimental_is_anonymous: bool = False
    ) -> None:
        keys, values = initializer._contents()
        self._store = _Store(initializer.key_dtype, initializer.value_dtype)
        self._store.put(keys, values)
        self._default = _tensor(default_value, initializer.value_dtype)
        self.resource_handle = None


class StaticVocabularyTable(_Table):
    """``tf.lookup.StaticVocabularyTable``: vocabulary ids, with ``num_oov_buckets`` ids past the
    vocabulary for unknown keys (TF's FarmHash ``Fingerprint64`` bucket)."""

    def __init__(
        self,
        initializer: Any,
        num_oov_buckets: int,
        lookup_key_dtype: Any = None,
        name: Any = None,
        experimental_is_anonymous: bool = False,
    ) -> None:
        if int(num_oov_buckets) <= 0:
            raise ValueError(
                f"tf.lookup.StaticVocabularyTable: num_oov_buckets must be > 0. Received: {num_oov_buckets}"
            )
        if initializer is not None and initializer.value_dtype != torch.int64:
            raise TypeError(
                f"tf.lookup.StaticVocabularyTable: the initializer's values must be int64 ids. "
                f"Received value_dtype={initializer.value_dtype}"
            )
        self.num_oov_buckets = int(num_oov_buckets)
        key_dtype = initializer.key_dtype if initializer is not None else as_dtype(lookup_key_dtype or string)
        self._store = _Store(key_dtype, torch.int64)
        if initializer is not None:
            self._store.put(*initializer._contents())
        self._default = torch.tensor(-1, dtype=torch.int64)

    def size(self, name: Any = None) -> torch.Tensor:
        """The vocabulary size plus the OOV buckets (int64)."""
        return torch.tensor(len(self._store.data) + self.num_oov_buckets, dtype=torch.int64)

    def lookup(self, keys: Any, name: Any = None) -> torch.Tensor:
        """The id of each key: its vocabulary id, or ``vocab_size + Fingerprint64(key) % num_oov_buckets``."""
        ids, found = self._store.get(keys, -1)
        flat = np.asarray(_tensor(keys, self._store.key_dtype), dtype=object).reshape(-1)
        missing = (~found).reshape(-1).nonzero().reshape(-1)
        if len(missing):
            texts = [_as_bytes(v) if self._store.text_keys else str(int(v)).encode() for v in flat[missing.numpy()]]
            buckets = torch.tensor([fingerprint64(t) % self.num_oov_buckets for t in texts], dtype=torch.int64)
            ids = ids.reshape(-1).clone()
            ids[missing] = buckets + len(self._store.data)
        return ids.reshape(found.shape)


class _MutableTable(_Table):
    def insert(self, keys: Any, values: Any, name: Any = None) -> None:
        """Add or overwrite entries."""
        self._store.put(keys, values)

    def remove(self, keys: Any, name: Any = None) -> None:
        """Remove entries (missing keys are ignored)."""
        self._store.drop(keys)

    # TF's mutable tables take dynamic_default_values before name
    def lookup(self, keys: Any, dynamic_default_values: Any = None, name: Any = None) -> Any:  # type: ignore[override]
        """The value of each key; ``dynamic_default_values`` (the keys' shape) replaces the default."""
        if dynamic_default_values is None:
            return self._store.get(keys, self._default)[0]
        values, found = self._store.get(keys, self._default)
        dyn = _tensor(dynamic_default_values, self._store.value_dtype)
        if isinstance(values, np.ndarray):
            return type(values)(np.where(found.numpy(), values, dyn))
        return torch.where(found, values, dyn)


class MutableHashTable(_MutableTable):
    """``tf.lookup.experimental.MutableHashTable``: a table that grows with ``insert`` and shrinks with ``remove``."""

    def __init__(
        self,
        key_dtype: Any,
        value_dtype: Any,
        default_value: Any,
        name: str = "MutableHashTable",
        checkpoint: bool = True,
        experimental_is_anonymous: bool = False,
    ) -> None:
        self._store = _Store(as_dtype(key_dtype), as_dtype(value_dtype))
        self._default = _tensor(default_value, self._store.value_dtype)


class DenseHashTable(_MutableTable):
    """``tf.lookup.experimental.DenseHashTable``: a mutable table with reserved ``empty_key`` and
    ``deleted_key`` (which may not be inserted)."""

    def __init__(
        self,
        key_dtype: Any,
        value_dtype: Any,
        default_value: Any,
        empty_key: Any,
        deleted_key: Any,
        initial_num_buckets: Any = None,
        name: str = "MutableDenseHashTable",
        checkpoint: bool = True,
        experimental_is_anonymous: bool = False,
    ) -> None:
        self._store = _Store(as_dtype(key_dtype), as_dtype(value_dtype))
        self._default = _tensor(default_value, self._store.value_dtype)
        self._reserved = {
            np.asarray(_tensor(k, self._store.key_dtype)).reshape(-1)[0] for k in (empty_key, deleted_key)
        }
        if len(self._reserved) != 2:
            raise ValueError("tf.lookup.experimental.DenseHashTable: empty_key and deleted_key must differ.")

    def _check_keys(self, keys: Any) -> None:
        if self._reserved & set(np.asarray(_tensor(keys, self._store.key_dtype)).reshape(-1).tolist()):
            raise InvalidArgumentError(
                None, None, "tf.lookup.experimental.DenseHashTable: a key equals empty_key or deleted_key."
            )

    def insert(self, keys: Any, values: Any, name: Any = None) -> None:
        self._check_keys(keys)
        super().insert(keys, values)

    def remove(self, keys: Any, name: Any = None) -> None:
        self._check_keys(keys)
        super().remove(keys)


experimental = types.SimpleNamespace(DenseHashTable=DenseHashTable, MutableHashTable=MutableHashTable)

__all__ = [
    "KeyValueTensorInitializer",
    "StaticHashTable",
    "StaticVocabularyTable",
    "TextFileIndex",
    "TextFileInitializer",
    "experimental",
]


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.lookup", name)
