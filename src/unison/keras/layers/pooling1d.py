"""1-D global pooling over the steps of ``(batch, steps, features)`` inputs, mask-aware (Keras 3).

Example:
    >>> import torch
    >>> from unison.keras.layers.masking import set_mask
    >>> x = set_mask(torch.tensor([[[1.0], [3.0], [100.0]]]), torch.tensor([[True, True, False]]))
    >>> GlobalAveragePooling1D()(x).tolist()
    [[2.0]]
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.layers.masking import MaskedLayer

_FORMATS = ("channels_last", "channels_first")


class _GlobalPooling1D(MaskedLayer):
    def __init__(self, data_format: str | None = None, keepdims: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        data_format = data_format or "channels_last"
        if data_format not in _FORMATS:
            raise ValueError(f"`data_format` must be one of {_FORMATS}. Received: data_format={data_format!r}")
        self.data_format, self.keepdims = data_format, keepdims
        self.steps_axis = 1 if data_format == "channels_last" else 2

    def build(self, input_shape: torch.Size) -> None:
        if len(input_shape) != 3:
            raise ValueError(
                f"Layer '{self.name}' expects inputs of shape (batch, steps, features) "
                f"({self.data_format}). Received: input_shape={tuple(input_shape)}"
            )

    def _mask(self, inputs: torch.Tensor, mask: Any) -> torch.Tensor | None:
        if mask is None:
            return None
        mask = torch.as_tensor(mask, device=inputs.device).bool()
        steps = inputs.shape[self.steps_axis]
        if tuple(mask.shape) != (inputs.shape[0], steps):
            raise ValueError(
                f"Layer '{self.name}' received a mask of shape {tuple(mask.shape)} for inputs of "
                f"shape {tuple(inputs.shape)}; expected {(inputs.shape[0], steps)} (batch, steps)."
            )
        return mask.unsqueeze(2 if self.steps_axis == 1 else 1)

    def compute_mask(self, inputs: Any, mask: Any = None) -> None:
        return None


class GlobalAveragePooling1D(_GlobalPooling1D):
    """Mean over the steps; with a mask, over the unmasked steps only.

    A sequence whose steps are all masked averages to 0 (Keras divides 0 by 0 there).

    Args:
        data_format: ``"channels_last"`` (``(batch, steps, features)``, default) or
            ``"channels_first"`` (``(batch, features, steps)``).
        keepdims: keep the steps axis with length 1.
    """

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        m = self._mask(inputs, mask)
        if m is None:
            return inputs.mean(dim=self.steps_axis, keepdim=self.keepdims)
        weights = m.to(inputs.dtype)
        total = (inputs * weights).sum(dim=self.steps_axis, keepdim=self.keepdims)
        return total / weights.sum(dim=self.steps_axis, keepdim=self.keepdims).clamp_min(1.0)


class GlobalMaxPooling1D(_GlobalPooling1D):
    """Maximum over the steps; with a mask, over the unmasked steps only."""

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        m = self._mask(inputs, mask)
        if m is not None:
            inputs = inputs.masked_fill(~m, torch.finfo(inputs.dtype).min)
        return inputs.amax(dim=self.steps_axis, keepdim=self.keepdims)


GlobalAvgPool1D = GlobalAveragePooling1D
GlobalMaxPool1D = GlobalMaxPooling1D

__all__ = ["GlobalAveragePooling1D", "GlobalAvgPool1D", "GlobalMaxPool1D", "GlobalMaxPooling1D"]
