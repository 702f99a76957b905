"""``TensorSpec``: the shape and dtype of one component of an element (TF's ``tf.TensorSpec``).

A dimension of ``None`` matches any size. ``dtype`` is a torch dtype, or ``"string"`` for
string components (held as numpy arrays). TF dtype names (``"float32"``, ``"int64"``) are
accepted and turned into torch dtypes.

Example:
    >>> import torch
    >>> spec = TensorSpec(shape=(None, 2), dtype=torch.float32)
    >>> spec.is_compatible_with(torch.zeros(5, 2))
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import torch

STRING = "string"


def _dtype(dtype: Any) -> torch.dtype | str:
    if isinstance(dtype, torch.dtype) or dtype == STRING:
        return dtype
    if dtype is str or dtype is bytes:
        return STRING
    name = getattr(dtype, "name", dtype)
    if isinstance(name, str):
        if name in ("string", "str", "bytes"):
            return STRING
        found = getattr(torch, name, None)
        if isinstance(found, torch.dtype):
            return found
    try:
        return torch.from_numpy(np.zeros(0, dtype=np.dtype(dtype))).dtype
    except (TypeError, ValueError):
        raise TypeError(
            f"Unknown dtype {dtype!r}. Expected a torch dtype (torch.float32), a numpy "
            "dtype, a TF dtype name ('float32', 'int64') or 'string'."
        ) from None


class TensorSpec:
    """Describes a tensor: ``shape`` (``None`` = unknown dimension), ``dtype`` and ``name``."""

    def __init__(
        self, shape: Iterable[int | None] | None = None, dtype: Any = torch.float32, name: str | None = None
    ) -> None:
        self.shape = None if shape is None else tuple(None if d is None else int(d) for d in shape)
        self.dtype = _dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, value: Any, name: str | None = None) -> TensorSpec:
        """The spec of a tensor or string array."""
        if isinstance(value, torch.Tensor):
            return cls(tuple(value.shape), value.dtype, name)
        arr = np.asarray(value)
        return cls(arr.shape, STRING if arr.dtype.kind in "USO" else arr.dtype, name)

    def is_compatible_with(self, value: Any) -> bool:
        """True when ``value`` (a tensor, array or spec) fits this spec's dtype and shape."""
        other = value if isinstance(value, TensorSpec) else TensorSpec.from_tensor(value)
        if other.dtype != self.dtype:
            return False
        if self.shape is None or other.shape is None:
            return True
        return len(self.shape) == len(other.shape) and all(
            a is None or b is None or a == b for a, b in zip(self.shape, other.shape)
        )

    def with_leading(self, size: int | None) -> TensorSpec:
        return TensorSpec(None if self.shape is None else (size, *self.shape), self.dtype, self.name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorSpec) and (self.shape, self.dtype, self.name) == (
            other.shape,
            other.dtype,
            other.name,
        )

    def __hash__(self) -> int:
        return hash((self.shape, str(self.dtype), self.name))

    def __repr__(self) -> str:
        dtype = self.dtype if self.dtype == STRING else str(self.dtype).replace("torch.", "tf.")
        return f"TensorSpec(shape={self.shape}, dtype={dtype}, name={self.name!r})"
