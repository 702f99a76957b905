"""``tensor.numpy()`` as TF's eager tensors have it: it works on a tensor that requires grad.

TF programs read values with ``loss.numpy()`` everywhere (the basic-training-loops and
checkpoint guides, ``assert model(3.0).numpy() == 15.0``); in TF an eager tensor is a value and
``.numpy()`` always works. torch refuses ``.numpy()`` on a tensor that is part of an autograd
graph and asks for ``.detach()`` first. Importing unison makes ``torch.Tensor.numpy`` detach such
a tensor first (what torch's own ``numpy(force=True)`` does, without the copy to the host it
also forces). The values are the same; the graph is untouched, so gradients still flow through
the tensor; everything else ``.numpy()`` does is torch's.

Example:
    >>> import torch, unison as tf
    >>> w = tf.Variable(3.0)
    >>> (w * 2).numpy()
    array(6., dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

_TORCH_NUMPY = torch.Tensor.numpy


def _numpy(self: torch.Tensor, *, force: bool = False) -> np.ndarray[Any, Any]:
    # A tensor that requires grad reads as its detached view (same memory, no autograd record).
    return _TORCH_NUMPY(self.detach() if self.requires_grad else self, force=force)


def install() -> None:
    """Make ``torch.Tensor.numpy`` work on tensors that require grad (idempotent)."""
    if getattr(torch.Tensor.numpy, "__module__", None) != __name__:
        _numpy.__doc__ = _TORCH_NUMPY.__doc__
        torch.Tensor.numpy = _numpy  # type: ignore[method-assign,assignment]
