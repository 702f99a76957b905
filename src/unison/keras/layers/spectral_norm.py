"""``SpectralNormalization``: divide a wrapped layer's kernel by its largest singular value (Keras 3).

In training each call runs ``power_iterations`` steps of the power method from the stored
``vector_u``, then writes the normalised kernel into the wrapped layer's kernel and the new
vector into ``vector_u`` (both outside the gradient, as Keras's assignments are), and calls the
wrapped layer; at inference the wrapped layer runs on the kernel as it is. A kernel of zeros is
left alone. The weights list in Keras's order: the kernel, ``vector_u``, then the wrapped
layer's other weights.

Example:
    >>> import torch
    >>> from unison.keras.layers.core import Dense
    >>> layer = SpectralNormalization(Dense(4), power_iterations=50)
    >>> _ = layer(torch.randn(2, 3), training=True)
    >>> round(float(torch.linalg.matrix_norm(layer.kernel.detach(), ord=2)), 1)
    1.0
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.keras import initializers
from unison.keras.layers.input_spec import InputSpec
from unison.keras.layers.wrappers import Wrapper
from unison.keras.utils.weight_lists import assign_weights, keras_weights


class SpectralNormalization(Wrapper):
    """Spectral normalisation of a layer with a ``kernel`` (or an ``embeddings`` table).

    Args:
        layer: the layer to wrap (``Dense``, ``Conv2D``, ``Embedding``...).
        power_iterations: power-method steps per training call (> 0).
    """

    def __init__(self, layer: Any, power_iterations: int = 1, **kwargs: Any) -> None:
        super().__init__(layer, **kwargs)
        if power_iterations <= 0:
            raise ValueError(
                f"`power_iterations` should be greater than zero. Received: `power_iterations={power_iterations}`"
            )
        self.power_iterations = int(power_iterations)

    @property
    def kernel(self) -> torch.Tensor:
        """The wrapped layer's kernel (or embeddings)."""
        for name in ("kernel", "embeddings"):
            value = getattr(self.layer, name, None)
            if isinstance(value, torch.Tensor):
                return value
        raise ValueError(f"{type(self.layer).__name__} object has no attribute 'kernel' nor 'embeddings'")

    def build(self, input_shape: Any = None) -> None:
        super().build(input_shape)
        self.input_spec = InputSpec(min_ndim=1, axes={-1: input_shape[-1]})
        kernel = self.kernel
        self.vector_u = self.add_weight(
            name="vector_u",
            shape=(1, int(kernel.shape[-1])),
            initializer=initializers.TruncatedNormal(stddev=0.02),
            trainable=False,
            dtype=kernel.dtype,
        )

    def call(self, inputs: Any, training: bool | None = None) -> Any:  # type: ignore[override]
        if training is None:
            training = self.training
        if training:
            with torch.no_grad():
                kernel = self.kernel
                if bool((kernel != 0).any()):
                    vector_u, normalized = self.normalized_weights()
                    self.vector_u.copy_(vector_u)
                    kernel.copy_(normalized)
        output = self.layer(inputs)
        return output.to(inputs.dtype) if isinstance(inputs, torch.Tensor) and inputs.is_floating_point() else output

    def normalized_weights(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(new vector_u, kernel / sigma)`` by ``power_iterations`` steps of the power method."""
        kernel = self.kernel
        weights = kernel.reshape(-1, kernel.shape[-1])
        vector_u = self.vector_u.detach()
        vector_v = vector_u
        for _ in range(self.power_iterations):
            vector_v = _unit(vector_u @ weights.t())
            vector_u = _unit(vector_v @ weights)
        vector_u, vector_v = vector_u.detach(), vector_v.detach()
        sigma = (vector_v @ weights) @ vector_u.t()
        return vector_u.to(self.vector_u.dtype), (kernel / sigma).reshape(kernel.shape).to(kernel.dtype)

    # Keras lists the kernel first (its build assigns `self.kernel`, which tracks it), then vector_u
    def _ordered(self) -> list[torch.Tensor]:
        kernel = self.kernel
        rest = [w for w in super().weights if w is not kernel and w is not self.vector_u]
        return [kernel, self.vector_u, *rest]

    @property
    def weights(self) -> list[Any]:
        return self._ordered() if self.built else super().weights

    def get_weights(self) -> list[Any]:
        return [w.detach().cpu().numpy().copy() for w in self.weights]

    def set_weights(self, weights: list[Any]) -> None:
        if not self.built:
            super().set_weights(weights)
            return
        values = list(weights)
        ordered = self._ordered()
        if len(values) != len(ordered):
            raise ValueError(
                f"set_weights on layer {self.name!r} expects {len(ordered)} arrays (the layer's weights, in the "
                f"order of layer.weights), received {len(values)}."
            )
        # back into unison's own order (vector_u, then the wrapped layer's), which assign_weights checks
        by_id = {id(w): v for w, v in zip(ordered, values)}
        assign_weights(self, [by_id[id(w)] for w in keras_weights(self)], f"layer {self.name!r}")


def _unit(x: torch.Tensor) -> torch.Tensor:
    """``x / ||x||`` over all entries (Keras's ``normalize(axis=None)``: an epsilon-floored L2 norm)."""
    return F.normalize(x.reshape(-1), dim=0, eps=1e-12).reshape(x.shape)


__all__ = ["SpectralNormalization"]
