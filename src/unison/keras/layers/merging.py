"""Merging layers (Keras 3): ``Add``, ``Subtract``, ``Multiply``, ``Average``, ``Maximum``,
``Minimum``, ``Concatenate``, and ``Lambda``.

A merge layer is called on a list of tensors. Element-wise merges need equal shapes (a
dimension of 1 broadcasts); their output mask is the AND of the inputs' masks. ``Concatenate``
needs equal shapes except on ``axis``.

Example:
    >>> import torch
    >>> Add()([torch.ones(2, 3), torch.ones(2, 3)]).sum().item()
    12.0
    >>> tuple(Concatenate(axis=-1)([torch.ones(2, 3), torch.ones(2, 4)]).shape)
    (2, 7)
"""

from __future__ import annotations

import codecs
import functools
import marshal
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from unison.keras.layers.masking import MaskedLayer
from unison.ops.dtypes import as_torch


def _as_tensor(value: Any) -> Any:
    try:
        return as_torch(value)
    except (TypeError, ValueError, RuntimeError):
        return value  # not array-like: the check below names it


class Merge(MaskedLayer):
    """Base of the merge layers: checks the list of inputs, combines them with ``_merge``."""

    _min_inputs = 1

    def _check(self, inputs: Any) -> list[torch.Tensor]:
        if isinstance(inputs, (list, tuple)):  # numpy arrays and numbers are tensors to Keras too
            inputs = [x if isinstance(x, torch.Tensor) else _as_tensor(x) for x in inputs]
        if (
            not isinstance(inputs, (list, tuple))
            or len(inputs) < self._min_inputs
            or not all(isinstance(x, torch.Tensor) for x in inputs)
        ):
            raise ValueError(
                f"A `{type(self).__name__}` layer should be called on a list of at least "
                f"{self._min_inputs} tensor{'s' if self._min_inputs > 1 else ''}. Received: inputs={inputs!r:.120}"
            )
        return list(inputs)

    def build(self, input_shape: Any) -> None:
        pass

    def forward(self, inputs: Any, mask: Any = None, training: bool | None = None) -> Any:
        return super().forward(self._check(inputs), mask, training)

    def call(self, inputs: list[torch.Tensor], mask: Any = None, training: bool = False) -> torch.Tensor:  # type: ignore[override]
        shapes = [tuple(x.shape) for x in inputs]
        try:
            if all(type(d) is int for shape in shapes for d in shape):
                # numpy's check: torch.broadcast_shapes goes through torch._refs, which imports
                # sympy on first use (about 1 s) and costs more per call in every Add of every step
                np.broadcast_shapes(*shapes)
            else:  # symbolic sizes (torch.export, ONNX): numpy would fix the batch size to a number
                torch.broadcast_shapes(*shapes)
        except (ValueError, RuntimeError):
            raise ValueError(
                f"Inputs of layer '{self.name}' have incompatible shapes. Received: "
                f"shapes={shapes}; element-wise merges need equal shapes (or 1 to broadcast)."
            ) from None
        return self._merge(inputs)

    def _merge(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        raise NotImplementedError

    def compute_mask(self, inputs: Any, mask: Any = None) -> torch.Tensor | None:
        masks = [m for m in (mask or []) if m is not None]
        if not masks:
            return None
        return functools.reduce(torch.logical_and, [m.bool() for m in masks])


class Add(Merge):
    """Sum of the inputs."""

    def _merge(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        return functools.reduce(torch.add, inputs)


class Subtract(Merge):
    """``inputs[0] - inputs[1]`` (exactly two inputs)."""

    _min_inputs = 2

    def _merge(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        if len(inputs) != 2:
            raise ValueError(f"A `Subtract` layer should be called on exactly 2 inputs. Received: {len(inputs)} inputs")
        return inputs[0] - inputs[1]


class Multiply(Merge):
    """Element-wise product of the inputs."""

    def _merge(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        return functools.reduce(torch.mul, inputs)


class Average(Merge):
    """Element-wise mean of the inputs."""

    def _merge(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        return functools.reduce(torch.add, inputs) / len(inputs)


class _PickGrad(torch.autograd.Function):
    """``torch.maximum``/``minimum`` with TensorFlow's gradient: a tie sends all of it to ``a``.

    torch's own backward splits ties in half with several full-size passes (masked_fill, where,
    div): four times slower on CPU than this one mask kept from the forward pass.
    """

    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor, largest: bool) -> torch.Tensor:
        ctx.save_for_backward(a >= b if largest else a <= b)
        ctx.shapes = a.shape, b.shape
        return torch.maximum(a, b) if largest else torch.minimum(a, b)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None]:
        (to_a,) = ctx.saved_tensors
        grad_a = torch.where(to_a, grad, 0)
        grad_b = grad - grad_a
        shape_a, shape_b = ctx.shapes
        return grad_a.sum_to_size(shape_a), grad_b.sum_to_size(shape_b), None


def _pick(a: torch.Tensor, b: torch.Tensor, largest: bool) -> torch.Tensor:
    """Element-wise max/min; through ``_PickGrad`` when a float input needs a gradient (eagerly)."""
    needs_grad = torch.is_grad_enabled() and (a.requires_grad or b.requires_grad)
    # tracers (torch.compile, torch.export, ONNX) see the plain op they know how to convert
    tracing = (
        torch.compiler.is_compiling()
        or torch.compiler.is_exporting()
        or torch.jit.is_tracing()
        or torch._C._are_functorch_transforms_active()  # vmap/grad of torch.func
    )
    if needs_grad and a.is_floating_point() and a.dtype == b.dtype and not tracing:
        return _PickGrad.apply(a, b, largest)
    return torch.maximum(a, b) if largest else torch.minimum(a, b)


class Maximum(Merge):
    """Element-wise maximum of the inputs."""

    def _merge(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        return functools.reduce(lambda a, b: _pick(a, b, True), inputs)


class Minimum(Merge):
    """Element-wise minimum of the inputs."""

    def _merge(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        return functools.reduce(lambda a, b: _pick(a, b, False), inputs)


class Concatenate(Merge):
    """Concatenate the inputs along ``axis`` (default -1).

    Output mask (Keras's): each input's mask broadcast to its shape (all ``True`` without one),
    concatenated along ``axis``, then ``any`` over the last axis.
    """

    def __init__(self, axis: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"`axis` must be an int. Received: axis={axis!r}")
        self.axis = axis

    def call(self, inputs: list[torch.Tensor], mask: Any = None, training: bool = False) -> torch.Tensor:  # type: ignore[override]
        shapes = [tuple(x.shape) for x in inputs]
        rank = len(shapes[0])
        if any(len(s) != rank for s in shapes) or not -rank <= self.axis < rank:
            raise ValueError(
                f"Layer '{self.name}' (axis={self.axis}) needs inputs of one rank that has that "
                f"axis. Received: input_shape={shapes}"
            )
        axis = self.axis % rank
        # a list compared pairwise, not a set: torch.export's symbolic sizes compare but do not hash
        reduced = [s[:axis] + s[axis + 1 :] for s in shapes]
        if any(r != reduced[0] for r in reduced[1:]):
            raise ValueError(
                f"A `Concatenate` layer requires inputs with matching shapes except for the concatenation "
                f"axis. Received: input_shape={shapes}, axis={self.axis}"
            )
        return torch.cat(inputs, dim=axis)

    def compute_mask(self, inputs: Any, mask: Any = None) -> torch.Tensor | None:
        if not mask or all(m is None for m in mask):
            return None
        full = []
        for x, m in zip(inputs, mask):
            if m is None:
                full.append(torch.ones(x.shape, dtype=torch.bool, device=x.device))
            elif m.dim() < x.dim():
                full.append(m.bool().unsqueeze(-1).expand(x.shape))
            else:
                full.append(m.bool())
        return torch.cat(full, dim=self.axis % inputs[0].dim()).any(dim=-1)


class Lambda(MaskedLayer):
    """Wrap an arbitrary expression as a layer: ``Lambda(lambda x: x * 2)``.

    Args:
        function: called as ``function(inputs, **arguments)``.
        output_shape: accepted for Keras compatibility (shapes are computed by running).
        mask: the output mask: a tensor, or a callable ``mask(inputs, input_mask)``; default none.
        arguments: extra keyword arguments for ``function``.

    Variables created inside ``function`` are not tracked: use a ``Layer`` subclass for them.
    """

    def __init__(
        self,
        function: Callable[..., Any],
        output_shape: Any = None,
        mask: Any = None,
        arguments: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if not callable(function):
            raise TypeError(f"Lambda needs a callable `function`. Received: function={function!r}")
        super().__init__(**kwargs)
        self.function, self.output_shape_arg, self.mask = function, output_shape, mask
        self.arguments = dict(arguments or {})

    def build(self, input_shape: Any) -> None:
        pass

    def get_config(self) -> dict[str, Any]:
        """Keras 3's config: a Python ``lambda`` is saved as its bytecode (``{"class_name": "__lambda__"}``),
        which only an unsafe load (``safe_mode=False`` or ``enable_unsafe_deserialization()``) rebuilds."""
        config = super().get_config()
        for key in ("function", "output_shape", "mask"):
            if _is_lambda(config.get(key)):
                config[key] = _dump_lambda(config[key])
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Lambda:
        config = dict(config)
        for key in ("function", "output_shape", "mask"):
            value = config.get(key)
            if isinstance(value, dict) and value.get("class_name") == "__lambda__":
                config[key] = _load_lambda(key, value.get("config", {}))
        return cls(**config)

    def call(self, inputs: Any, mask: Any = None, training: bool = False) -> Any:
        return self.function(inputs, **self.arguments)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask


def _is_lambda(value: Any) -> bool:
    return isinstance(value, types.LambdaType) and value.__name__ == "<lambda>"


def _dump_lambda(fn: Any) -> dict[str, Any]:
    """Keras's ``func_dump``: the code object marshalled and base64-encoded, defaults and closure values."""
    code = codecs.encode(marshal.dumps(fn.__code__), "base64").decode("ascii")
    closure = [c.cell_contents for c in fn.__closure__] if fn.__closure__ else None
    return {"class_name": "__lambda__", "config": {"code": code, "defaults": fn.__defaults__, "closure": closure}}


def _load_lambda(key: str, config: dict[str, Any]) -> Any:
    """Keras's ``func_load``, allowed only outside safe mode (running saved bytecode runs any code)."""
    from unison.keras import config as keras_config
    from unison.keras.saving.safe_mode import current_safe_mode

    if keras_config.safe_mode() and current_safe_mode() is not False:
        raise ValueError(
            f"Requested the deserialization of a `Lambda` layer whose `{key}` is a Python `lambda`. This "
            "carries a potential risk of arbitrary code execution and thus it is disallowed by default. If you "
            "trust the source of the saved model, pass `safe_mode=False` to the loading function, or call "
            "`keras.config.enable_unsafe_deserialization()`."
        )
    code = marshal.loads(codecs.decode(str(config["code"]).encode("ascii"), "base64"))
    defaults = tuple(config["defaults"]) if config.get("defaults") is not None else None
    closure = None
    if config.get("closure") is not None:
        closure = tuple(_cell(v) for v in config["closure"])
    return types.FunctionType(code, globals(), name=code.co_name, argdefs=defaults, closure=closure)


def _cell(value: Any) -> Any:
    return (lambda: value).__closure__[0]  # type: ignore[index]


def _merge_fn(cls: type[Merge]) -> Callable[..., torch.Tensor]:
    def fn(inputs: Sequence[torch.Tensor], **kwargs: Any) -> torch.Tensor:
        return cls(**kwargs)(list(inputs))

    fn.__name__ = cls.__name__.lower()
    fn.__doc__ = f"Functional form of the ``{cls.__name__}`` layer."
    return fn


add, subtract, multiply, average, maximum, minimum = (
    _merge_fn(c) for c in (Add, Subtract, Multiply, Average, Maximum, Minimum)
)


def concatenate(inputs: Sequence[torch.Tensor], axis: int = -1, **kwargs: Any) -> torch.Tensor:
    """Functional form of the ``Concatenate`` layer."""
    return Concatenate(axis=axis, **kwargs)(list(inputs))


__all__ = [
    "Add",
    "Average",
    "Concatenate",
    "Lambda",
    "Maximum",
    "Merge",
    "Minimum",
    "Multiply",
    "Subtract",
    "add",
    "average",
    "concatenate",
    "maximum",
    "minimum",
    "multiply",
    "subtract",
]
