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

numpy functions take tensors as they take TF's eager tensors: ``np.mean(t, axis=0)``,
``np.std``, ``np.argmax``, ``np.concatenate([t, t])`` convert the tensors and return numpy
values (the tensor's ``__array_function__``; torch's own methods take ``dim=``, not numpy's
``axis=``). Only numpy calls go through this hook; torch operations are untouched.

Example:
    >>> import torch, unison as tf
    >>> w = tf.Variable(3.0)
    >>> (w * 2).numpy()
    np.float32(6.0)
    >>> tf.constant([1.0, 2.0]).numpy()
    array([1., 2.], dtype=float32)
    >>> import numpy as np
    >>> np.mean(tf.constant([[1.0, 2.0], [3.0, 4.0]]), axis=0)
    array([2., 3.], dtype=float32)
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


def _to_numpy_tree(value: Any) -> Any:
    # The arguments numpy dispatched on: tensors anywhere in lists/tuples/dicts (np.concatenate
    # takes a list of them) become arrays; everything else passes through unchanged.
    if isinstance(value, torch.Tensor):
        tensor = value.detach()
        if tensor.device.type != "cpu":
            tensor = tensor.cpu()  # TF's numpy conversion copies a GPU tensor to the host too
        return _TORCH_NUMPY(tensor)
    if isinstance(value, (list, tuple)):
        converted = [_to_numpy_tree(v) for v in value]
        return converted if isinstance(value, list) else tuple(converted)
    if isinstance(value, dict):
        return {k: _to_numpy_tree(v) for k, v in value.items()}
    return value


def _size(a: torch.Tensor, axis: int | None = None) -> int:
    return a.numel() if axis is None else int(a.shape[axis])


# Functions that read only a tensor's metadata: answered without reading (or copying from a GPU)
# its values. Losses call np.shape(y_pred) in every training step.
_METADATA: dict[Any, Any] = {np.shape: lambda a: tuple(a.shape), np.ndim: lambda a: a.dim(), np.size: _size}


def _array_function(self: torch.Tensor, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    # NEP 18: numpy asks the tensor how to run np.mean(tensor, axis=0), np.concatenate([t, t]), ...
    # TF's eager tensors have no numpy methods, so numpy converts them (via __array__) and returns
    # numpy values. Without this hook numpy would call the torch method of the same name
    # (Tensor.mean(axis=..., dtype=..., out=...)), whose arguments are not numpy's. Converting
    # and calling numpy again gives TF's results; another array-like type in the arguments
    # still gets its own turn because numpy dispatches again on the converted call.
    metadata = _METADATA.get(func)
    if metadata is not None and args and isinstance(args[0], torch.Tensor):
        return metadata(*args, **kwargs)
    return func(*_to_numpy_tree(args), **_to_numpy_tree(kwargs))


def install() -> None:
    """Make ``torch.Tensor.numpy`` read values as TF's does (idempotent)."""
    if getattr(torch.Tensor.numpy, "__module__", None) != __name__:
        _numpy.__doc__ = _TORCH_NUMPY.__doc__
        torch.Tensor.numpy = _numpy  # type: ignore[method-assign,assignment]
        torch.Tensor.__array__ = _array  # type: ignore[method-assign]
        torch.Tensor.__array_function__ = _array_function  # type: ignore[attr-defined]
