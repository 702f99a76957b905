"""tf_keras's ``layers.experimental.RandomFourierFeatures``: ``cos(x @ (kernel / scale) + bias)``,
random features whose inner products approximate a Gaussian (``"gaussian"``) or Laplacian
(``"laplacian"``) kernel.

The random kernel and phases are fixed (not trained); ``kernel_scale`` is trained when the layer
is (``trainable=True``; tf_keras's default is ``False``) and kept non-negative.

Example:
    >>> import torch
    >>> layer = RandomFourierFeatures(output_dim=6)
    >>> y = layer(torch.randn(4, 3))
    >>> tuple(y.shape), bool((y.abs() <= 1).all())
    ((4, 6), True)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from unison.keras import initializers
from unison.keras.layers.base import Layer

_KERNELS = ("gaussian", "laplacian")


class RandomFourierFeatures(Layer):
    """Random Fourier features (tf_keras's ``RandomFourierFeatures``).

    Args:
        output_dim: number of features.
        kernel_initializer: ``"gaussian"`` (default), ``"laplacian"`` or an initializer.
        scale: the kernel's width; default ``sqrt(input_dim / 2)`` for ``"gaussian"``, else 1.
        trainable: whether ``kernel_scale`` is trained (default ``False``).
    """

    _own_argument_names = frozenset({"kernel_initializer"})

    def __init__(
        self,
        output_dim: int,
        kernel_initializer: Any = "gaussian",
        scale: float | None = None,
        trainable: bool = False,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        if output_dim <= 0:
            raise ValueError(f"`output_dim` should be a positive integer. Received: {output_dim}")
        if isinstance(kernel_initializer, str) and kernel_initializer.lower() not in _KERNELS:
            raise ValueError(
                f"Unsupported `kernel_initializer`: {kernel_initializer} Expected one of: {list(_KERNELS)}"
            )
        if scale is not None and scale <= 0.0:
            raise ValueError(f"When provided, `scale` should be a positive float. Received: {scale}")
        super().__init__(trainable=trainable, name=name, **kwargs)
        self.output_dim = int(output_dim)
        self.kernel_initializer = kernel_initializer
        self.scale = scale

    def build(self, input_shape: Any) -> None:
        if len(input_shape) != 2:
            raise ValueError(
                f"The rank of the input tensor should be 2. Received input with rank {len(input_shape)} instead. "
                f"Full input shape received: {tuple(input_shape)}"
            )
        input_dim = int(input_shape[1])
        if self.scale is None:
            gaussian = isinstance(self.kernel_initializer, str) and self.kernel_initializer.lower() == "gaussian"
            self.scale = float(np.sqrt(input_dim / 2.0)) if gaussian else 1.0
        scale = float(self.scale)
        # tf_keras lists kernel_scale first (its only trainable weight)
        self.kernel_scale = self.add_weight(
            name="kernel_scale", shape=(1,), initializer=initializers.Constant(scale), constraint="NonNeg"
        )
        self.unscaled_kernel = self.add_weight(
            name="unscaled_kernel",
            shape=(input_dim, self.output_dim),
            initializer=_features_initializer(self.kernel_initializer),
            trainable=False,
        )
        self.bias = self.add_weight(
            name="bias",
            shape=(self.output_dim,),
            initializer=initializers.RandomUniform(minval=0.0, maxval=2 * math.pi),
            trainable=False,
        )

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        x = inputs.to(torch.float32)
        kernel = (1.0 / self.kernel_scale) * self.unscaled_kernel
        return torch.cos(torch.addmm(self.bias, x, kernel))

    def compute_output_shape(self, input_shape: Any) -> Any:
        if len(input_shape) != 2:
            raise ValueError(f"Shape {tuple(input_shape)} must have rank 2")
        return (input_shape[0], self.output_dim)


def _features_initializer(initializer: Any) -> Any:
    if isinstance(initializer, str) and initializer.lower() == "gaussian":
        return initializers.RandomNormal(stddev=1.0)
    if isinstance(initializer, str) and initializer.lower() == "laplacian":

        def cauchy(tensor: torch.Tensor) -> torch.Tensor:  # a standard Cauchy: tan(pi * (u - 1/2))
            with torch.no_grad():
                return tensor.copy_(torch.tan(math.pi * (torch.rand_like(tensor) - 0.5)))

        return cauchy
    return initializer


__all__ = ["RandomFourierFeatures"]
