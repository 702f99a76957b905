"""Normalisation layers (Keras 3): ``UnitNormalization`` and ``GroupNormalization``.

Example:
    >>> import torch
    >>> UnitNormalization()(torch.tensor([[3.0, 4.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from unison.keras.layers.masking import MaskedLayer
from unison.keras.layers.misc import check_axes


class UnitNormalization(MaskedLayer):
    """Scale each example to unit L2 norm along ``axis``: ``x / sqrt(max(sum(x**2), 1e-12))``."""

    def __init__(self, axis: int | Sequence[int] = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = axis if isinstance(axis, int) else list(axis)

    def build(self, input_shape: Any) -> None:
        pass

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        axes = check_axes(self.axis, inputs.dim(), self)
        square_sum = inputs.square().sum(dim=axes, keepdim=True)
        return inputs * torch.rsqrt(torch.clamp(square_sum, min=1e-12))


class GroupNormalization(MaskedLayer):
    """Normalise groups of channels of each example (Keras's ``GroupNormalization``, Wu & He 2018).

    The ``axis`` channels split into ``groups`` groups; each group is normalised over its channels
    and every other non-batch axis, then scaled by ``gamma`` and shifted by ``beta`` (per channel).
    ``groups=-1`` gives instance normalisation (one channel per group).
    """

    def __init__(
        self,
        groups: int = 32,
        axis: int = -1,
        epsilon: float = 1e-3,
        center: bool = True,
        scale: bool = True,
        beta_initializer: Any = "zeros",
        gamma_initializer: Any = "ones",
        beta_regularizer: Any = None,
        gamma_regularizer: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if isinstance(groups, bool) or not isinstance(groups, int) or groups == 0 or groups < -1:
            raise ValueError(f"`groups` must be a positive integer or -1. Received: groups={groups!r}")
        self.groups, self.axis, self.epsilon = groups, axis, float(epsilon)
        self.center, self.scale = center, scale
        self._inits = (beta_initializer, gamma_initializer, beta_regularizer, gamma_regularizer)

    def build(self, input_shape: Any) -> None:
        rank = len(input_shape)
        self._axis = check_axes(self.axis, rank, self)[0]
        channels = int(input_shape[self._axis])
        groups = channels if self.groups == -1 else self.groups
        if groups > channels or channels % groups:
            raise ValueError(
                f"Layer '{self.name}': the number of channels ({channels}) must be a multiple of, and at least, "
                f"the number of groups ({groups}). Received: input_shape={tuple(input_shape)}; change `groups`."
            )
        self._groups = groups
        beta, gamma, beta_reg, gamma_reg = self._inits
        self.gamma = (
            self.add_weight(name="gamma", shape=(channels,), initializer=gamma, regularizer=gamma_reg)
            if self.scale
            else None
        )
        self.beta = (
            self.add_weight(name="beta", shape=(channels,), initializer=beta, regularizer=beta_reg)
            if self.center
            else None
        )

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        x = inputs.movedim(self._axis, -1)
        channels = x.shape[-1]
        grouped = x.reshape(*x.shape[:-1], self._groups, channels // self._groups)
        reduce = [d for d in range(1, grouped.dim()) if d != grouped.dim() - 2]
        var, mean = torch.var_mean(grouped, dim=reduce, keepdim=True, correction=0)
        normed = ((grouped - mean) * torch.rsqrt(var + self.epsilon)).reshape(x.shape)
        if self.gamma is not None:
            normed = normed * self.gamma
        if self.beta is not None:
            normed = normed + self.beta
        return normed.movedim(-1, self._axis)


__all__ = ["GroupNormalization", "UnitNormalization"]
