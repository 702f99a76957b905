"""Small Keras 3 layers: shapes (``Permute``, ``RepeatVector``, ``Identity``), noise and dropout
(``GaussianNoise``, ``GaussianDropout``, ``SpatialDropout1D``/``2D``), ``ActivityRegularization``,
``Masking`` and ``Dot`` (and the helpers the other new layer modules share).

The noise and dropout layers act only when training (``fit``, or ``training=True``), as in Keras;
called directly they are the identity. Their ``seed=`` makes a layer draw from its own generator
(the same sequence on every run); without it they draw from the generator ``tf.random.set_seed``
seeds.

Example:
    >>> import torch
    >>> RepeatVector(3)(torch.ones(2, 4)).shape
    torch.Size([2, 3, 4])
    >>> Permute((2, 1))(torch.zeros(2, 3, 5)).shape
    torch.Size([2, 5, 3])
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.layers import base
from unison.keras.layers.base import Layer
from unison.keras.layers.masking import MaskedLayer, set_mask
from unison.keras.layers.merging import Merge


def keras_name(cls: type) -> str:
    """A unique default layer name from Keras's snake case (``LSTM`` -> ``lstm``, ``PReLU`` -> ``p_re_lu``)."""
    text = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", cls.__name__)
    text = re.sub(r"([a-z])([A-Z])", r"\1_\2", text).lower()
    n = base._COUNTERS.get(text, 0)
    base._COUNTERS[text] = n + 1
    return text if n == 0 else f"{text}_{n}"


class RandomSource:
    """Where a layer's random numbers come from: its own generator when seeded, else torch's global one.

    The seeded generator lives on the CPU (values do not depend on the device) and draws are
    copied to the inputs' device.
    """

    def __init__(self, seed: int | None) -> None:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"seed must be an integer or None. Received: seed={seed!r}")
        self.generator = torch.Generator().manual_seed(seed) if seed is not None else None

    def uniform(self, shape: Sequence[int], low: float, high: float, device: torch.device) -> torch.Tensor:
        """Floats uniform in ``[low, high)``."""
        if self.generator is None:
            values = torch.rand(tuple(shape), device=device)
        else:
            values = torch.rand(tuple(shape), generator=self.generator).to(device)
        return values * (high - low) + low

    def normal(self, shape: Sequence[int], device: torch.device) -> torch.Tensor:
        """Standard normal values."""
        if self.generator is None:
            return torch.randn(tuple(shape), device=device)
        return torch.randn(tuple(shape), generator=self.generator).to(device)

    def keep_mask(self, shape: Sequence[int], rate: float, like: torch.Tensor) -> torch.Tensor:
        """Inverted-dropout multipliers: 0 with probability ``rate``, else ``1 / (1 - rate)``."""
        keep = self.uniform(shape, 0.0, 1.0, like.device) >= rate
        return keep.to(like.dtype) / (1.0 - rate)


def check_rate(rate: Any, what: str = "rate") -> float:
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate < 1:
        raise ValueError(f"`{what}` must be a float in [0, 1). Received: {what}={rate!r}")
    return float(rate)


def check_channels_last(data_format: Any) -> None:
    if data_format not in (None, "channels_last"):
        raise ValueError(
            "unison's layers take channels-last inputs only. Received: "
            f"data_format={data_format!r}; pass data_format='channels_last' (or leave it unset) and "
            "transpose channels-first data once, e.g. with tf.transpose(x, [0, 2, 3, 1])."
        )


class Identity(MaskedLayer):
    """Returns its input unchanged (Keras's ``Identity``), mask included."""

    def build(self, input_shape: Any) -> None:
        pass

    def call(self, inputs: Any, mask: Any = None, training: bool = False) -> Any:
        return inputs


class Permute(Layer):
    """Permute the axes of each example: ``dims`` is a permutation of ``1..rank-1`` (the batch axis stays)."""

    def __init__(self, dims: Sequence[int], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(
                "Invalid permutation argument `dims` for Permute Layer. The set of indices in `dims` must be "
                f"consecutive and start from 1. Received: dims={tuple(dims)!r}"
            )

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        if inputs.dim() != len(self.dims) + 1:
            raise ValueError(
                f"Layer '{self.name}' with dims={self.dims} needs inputs of rank {len(self.dims) + 1}. "
                f"Received: input shape {tuple(inputs.shape)}"
            )
        return inputs.permute(0, *self.dims)


class RepeatVector(Layer):
    """Repeat each 2-D input ``n`` times: ``(batch, features) -> (batch, n, features)``."""

    def __init__(self, n: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise TypeError(f"Expected an integer value for `n` (>= 1). Received: n={n!r}")
        self.n = n

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        if inputs.dim() != 2:
            raise ValueError(
                f"Layer '{self.name}' expects inputs of shape (batch, features). Received: {tuple(inputs.shape)}"
            )
        return inputs.unsqueeze(1).expand(-1, self.n, -1)


class _Noise(MaskedLayer):
    """Identity at inference; ``_noise`` when training."""

    def __init__(self, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.random = RandomSource(seed)

    def build(self, input_shape: Any) -> None:
        pass

    def _training(self, training: bool | None) -> bool:
        return bool(training)  # Keras: training defaults to False for these layers

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        return self._noise(inputs) if training else inputs

    def _noise(self, inputs: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError


class GaussianNoise(_Noise):
    """Add zero-mean Gaussian noise of standard deviation ``stddev`` when training."""

    def __init__(self, stddev: float, seed: int | None = None, **kwargs: Any) -> None:
        if isinstance(stddev, bool) or not isinstance(stddev, (int, float)) or stddev < 0:
            raise ValueError(
                f"Invalid value received for argument `stddev`: expected a float >= 0. Received: {stddev!r}"
            )
        super().__init__(seed, **kwargs)
        self.stddev = float(stddev)

    def _noise(self, inputs: torch.Tensor) -> torch.Tensor:
        return inputs + self.random.normal(inputs.shape, inputs.device).to(inputs.dtype) * self.stddev


class GaussianDropout(_Noise):
    """Multiply by Gaussian noise of mean 1 and standard deviation ``sqrt(rate / (1 - rate))`` when training."""

    def __init__(self, rate: float, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(seed, **kwargs)
        self.rate = check_rate(rate)

    def _noise(self, inputs: torch.Tensor) -> torch.Tensor:
        if self.rate == 0:
            return inputs
        std = math.sqrt(self.rate / (1.0 - self.rate))
        return inputs * (1.0 + self.random.normal(inputs.shape, inputs.device).to(inputs.dtype) * std)


class AlphaDropout(_Noise):
    """Dropout that keeps a SELU network's mean and variance (Keras's ``AlphaDropout``), when training.

    Dropped values become SELU's negative saturation ``-alpha * scale``, then ``a * x + b`` with
    ``a = ((1 - rate) * (1 + rate * alpha_p**2)) ** -0.5`` and ``b = -a * alpha_p * rate``
    restores zero mean and unit variance.

    Example:
        >>> import torch
        >>> AlphaDropout(0.5)(torch.ones(2, 2)).tolist()  # inference: the identity
        [[1.0, 1.0], [1.0, 1.0]]
    """

    _ALPHA, _SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(seed, **kwargs)
        self.rate = check_rate(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)

    def _noise(self, inputs: torch.Tensor) -> torch.Tensor:
        if self.rate == 0:
            return inputs
        shape = inputs.shape
        if self.noise_shape is not None:  # None entries take the input's size (Keras)
            shape = torch.Size(s if n is None else n for n, s in zip(self.noise_shape, inputs.shape))
        kept = (self.random.uniform(shape, 0.0, 1.0, inputs.device) >= self.rate).to(inputs.dtype)
        alpha_p = -self._ALPHA * self._SCALE
        a = ((1 - self.rate) * (1 + self.rate * alpha_p**2)) ** -0.5
        b = -a * alpha_p * self.rate
        return a * (inputs * kept + alpha_p * (1 - kept)) + b


class SpatialDropout1D(_Noise):
    """Drop whole channels of ``(batch, steps, channels)`` inputs when training (one draw per example and channel)."""

    _rank = 3

    def __init__(self, rate: float, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(seed, **kwargs)
        self.rate = check_rate(rate)

    def _noise(self, inputs: torch.Tensor) -> torch.Tensor:
        if inputs.dim() != self._rank:
            raise ValueError(
                f"Layer '{self.name}' expects inputs of rank {self._rank} (batch, ..., channels). "
                f"Received: input shape {tuple(inputs.shape)}"
            )
        if self.rate == 0:
            return inputs
        shape = (inputs.shape[0],) + (1,) * (self._rank - 2) + (inputs.shape[-1],)
        return inputs * self.random.keep_mask(shape, self.rate, inputs)


class SpatialDropout2D(SpatialDropout1D):
    """Drop whole channels of ``(batch, height, width, channels)`` inputs when training."""

    _rank = 4

    def __init__(self, rate: float, data_format: str | None = None, seed: int | None = None, **kwargs: Any) -> None:
        check_channels_last(data_format)
        super().__init__(rate, seed, **kwargs)


class ActivityRegularization(MaskedLayer):
    """Identity that adds ``l1 * sum(|x|) + l2 * sum(x**2)`` of its input to the training loss.

    As in Keras 3 the penalty is not divided by the batch size. ``layer.losses`` holds the
    penalty of the latest call (a zero before the first one), which ``fit`` adds to the loss.
    """

    def __init__(self, l1: float = 0.0, l2: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for what, value in (("l1", l1), ("l2", l2)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"`{what}` must be a float >= 0. Received: {what}={value!r}")
        self.l1, self.l2 = float(l1), float(l2)
        self._activity_loss: torch.Tensor | None = None

    def build(self, input_shape: Any) -> None:
        pass

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        x = inputs.float()
        loss = x.new_zeros(())
        if self.l1:
            loss = loss + self.l1 * x.abs().sum()
        if self.l2:
            loss = loss + self.l2 * x.square().sum()
        self._activity_loss = loss
        return inputs

    def _own_losses(self) -> list[torch.Tensor]:
        return [self._activity_loss if self._activity_loss is not None else torch.zeros(())]


class Masking(MaskedLayer):
    """Mask the steps whose features all equal ``mask_value`` (Keras's ``Masking``).

    Masked steps are zeroed and the output carries the mask ``any(x != mask_value, axis=-1)``,
    which recurrent and pooling layers downstream honour.
    """

    def __init__(self, mask_value: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def build(self, input_shape: Any) -> None:
        pass

    def _keep(self, inputs: torch.Tensor) -> torch.Tensor:
        # count_nonzero is twice as fast as any() over the last axis on CPU (same answer, NaN too)
        return torch.count_nonzero(inputs != self.mask_value, dim=-1) > 0

    def forward(self, inputs: Any, mask: Any = None, training: bool | None = None) -> Any:
        # the mask is computed once and serves both the output and the mask it carries
        if type(self).call is not Masking.call or type(self).compute_mask is not Masking.compute_mask:
            return super().forward(inputs, mask, training)  # a subclass's own call/compute_mask
        self.ensure_built(tuple(getattr(inputs, "shape", ())))
        keep = self._keep(inputs)
        return set_mask(inputs * keep.unsqueeze(-1).to(inputs.dtype), keep)

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        return inputs * self._keep(inputs).unsqueeze(-1).to(inputs.dtype)

    def compute_mask(self, inputs: Any, mask: Any = None) -> torch.Tensor:
        return self._keep(inputs)


def check_axes(axis: Any, rank: int, layer: Layer) -> list[int]:
    axes = [axis] if isinstance(axis, int) else list(axis)
    if not axes or any(not isinstance(a, int) or not -rank <= a < rank or a % rank == 0 for a in axes):
        raise ValueError(
            f"Invalid axis {axis!r} for layer '{layer.name}' on inputs of rank {rank}: expected axes in "
            f"[1, {rank - 1}] (or negative), not the batch axis."
        )
    return [a % rank for a in axes]


class Dot(Merge):
    """Dot product of two inputs along ``axes``, per example (Keras's ``Dot``).

    ``axes`` is one int (the same axis of both) or a pair; the batch axis cannot be one.
    ``normalize=True`` L2-normalises both along those axes first (cosine similarity). Inputs of
    shape ``(batch, n)`` give ``(batch, 1)``; ``(batch, t, d)`` and ``(batch, s, d)`` with
    ``axes=2`` give ``(batch, t, s)``.
    """

    _min_inputs = 2

    def __init__(self, axes: int | Sequence[int], normalize: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(axes, int):
            pair: list[int] = [axes, axes]
        elif isinstance(axes, (list, tuple)) and len(axes) == 2 and all(isinstance(a, int) for a in axes):
            pair = list(axes)
        else:
            raise TypeError(f"Invalid type/value for `axes`: expected an int or a list of 2 ints. Received: {axes!r}")
        self.axes, self.normalize = axes, bool(normalize)
        self._pair = pair

    def call(self, inputs: list[torch.Tensor], mask: Any = None, training: bool = False) -> torch.Tensor:  # type: ignore[override]
        if len(inputs) != 2:
            raise ValueError(f"A `Dot` layer should be called on exactly 2 inputs. Received: {len(inputs)} inputs")
        a, b = inputs
        ax = check_axes(self._pair[0], a.dim(), self)[0]
        bx = check_axes(self._pair[1], b.dim(), self)[0]
        if a.shape[ax] != b.shape[bx]:
            raise ValueError(
                f"Layer '{self.name}': the dot axes have different sizes, {a.shape[ax]} (axis {ax} of "
                f"{tuple(a.shape)}) and {b.shape[bx]} (axis {bx} of {tuple(b.shape)}). Check `axes`."
            )
        if self.normalize:
            a, b = F.normalize(a, dim=ax, eps=1e-12), F.normalize(b, dim=bx, eps=1e-12)
        a = a.movedim(ax, -1)
        b = b.movedim(bx, 1)
        rest_a, rest_b = a.shape[1:-1], b.shape[2:]
        out = torch.bmm(a.reshape(a.shape[0], -1, a.shape[-1]), b.reshape(b.shape[0], b.shape[1], -1))
        out = out.reshape(a.shape[0], *rest_a, *rest_b)
        return out.unsqueeze(-1) if out.dim() == 1 else out

    def compute_mask(self, inputs: Any, mask: Any = None) -> None:
        return None


def dot(
    inputs: Sequence[torch.Tensor], axes: int | Sequence[int], normalize: bool = False, **kwargs: Any
) -> torch.Tensor:
    """Functional form of the ``Dot`` layer (``keras.layers.dot([a, b], axes=1)``).

    Example:
        >>> import torch
        >>> dot([torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0, 4.0]])], axes=1).tolist()
        [[11.0]]
    """
    return Dot(axes=axes, normalize=normalize, **kwargs)(list(inputs))


__all__ = [
    "AlphaDropout",
    "dot",
    "ActivityRegularization",
    "Dot",
    "GaussianDropout",
    "GaussianNoise",
    "Identity",
    "Masking",
    "Permute",
    "RandomSource",
    "RepeatVector",
    "SpatialDropout1D",
    "SpatialDropout2D",
    "check_axes",
    "check_channels_last",
    "check_rate",
    "keras_name",
]
