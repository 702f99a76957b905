"""``tensor.numpy()`` as TF's eager tensors have it: it works on a tensor that requires grad.

TF programs read values with ``loss.numpy()`` everywhere (the basic-training-loops and
checkpoint guides, ``assert model(3.0).numpy() == 15.0``); in TF an eager tensor is a value and
``.numpy()`` always works. torch refuses ``.numpy()`` on a tensor that is part of an autograd
graph and asks for ``.detach()`` first. Importing unison makes ``torch.Tensor.numpy`` detach such
a tensor first (what torch's own ``numpy(force=True)`` does, without the copy to the host it
also forces). The values are the same; the graph is untouched, so gradients still flow through
the tensor. A 0-d tensor gives a numpy scalar (``np.float32(6.0)``), as TF's ``.numpy()`` does,
not a 0-d array (which is not hashable: TF programs use such values as dict keys). Everything
else ``.numpy()`` does is torch's.

Example:
    >>> import torch, unison as tf
    >>> w = tf.Variable(3.0)
    >>> (w * 2).numpy()
    np.float32(6.0)
    >>> tf.constant([1.0, 2.0]).numpy()
    array([1., 2.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

_TORCH_NUMPY = torch.Tensor.numpy


def _numpy(self: torch.Tensor, *, force: bool = False) -> Any:
    # A tensor that requires grad reads as its detached view (same memory, no autograd record).
    value = _TORCH_NUMPY(self.detach() if self.requires_grad else self, force=force)
    # A scalar is a numpy scalar in TF (np.float32(0.5)): hashable, usable as a dict key.
    return value[()] if value.ndim == 0 else value


def _array(self: torch.Tensor, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
    # numpy's conversion (np.asarray(t)) needs an array, also for a 0-d tensor: torch's
    # __array__ calls .numpy(), which now gives a scalar for those, so read the array here.
    # NumPy 2 passes copy= (np.array(t) copies, np.asarray(t) may share the tensor's memory).
    if type(self) is not torch.Tensor and torch.overrides.has_torch_function_unary(self):
        return torch.overrides.handle_torch_function(_array, (self,), self, dtype=dtype, copy=copy)
    value = _TORCH_NUMPY(self.detach() if self.requires_grad else self)
    if dtype is not None and np.dtype(dtype) != value.dtype:
        if copy is False:
            raise ValueError(f"Unable to avoid a copy while converting a {value.dtype} tensor to {np.dtype(dtype)}.")
        return value.astype(dtype)
    return value.copy() if copy else value


def install() -> None:
    """Make ``torch.Tensor.numpy`` read values as TF's does (idempotent)."""
    if getattr(torch.Tensor.numpy, "__module__", None) != __name__:
        _numpy.__doc__ = _TORCH_NUMPY.__doc__
        torch.Tensor.numpy = _numpy  # type: ignore[method-assign,assignment]
        torch.Tensor.__array__ = _array  # type: ignore[method-assign]
