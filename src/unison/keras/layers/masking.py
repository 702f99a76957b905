"""Keras masks on torch tensors, and the base of layers that read or pass them on.

Keras 3 attaches a padding mask to a tensor as its ``_keras_mask`` attribute (its torch
backend does exactly this); ``Embedding(mask_zero=True)`` sets it, layers that support masking
pass it on, and ``MultiHeadAttention`` and ``GlobalAveragePooling1D`` use it. ``True`` means
"a real step", ``False`` "padding".

:class:`MaskedLayer` is the base of the layers of this package that take several inputs or a
mask: it builds from the first call's shapes (like :class:`~unison.keras.layers.Layer`), applies
the layer's dtype policy, and hands ``mask`` and ``training`` to ``call``.

Example:
    >>> import torch
    >>> x = set_mask(torch.zeros(1, 3, 2), torch.tensor([[True, True, False]]))
    >>> get_mask(x).tolist()
    [[True, True, False]]
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.dtype_policies import DTypePolicyMixin
from unison.keras.layers.base import Layer, attach_constraints

MASK_ATTR = "_keras_mask"


def get_mask(x: Any) -> torch.Tensor | None:
    """The Keras mask attached to ``x`` (``None`` when there is none)."""
    return getattr(x, MASK_ATTR, None) if isinstance(x, torch.Tensor) else None


def set_mask(x: Any, mask: torch.Tensor | None) -> Any:
    """Attach ``mask`` to ``x`` (or remove it when ``None``); returns ``x``."""
    if isinstance(x, torch.Tensor):
        if mask is None:
            if MASK_ATTR in x.__dict__:
                delattr(x, MASK_ATTR)
        else:
            setattr(x, MASK_ATTR, mask)
    return x


class MaskedLayer(DTypePolicyMixin, Layer):
    """A layer whose ``call(inputs, mask=None, training=None)`` sees the input's Keras mask.

    ``compute_mask`` gives the output's mask; by default the input mask passes through
    (Keras's ``supports_masking=True``).
    """

    supports_masking = True

    def ensure_built(self, *shapes: Any) -> None:
        """Build from the first call's input shapes (once), then store variables per policy."""
        if self.built:
            return
        self.build(*shapes)
        self.built = True
        attach_constraints(self)
        if not self.trainable:
            for p in self.parameters():
                p.requires_grad_(False)
        self._cast_variables()

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return mask if self.supports_masking else None

    def _training(self, training: bool | None) -> bool:
        return self.training if training is None else bool(training)

    def forward(self, inputs: Any, mask: Any = None, training: bool | None = None) -> Any:
        if mask is None:
            mask = [get_mask(x) for x in inputs] if isinstance(inputs, (list, tuple)) else get_mask(inputs)
        shapes = (
            [tuple(getattr(x, "shape", ())) for x in inputs]
            if isinstance(inputs, (list, tuple))
            else getattr(inputs, "shape", ())
        )
        self.ensure_built(shapes)
        out = self.call(inputs, mask=mask, training=self._training(training))
        return set_mask(out, self.compute_mask(inputs, mask))

    def call(self, inputs: Any, mask: Any = None, training: bool = False) -> Any:
        raise NotImplementedError


__all__ = ["MASK_ATTR", "MaskedLayer", "get_mask", "set_mask"]
