"""``tf.SparseTensor`` and ``tf.sparse``: values at some positions of a dense shape.

TF's layout: ``indices`` (int64, ``[N, rank]``: the position of each value), ``values`` (the
``N`` values: a torch tensor, or a string tensor) and ``dense_shape`` (int64, ``[rank]``). The
``tf.sparse`` functions (in :mod:`unison.ops.sparse_ops`) work on these three tensors with torch
kernels (scatter, sort, index arithmetic) and keep TF's canonical order (indices sorted row-major)
where TF does.

Example:
    >>> import unison as tf
    >>> st = tf.SparseTensor(indices=[[0, 1], [1, 0]], values=[5, 6], dense_shape=[2, 3])
    >>> tf.sparse.to_dense(st).tolist()
    [[0, 5, 0], [6, 0, 0]]
    >>> (st * tf.constant([[1, 2, 3], [4, 5, 6]])).values.tolist()
    [10, 24]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import is_string_value, to_tensor


def _values(values: Any) -> Any:
    if isinstance(values, torch.Tensor):
        return values
    if is_string_value(values) or (isinstance(values, np.ndarray) and values.dtype.kind in "OUS"):
        from unison.ops.string_tensor import StringTensor

        return StringTensor(np.asarray(values, dtype=object).reshape(-1))
    if isinstance(values, (list, tuple)) and len(values) == 0:
        return torch.zeros(0, dtype=torch.float32)
    return to_tensor(values)


# the tf.* functions TF runs on a SparseTensor's values (f(0) = 0 keeps the absent entries right)
_UNARY = frozenset({"abs", "square", "sqrt", "negative", "sign", "sin", "tanh", "identity", "cast"})


class SparseTensor:
    """``tf.SparseTensor(indices, values, dense_shape)``: values at positions of a dense shape.

    Args:
        indices: ``[N, rank]`` integer positions (converted to int64).
        values: the ``N`` values (their dtype is the tensor's dtype).
        dense_shape: the dense shape, ``[rank]`` integers.

    Raises:
        ValueError: when the number of index rows and values differ, or an index row's length
            is not the rank.
    """

    def __init__(self, indices: Any, values: Any, dense_shape: Any) -> None:
        shape = torch.as_tensor(np.asarray(to_tensor(dense_shape)), dtype=torch.int64).reshape(-1)
        idx = to_tensor(indices)
        idx = idx.to(torch.int64) if isinstance(idx, torch.Tensor) else torch.as_tensor(np.asarray(idx, np.int64))
        if idx.numel() == 0:
            idx = idx.reshape(0, len(shape))
        if idx.dim() != 2 or idx.shape[1] != len(shape):
            raise ValueError(
                f"tf.SparseTensor: `indices` must be [N, rank] with rank = len(dense_shape) = {len(shape)}. "
                f"Received: indices of shape {list(idx.shape)}"
            )
        self.indices = idx
        self.values: Any = _values(values)
        self.dense_shape = shape
        if len(self.values) != len(self.indices):
            raise ValueError(
                f"A SparseTensor needs one index row per value. Received {len(self.indices)} index rows and "
                f"{len(self.values)} values."
            )

    @classmethod
    def _from_parts(cls, indices: torch.Tensor, values: Any, dense_shape: torch.Tensor) -> SparseTensor:
        """A SparseTensor of parts already in its layout (int64 ``[N, rank]`` indices, ``N`` values as
        a tensor or string tensor, int64 ``[rank]`` shape), without the constructor's conversions:
        for code that made them so (a parser, a batcher), where the checks would cost more than the work."""
        out = cls.__new__(cls)
        out.indices, out.values, out.dense_shape = indices, values, dense_shape
        return out

    def _tree_components(self) -> list[Any]:
        """What ``tf.nest.flatten(..., expand_composites=True)`` yields: TF's component order."""
        return [self.indices, self.values, self.dense_shape]

    @classmethod
    def _tree_from_components(cls, components: list[Any]) -> SparseTensor:
        return cls(*components)

    @classmethod
    def from_value(cls, value: Any) -> SparseTensor:
        """``tf.SparseTensor.from_value``: a SparseTensor (returned as is)."""
        if isinstance(value, SparseTensor):
            return value
        raise TypeError(f"tf.SparseTensor.from_value takes a SparseTensor. Received: {type(value).__name__}")

    @property
    def shape(self) -> Any:
        """The dense shape as a ``tf.TensorShape``."""
        from unison.ops.control_flow import TensorShape

        return TensorShape([int(d) for d in self.dense_shape.tolist()])

    def get_shape(self) -> Any:
        """The dense shape as a ``tf.TensorShape`` (as :attr:`shape`)."""
        return self.shape

    @property
    def dtype(self) -> Any:
        from unison.ops.dtypes import string

        return string if isinstance(self.values, np.ndarray) else self.values.dtype

    def with_values(self, new_values: Any) -> SparseTensor:
        """The same positions holding ``new_values`` (which must have one value per position)."""
        return SparseTensor(self.indices, new_values, self.dense_shape)

    def to_dense(self, default_value: Any = None) -> Any:
        """The dense value: ``default_value`` (0 or ``b""``) where no value is given."""
        return to_dense(self, default_value)

    def _cwise(self, other: Any, op: Any, name: str) -> SparseTensor:
        # TF's sparse_dense_cwise_*: the dense side is broadcast to the dense shape and read at
        # the sparse positions only, so the result keeps this tensor's positions.
        dense = to_tensor(other)
        if not isinstance(dense, torch.Tensor):
            raise TypeError(f"SparseTensor.{name} takes a dense numeric tensor. Received: {type(other).__name__}")
        if isinstance(other, SparseTensor):
            raise TypeError(f"SparseTensor.{name} with another SparseTensor is not defined in TF; use tf.sparse.*")
        if dense.dtype != self.values.dtype:
            raise InvalidArgumentError(
                None,
                None,
                f"SparseTensor.{name}: the dense operand is {dense.dtype}, the sparse values "
                f"{self.values.dtype}; cast one of them (tf.cast).",
            )
        try:
            full = torch.broadcast_to(dense, tuple(self.shape.as_list()))
        except RuntimeError:
            raise InvalidArgumentError(
                None,
                None,
                f"SparseTensor.{name}: the dense operand's shape {list(dense.shape)} does not broadcast to "
                f"the dense shape {self.shape.as_list()}.",
            ) from None
        picked = full[tuple(self.indices.T)] if len(self.indices) else full.reshape(-1)[:0]
        return SparseTensor(self.indices, op(self.values, picked), self.dense_shape)

    @staticmethod
    def __unison_tf_op__(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``tf.*`` functions called on a SparseTensor: TF dispatches the zero-preserving unary ones
        (and ``cast``/``identity``) to the values; the others refuse it, as TF does."""
        first = args[0] if args else None
        rest = list(args[1:]) + list(kwargs.values())
        if (
            fn.__name__ in _UNARY
            and isinstance(first, SparseTensor)
            and not any(isinstance(a, SparseTensor) for a in rest)
        ):
            return SparseTensor(first.indices, fn(first.values, *args[1:], **kwargs), first.dense_shape)
        raise ValueError(
            f"Attempt to convert a value (SparseTensor) with an unsupported type to a Tensor: tf.{fn.__name__} "
            "does not take a SparseTensor. Use the tf.sparse functions, or tf.sparse.to_dense first."
        )

    def __mul__(self, other: Any) -> SparseTensor:
        return self._cwise(other, torch.mul, "__mul__")

    def __truediv__(self, other: Any) -> SparseTensor:
        def div(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return torch.div(a, b, rounding_mode="floor") if not a.is_floating_point() else a / b

        return self._cwise(other, div, "__truediv__")

    __div__ = __truediv__

    def __repr__(self) -> str:
        return f"SparseTensor(indices={self.indices!s}, values={self.values!s}, dense_shape={self.dense_shape!s})"


def to_dense(
    sp_input: SparseTensor, default_value: Any = None, validate_indices: bool = True, name: str | None = None
) -> Any:
    """``tf.sparse.to_dense``: a dense tensor (a string tensor for strings) from a ``SparseTensor``.

    Raises:
        InvalidArgumentError: an index outside ``dense_shape`` (TF's message names the index).
    """
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"tf.sparse.to_dense takes a tf.SparseTensor. Received: {type(sp_input).__name__}")
    shape = tuple(int(d) for d in sp_input.dense_shape.tolist())
    if validate_indices and len(sp_input.indices):
        bad = ((sp_input.indices < 0) | (sp_input.indices >= sp_input.dense_shape)).any(dim=1)
        if bool(bad.any()):
            row = int(torch.nonzero(bad)[0])
            raise InvalidArgumentError(
                None,
                None,
                f"tf.sparse.to_dense: indices[{row}] = {sp_input.indices[row].tolist()} is out of bounds "
                f"of dense_shape {list(shape)}.",
            )
    index = tuple(sp_input.indices.T) if len(sp_input.indices) else None
    if isinstance(sp_input.values, np.ndarray):
        from unison.ops.string_tensor import StringTensor

        out: Any = np.full(shape, b"" if default_value is None else default_value, dtype=object)
        if index is not None:
            out[tuple(i.numpy() for i in index)] = np.asarray(sp_input.values, dtype=object)
        return StringTensor(out)
    fill = 0 if default_value is None else to_tensor(default_value).item()
    dense = torch.full(shape, fill, dtype=sp_input.values.dtype)
    if index is not None:
        dense[index] = sp_input.values
    return dense


__all__ = ["SparseTensor", "to_dense"]
