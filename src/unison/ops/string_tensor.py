"""String tensors: numpy object arrays of ``str``/``bytes`` with TF's tensor face.

torch has no strings, so unison's string tensors are numpy arrays. A plain array lacks what TF
programs call on a batch of text (``text_batch.numpy()``, ``print(text_batch)``,
``text_batch[0].numpy()``): :class:`StringTensor` is a small ``np.ndarray`` subclass that adds it,
so every numpy function and every unison function that takes strings keeps working on it.

- ``.numpy()`` gives the plain numpy array (a 0-d one gives its ``bytes``/``str``, as TF does);
- ``.dtype`` is numpy's ``object`` dtype, which compares equal to ``tf.string``;
- an element read out (``t[0]``, ``for s in t``) is a 0-d string tensor, as in TF (its
  ``.numpy()`` is the ``bytes``/``str``; ``.tolist()`` and ``.numpy()`` give plain items);
- ``==``/``!=`` give a torch ``bool`` tensor, as TF's comparisons give a ``tf.bool`` tensor;
- printing shows TF's form: ``tf.Tensor([b'a' b'b'], shape=(2,), dtype=string)``.

The data pipeline hands its string elements out as :class:`StringTensor` (``TextLineDataset``,
``text_dataset_from_directory``), ``tf.constant`` makes one from strings, and ``tf.strings``
functions return one.

Example:
    >>> import unison as tf
    >>> t = tf.constant([b"a", b"bc"])
    >>> t.numpy().tolist(), t.shape, t.dtype == tf.string
    ([b'a', b'bc'], (2,), True)
    >>> print(t)
    tf.Tensor([b'a' b'bc'], shape=(2,), dtype=string)
    >>> t[1].numpy()
    b'bc'
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from unison.ops.tensor_repr import numpy_text

__all__ = ["StringTensor", "as_string_tensor"]


class StringTensor(np.ndarray):
    """A numpy object array of strings with TF's tensor methods (see the module notes)."""

    def __new__(cls, value: Any) -> StringTensor:
        arr = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=object)
        if arr.dtype.kind in "US":
            arr = arr.astype(object)
        return arr.view(cls)

    def numpy(self) -> Any:
        """The values as TF gives them: ``bytes`` (``str`` items UTF-8 encoded), in a numpy object
        array (the ``bytes`` item of a 0-d tensor), so ``t.numpy().decode("utf-8")`` works as in TF."""
        plain = _as_bytes(self.view(np.ndarray))
        return plain.item() if plain.ndim == 0 else plain

    def __getitem__(self, index: Any) -> Any:
        out = super().__getitem__(index)
        if isinstance(out, np.ndarray):
            return out
        scalar = np.empty((), dtype=object)  # an element is a scalar string tensor, as in TF
        scalar[()] = out
        return scalar.view(StringTensor)

    def __iter__(self) -> Iterator[Any]:
        if self.ndim == 0:
            raise TypeError("Cannot iterate over a scalar string tensor.")
        for i in range(len(self)):
            yield self[i]

    def __eq__(self, other: Any) -> Any:
        return _compare(np.equal, self, other)

    def __ne__(self, other: Any) -> Any:
        return _compare(np.not_equal, self, other)

    __hash__ = None

    def __repr__(self) -> str:
        plain = _as_bytes(self.view(np.ndarray))
        values = repr(plain.item() if plain.ndim == 0 else plain)
        return f"<tf.Tensor: shape={_shape(plain)}, dtype=string, numpy={numpy_text(values)}>"

    def __str__(self) -> str:
        plain = _as_bytes(self.view(np.ndarray))
        values = repr(plain.item()) if plain.ndim == 0 else str(plain)
        return f"tf.Tensor({numpy_text(values)}, shape={_shape(plain)}, dtype=string)"

    def __format__(self, format_spec: str) -> str:
        # TF formats a tensor in an f-string as its numpy value (f"{t}" -> "[b'a' b'b']")
        return _as_bytes(self.view(np.ndarray)).__format__(format_spec)


def _shape(arr: np.ndarray) -> str:
    return "(" + ", ".join(str(d) for d in arr.shape) + ("," if arr.ndim == 1 else "") + ")"


def _as_bytes(arr: np.ndarray) -> np.ndarray:
    """``arr`` with its ``str`` items UTF-8 encoded (TF's strings are bytes); others as they are."""
    if arr.dtype != object or not any(isinstance(v, str) for v in arr.reshape(-1).tolist()):
        return arr
    out = np.empty(arr.shape, dtype=object)
    out.reshape(-1)[:] = [v.encode("utf-8") if isinstance(v, str) else v for v in arr.reshape(-1).tolist()]
    return out


def _compare(op: Any, a: StringTensor, b: Any) -> Any:
    other = b.view(np.ndarray) if isinstance(b, np.ndarray) else b
    if isinstance(other, np.ndarray) and other.ndim == 0 and other.dtype == object:
        other = other.item()  # numpy compares a 0-d object array's item, not the array
    # "a" and b"a" are the same TF string
    if isinstance(other, str):
        other = other.encode("utf-8")
    elif isinstance(other, np.ndarray) and other.dtype.kind in "OU":
        other = _as_bytes(other.astype(object))
    result = op(_as_bytes(a.view(np.ndarray)), other)
    if isinstance(result, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(result, dtype=np.bool_))
    return torch.tensor(bool(result))


def as_string_tensor(value: Any) -> Any:
    """``value`` as a :class:`StringTensor` when it is a numpy array of strings, else unchanged."""
    if isinstance(value, np.ndarray) and not isinstance(value, StringTensor) and value.dtype.kind in "OUS":
        if value.dtype.kind != "O" or value.size == 0 or isinstance(value.flat[0], (str, bytes)):
            return StringTensor(value)
    return value
