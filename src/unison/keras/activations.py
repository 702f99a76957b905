"""Keras activation names resolved to ``torch.nn`` modules.

``get("relu")`` returns a fresh ``torch.nn.Module``; layers call it on their output. Keras 3
defaults apply (``leaky_relu`` slope 0.2, exact ``gelu``, ``hard_sigmoid`` = relu6(x + 3) / 6).

The ``Softmax`` and ``Sigmoid`` modules attach their input (the logits) to the returned
probabilities, as TF Keras does with ``_keras_logits``: a cross-entropy loss that receives such
an output with ``from_logits=False`` computes from the logits instead of taking ``log`` of a
rounded probability, so a very confident prediction still gives a finite, exact loss.

Example:
    >>> import torch
    >>> from unison.keras import activations
    >>> out = activations.get("softmax")(torch.tensor([[0.0, 0.0]]))
    >>> out.tolist(), hasattr(out, activations.LOGITS_ATTR)
    ([[0.5, 0.5]], True)
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from unison.errors import format_choices

__all__ = [
    "LOGITS_ATTR",
    "SIGMOID_LOGITS_ATTR",
    "Exponential",
    "Lambda",
    "LogSoftmax",
    "Sigmoid",
    "Softmax",
    "get",
    "names",
]

LOGITS_ATTR = "_unison_logits"
"""Attribute of a softmax output that holds the logits it was computed from."""

SIGMOID_LOGITS_ATTR = "_unison_sigmoid_logits"
"""Attribute of a sigmoid output that holds the logits it was computed from."""

ActivationLike = str | None | nn.Module | Callable[[torch.Tensor], torch.Tensor]


class Softmax(nn.Module):
    """Softmax over ``axis`` that remembers its logits on the output.

    The logits are attached (as ``LOGITS_ATTR``) only when the softmax runs over the last axis,
    because the losses that use them normalise over the last axis.

    Example:
        >>> import torch
        >>> y = Softmax()(torch.tensor([[1.0, 2.0]]))
        >>> getattr(y, LOGITS_ATTR).tolist()
        [[1.0, 2.0]]
    """

    def __init__(self, axis: int = -1) -> None:
        super().__init__()
        self.axis = axis

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.softmax(x, dim=self.axis)
        if self.axis in (-1, x.dim() - 1):
            setattr(out, LOGITS_ATTR, x)
        return out

    def extra_repr(self) -> str:
        return f"axis={self.axis}"


class Sigmoid(nn.Module):
    """Logistic sigmoid that remembers its logits on the output (``SIGMOID_LOGITS_ATTR``).

    Example:
        >>> import torch
        >>> y = Sigmoid()(torch.tensor([0.0]))
        >>> y.tolist(), getattr(y, SIGMOID_LOGITS_ATTR).tolist()
        ([0.5], [0.0])
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.sigmoid(x)
        setattr(out, SIGMOID_LOGITS_ATTR, x)
        return out


class LogSoftmax(nn.Module):
    """``log_softmax`` over ``axis`` (Keras default: the last axis).

    Example:
        >>> import torch
        >>> round(LogSoftmax()(torch.tensor([0.0, 0.0]))[0].item(), 4)
        -0.6931
    """

    def __init__(self, axis: int = -1) -> None:
        super().__init__()
        self.axis = axis

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=self.axis)

    def extra_repr(self) -> str:
        return f"axis={self.axis}"


class Exponential(nn.Module):
    """Element-wise ``exp``.

    Example:
        >>> import torch
        >>> Exponential()(torch.tensor([0.0])).tolist()
        [1.0]
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.exp(x)


class Lambda(nn.Module):
    """Wraps a plain callable ``fn(x) -> tensor`` so it can sit in a module tree.

    Example:
        >>> import torch
        >>> Lambda(lambda x: 2 * x)(torch.tensor([1.0])).tolist()
        [2.0]
    """

    def __init__(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x)

    def extra_repr(self) -> str:
        return getattr(self.fn, "__name__", type(self.fn).__name__)


# Factories, not instances: every layer gets its own module so that module trees never share
# a child (which would confuse named_modules() and state-dict keys).
_REGISTRY: dict[str, Callable[[], nn.Module]] = {
    "linear": nn.Identity,
    "relu": nn.ReLU,
    "sigmoid": Sigmoid,
    "softmax": Softmax,
    "tanh": nn.Tanh,
    "elu": nn.ELU,
    "selu": nn.SELU,
    "gelu": nn.GELU,
    "swish": nn.SiLU,
    "silu": nn.SiLU,
    "softplus": nn.Softplus,
    "softsign": nn.Softsign,
    "leaky_relu": lambda: nn.LeakyReLU(negative_slope=0.2),
    "relu6": nn.ReLU6,
    "exponential": Exponential,
    "log_softmax": LogSoftmax,
    "hard_sigmoid": nn.Hardsigmoid,
    "hard_silu": nn.Hardswish,
    "hard_swish": nn.Hardswish,
    "mish": nn.Mish,
}


def names() -> list[str]:
    """Return the sorted activation names ``get`` understands.

    Example:
        >>> "relu" in names()
        True
    """
    return sorted(_REGISTRY)


def get(identifier: ActivationLike) -> nn.Module:
    """Resolve a Keras activation identifier to a new ``torch.nn.Module``.

    Args:
        identifier: ``None`` or ``"linear"`` (identity), a Keras activation name such as
            ``"relu"`` or ``"softmax"``, an ``nn.Module`` (returned as is) or a callable
            ``fn(x) -> tensor`` (wrapped in ``Lambda``).

    Returns:
        The activation module.

    Raises:
        ValueError: for an unknown name or an identifier that is neither a string nor callable.

    Example:
        >>> get("relu")
        ReLU()
        >>> get(None)
        Identity()
    """
    if identifier is None:
        return nn.Identity()
    if isinstance(identifier, str):
        factory = _REGISTRY.get(identifier) or _REGISTRY.get(identifier.lower())
        if factory is None:
            raise ValueError(
                f"Unknown activation: {identifier!r}. Expected one of: "
                f"{format_choices(list(_REGISTRY))}. Received: activation={identifier!r}"
            )
        return factory()
    if isinstance(identifier, nn.Module):
        return identifier
    if callable(identifier):
        return Lambda(identifier)
    raise ValueError(
        "Could not interpret activation identifier: expected a name such as 'relu', a "
        f"torch.nn.Module or a callable. Received: activation={identifier!r}"
    )
