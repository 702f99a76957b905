"""``EinsumDense``: a dense layer whose product is any einsum equation (Keras 3, tf_keras).

The equation names the input's axes, the kernel's axes and the output's axes
(``"abc,cde->abde"``; ``...`` stands for axes passed through, on the left or the right). The
kernel's and the bias's shapes follow from the equation, the input shape and ``output_shape``
exactly as in Keras (``analyze_equation``), so weights copy across either way, in Keras's
shapes. The product runs in ``torch.einsum``; an equation that is a plain dense (the kernel's
first axis contracts the input's last, its second is the output's last) runs in ``F.linear``.

Example:
    >>> import torch
    >>> layer = EinsumDense("abc,cde->abde", output_shape=(None, 5, 2), bias_axes="de")
    >>> tuple(layer(torch.zeros(3, 4, 6)).shape), tuple(layer.kernel.shape), tuple(layer.bias.shape)
    ((3, 4, 5, 2), (6, 5, 2), (5, 2))
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from unison.keras import activations, initializers
from unison.keras.layers.masking import MaskedLayer

Shape = Sequence[int | None]


def _split(equation: str) -> tuple[str, str, str, bool]:
    """``(input axes, kernel axes, output axes, elided on the left)`` of a Keras einsum equation."""
    text = re.sub(r"\.\.\.", "0", equation) if isinstance(equation, str) else ""
    for pattern, left in (
        ("([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)$", False),
        ("0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)$", True),
        ("([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0$", False),
    ):
        match = re.match(pattern, text)
        if match:
            return match.group(1), match.group(2), match.group(3), left
    raise ValueError(
        f"Invalid einsum equation '{equation}'. Equations must be in the form "
        "[X],[Y]->[Z], ...[X],[Y]->...[Z], or [X]...,[Y]->[Z]...."
    )


def analyze_equation(
    equation: str, bias_axes: str | None, input_shape: Shape, output_shape: Shape
) -> tuple[list[int], list[int] | None, list[int | None], list[int], list[int]]:
    """Keras's shapes for ``equation``: ``(kernel, bias or None, full output, kernel input axes, kernel output axes)``.

    ``output_shape`` leaves out the batch axis; ``None`` entries are taken from the input.

    Example:
        >>> analyze_equation("ab,bc->ac", "c", (None, 4), (3,))[:3]
        ([4, 3], [3], [None, 3])
    """
    input_spec, weight_spec, output_spec, left_elided = _split(equation)
    input_shape = list(input_shape)
    elided = len(input_shape) - len(input_spec)
    out: list[int | None] = [output_shape] if isinstance(output_shape, int) else list(output_shape)
    out.insert(0, input_shape[0])
    if elided > 0 and left_elided:
        for i in range(1, elided):
            out.insert(1, input_shape[i])
    elif elided > 0:
        out.extend(input_shape[len(input_shape) - elided :])
    if left_elided:
        input_map = {dim: i + elided - len(input_shape) for i, dim in enumerate(input_spec)}
        output_map = {dim: i + elided for i, dim in enumerate(output_spec)}
    else:
        input_map = {dim: i for i, dim in enumerate(input_spec)}
        output_map = {dim: i for i, dim in enumerate(output_spec)}
    if len(out) < len(output_spec) + max(elided, 0):
        raise ValueError(
            f"EinsumDense: output_shape={tuple(output_shape) if not isinstance(output_shape, int) else output_shape} "
            f"does not fit the output '{output_spec}' of equation '{equation}' (give one entry per output axis "
            "after the batch axis)."
        )
    for dim in input_spec:
        if dim in output_map:
            have, want = input_shape[input_map[dim]], out[output_map[dim]]
            if want is not None and want != have:
                raise ValueError(
                    f"Input shape and output shape do not match at shared dimension '{dim}'. Input shape is "
                    f"{have}, and output shape is {want}."
                )
    for dim in output_spec:
        if dim not in input_spec and dim not in weight_spec:
            raise ValueError(
                f"Dimension '{dim}' was specified in the output '{output_spec}' but has no corresponding dim in "
                f"the input spec '{input_spec}' or weight spec '{weight_spec}'"
            )
    kernel: list[int] = []
    input_axes: list[int] = []
    output_axes: list[int] = []
    for i, dim in enumerate(weight_spec):
        if dim in output_map:
            size = out[output_map[dim]]
            output_axes.append(i)
        elif dim in input_map:
            size = input_shape[input_map[dim]]
            input_axes.append(i)
        else:
            raise ValueError(
                f"Weight dimension '{dim}' did not have a match in either the input spec '{input_spec}' or the "
                f"output spec '{output_spec}'. For this layer, the weight must be fully specified."
            )
        if size is None:
            raise ValueError(
                f"EinsumDense: the kernel axis '{dim}' of equation '{equation}' has no known size (input shape "
                f"{tuple(input_shape)}, output_shape {tuple(out[1:])}). Give its size in output_shape."
            )
        kernel.append(int(size))
    bias: list[int] | None = None
    if bias_axes is not None:
        for char in bias_axes:
            if char not in output_spec:
                raise ValueError(
                    f"Bias dimension '{char}' was requested, but is not part of the output spec '{output_spec}'"
                )
        shift = elided if left_elided else 0
        sizes = {char: out[i + shift] for i, char in enumerate(output_spec)}
        first = min(output_spec.find(char) for char in bias_axes)
        unknown = [c for c in bias_axes if sizes[c] is None]
        if unknown:
            raise ValueError(
                f"EinsumDense: the bias axis '{unknown[0]}' of equation '{equation}' has no known size (output "
                f"shape {tuple(out)}). Give its size in output_shape, or leave it out of bias_axes."
            )
        bias = [int(sizes[c]) if c in bias_axes else 1 for c in output_spec[first:]]  # type: ignore[arg-type]
        if not left_elided:
            bias.extend([1] * max(elided, 0))
    return kernel, bias, out, input_axes, output_axes


def _is_plain_dense(equation: str) -> bool:
    """Whether the equation is ``x @ kernel`` on the last axis (``...b,bc->...c``, ``abc,cd->abd``)."""
    try:
        inputs, weight, output, left = _split(equation)
    except ValueError:
        return False
    if "..." in equation and not left:  # axes passed through on the right: not a last-axis product
        return False
    return (
        len(weight) == 2
        and len(set(inputs + weight)) == len(inputs) + 1
        and inputs[-1] == weight[0]
        and output == inputs[:-1] + weight[1]
    )


class EinsumDense(MaskedLayer):
    """A dense layer over any einsum equation (Keras's ``EinsumDense``).

    Args:
        equation: ``"<input>,<kernel>-><output>"`` (e.g. ``"abc,cde->abde"``), ``...`` allowed.
        output_shape: the output's shape without the batch axis (an int for one axis); ``None``
            entries take the input's size.
        activation: applied last; default linear.
        bias_axes: the output axes (letters) that get a bias; default none.
        kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer: as in ``Dense``.
            A variance-scaling initializer (``"glorot_uniform"``) counts fans over the kernel's
            input and output axes, as Keras 3 does.
    """

    supports_masking = False

    def __init__(
        self,
        equation: str,
        output_shape: int | Shape,
        activation: Any = None,
        bias_axes: str | None = None,
        kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        lora_rank: int | None = None,
        lora_alpha: float | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("gptq_unpacked_column_size", None)
        if kwargs.pop("quantization_config", None) is not None:
            raise ValueError("EinsumDense(quantization_config=...) is not supported by unison; leave it out.")
        if lora_rank:
            raise ValueError(
                f"EinsumDense(lora_rank={lora_rank!r}) is not supported by unison: LoRA adapters are not "
                "implemented. Leave lora_rank out (train the full kernel)."
            )
        super().__init__(**kwargs)
        _split(equation)  # a malformed equation fails here, as in Keras's first call
        self.equation = equation
        self.partial_output_shape = (output_shape,) if isinstance(output_shape, int) else tuple(output_shape)
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        self._init = (kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer)
        self._dense = _is_plain_dense(equation)
        self.full_output_shape: tuple[int | None, ...] | None = None

    def build(self, input_shape: Shape) -> None:
        k_init, b_init, k_reg, b_reg = self._init
        kernel_shape, bias_shape, full, input_axes, output_axes = analyze_equation(
            self.equation, self.bias_axes, input_shape, self.partial_output_shape
        )
        self.full_output_shape = tuple(full)
        self.kernel = self.add_weight(name="kernel", shape=tuple(kernel_shape), initializer="zeros", regularizer=k_reg)
        _init_kernel(self.kernel, k_init, input_axes, output_axes)
        self.bias = (
            self.add_weight(name="bias", shape=tuple(bias_shape), initializer=b_init, regularizer=b_reg)
            if bias_shape is not None
            else None
        )

    def forward(self, inputs: Any, training: bool | None = None) -> Any:  # type: ignore[override]
        if not isinstance(inputs, torch.Tensor):
            inputs = torch.as_tensor(inputs)
        self.ensure_built(tuple(inputs.shape))
        return self.call(inputs)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        if not inputs.is_floating_point():
            inputs = inputs.to(self.kernel.dtype)
        if self._dense:
            bias = self.bias.reshape(-1) if self.bias is not None and self.bias.dim() == 1 else None
            y = F.linear(inputs, self.kernel.t(), bias)
            if self.bias is not None and bias is None:
                y = y + self.bias
        else:
            y = torch.einsum(self.equation, inputs, self.kernel.to(inputs.dtype))
            if self.bias is not None:
                y = y + self.bias
        return self.activation(y)

    def compute_output_shape(self, input_shape: Any) -> tuple[int | None, ...]:
        return tuple(analyze_equation(self.equation, self.bias_axes, tuple(input_shape), self.partial_output_shape)[2])

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return None


def _init_kernel(kernel: torch.Tensor, initializer: Any, input_axes: list[int], output_axes: list[int]) -> None:
    """Fill ``kernel``; a variance-scaling initializer sees fans over Keras's input and output axes."""
    init = initializers.get(initializer)
    with torch.no_grad():
        if isinstance(init, initializers.VarianceScaling) and kernel.dim() != 2:
            # every kernel axis is an input or an output axis, so (fan_in, fan_out) holds its numbers
            fan_in = math.prod(kernel.shape[i] for i in input_axes)
            fan_out = math.prod(kernel.shape[i] for i in output_axes)
            flat = torch.empty(fan_in, fan_out, dtype=kernel.dtype)
            init(flat)
            kernel.copy_(flat.reshape(kernel.shape))
        else:
            init(kernel)


__all__ = ["EinsumDense", "analyze_equation"]
