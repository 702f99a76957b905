"""Keras's mask rules for any layer: the input's mask handed to ``call(mask=)``, the output's set by ``compute_mask``.

Keras (3, and 2 before it) does this in ``Layer.__call__`` for every layer, a user's subclass too:

- when ``call`` declares a ``mask`` argument and the caller passed none, the mask attached to
  the first argument (``_keras_mask``; for a list of inputs, the list of their masks) is passed,
  if there is one;
- when the layer supports masking (``supports_masking = True``, or by default when the class
  overrides ``compute_mask``), outputs that carry no mask of their own get
  ``compute_mask(inputs, previous_mask)``; a list of outputs takes a list of masks.

TF's "Masking and padding" guide and keras.io's Transformer examples rely on both (a
``PositionalEmbedding.compute_mask`` read by the next layer's ``call(inputs, mask=None)``).

Example:
    >>> import torch
    >>> from unison.keras.layers import Layer
    >>> class Half(Layer):
    ...     supports_masking = True
    ...     def call(self, inputs, mask=None):
    ...         return inputs * 0.5
    >>> x = torch.ones(1, 3)
    >>> x._keras_mask = torch.tensor([[True, True, False]])
    >>> Half()(x)._keras_mask.tolist()
    [[True, True, False]]
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Hashable
from typing import Any, cast

import torch

from unison.keras.backend.keras_tensor import MASK_ATTR

__all__ = ["attach_output_masks", "input_masks", "mask_rules"]


@functools.cache
def _class_rules(cls: Any, base_compute_mask: Any) -> tuple[bool, bool]:
    call = getattr(cls, "call", None)
    try:
        takes_mask = call is not None and "mask" in inspect.signature(call).parameters
    except (TypeError, ValueError):
        takes_mask = False
    return takes_mask, getattr(cls, "compute_mask", None) is not base_compute_mask


def mask_rules(layer: Any, base_compute_mask: Any) -> tuple[bool, bool]:
    """``(call takes mask=, layer supports masking)`` for ``layer`` (see the module notes)."""
    takes_mask, own_compute_mask = _class_rules(cast(Hashable, type(layer)), base_compute_mask)
    supports = layer.__dict__.get("supports_masking")
    if supports is None:
        supports = getattr(type(layer), "supports_masking", None)
    return takes_mask, own_compute_mask if supports is None else bool(supports)


def _mask_of(x: Any) -> Any:
    return getattr(x, MASK_ATTR, None) if isinstance(x, torch.Tensor) else None


def input_masks(inputs: Any) -> Any:
    """The mask of ``inputs`` (a list of masks for a list or tuple of inputs), or None if none has one."""
    if isinstance(inputs, (list, tuple)):
        masks = [_mask_of(x) for x in inputs]
        return masks if any(m is not None for m in masks) else None
    return _mask_of(inputs)


def attach_output_masks(layer: Any, inputs: Any, outputs: Any, previous_mask: Any) -> None:
    """Give outputs without a mask ``layer.compute_mask(inputs, previous_mask)`` (Keras's ``_set_mask_metadata``)."""
    flat = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    tensors = [t for t in flat if isinstance(t, torch.Tensor)]
    if not tensors or all(_mask_of(t) is not None for t in tensors):
        return
    masks = layer.compute_mask(inputs, previous_mask)
    if masks is None:
        return
    flat_masks = list(masks) if isinstance(masks, (list, tuple)) else [masks]
    for tensor, mask in zip(flat, flat_masks):
        if isinstance(tensor, torch.Tensor) and mask is not None and _mask_of(tensor) is None:
            setattr(tensor, MASK_ATTR, mask)
