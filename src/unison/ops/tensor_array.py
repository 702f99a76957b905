"""``tf.TensorArray`` with TF's eager semantics: a list of same-shaped tensors of one dtype.

As in TF eager, ``write``/``unstack``/``scatter``/``split`` change the array and return it (keep
using the returned value, as TF programs do), an element never written (or already read: TF's
default ``clear_after_read``) reads as zeros of the element shape, and the element shape is fixed by the first write (``infer_shape=True``).
``stack``/``gather``/``concat`` are ``torch.stack``/``torch.cat`` over the elements, so gradients
flow through them.

Example:
    >>> import unison as tf
    >>> ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    >>> for i in range(3):
    ...     ta = ta.write(i, tf.constant([float(i), 1.0]))
    >>> ta.stack().tolist(), int(ta.size())
    ([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]], 3)
"""

from __future__ import annotations

from typing import Any

import torch

from unison.errors import InvalidArgumentError, OutOfRangeError
from unison.ops.dtypes import as_dtype, to_tensor


class TensorArray:
    """``tf.TensorArray(dtype, size=None, dynamic_size=None, ..., element_shape=None)``."""

    def __init__(
        self,
        dtype: Any,
        size: Any = None,
        dynamic_size: bool | None = None,
        clear_after_read: bool | None = None,
        tensor_array_name: str | None = None,
        handle: Any = None,
        flow: Any = None,
        infer_shape: bool = True,
        element_shape: Any = None,
        colocate_with_first_write_call: bool = True,
        name: str | None = None,
    ) -> None:
        self._dtype = as_dtype(dtype)
        if size is None and not dynamic_size:
            raise ValueError("tf.TensorArray needs `size` (or dynamic_size=True). Received: size=None")
        self._items: list[torch.Tensor | None] = [None] * int(to_tensor(size if size is not None else 0))
        self._dynamic = bool(dynamic_size)
        # TF's default: a read element is released (it reads as zeros afterwards)
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = bool(infer_shape)
        self._element_shape: tuple[int, ...] | None = (
            None if element_shape is None or getattr(element_shape, "rank", 0) is None else _dims(element_shape)
        )

    @property
    def dtype(self) -> Any:
        return self._dtype

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic

    @property
    def element_shape(self) -> Any:
        """The element shape as a ``tf.TensorShape`` (unknown until set or first written)."""
        from unison.ops.control_flow import TensorShape

        return TensorShape(None if self._element_shape is None else list(self._element_shape))

    @property
    def handle(self) -> TensorArray:
        return self

    @property
    def flow(self) -> TensorArray:
        return self

    def size(self, name: str | None = None) -> torch.Tensor:
        """The number of elements (int32, as TF)."""
        return torch.tensor(len(self._items), dtype=torch.int32)

    def _value(self, value: Any, what: str) -> torch.Tensor:
        t = to_tensor(value)
        if isinstance(t, torch.Tensor) and t.dtype != self._dtype:
            if isinstance(value, torch.Tensor):
                raise InvalidArgumentError(
                    None,
                    None,
                    f"TensorArray dtype is {_name(self._dtype)} but Op is trying to write dtype {_name(t.dtype)} "
                    f"(tf.TensorArray.{what}); cast the value first (tf.cast).",
                )
            t = to_tensor(value, self._dtype)
        return t

    def _check_shape(self, shape: tuple[int, ...]) -> None:
        if self._element_shape is not None and shape != self._element_shape:
            raise ValueError(f"Incompatible shape for value ({shape}), expected ({self._element_shape})")
        if self._infer_shape and self._element_shape is None:
            self._element_shape = shape

    def _put(self, index: int, value: torch.Tensor, op: str) -> None:
        if index < 0:
            raise InvalidArgumentError(None, None, f"tf.TensorArray.{op}: index {index} is negative.")
        if index >= len(self._items):
            if not self._dynamic:
                raise OutOfRangeError(
                    None,
                    None,
                    f"Tried to write to index {index} but array is not resizeable and size is: {len(self._items)} "
                    f"(tf.TensorArray.{op}); create it with dynamic_size=True to grow it.",
                )
            self._items.extend([None] * (index + 1 - len(self._items)))
        self._check_shape(tuple(value.shape))
        self._items[index] = value

    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        """Set element ``index`` (growing a ``dynamic_size`` array); returns the array."""
        self._put(int(to_tensor(index)), self._value(value, "write"), "write")
        return self

    def _zeros(self) -> torch.Tensor:
        if self._element_shape is None:
            raise ValueError(
                "tf.TensorArray: an element was never written and the element shape is unknown; write it "
                "or pass element_shape."
            )
        return torch.zeros(self._element_shape, dtype=self._dtype)

    def read(self, index: Any, name: str | None = None) -> torch.Tensor:
        """Element ``index`` (zeros of the element shape if never written)."""
        i = int(to_tensor(index))
        if not 0 <= i < len(self._items):
            raise OutOfRangeError(
                None, None, f"Tried to read from index {i} but array size is: {len(self._items)} (tf.TensorArray.read)"
            )
        item = self._items[i]
        if item is None:
            return self._zeros()
        if self._clear_after_read:
            self._items[i] = None
        return item

    def _all(self) -> list[torch.Tensor]:
        return [self._zeros() if t is None else t for t in self._items]

    def stack(self, name: str | None = None) -> torch.Tensor:
        """All elements stacked along a new first axis."""
        if not self._items:
            return torch.zeros((0,) + (self._element_shape or ()), dtype=self._dtype)
        return torch.stack(self._all())

    def gather(self, indices: Any, name: str | None = None) -> torch.Tensor:
        """The elements at ``indices``, stacked."""
        idx = [int(i) for i in to_tensor(indices).reshape(-1).tolist()]
        if not idx:
            return torch.zeros((0,) + (self._element_shape or ()), dtype=self._dtype)
        items = self._all()
        for i in idx:
            if not 0 <= i < len(items):
                raise OutOfRangeError(
                    None, None, f"tf.TensorArray.gather: index {i} is out of range for size {len(items)}."
                )
        return torch.stack([items[i] for i in idx])

    def concat(self, name: str | None = None) -> torch.Tensor:
        """All elements concatenated along their first axis."""
        if not self._items:
            return torch.zeros((0,) + (self._element_shape or ())[1:], dtype=self._dtype)
        return torch.cat(self._all())

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        """Element ``i`` becomes ``value[i]``; returns the array."""
        t = self._value(value, "unstack")
        for i in range(t.shape[0]):
            self._put(i, t[i], "unstack")
        return self

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        """Element ``indices[k]`` becomes ``value[k]``; returns the array."""
        t = self._value(value, "scatter")
        for k, i in enumerate(to_tensor(indices).reshape(-1).tolist()):
            self._put(int(i), t[k], "scatter")
        return self

    def split(self, value: Any, lengths: Any, name: str | None = None) -> TensorArray:
        """Element ``i`` becomes the next ``lengths[i]`` rows of ``value``; returns the array."""
        t = self._value(value, "split")
        sizes = [int(n) for n in to_tensor(lengths).reshape(-1).tolist()]
        if len(sizes) != len(self._items) and not self._dynamic:
            raise InvalidArgumentError(
                None,
                None,
                f"TensorArray's size is not equal to the size of lengths ({len(self._items)} vs. {len(sizes)}), "
                "and the TensorArray is not marked as dynamically resizeable (tf.TensorArray.split).",
            )
        if sum(sizes) != t.shape[0]:
            raise InvalidArgumentError(
                None, None, f"tf.TensorArray.split: `lengths` sum to {sum(sizes)}, the value has {t.shape[0]} rows."
            )
        saved_infer, self._infer_shape = self._infer_shape, False
        try:
            for i, piece in enumerate(torch.split(t, sizes)):
                self._put(i, piece, "split")
        finally:
            self._infer_shape = saved_infer
        return self

    def identity(self) -> TensorArray:
        return self

    def close(self, name: str | None = None) -> None:
        """Release the elements."""
        self._items = []

    def mark_used(self) -> None:
        """Nothing to do in eager mode (TF's graph-mode usage check)."""

    def __repr__(self) -> str:
        return f"<TensorArray dtype={_name(self._dtype)} size={len(self._items)}>"


def _dims(shape: Any) -> tuple[int, ...] | None:
    """A fully known shape as a tuple; ``None`` when a dimension is unknown (TF then infers it)."""
    dims = shape.as_list() if hasattr(shape, "as_list") else list(shape)
    if any(d is None for d in dims):
        return None
    return tuple(int(d) for d in dims)


def _name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


__all__ = ["TensorArray"]
