"""The Keras 2 (``tf.keras.backend`` / ``K``) tensor functions that TF-era programs still call.

They delegate to :mod:`unison.keras.ops`, keeping Keras 2's defaults where they differ
(``concatenate``/``argmax``/``expand_dims`` along the last axis, ``sqrt`` clipping negatives to
zero, ``shape`` returning an int32 tensor, ``relu(alpha, max_value, threshold)``).

Example:
    >>> from unison.keras import backend as K
    >>> x = K.constant([[1.0, 4.0], [9.0, 16.0]])
    >>> K.sqrt(x).tolist(), K.argmax(x).tolist(), K.int_shape(K.concatenate([x, x]))
    ([[1.0, 2.0], [3.0, 4.0]], [1, 1], (2, 4))
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from typing import Any

import torch

from unison.keras import random as _random
from unison.keras.ops import _numpy_array as _arr
from unison.keras.ops import _numpy_math as _m
from unison.keras.ops import core as _core
from unison.keras.ops import nn as _nn
from unison.keras.ops._convert import float_of, tensor, torch_dtype
from unison.ops._dispatch import wrap_namespace

Tensor = torch.Tensor

# Same meaning and defaults as keras.ops.
abs = _m.abs
all = _m.all
any = _m.any
cast = _core.cast
cos = _m.cos
equal = _m.equal
exp = _m.exp
greater = _m.greater
greater_equal = _m.greater_equal
less = _m.less
less_equal = _m.less_equal
log = _m.log
logsumexp = _m.logsumexp
max = _m.max
maximum = _m.maximum
mean = _m.mean
min = _m.min
minimum = _m.minimum
not_equal = _m.not_equal
ones_like = _arr.ones_like
prod = _m.prod
reshape = _arr.reshape
sign = _m.sign
sin = _m.sin
square = _m.square
stack = _arr.stack
std = _m.std
stop_gradient = _core.stop_gradient
sum = _m.sum
tanh = _m.tanh
var = _m.var
zeros_like = _arr.zeros_like
sigmoid = _nn.sigmoid
softplus = _nn.softplus
softsign = _nn.softsign
binary_crossentropy = _nn.binary_crossentropy
categorical_crossentropy = _nn.categorical_crossentropy
sparse_categorical_crossentropy = _nn.sparse_categorical_crossentropy
dot = _arr.dot


def shape(x: Any) -> Tensor:
    """``K.shape(x)``: the shape as an int32 tensor (``K.shape(x)[0]`` is the batch size)."""
    return torch.tensor(tuple(tensor(x).shape), dtype=torch.int32)


def ndim(x: Any) -> int:
    """``K.ndim(x)``: the rank."""
    return len(getattr(x, "shape", None) or tensor(x).shape)


def dtype(x: Any) -> str:
    """``K.dtype(x)``: the dtype's name."""
    return _core.dtype(x)


def eval(x: Any) -> Any:
    """``K.eval(x)``: the value as numpy."""
    from unison.keras.backend.common import get_value

    return get_value(x)


def zeros(shape: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """``K.zeros(shape, dtype=None)``: floatx zeros."""
    return _arr.zeros(shape, dtype)


def ones(shape: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """``K.ones(shape, dtype=None)``: floatx ones."""
    return _arr.ones(shape, dtype)


def eye(size: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """``K.eye(size, dtype=None)``: an identity matrix (``size`` an int or ``(rows, cols)``)."""
    rows, cols = (size, size) if isinstance(size, int) else tuple(size)
    return _arr.eye(rows, cols, dtype=dtype)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = "int32") -> Tensor:
    """``K.arange(start, stop=None, step=1, dtype="int32")``."""
    return _arr.arange(start, stop, step, dtype=dtype)


def sqrt(x: Any) -> Tensor:
    """``K.sqrt(x)``: negative values are clipped to 0 first, as Keras 2 does."""
    return torch.sqrt(torch.clamp(float_of(tensor(x)), min=0.0))


def pow(x: Any, a: Any) -> Tensor:
    """``K.pow(x, a)``."""
    return _m.power(x, a)


def round(x: Any) -> Tensor:
    """``K.round(x)``: half to even."""
    return _m.round(x)


def clip(x: Any, min_value: Any, max_value: Any) -> Tensor:
    """``K.clip(x, min_value, max_value)``; ``None`` bounds are open (Keras 2)."""
    t = tensor(x)
    return torch.clamp(t, min=min_value, max=max_value)


def argmax(x: Any, axis: int = -1) -> Tensor:
    """``K.argmax(x, axis=-1)``: int64 indices along the last axis by default."""
    return torch.argmax(tensor(x), dim=axis)


def argmin(x: Any, axis: int = -1) -> Tensor:
    """``K.argmin(x, axis=-1)``."""
    return torch.argmin(tensor(x), dim=axis)


def concatenate(tensors: Sequence[Any], axis: int = -1) -> Tensor:
    """``K.concatenate(tensors, axis=-1)``: along the last axis by default."""
    return _arr.concatenate(tensors, axis=axis)


def expand_dims(x: Any, axis: int = -1) -> Tensor:
    """``K.expand_dims(x, axis=-1)``."""
    return _arr.expand_dims(x, axis)


def squeeze(x: Any, axis: int) -> Tensor:
    """``K.squeeze(x, axis)``."""
    return _arr.squeeze(x, axis)


def transpose(x: Any) -> Tensor:
    """``K.transpose(x)``: every axis reversed."""
    return _arr.transpose(x)


def permute_dimensions(x: Any, pattern: Sequence[int]) -> Tensor:
    """``K.permute_dimensions(x, pattern)``."""
    return _arr.transpose(x, pattern)


def flatten(x: Any) -> Tensor:
    """``K.flatten(x)``: a 1-D tensor."""
    return tensor(x).reshape(-1)


def batch_flatten(x: Any) -> Tensor:
    """``K.batch_flatten(x)``: ``(batch, everything else)``."""
    t = tensor(x)
    return t.reshape(t.shape[0], math.prod(t.shape[1:]))  # not -1: an empty batch has a known width too


def tile(x: Any, n: Any) -> Tensor:
    """``K.tile(x, n)``."""
    return _arr.tile(x, [n] if isinstance(n, int) else n)


def repeat_elements(x: Any, rep: int, axis: int) -> Tensor:
    """``K.repeat_elements(x, rep, axis)``: each slice along ``axis`` repeated ``rep`` times."""
    return torch.repeat_interleave(tensor(x), int(rep), dim=axis)


def gather(reference: Any, indices: Any) -> Tensor:
    """``K.gather(reference, indices)``: rows of ``reference``."""
    return _arr.take(reference, indices, axis=0)


def cumsum(x: Any, axis: int = 0) -> Tensor:
    """``K.cumsum(x, axis=0)``."""
    return _m.cumsum(x, axis=axis)


def cumprod(x: Any, axis: int = 0) -> Tensor:
    """``K.cumprod(x, axis=0)``."""
    return _m.cumprod(x, axis=axis)


def l2_normalize(x: Any, axis: Any = None) -> Tensor:
    """``K.l2_normalize(x, axis=None)``: ``x / sqrt(max(sum(x**2), 1e-12))``, as ``tf.math.l2_normalize``."""
    t = float_of(tensor(x))
    dims = tuple(range(t.dim())) if axis is None else axis
    return t * torch.rsqrt(torch.clamp((t * t).sum(dim=dims, keepdim=True), min=1e-12))


def relu(x: Any, alpha: float = 0.0, max_value: float | None = None, threshold: float = 0.0) -> Tensor:
    """``K.relu(x, alpha=0.0, max_value=None, threshold=0.0)``: ``alpha * (x - threshold)`` below ``threshold``."""
    t = float_of(tensor(x))
    out = torch.where(t >= threshold, t, alpha * (t - threshold))
    return torch.clamp(out, max=max_value) if max_value is not None else out


def elu(x: Any, alpha: float = 1.0) -> Tensor:
    """``K.elu(x, alpha=1.0)``."""
    return _nn.elu(x, alpha)


def softmax(x: Any, axis: int = -1) -> Tensor:
    """``K.softmax(x, axis=-1)``."""
    return _nn.softmax(x, axis)


def one_hot(indices: Any, num_classes: int) -> Tensor:
    """``K.one_hot(indices, num_classes)``: a new last axis."""
    return _nn.one_hot(indices, num_classes)


def switch(condition: Any, then_expression: Any, else_expression: Any) -> Any:
    """``K.switch(condition, then_expression, else_expression)``: element-wise choice, or a branch for a scalar
    condition (the expressions may be callables)."""
    cond = tensor(condition)
    then_value = then_expression() if callable(then_expression) else then_expression
    else_value = else_expression() if callable(else_expression) else else_expression
    if cond.dim() == 0:
        return then_value if bool(cond) else else_value
    return _arr.where(cond, then_value, else_value)


def in_train_phase(x: Any, alt: Any, training: Any = None) -> Any:
    """``K.in_train_phase(x, alt, training=None)``: ``x`` when training, else ``alt``.

    ``training=None`` reads ``K.learning_phase()`` (0 unless inside ``K.learning_phase_scope(1)``).
    """
    if training is None:
        from unison.keras.backend.common import learning_phase

        training = learning_phase()
    chosen = x if bool(training) else alt
    return chosen() if callable(chosen) else chosen


def in_test_phase(x: Any, alt: Any, training: Any = None) -> Any:
    """``K.in_test_phase(x, alt, training=None)``: ``alt`` when training, else ``x``."""
    return in_train_phase(alt, x, training)


def batch_dot(x: Any, y: Any, axes: Any = None) -> Tensor:
    """``K.batch_dot(x, y, axes=None)``: per sample, ``x[i]`` contracted with ``y[i]`` along ``axes``.

    The default contracts x's last axis with y's second-to-last (y's last when y is 2-D); a
    result of rank 1 gets a trailing axis of 1, as in Keras 2.
    """
    a, b = tensor(x), tensor(y)
    if a.dim() < 2 or b.dim() < 2 or a.shape[0] != b.shape[0]:
        raise ValueError(
            f"K.batch_dot needs two batched tensors of rank >= 2 with the same batch size. "
            f"Received shapes {tuple(a.shape)} and {tuple(b.shape)}."
        )
    if axes is None:
        axes = (a.dim() - 1, b.dim() - 1 if b.dim() == 2 else b.dim() - 2)
    elif isinstance(axes, int):
        axes = (axes, axes)
    ax, ay = int(axes[0]) % a.dim(), int(axes[1]) % b.dim()
    if a.shape[ax] != b.shape[ay]:
        raise ValueError(
            f"K.batch_dot: axis {ax} of x (size {a.shape[ax]}) and axis {ay} of y (size {b.shape[ay]}) differ."
        )
    a, b = torch.movedim(a, ax, -1), torch.movedim(b, ay, 1)
    left, right = a.shape[1:-1], b.shape[2:]
    dtype = torch.promote_types(a.dtype, b.dtype)
    out = torch.bmm(a.reshape(a.shape[0], -1, a.shape[-1]).to(dtype), b.reshape(b.shape[0], b.shape[1], -1).to(dtype))
    out = out.reshape(a.shape[0], *left, *right)
    return out.unsqueeze(-1) if out.dim() == 1 else out


def random_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None, seed: Any = None) -> Tensor:
    """``K.random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None)``: from the global generator.

    As in TF 2, a ``seed`` does not make repeated calls return the same values; seed the program
    with ``keras.utils.set_random_seed`` for reproducibility.
    """
    return _random.normal(shape, mean, stddev, dtype)


def random_uniform(shape: Any, minval: float = 0.0, maxval: float = 1.0, dtype: Any = None, seed: Any = None) -> Tensor:
    """``K.random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None)``: from the global generator."""
    return _random.uniform(shape, minval, maxval, dtype)


def random_bernoulli(shape: Any, p: float = 0.0, dtype: Any = None, seed: Any = None) -> Tensor:
    """``K.random_bernoulli(shape, p=0.0, dtype=None, seed=None)``: ones with probability ``p``."""
    draw = _random.uniform(shape, 0.0, 1.0)
    return (draw < p).to(torch.get_default_dtype() if dtype is None else torch_dtype(dtype))


random_binomial = random_bernoulli


def hard_sigmoid(x: Any) -> Tensor:
    """``K.hard_sigmoid``: Keras 2's segment ``clip(0.2 * x + 0.5, 0, 1)`` (Keras 3's is ``x / 6 + 0.5``)."""
    t = float_of(tensor(x))
    return torch.clamp(0.2 * t + 0.5, 0.0, 1.0)


def print_tensor(x: Any, message: str = "", summarize: int = 3) -> Any:
    """``K.print_tensor(x, message="")``: prints and returns ``x``."""
    print(message, x)
    return x


def is_sparse(tensor: Any) -> bool:
    """``K.is_sparse``: always False (unison has no sparse tensors)."""
    return False


@contextlib.contextmanager
def name_scope(name: str) -> Iterator[None]:
    """``K.name_scope(name)``: accepted; names carry no scopes in unison."""
    yield


__all__ = [
    "abs",
    "all",
    "any",
    "arange",
    "argmax",
    "argmin",
    "batch_dot",
    "batch_flatten",
    "binary_crossentropy",
    "cast",
    "categorical_crossentropy",
    "clip",
    "concatenate",
    "cos",
    "cumprod",
    "cumsum",
    "dot",
    "dtype",
    "elu",
    "equal",
    "eval",
    "exp",
    "expand_dims",
    "eye",
    "flatten",
    "gather",
    "greater",
    "greater_equal",
    "hard_sigmoid",
    "in_test_phase",
    "in_train_phase",
    "is_sparse",
    "l2_normalize",
    "less",
    "less_equal",
    "log",
    "logsumexp",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "name_scope",
    "ndim",
    "not_equal",
    "one_hot",
    "ones",
    "ones_like",
    "permute_dimensions",
    "pow",
    "print_tensor",
    "prod",
    "random_bernoulli",
    "random_binomial",
    "random_normal",
    "random_uniform",
    "relu",
    "repeat_elements",
    "reshape",
    "round",
    "shape",
    "sigmoid",
    "sign",
    "sin",
    "softmax",
    "softplus",
    "softsign",
    "sparse_categorical_crossentropy",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "stop_gradient",
    "sum",
    "switch",
    "tanh",
    "tile",
    "transpose",
    "var",
    "zeros",
    "zeros_like",
]

# Symbolic keras.Input tensors defer the tensor functions to the functional graph (Lambda-free K.* use).
wrap_namespace(
    globals(),
    [
        n
        for n in __all__
        if n
        not in (
            "ndim",
            "dtype",
            "eval",
            "is_sparse",
            "name_scope",
            "print_tensor",
            "switch",
            "in_train_phase",
            "in_test_phase",
        )
        and not n.startswith("random_")
        and n not in ("zeros", "ones", "eye", "arange")
    ],
)
