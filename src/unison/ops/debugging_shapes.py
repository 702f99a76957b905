"""``tf.debugging.assert_shapes``: shapes against a symbolic specification, TF's rules.

A specification is an iterable per tensor: an ``int`` is an exact size, a string names a size
that must be the same wherever the name appears, ``"."`` or ``None`` is any size, and ``"*"`` or
``...`` as the first entry stands for any number of leading dimensions. As in TF, a scalar counts
as shape ``(1,)`` and an empty specification as ``(1,)``, so ``()`` accepts a scalar or one value.

Example:
    >>> import torch
    >>> assert_shapes([(torch.ones(2, 3), ("N", "D")), (torch.ones(2), ("N",))])
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np


def _shape_str(x: Any) -> str:
    return f"shape={tuple(x.shape)} dtype={str(getattr(x, 'dtype', '')).replace('torch.', '')}"


def _known(symbol: Any) -> bool:
    return isinstance(symbol, (int, np.integer)) and not isinstance(symbol, bool)


def assert_shapes(
    shapes: Iterable[tuple[Any, Any]] | dict[Any, Any],
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> None:
    """``tf.debugging.assert_shapes``: ``ValueError`` naming the tensor and dimension that does not match."""
    from unison.ops.array import convert_to_tensor

    prefix = f"{message}.  " if message else ""
    pairs = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    known_sizes: dict[Any, tuple[int, Any, int]] = {}
    for value, spec in pairs:
        if spec is None:
            continue
        x = convert_to_tensor(value)
        if not (hasattr(spec, "__iter__") or hasattr(spec, "__getitem__")):
            raise ValueError(
                f"{prefix}Tensor {_shape_str(x)}.  Specified shape must be an iterable.  "
                f"An iterable has the attribute `__iter__` or `__getitem__`.  Received specified shape: {spec}"
            )
        symbols = tuple(spec)
        for i, symbol in enumerate(symbols):
            if (symbol is Ellipsis or symbol == "*") and i != 0:
                raise ValueError(
                    f"{prefix}Tensor {_shape_str(x)} specified shape index {i}.  Symbol `...` or `*` for a variable "
                    "number of unspecified dimensions is only allowed as the first entry"
                )
        open_start = bool(symbols) and (symbols[0] is Ellipsis or symbols[0] == "*")
        sizes = symbols[1:] if open_start else symbols
        sizes = sizes or (1,)
        actual = tuple(x.shape) or (1,)
        rank, actual_rank = len(sizes), len(tuple(x.shape))
        if open_start:
            if rank > 1 and actual_rank < rank:
                raise ValueError(
                    f"{prefix}Tensor {_shape_str(x)} must have rank at least {rank}.  "
                    f"Received rank {actual_rank}, shape {tuple(x.shape)}"
                )
        elif rank in (0, 1):
            if actual_rank not in (0, 1):
                raise ValueError(
                    f"{prefix}Tensor {_shape_str(x)} must have rank in (0, 1).  "
                    f"Received rank {actual_rank}, shape {tuple(x.shape)}"
                )
        elif actual_rank != rank:
            raise ValueError(
                f"{prefix}Tensor {_shape_str(x)} must have rank {rank}.  "
                f"Received rank {actual_rank}, shape {tuple(x.shape)}"
            )
        for i, symbol in enumerate(sizes):
            if symbol is None or symbol == ".":
                continue
            dim = i - len(sizes) if open_start else i
            size = actual[dim]
            if _known(symbol) or symbol in known_sizes:
                if _known(symbol):
                    want, how = int(symbol), "Specified explicitly"
                else:
                    want, by, at = known_sizes[symbol]
                    how = f"Specified by tensor {_shape_str(by)} dimension {at}"
                if size != want:
                    raise ValueError(
                        f"{prefix}{how}.  Tensor {_shape_str(x)} dimension {dim} must have size {want}.  "
                        f"Received size {size}, shape {tuple(x.shape)}"
                    )
            else:
                known_sizes[symbol] = (size, x, dim)


__all__ = ["assert_shapes"]
