"""Printed tensors look like TF's: ``tf.Tensor([[0.5]], shape=(1, 1), dtype=float32)``.

TF programs print values (``print(model(x))``, ``print(tf.constant(...))``) and people compare
what they see with the TF tutorial. unison's tensors are torch tensors, whose repr is torch's
(``tensor([[0.5000]], grad_fn=<AddmmBackward0>)``). Importing unison makes ``str(t)`` TF's
``tf.Tensor(<values>, shape=..., dtype=...)`` and ``repr(t)`` TF's
``<tf.Tensor: shape=..., dtype=..., numpy=...>``, and ``"{}".format(t)`` formats the numpy value
(``[1 0 1]``) as TF's ``__format__`` does; values are numpy's formatting, as TF's are.
Nothing else about tensors changes, and nothing runs unless a tensor is printed (a training step
is not slowed). Set ``UNISON_TORCH_REPR=1`` in the environment to keep torch's printing.

Example:
    >>> import unison as tf
    >>> print(tf.constant([[1.0, 2.5]]))
    tf.Tensor([[1.  2.5]], shape=(1, 2), dtype=float32)
    >>> tf.constant(3)
    <tf.Tensor: shape=(), dtype=int32, numpy=3>
    >>> print(tf.constant([[1, 2], [3, 4]]))
    tf.Tensor(
    [[1 2]
     [3 4]], shape=(2, 2), dtype=int32)
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

_TORCH_REPR = torch.Tensor.__repr__
_TORCH_FORMAT = torch.Tensor.__format__


def _values(t: torch.Tensor) -> tuple[np.ndarray, str]:
    value = t.detach()
    if value.dtype == torch.bfloat16:
        array = value.float().cpu().numpy()  # numpy has no bfloat16: show the values as float32
    else:
        array = value.cpu().resolve_conj().resolve_neg().numpy()
    return array, str(t.dtype).removeprefix("torch.")


def _shape(t: torch.Tensor) -> str:
    dims = tuple(int(d) for d in t.shape)
    return str(dims)


def numpy_text(text: str) -> str:
    """A multi-line value starts on its own line, as TF's ``numpy_text`` puts it (``numpy=\\narray(...)``)."""
    return "\n" + text if "\n" in text else text


def _plain(t: torch.Tensor) -> bool:
    # Tensors without values to read (meta, fake, functional tensors under torch.compile) and
    # subclasses that print themselves keep torch's form.
    return type(t) in (torch.Tensor, torch.nn.Parameter) and t.device.type != "meta" and not t.is_sparse


def _repr(self: torch.Tensor, *args: Any, **kwargs: Any) -> str:
    if not _plain(self) or args or kwargs:
        return _TORCH_REPR(self, *args, **kwargs)
    try:
        array, dtype = _values(self)
    except (RuntimeError, TypeError):
        return _TORCH_REPR(self)
    numpy = repr(array.item()) if array.ndim == 0 else repr(array)  # TF's repr: 3.043933391571045
    return f"<tf.Tensor: shape={_shape(self)}, dtype={dtype}, numpy={numpy_text(numpy)}>"


def _str(self: torch.Tensor) -> str:
    if not _plain(self):
        return type(self).__repr__(self)  # a subclass prints itself (tf.Variable's own repr)
    try:
        array, dtype = _values(self)
    except (RuntimeError, TypeError):
        return _TORCH_REPR(self)
    # str, not format: a 0-d array formats as its Python item (3.043933391571045); TF prints numpy's 3.0439334
    return f"tf.Tensor({numpy_text(str(array))}, shape={_shape(self)}, dtype={dtype})"


def _format(self: torch.Tensor, format_spec: str) -> str:
    # TF formats a tensor as its numpy value ("{}".format(t) -> "[1 0 1]", "{:.2f}" on a scalar);
    # a 0-d value formats as the numpy scalar (float32 0.1 -> "0.1"), not as the Python float.
    if not _plain(self):
        return _TORCH_FORMAT(self, format_spec)
    try:
        array, _ = _values(self)
    except (RuntimeError, TypeError):
        return _TORCH_FORMAT(self, format_spec)
    return format(array[()] if array.ndim == 0 else array, format_spec)


def install() -> None:
    """Print tensors in TF's form (idempotent; ``UNISON_TORCH_REPR=1`` keeps torch's)."""
    if os.environ.get("UNISON_TORCH_REPR", "") not in ("", "0"):
        return
    if getattr(torch.Tensor.__repr__, "__module__", None) != __name__:
        torch.Tensor.__repr__ = _repr  # type: ignore[method-assign,assignment]
        torch.Tensor.__str__ = _str  # type: ignore[method-assign,assignment]
        torch.Tensor.__format__ = _format  # type: ignore[method-assign]
