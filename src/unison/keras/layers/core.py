"""Core Keras layers over torch: InputLayer, Dense, Activation, Flatten, Reshape, Dropout, Embedding.

Example:
    >>> import torch
    >>> Dense(2, activation="softmax")(torch.zeros(1, 3)).sum().item()
    1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import torch
import torch.nn.functional as F

from unison.keras import activations
from unison.keras.backend.keras_tensor import Input  # noqa: F401 - keras.layers.Input
from unison.keras.dtype_policies import DTypePolicyMixin
from unison.keras.layers.base import Layer
from unison.keras.layers.data_format import use_data_format
from unison.keras.layers.masking import get_mask, set_mask
from unison.ops.dropout_mask import dropout


def _no_quantization(layer: str, quantization_config: Any) -> None:
    """Keras 3.15 lists ``quantization_config`` (``None``) in Dense's and Embedding's configs; unison has no
    quantized layers, so only ``None`` is taken."""
    if quantization_config is not None:
        raise ValueError(
            f"{layer}(quantization_config=...) is not supported: unison has no quantized {layer}. "
            f"Received: quantization_config={quantization_config!r}; leave it out (None)."
        )


class InputLayer:
    """The shape of one example (no batch axis), given to ``Sequential`` first.

    ``InputLayer(shape=(28, 28))`` (Keras 3) or ``InputLayer(input_shape=(28, 28))`` (Keras 2).
    ``keras.Input`` returns a symbolic tensor instead (:mod:`unison.keras.backend.keras_tensor`), which
    ``Sequential`` also accepts first.
    """

    def __init__(
        self,
        shape: Sequence[int] | None = None,
        batch_size: int | None = None,
        dtype: Any = None,
        name: str | None = None,
        input_shape: Sequence[int] | None = None,
        batch_shape: Sequence[int | None] | None = None,
        sparse: bool = False,
        ragged: bool = False,
        optional: bool = False,
        **kwargs: Any,
    ) -> None:
        if kwargs:
            raise TypeError(f"InputLayer got unexpected keyword arguments: {sorted(kwargs)}.")
        wanted = [k for k, v in (("sparse", sparse), ("ragged", ragged), ("optional", optional)) if v]
        if wanted:
            raise ValueError(
                f"InputLayer({wanted[0]}=True) is not supported by unison: its inputs are dense tensors. "
                f"Leave {wanted[0]} out (Keras's default, False)."
            )
        if batch_shape is not None:
            # Keras 3's config form: the batch size first, then one example's shape
            if shape is not None or input_shape is not None:
                raise ValueError(f"Pass batch_shape= or shape=, not both. Received: batch_shape={batch_shape!r}")
            # None entries (unknown sizes) are kept, as a shape= with None would keep them
            batch_size, shape = batch_shape[0], cast("Sequence[int]", tuple(batch_shape[1:]))
        if shape is not None and input_shape is not None:
            raise ValueError(
                f"Pass shape= or input_shape=, not both. Received: shape={shape!r}, input_shape={input_shape!r}"
            )
        shape = shape if shape is not None else input_shape
        if shape is None:
            raise ValueError("InputLayer needs shape=, the shape of one example, e.g. InputLayer(shape=(784,)).")
        if isinstance(shape, int):
            shape = (shape,)
        self.shape = tuple(None if s is None else int(s) for s in shape)
        self.dtype = dtype
        self.name = name or "input_layer"
        self.batch_size = batch_size
        self._output: Any = None

    @property
    def batch_shape(self) -> tuple[int | None, ...]:
        """``(batch_size, *shape)``, ``None`` for an unknown batch size (Keras's ``InputLayer.batch_shape``)."""
        return (self.batch_size, *self.shape)

    @property
    def output(self) -> Any:
        """The symbolic tensor this layer stands for (``keras.Input`` of the same shape, dtype and name).

        Example:
            >>> InputLayer(shape=(3,)).output.shape
            (None, 3)
        """
        if self._output is None:
            self._output = Input(shape=self.shape, batch_size=self.batch_size, dtype=self.dtype, name=self.name)
        return self._output

    def get_config(self) -> dict[str, Any]:
        """Keras 3's InputLayer config: ``batch_shape`` (batch size first), dtype and the off flags."""
        return {
            "batch_shape": self.batch_shape,
            "dtype": str(self.dtype or "float32").removeprefix("torch."),
            "sparse": False,
            "ragged": False,
            "name": self.name,
            "optional": False,
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> InputLayer:
        """The InputLayer ``get_config()`` describes."""
        return cls(**config)


class Dense(DTypePolicyMixin, Layer):
    """``activation(inputs @ kernel + bias)`` on the last axis of inputs of any rank (Keras's ``Dense``).

    A padding mask on the inputs passes through; ``dtype=`` sets this layer's dtype policy.

    Args:
        units: output size.
        activation: name (``"relu"``, ``"softmax"``...) or callable; default linear.
        use_bias: whether to add a bias.
        kernel_initializer: default ``"glorot_uniform"`` (Keras's).
        bias_initializer: default ``"zeros"``.
        kernel_regularizer, bias_regularizer: optional penalties.
        quantization_config: only ``None`` (Keras 3.15 lists it; unison has no quantized Dense).
    """

    def __init__(
        self,
        units: int,
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        quantization_config: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        _no_quantization(type(self).__name__, quantization_config)
        if not isinstance(units, int) or units < 1:
            raise ValueError(f"units must be a positive integer. Received: units={units!r}")
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self._init = (kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer)

    def build(self, input_shape: torch.Size) -> None:
        k_init, b_init, k_reg, b_reg = self._init
        # Keras's layout (in, units): get_weights/set_weights and layer.kernel match Keras; F.linear
        # takes the transposed view at no cost (the matmul reads it with a transpose flag).
        self.kernel = self.add_weight(
            name="kernel", shape=(int(input_shape[-1]), self.units), initializer=k_init, regularizer=k_reg
        )
        self.bias = (
            self.add_weight(name="bias", shape=(self.units,), initializer=b_init, regularizer=b_reg)
            if self.use_bias
            else None
        )
        self.in_features = int(input_shape[-1])

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        if inputs.dim() < 2:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected min_ndim=2, found "
                f"ndim={inputs.dim()}. Full shape received: {tuple(inputs.shape)}. A layer takes a batch: for one "
                "example add the batch axis, e.g. x[None] or np.expand_dims(x, 0)."
            )
        if not inputs.is_floating_point() and not inputs.is_complex():
            inputs = inputs.to(self.kernel.dtype)  # integer features, as Keras's matmul promotes them
        if inputs.shape[-1] != self.in_features:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected axis -1 "
                f"of input shape to have value {self.in_features}, but received input with shape "
                f"{tuple(inputs.shape)}."
            )
        bias = self.bias
        if inputs.dim() == 2 and bias is not None:
            # F.linear's own 2-D path is exactly this addmm (weight.t() of the kernel's transposed view is
            # the kernel): called straight, it skips linear's dispatch and the transpose node in
            # backward, and the kernel's gradient comes out in the kernel's layout (no copy into it)
            y = torch.addmm(bias, inputs, self.kernel)
        else:
            y = F.linear(inputs, self.kernel.t(), bias)
        return set_mask(self.activation(y), get_mask(inputs))


class Activation(DTypePolicyMixin, Layer):
    """Apply an activation by name or callable."""

    def __init__(self, activation: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return set_mask(self.activation(inputs), get_mask(inputs))


class Flatten(Layer):
    """Flatten every axis but the batch axis (channels-last order, as Keras).

    With ``data_format="channels_first"`` the channel axis (1) is moved last first, as Keras does.
    """

    def __init__(self, data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        use_data_format(self, data_format)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        # flatten(1), not reshape(n, -1): -1 is ambiguous in a batch of 0 rows, which Keras flattens
        return inputs.flatten(1) if inputs.dim() > 1 else inputs.reshape(inputs.shape[0], 1)


class Reshape(Layer):
    """Reshape each example to ``target_shape`` (one entry may be -1)."""

    def __init__(self, target_shape: Sequence[int], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_shape = tuple(int(s) for s in target_shape)
        if sum(1 for s in self.target_shape if s == -1) > 1:
            raise ValueError(f"Only one axis of target_shape may be -1. Received: target_shape={target_shape!r}")

    def build(self, input_shape: torch.Size) -> None:
        size = math.prod(input_shape[1:])
        known = math.prod(s for s in self.target_shape if s != -1)
        if (-1 in self.target_shape and size % known) or (-1 not in self.target_shape and size != known):
            raise ValueError(
                f"Layer '{self.name}' cannot reshape an input of shape {tuple(input_shape)} "
                f"({size} values per example) to target_shape={self.target_shape}."
            )

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return inputs.reshape(inputs.shape[0], *self.target_shape)


class Dropout(Layer):
    """Zero a fraction ``rate`` of the inputs during training (scaled by ``1/(1-rate)``)."""

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate < 1:
            raise ValueError(
                f"rate must be a number in [0, 1) (the fraction of inputs to drop). Received: rate={rate!r}"
            )
        self.rate = float(rate)
        self.noise_shape = tuple(noise_shape) if noise_shape is not None else None
        self.seed = seed
        self._generator: torch.Generator | None = None

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        if not self.training or self.rate == 0:
            return inputs
        shape = None
        if self.noise_shape is not None:
            # Keras's noise_shape: one keep/drop decision per entry of this shape, broadcast over
            # the input (None takes the input's size), e.g. (None, 1, 1, 1) drops whole examples.
            if len(self.noise_shape) != inputs.dim():
                raise ValueError(
                    f"Dropout layer '{self.name}': noise_shape={self.noise_shape} needs one entry per input axis; "
                    f"the input has shape {tuple(inputs.shape)}."
                )
            shape = [inputs.shape[i] if n is None else int(n) for i, n in enumerate(self.noise_shape)]
        if self.seed is not None and self._generator is None:
            # Keras's seeded Dropout: the same sequence of masks in every run
            self._generator = torch.Generator(device=inputs.device).manual_seed(int(self.seed))
        # TF's rule (keep where a uniform draw is >= rate, scale by 1/(1-rate)); on CPU the mask
        # is drawn in C, 4x faster than torch.rand and the passes around it (ops/dropout_mask.py)
        return set_mask(dropout(inputs, self.rate, shape, self._generator), get_mask(inputs))


class Embedding(DTypePolicyMixin, Layer):
    """Map integer ids in ``[0, input_dim)`` to vectors of size ``output_dim``.

    Under ``ParameterServerStrategy`` the table is sparse: a step pulls and updates only its rows.
    With ``mask_zero=True`` id 0 is padding: the output carries the Keras mask ``ids != 0``.
    """

    _config_extras = ("activity_regularizer",)  # Keras lists it
    _config_omitted = frozenset({"input_length"})  # Keras 2's argument: Keras 3 takes and drops it

    _unison_embedding_table = "embeddings"  # the table parameter (read by ParameterServerStrategy)

    def __init__(
        self,
        input_dim: int,
        output_dim: int,
        embeddings_initializer: Any = "uniform",
        embeddings_regularizer: Any = None,
        mask_zero: bool = False,
        input_length: int | None = None,
        quantization_config: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        _no_quantization(type(self).__name__, quantization_config)
        if input_dim < 1 or output_dim < 1:
            raise ValueError(
                f"input_dim and output_dim must be >= 1. Received: input_dim={input_dim}, output_dim={output_dim}"
            )
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.mask_zero = bool(mask_zero)
        init = "random_uniform" if embeddings_initializer == "uniform" else embeddings_initializer
        self.embeddings = self.add_weight(
            name="embeddings",
            shape=(self.input_dim, self.output_dim),
            initializer=init,
            regularizer=embeddings_regularizer,
        )
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        ids = inputs.long()
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.input_dim):
            bad = int(ids.max()) if int(ids.max()) >= self.input_dim else int(ids.min())
            raise ValueError(
                f"Layer '{self.name}' received id {bad}, outside [0, input_dim={self.input_dim}). "
                "Raise input_dim or fix the ids."
            )
        out = F.embedding(ids, self.embeddings)
        return set_mask(out, ids != 0) if self.mask_zero else out

    def compute_mask(self, inputs: torch.Tensor, mask: Any = None) -> torch.Tensor | None:
        return torch.as_tensor(inputs).long() != 0 if self.mask_zero else None
