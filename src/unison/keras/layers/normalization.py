"""BatchNormalization, synchronised across replicas by default.

Batch statistics are computed over the *global* batch: each replica contributes its sums,
sums of squares and row count through one differentiable all-reduce, so N replicas normalise
exactly as one device would on the global batch (the equivalence contract of DESIGN section 3),
and a replica with zero rows still takes part. Keras's own default is per-replica statistics
(``synchronized=False``); pass that to get it.

Example:
    >>> import torch
    >>> bn = BatchNormalization()
    >>> y = bn(torch.randn(8, 3))
    >>> bool(torch.allclose(y.mean(0), torch.zeros(3), atol=1e-5))
    True
"""

from __future__ import annotations

from typing import Any

import torch

from unison.comm.functional import differentiable_all_reduce
from unison.distribute.strategy import get_strategy
from unison.keras import initializers
from unison.keras.layers.base import Layer


class BatchNormalization(Layer):
    """Normalise over every axis but ``axis`` with batch statistics (moving ones at inference).

    Args:
        axis: the feature axis (default -1, channels-last).
        momentum: moving-average factor, Keras's convention (``0.99`` keeps 99% of the old value).
        epsilon: added to the variance.
        center, scale: learn ``beta``/``gamma``.
        synchronized: statistics over the global batch (all replicas) instead of the local one.
    """

    def __init__(self, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", moving_mean_initializer: Any = "zeros",
                 moving_variance_initializer: Any = "ones", synchronized: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"momentum must be in [0, 1]. Received: momentum={momentum}")
        if epsilon <= 0:
            raise ValueError(f"epsilon must be > 0. Received: epsilon={epsilon}")
        self.axis, self.momentum, self.epsilon = axis, float(momentum), float(epsilon)
        self.center, self.scale, self.synchronized = center, scale, synchronized
        self._inits = (beta_initializer, gamma_initializer, moving_mean_initializer, moving_variance_initializer)

    def build(self, input_shape: torch.Size) -> None:
        self.features = int(input_shape[self.axis])
        beta, gamma, mm, mv = self._inits
        shape = (self.features,)
        self.gamma = self.add_weight("gamma", shape, gamma) if self.scale else None
        self.beta = self.add_weight("beta", shape, beta) if self.center else None
        for name, init in (("moving_mean", mm), ("moving_variance", mv)):
            buf = torch.empty(shape)
            initializers.get(init)(buf)
            self.register_buffer(name, buf)

    def _broadcast_shape(self, x: torch.Tensor) -> list[int]:
        shape = [1] * x.dim()
        shape[self.axis] = self.features
        return shape

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        shape = self._broadcast_shape(inputs)
        if self.training:
            dims = [d for d in range(inputs.dim()) if d != self.axis % inputs.dim()]
            count = inputs.new_tensor([inputs.numel() / self.features])
            stats = torch.cat([inputs.sum(dims), inputs.square().sum(dims), count])
            if self.synchronized:
                stats = differentiable_all_reduce(stats, get_strategy().extended.communicator)
            n = stats[-1].clamp_min(1.0)
            mean = stats[: self.features] / n
            var = (stats[self.features: 2 * self.features] / n - mean.square()).clamp_min(0.0)
            with torch.no_grad():
                m = self.momentum
                self.moving_mean.mul_(m).add_(mean.detach(), alpha=1 - m)
                self.moving_variance.mul_(m).add_(var.detach(), alpha=1 - m)
        else:
            mean, var = self.moving_mean, self.moving_variance
        y = (inputs - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.epsilon)
        if self.gamma is not None:
            y = y * self.gamma.view(shape)
        if self.beta is not None:
            y = y + self.beta.view(shape)
        return y
