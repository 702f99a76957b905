"""``keras.InputSpec``: what a layer accepts (rank, axis sizes, dtype), checked on each call.

A layer that sets ``self.input_spec = InputSpec(ndim=4)`` (in ``__init__`` or ``build``) gets
Keras's error when called on an input that does not fit: ``Layer.forward`` calls
:func:`assert_input_compatibility` before building and calling. A layer without a spec (most
of unison's layers, which check their inputs themselves) is not checked.

Example:
    >>> import torch
    >>> spec = InputSpec(ndim=3, axes={-1: 4})
    >>> assert_input_compatibility(spec, torch.zeros(2, 5, 4), "demo")
    >>> assert_input_compatibility(spec, torch.zeros(2, 4), "demo")
    Traceback (most recent call last):
        ...
    ValueError: Input 0 with name 'None' of layer 'demo' is incompatible with the layer: expected ndim=3, found ndim=2. Full shape received: (2, 4)
"""

from __future__ import annotations

from typing import Any

import torch


def _dtype_name(dtype: Any) -> str:
    if isinstance(dtype, torch.dtype):
        return str(dtype).removeprefix("torch.")
    name = getattr(dtype, "name", None)
    return str(name if isinstance(name, str) else dtype)


def _shape(x: Any) -> tuple[int | None, ...]:
    shape = x.shape
    if hasattr(shape, "as_list"):
        shape = shape.as_list()
    return tuple(None if d is None else int(d) for d in shape)


class InputSpec:
    """The rank, axis sizes and dtype a layer accepts (Keras's ``InputSpec``).

    Args:
        dtype: the expected dtype name (``"float32"``).
        shape: the expected full shape, ``None`` for any size; sets ``ndim``.
        ndim, max_ndim, min_ndim: the expected rank or its bounds.
        axes: ``{axis: size}`` (e.g. ``{-1: 16}``).
        allow_last_axis_squeeze: accept a trailing axis of size 1 more or fewer.
        name: the input's name (a dict of inputs is matched by names).
        optional: ``None`` is accepted for this input.
    """

    def __init__(
        self,
        dtype: Any = None,
        shape: Any = None,
        ndim: int | None = None,
        max_ndim: int | None = None,
        min_ndim: int | None = None,
        axes: dict[int, int | None] | None = None,
        allow_last_axis_squeeze: bool = False,
        name: str | None = None,
        optional: bool = False,
    ) -> None:
        self.dtype = _dtype_name(dtype) if dtype is not None else None
        if shape is not None:
            self.shape: tuple[int | None, ...] | None = tuple(None if d is None else int(d) for d in shape)
            self.ndim: int | None = len(self.shape)
        else:
            self.ndim, self.shape = ndim, None
        self.max_ndim, self.min_ndim = max_ndim, min_ndim
        self.name, self.optional = name, optional
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            axes = axes or {}
            self.axes = {int(k): axes[k] for k in axes}
        except (ValueError, TypeError):
            raise TypeError(f"Argument `axes` must be a dict with integer keys. Received: axes={axes}") from None
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            max_dim = (self.ndim if self.ndim else self.max_ndim) - 1  # type: ignore[operator]
            if max(self.axes) > max_dim:
                raise ValueError(f"Axis {max(self.axes)} is greater than the maximum allowed value: {max_dim}")

    def __repr__(self) -> str:
        parts = [
            f"dtype={self.dtype}" if self.dtype else "",
            f"shape={self.shape}" if self.shape else "",
            f"ndim={self.ndim}" if self.ndim else "",
            f"max_ndim={self.max_ndim}" if self.max_ndim else "",
            f"min_ndim={self.min_ndim}" if self.min_ndim else "",
            f"axes={self.axes}" if self.axes else "",
        ]
        return f"InputSpec({', '.join(p for p in parts if p)})"

    def get_config(self) -> dict[str, Any]:
        """The constructor arguments (``InputSpec.from_config`` rebuilds an equal spec)."""
        return {
            "dtype": self.dtype,
            "shape": self.shape,
            "ndim": self.ndim,
            "max_ndim": self.max_ndim,
            "min_ndim": self.min_ndim,
            "axes": self.axes,
            "optional": self.optional,
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> InputSpec:
        return cls(**config)


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _flatten(item)]
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in _flatten(value[key])]
    return [value]


def _incompatible(index: int, spec: InputSpec, layer: str, what: str) -> ValueError:
    return ValueError(
        f"Input {index} with name '{spec.name}' of layer '{layer}' is incompatible with the layer: {what}"
    )


def assert_input_compatibility(input_spec: Any, inputs: Any, layer_name: str) -> None:
    """Raise Keras's ``ValueError`` when ``inputs`` do not fit ``input_spec`` (one spec or a list)."""
    if not input_spec:
        return
    specs = _flatten(input_spec)
    if isinstance(inputs, dict):
        names = [getattr(spec, "name", None) for spec in specs]
        if all(names):
            missing = [n for n in names if n not in inputs]
            if missing:
                raise ValueError(
                    f'Missing data for input "{missing[0]}". You passed a data dictionary with keys '
                    f"{list(inputs)}. Expected the following keys: {names}"
                )
            inputs = [inputs[n] for n in names]
    values = _flatten(inputs)
    if len(values) != len(specs):
        raise ValueError(
            f'Layer "{layer_name}" expects {len(specs)} input(s), but it received {len(values)} input tensors.'
        )
    for index, (x, spec) in enumerate(zip(values, specs)):
        if spec is None or (x is None and spec.optional):
            continue
        if not hasattr(x, "shape"):
            raise ValueError(
                f"Inputs to a layer should be tensors. Got '{x}' (of type {type(x)}) as input for layer '{layer_name}'."
            )
        shape = _shape(x)
        ndim = len(shape)
        if spec.ndim is not None and not spec.allow_last_axis_squeeze and ndim != spec.ndim:
            raise _incompatible(
                index, spec, layer_name, f"expected ndim={spec.ndim}, found ndim={ndim}. Full shape received: {shape}"
            )
        if spec.max_ndim is not None and ndim > spec.max_ndim:
            raise _incompatible(index, spec, layer_name, f"expected max_ndim={spec.max_ndim}, found ndim={ndim}")
        if spec.min_ndim is not None and ndim < spec.min_ndim:
            raise _incompatible(
                index,
                spec,
                layer_name,
                f"expected min_ndim={spec.min_ndim}, found ndim={ndim}. Full shape received: {shape}",
            )
        if spec.dtype is not None and _dtype_name(x.dtype) != spec.dtype:
            raise _incompatible(
                index, spec, layer_name, f"expected dtype={spec.dtype}, found dtype={_dtype_name(x.dtype)}"
            )
        for axis, value in spec.axes.items():
            if value is not None and -ndim <= axis < ndim and shape[axis] not in (value, None):
                raise _incompatible(
                    index,
                    spec,
                    layer_name,
                    f"expected axis {axis} of input shape to have value {value}, but received input with shape {shape}",
                )
        if spec.shape is not None:
            spec_shape, got = spec.shape, shape
            if spec.allow_last_axis_squeeze:
                got = got[:-1] if got and got[-1] == 1 else got
                spec_shape = spec_shape[:-1] if spec_shape and spec_shape[-1] == 1 else spec_shape
            for want, have in zip(spec_shape, got):
                if want is not None and have is not None and want != have:
                    raise _incompatible(index, spec, layer_name, f"expected shape={spec.shape}, found shape={shape}")


__all__ = ["InputSpec", "assert_input_compatibility"]
