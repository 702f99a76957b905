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

from unison.errors import did_you_mean, format_choices
from unison.keras.ops import _nn_more
from unison.ops import fastpath
from unison.ops.math import LOGITS_ATTR, SIGMOID_LOGITS_ATTR

__all__ = [
    "sparse_sigmoid",
    "sparsemax",
    "threshold",
    "tanh_shrink",
    "squareplus",
    "sparse_plus",
    "soft_shrink",
    "serialize",
    "log_sigmoid",
    "hard_tanh",
    "hard_shrink",
    "glu",
    "deserialize",
    "celu",
    "LOGITS_ATTR",
    "SIGMOID_LOGITS_ATTR",
    "Exponential",
    "Lambda",
    "LogSoftmax",
    "Sigmoid",
    "Softmax",
    "elu",
    "exponential",
    "gelu",
    "get",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "leaky_relu",
    "linear",
    "log_softmax",
    "mish",
    "names",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "softsign",
    "swish",
    "tanh",
]

# LOGITS_ATTR / SIGMOID_LOGITS_ATTR: the attributes of a softmax / sigmoid output that hold the logits
# it was computed from; defined beside tf.math.sigmoid and tf.nn.softmax, which attach them too.

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


class Tanh(nn.Tanh):
    """``nn.Tanh`` through NumPy's vectorised CPU kernel (7x torch's, as ``tf.tanh``), autograd kept.

    Example:
        >>> import torch
        >>> Tanh()(torch.tensor([0.0])).tolist()
        [0.0]
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return fastpath.tanh_autograd(x)


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
    "tanh": Tanh,
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


# --- the activations as functions (``keras.activations.relu(x)``), Keras 3's signatures ------------
def relu(
    x: torch.Tensor, negative_slope: float = 0.0, max_value: float | None = None, threshold: float = 0.0
) -> torch.Tensor:
    """``keras.activations.relu``: ``x`` above ``threshold``, ``negative_slope * (x - threshold)`` below, capped at ``max_value``.

    Example:
        >>> relu(torch.tensor([-2.0, 1.0, 8.0]), max_value=6.0).tolist()
        [0.0, 1.0, 6.0]
    """
    x = torch.as_tensor(x)
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return torch.relu(x)
    below = negative_slope * (x - threshold) if negative_slope else torch.zeros_like(x)  # 0.0, not -0.0
    out = torch.where(x >= threshold, x, below)
    return out if max_value is None else torch.clamp(out, max=max_value)


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.sigmoid`` (the output remembers its logits, as the layer's does)."""
    return Sigmoid()(torch.as_tensor(x))  # type: ignore[no-any-return]


def softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    """``keras.activations.softmax`` over ``axis`` (the output remembers its logits)."""
    return Softmax(axis)(torch.as_tensor(x))  # type: ignore[no-any-return]


def log_softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    """``keras.activations.log_softmax`` over ``axis``."""
    return torch.log_softmax(torch.as_tensor(x), dim=axis)


def tanh(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.tanh`` (NumPy's vectorised kernel on CPU, as ``tf.tanh``: 7x torch's)."""
    return fastpath.tanh_autograd(torch.as_tensor(x))


def elu(x: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    """``keras.activations.elu``."""
    return nn.functional.elu(torch.as_tensor(x), alpha=alpha)


def selu(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.selu``."""
    return nn.functional.selu(torch.as_tensor(x))


def gelu(x: torch.Tensor, approximate: bool = False) -> torch.Tensor:
    """``keras.activations.gelu`` (exact unless ``approximate=True``, Keras 3's default)."""
    return nn.functional.gelu(torch.as_tensor(x), approximate="tanh" if approximate else "none")


def silu(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.silu`` (= ``swish``): ``x * sigmoid(x)``."""
    return nn.functional.silu(torch.as_tensor(x))


swish = silu


def softplus(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.softplus``."""
    return nn.functional.softplus(torch.as_tensor(x))


def softsign(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.softsign``."""
    return nn.functional.softsign(torch.as_tensor(x))


def leaky_relu(x: torch.Tensor, negative_slope: float = 0.2) -> torch.Tensor:
    """``keras.activations.leaky_relu`` (Keras 3's default slope 0.2)."""
    return nn.functional.leaky_relu(torch.as_tensor(x), negative_slope=negative_slope)


def relu6(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.relu6``."""
    return nn.functional.relu6(torch.as_tensor(x))


def exponential(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.exponential``."""
    return torch.exp(torch.as_tensor(x))


def hard_sigmoid(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.hard_sigmoid``: ``relu6(x + 3) / 6`` (Keras 3)."""
    return nn.functional.hardsigmoid(torch.as_tensor(x))


def hard_silu(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.hard_silu`` (= ``hard_swish``): ``x * hard_sigmoid(x)``."""
    return nn.functional.hardswish(torch.as_tensor(x))


hard_swish = hard_silu


def mish(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.mish``."""
    return nn.functional.mish(torch.as_tensor(x))


def linear(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.linear``: the identity."""
    return torch.as_tensor(x)


# Keras 3's newer activations, as functions (their registry modules wrap them).
def log_sigmoid(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.log_sigmoid``: ``-softplus(-x)``, finite for large ``|x|``."""
    return nn.functional.logsigmoid(torch.as_tensor(x))


def celu(x: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    """``keras.activations.celu``: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    return nn.functional.celu(torch.as_tensor(x), alpha=alpha)


def hard_tanh(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.hard_tanh``: ``x`` clipped to ``[-1, 1]``."""
    return nn.functional.hardtanh(torch.as_tensor(x))


def hard_shrink(x: torch.Tensor, threshold: float = 0.5) -> torch.Tensor:
    """``keras.activations.hard_shrink``: ``x`` where ``|x| > threshold``, else 0."""
    return nn.functional.hardshrink(torch.as_tensor(x), lambd=threshold)


def soft_shrink(x: torch.Tensor, threshold: float = 0.5) -> torch.Tensor:
    """``keras.activations.soft_shrink``: ``x`` moved ``threshold`` towards 0, 0 inside ``[-threshold, threshold]``."""
    return nn.functional.softshrink(torch.as_tensor(x), lambd=threshold)


def tanh_shrink(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.tanh_shrink``: ``x - tanh(x)``."""
    return nn.functional.tanhshrink(torch.as_tensor(x))


def squareplus(x: torch.Tensor, b: float = 4.0) -> torch.Tensor:
    """``keras.activations.squareplus``: ``(x + sqrt(x**2 + b)) / 2``.

    Example:
        >>> squareplus(torch.tensor([0.0])).tolist()
        [1.0]
    """
    x = torch.as_tensor(x)
    return (x + torch.sqrt(x * x + b)) / 2


def sparse_plus(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.sparse_plus``: 0 below -1, ``(x + 1)**2 / 4`` on ``[-1, 1]``, ``x`` above 1."""
    x = torch.as_tensor(x)
    return torch.where(x <= -1, torch.zeros_like(x), torch.where(x >= 1, x, (x + 1) ** 2 / 4))


def sparse_sigmoid(x: torch.Tensor) -> torch.Tensor:
    """``keras.activations.sparse_sigmoid``: 0 below -1, ``(x + 1) / 2`` on ``[-1, 1]``, 1 above.

    Example:
        >>> sparse_sigmoid(torch.tensor([-2.0, 0.0, 3.0])).tolist()
        [0.0, 0.5, 1.0]
    """
    return _nn_more.sparse_sigmoid(x)


def sparsemax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    """``keras.activations.sparsemax``: a softmax whose small entries are exactly 0 (Keras's formula,
    see ``keras.ops.sparsemax``)."""
    return _nn_more.sparsemax(x, axis=axis)


def threshold(x: torch.Tensor, threshold: float, default_value: float) -> torch.Tensor:
    """``keras.activations.threshold``: ``x`` where ``x > threshold``, else ``default_value``."""
    return _nn_more.threshold(x, threshold, default_value)


def glu(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    """``keras.activations.glu``: halves ``a, b`` of ``axis``, ``a * sigmoid(b)`` (the axis must be even)."""
    x = torch.as_tensor(x)
    if x.shape[axis] % 2:
        raise ValueError(
            f"glu splits axis {axis} into two halves, so its size must be even. "
            f"Received: an input of shape {tuple(x.shape)}"
        )
    return nn.functional.glu(x, dim=axis)


_LAMBDA_ACTIVATIONS: tuple[Callable[..., torch.Tensor], ...] = (
    log_sigmoid,
    celu,
    hard_tanh,
    hard_shrink,
    soft_shrink,
    tanh_shrink,
    squareplus,
    sparse_plus,
    sparse_sigmoid,
    sparsemax,
    threshold,
    glu,
)
for _fn in _LAMBDA_ACTIVATIONS:
    _REGISTRY[_fn.__name__] = (lambda f: lambda: Lambda(f))(_fn)


# activation=keras.activations.relu names the registry's module, so the layer saves as "relu"
_FUNCTION_NAMES: dict[Callable[..., torch.Tensor], str] = {
    relu: "relu",
    sigmoid: "sigmoid",
    softmax: "softmax",
    log_softmax: "log_softmax",
    tanh: "tanh",
    elu: "elu",
    selu: "selu",
    gelu: "gelu",
    silu: "silu",
    softplus: "softplus",
    softsign: "softsign",
    leaky_relu: "leaky_relu",
    relu6: "relu6",
    exponential: "exponential",
    hard_sigmoid: "hard_sigmoid",
    hard_silu: "hard_silu",
    mish: "mish",
    linear: "linear",
    **{
        f: f.__name__
        for f in (
            log_sigmoid,
            celu,
            hard_tanh,
            hard_shrink,
            soft_shrink,
            tanh_shrink,
            squareplus,
            sparse_plus,
            sparse_sigmoid,
            sparsemax,
            threshold,
            glu,
        )
    },
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
                f"Unknown activation: {identifier!r}{did_you_mean(identifier, _REGISTRY)}. Expected one of: "
                f"{format_choices(list(_REGISTRY))}. Received: activation={identifier!r}"
            )
        return factory()
    if isinstance(identifier, nn.Module):
        return identifier
    if callable(identifier) and identifier in _FUNCTION_NAMES:
        return _REGISTRY[_FUNCTION_NAMES[identifier]]()
    if callable(identifier):
        return Lambda(identifier)
    raise ValueError(
        "Could not interpret activation identifier: expected a name such as 'relu', a "
        f"torch.nn.Module or a callable. Received: activation={identifier!r}"
    )


def serialize(activation: Callable[..., torch.Tensor] | str) -> str:
    """The name Keras saves for ``activation`` (``keras.activations.serialize``).

    Keras's functions serialize to their registered names; a custom function to its ``__name__``
    (load it back with ``deserialize(name, custom_objects={name: fn})``).

    Example:
        >>> serialize(gelu), serialize(swish)
        ('gelu', 'silu')
    """
    if isinstance(activation, str):
        if activation.lower() not in _REGISTRY:
            raise ValueError(f"Unknown activation: {activation!r}. Expected one of: {format_choices(list(_REGISTRY))}.")
        return activation.lower()
    if activation in _FUNCTION_NAMES:
        return _FUNCTION_NAMES[activation]
    name = getattr(activation, "__name__", None)
    if callable(activation) and isinstance(name, str) and name != "<lambda>":
        return name
    raise ValueError(
        "keras.activations.serialize needs a Keras activation function or a named function "
        f"(a lambda or a module has no name to save). Received: activation={activation!r}"
    )


_FUNCTIONS_BY_NAME: dict[str, Callable[..., torch.Tensor]] = {
    **{name: fn for fn, name in _FUNCTION_NAMES.items()},
    "swish": swish,
    "hard_swish": hard_swish,
}


def deserialize(
    config: str | dict[str, object], custom_objects: dict[str, object] | None = None
) -> Callable[..., torch.Tensor]:
    """The activation function a ``serialize`` name (or Keras's ``{"config": name}`` dict) stands for.

    Example:
        >>> deserialize("relu") is relu
        True
    """
    name = config.get("config") if isinstance(config, dict) else config
    if not isinstance(name, str):
        raise ValueError(
            "keras.activations.deserialize expects a name such as 'relu' or a dict with a 'config' "
            f"name. Received: config={config!r}"
        )
    found = (custom_objects or {}).get(name)
    if callable(found):
        return found
    fn = _FUNCTIONS_BY_NAME.get(name) or _FUNCTIONS_BY_NAME.get(name.lower())
    if fn is None:
        raise ValueError(
            f"Unknown activation: {name!r}. Expected one of: {format_choices(sorted(_FUNCTIONS_BY_NAME))}, "
            "or pass custom_objects={name: function} for your own."
        )
    return fn
