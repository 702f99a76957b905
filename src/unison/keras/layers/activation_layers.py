"""Activation layers with arguments (Keras 3): ``ReLU``, ``LeakyReLU``, ``PReLU``, ``ELU``, ``Softmax``.

They keep the input's Keras mask. ``LeakyReLU`` takes Keras 3's ``negative_slope`` or Keras 2's
``alpha`` (default 0.3 either way).

Example:
    >>> import torch
    >>> ReLU(max_value=6.0)(torch.tensor([-1.0, 3.0, 9.0])).tolist()
    [0.0, 3.0, 6.0]
    >>> LeakyReLU(alpha=0.5)(torch.tensor([-2.0, 2.0])).tolist()
    [-1.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.activations import Softmax as _SoftmaxFn
from unison.keras.layers.masking import MaskedLayer, get_mask, set_mask
from unison.keras.layers.misc import keras_name


def _non_negative(value: Any, what: str, layer: str, allow_none: bool = False) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"The {what} of a {layer} layer must be a float >= 0. Received: {what}={value!r}")
    return float(value)


class _Activation(MaskedLayer):
    def __init__(self, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name or keras_name(type(self)), **kwargs)

    def build(self, input_shape: Any) -> None:
        pass


class ReLU(_Activation):
    """Rectified linear unit with a cap, a slope below the threshold, and a threshold (Keras's ``ReLU``).

    ``f(x) = max_value`` for ``x >= max_value``; ``x`` for ``threshold <= x < max_value``;
    ``negative_slope * (x - threshold)`` otherwise.
    """

    def __init__(
        self, max_value: float | None = None, negative_slope: float = 0.0, threshold: float = 0.0, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.max_value = _non_negative(max_value, "max_value", "ReLU", allow_none=True)
        self.negative_slope = _non_negative(negative_slope, "negative_slope", "ReLU")
        self.threshold = _non_negative(threshold, "threshold", "ReLU")

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        threshold, slope = self.threshold or 0.0, self.negative_slope or 0.0
        if threshold == 0.0 and slope == 0.0:
            out = F.relu(inputs)
        else:
            out = torch.where(inputs >= threshold, inputs, slope * (inputs - threshold))
        return out if self.max_value is None else torch.clamp(out, max=self.max_value)


class LeakyReLU(_Activation):
    """``x`` for ``x >= 0``, ``negative_slope * x`` otherwise (Keras 2's ``alpha=`` is the same argument)."""

    def __init__(self, negative_slope: float | None = None, alpha: float | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if negative_slope is not None and alpha is not None:
            raise ValueError(
                "Pass negative_slope= (Keras 3) or alpha= (Keras 2), not both. Received: "
                f"negative_slope={negative_slope!r}, alpha={alpha!r}"
            )
        slope = negative_slope if negative_slope is not None else (alpha if alpha is not None else 0.3)
        self.negative_slope = _non_negative(slope, "negative_slope", "LeakyReLU")

    def get_config(self) -> dict[str, Any]:
        # Keras 3 lists the slope as negative_slope however it was given (alpha= is Keras 2's name)
        config = super().get_config()
        config.pop("alpha", None)
        config["negative_slope"] = self.negative_slope
        return config

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        return F.leaky_relu(inputs, self.negative_slope or 0.0)


class PReLU(_Activation):
    """Leaky ReLU with a learned slope per input value: ``max(x, 0) + alpha * min(x, 0)``.

    ``alpha`` has the shape of one example; ``shared_axes`` (1-based, e.g. ``[1, 2]`` for images)
    share one slope along those axes.
    """

    def __init__(
        self,
        alpha_initializer: Any = "Zeros",
        alpha_regularizer: Any = None,
        shared_axes: int | Sequence[int] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._init = (alpha_initializer, alpha_regularizer)
        if shared_axes is None:
            self.shared_axes: list[int] = []
        else:
            self.shared_axes = [shared_axes] if isinstance(shared_axes, int) else list(shared_axes)

    def build(self, input_shape: Any) -> None:
        shape = list(input_shape[1:])
        for axis in self.shared_axes:
            if not 1 <= axis <= len(shape):
                raise ValueError(
                    f"Layer '{self.name}': shared_axes are 1-based axes of one example, in [1, {len(shape)}] for "
                    f"inputs of shape {tuple(input_shape)}. Received: shared_axes={self.shared_axes}"
                )
            shape[axis - 1] = 1
        init, reg = self._init
        self.alpha = self.add_weight(
            name="alpha", shape=tuple(int(s) for s in shape), initializer=init, regularizer=reg
        )

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        return F.relu(inputs) - self.alpha * F.relu(-inputs)


class ELU(_Activation):
    """Exponential linear unit: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise."""

    def __init__(self, alpha: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        return F.elu(inputs, self.alpha)


class Softmax(_Activation):
    """Softmax over ``axis`` (an int or a list of axes).

    ``layer(x, mask=m)`` with a boolean ``m`` that broadcasts to ``x`` gives the masked positions
    probability 0, as in Keras. (The Keras mask carried by ``x`` is passed on, not applied.)
    """

    def __init__(self, axis: int | Sequence[int] = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = axis if isinstance(axis, int) else list(axis)
        self._softmax = _SoftmaxFn(axis) if isinstance(axis, int) else None

    def forward(self, inputs: Any, mask: Any = None, training: bool | None = None) -> Any:
        self.ensure_built(inputs.shape)
        explicit = None if mask is None else torch.as_tensor(mask, device=inputs.device).bool()
        return set_mask(self.call(inputs, mask=explicit), get_mask(inputs))

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        if mask is not None:
            inputs = inputs.masked_fill(~mask, torch.finfo(inputs.dtype).min / 2)
        if self._softmax is not None:
            out = self._softmax(inputs)
        else:
            axes = [a % inputs.dim() for a in self.axis]  # type: ignore[union-attr]
            out = torch.exp(inputs - torch.logsumexp(inputs, dim=axes, keepdim=True))
        return out * mask.to(out.dtype) if mask is not None else out


__all__ = ["ELU", "LeakyReLU", "PReLU", "ReLU", "Softmax"]
