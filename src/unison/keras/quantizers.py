"""``keras.quantizers``: Keras 3's abs-max int8 quantization, float8 scaling and quantization configs.

The math is Keras's: :func:`abs_max_quantize` scales ``x`` by ``value_range[1] / (max|x| + epsilon)``
along ``axis``, rounds and clips into ``value_range``; the float8 helpers follow NVIDIA's
Transformer Engine scale update (``compute_float8_scale``) and a rolling ``amax`` history;
``pack_int4``/``unpack_int4`` store two int4 values per byte (low nibble first) along an axis.

What needs a quantized model (GPTQ, AWQ, grouped int4 with zero points) is not built: those names
raise ``AttributeError`` naming the torch route (``torch.ao.quantization``).

Example:
    >>> import torch
    >>> from unison.keras import quantizers
    >>> q, scale = quantizers.abs_max_quantize(torch.tensor([[1.0, -2.0, 0.5]]), axis=-1)
    >>> q.tolist(), q.dtype
    ([[63, -127, 32]], torch.int8)
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import torch

from unison.errors import format_choices
from unison.keras.backend.config import epsilon as default_epsilon
from unison.keras.ops._convert import standardize_dtype, torch_dtype

__all__ = [
    "AbsMaxQuantizer",
    "Float8QuantizationConfig",
    "Int4QuantizationConfig",
    "Int8QuantizationConfig",
    "QuantizationConfig",
    "Quantizer",
    "abs_max_quantize",
    "compute_float8_amax_history",
    "compute_float8_scale",
    "deserialize",
    "fake_quant_with_min_max_vars",
    "get",
    "pack_int4",
    "quantize_and_dequantize",
    "serialize",
    "unpack_int4",
]

_FLOAT8 = {"float8_e4m3fn": torch.float8_e4m3fn, "float8_e5m2": torch.float8_e5m2}


def _tensor(x: Any) -> torch.Tensor:
    return x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x))


def _dtype(name: Any) -> torch.dtype:
    if isinstance(name, torch.dtype):
        return name
    if isinstance(name, str) and name in _FLOAT8:
        return _FLOAT8[name]
    return torch_dtype(standardize_dtype(name))


def abs_max_quantize(
    inputs: Any,
    axis: Any,
    value_range: tuple[int, int] = (-127, 127),
    dtype: str = "int8",
    epsilon: float = 1e-7,
    to_numpy: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Quantize ``inputs`` by their absolute maximum along ``axis``: returns ``(quantized, scale)``.

    ``scale = value_range[1] / (max(|inputs|, axis, keepdims) + epsilon)`` in the input's dtype,
    ``quantized = cast(clip(round(inputs * scale), *value_range), dtype)``. ``to_numpy`` is accepted
    (Keras computes on the host then; torch computes where the tensor lives).

    Example:
        >>> abs_max_quantize(torch.tensor([4.0, -1.0]), axis=0)[0].tolist()
        [127, -32]
    """
    x = _tensor(inputs)
    if not x.is_floating_point():
        x = x.to(torch.get_default_dtype())
    dims = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    amax = x.abs().amax(dim=dims, keepdim=True)
    scale = (torch.as_tensor(float(value_range[1]), dtype=torch.float64) / (amax.double() + epsilon)).to(x.dtype)
    out = torch.clamp(torch.round(x * scale), value_range[0], value_range[1]).to(_dtype(dtype))
    return out, scale


def compute_float8_scale(amax: Any, scale: Any, dtype_max: float, margin: int = 0) -> torch.Tensor:
    """The new float8 scale: ``1 / (dtype_max / amax / 2**margin)``, the old one where ``amax`` is 0 or not finite.

    Example:
        >>> compute_float8_scale(torch.tensor(2.0), torch.tensor(1.0), 448.0).item()
        0.004464285913854837
    """
    amax_t = _tensor(amax).float() if not _tensor(amax).is_floating_point() else _tensor(amax)
    scale_t = _tensor(scale).to(amax_t.dtype)
    old = torch.reciprocal(scale_t)
    sf = (dtype_max / amax_t) / (2**margin)
    sf = torch.where(amax_t > 0.0, sf, old)
    sf = torch.where(torch.isfinite(amax_t), sf, old)
    return torch.reciprocal(sf)


def compute_float8_amax_history(x: Any, amax_history: Any) -> torch.Tensor:
    """Roll ``amax_history`` left by one and put ``max(|x|)`` first (Keras's float8 bookkeeping).

    Example:
        >>> compute_float8_amax_history(torch.tensor([-3.0, 1.0]), torch.tensor([1.0, 2.0, 0.0])).tolist()
        [3.0, 0.0, 1.0]
    """
    history = _tensor(amax_history)
    amax = _tensor(x).abs().max().to(history.dtype)
    rolled = torch.roll(history, shifts=-1, dims=0).clone()
    rolled[0] = amax
    return rolled


def quantize_and_dequantize(inputs: Any, scale: Any, quantized_dtype: str, compute_dtype: str) -> torch.Tensor:
    """Round-trip ``inputs / scale`` through ``quantized_dtype`` (a float8 type) and back, times ``scale``.

    Example:
        >>> quantize_and_dequantize(torch.tensor([1.1, 500.0]), torch.tensor(1.0), "float8_e4m3fn", "float32").tolist()
        [1.125, 448.0]
    """
    qtype, ctype = _dtype(quantized_dtype), _dtype(compute_dtype)
    qmax = float(torch.finfo(qtype).max)
    s = _tensor(scale).to(ctype)
    x = torch.clamp(_tensor(inputs).to(ctype) / s, -qmax, qmax).to(qtype)
    return x.to(ctype) * s


def fake_quant_with_min_max_vars(
    inputs: Any, min_vals: Any, max_vals: Any, num_bits: int = 8, narrow_range: bool = False, axis: int | None = None
) -> torch.Tensor:
    """Quantize to ``num_bits`` on the nudged ``[min, max]`` grid and dequantize (TF's ``fake_quant``).

    ``axis`` names the per-channel axis of ``min_vals``/``max_vals`` (``None``: one range).

    Example:
        >>> fake_quant_with_min_max_vars(torch.tensor([0.3, 2.0]), 0.0, 1.0, num_bits=2).tolist()
        [0.3333333432674408, 1.0]
    """
    x = _tensor(inputs)
    dtype = x.dtype if x.is_floating_point() else torch.float32
    x = x.float()
    lo, hi = _tensor(min_vals).float(), _tensor(max_vals).float()
    if axis is not None:
        shape = [1] * x.dim()
        shape[axis] = -1
        lo, hi = lo.reshape(shape), hi.reshape(shape)
    quant_min = 1.0 if narrow_range else 0.0
    quant_max = float(2**num_bits - 1)
    scale = (hi - lo) / (quant_max - quant_min)
    zero_point_from_min = quant_min - lo / scale
    nudged_zero = torch.where(
        zero_point_from_min < quant_min,
        torch.full_like(zero_point_from_min, quant_min),
        torch.where(
            zero_point_from_min > quant_max,
            torch.full_like(zero_point_from_min, quant_max),
            torch.round(zero_point_from_min),
        ),
    )
    nudged_min = (quant_min - nudged_zero) * scale
    nudged_max = (quant_max - nudged_zero) * scale
    clamped = torch.minimum(torch.maximum(x, nudged_min), nudged_max)
    out = torch.floor((clamped - nudged_min) / scale + 0.5) * scale + nudged_min
    return out.to(dtype)


def pack_int4(arr: Any, axis: int = 0, dtype: str = "int8") -> tuple[torch.Tensor, tuple[int, ...], int]:
    """Pack int4 values (stored one per int8) two per byte along ``axis``: ``(packed, packed_shape, orig_len)``.

    Raises:
        ValueError: ``dtype`` is not ``"int8"``/``"uint8"``.
        TypeError: ``arr`` is not of ``dtype``.

    Example:
        >>> packed, shape, n = pack_int4(torch.tensor([[1], [-2], [3]], dtype=torch.int8))
        >>> packed.tolist(), shape, n
        ([[-31], [3]], (2, 1), 3)
    """
    if dtype not in ("int8", "uint8"):
        raise ValueError(f"Expected dtype to be 'int8' or 'uint8', but got '{dtype}'.")
    x = _tensor(arr)
    if standardize_dtype(x.dtype) != dtype:
        raise TypeError(f"Expected {dtype} tensor for packing, got {standardize_dtype(x.dtype)}.")
    a = np.moveaxis(x.cpu().numpy(), axis, 0)
    n = a.shape[0]
    if n % 2 == 1:
        a = np.concatenate([a, np.zeros((1,) + a.shape[1:], a.dtype)], axis=0)
    np_dtype = np.dtype(dtype)
    mask = np.array(0x0F, dtype=np_dtype)
    low = np.bitwise_and(a[::2].astype(np_dtype), mask)
    high = np.bitwise_and(a[1::2].astype(np_dtype), mask)
    packed = np.bitwise_or(low, np.left_shift(high, np.array(4, dtype=np_dtype)))
    packed = np.moveaxis(packed, 0, axis)
    out = torch.from_numpy(np.ascontiguousarray(packed))
    return out, tuple(out.shape), n


def unpack_int4(packed: Any, orig_len: int, axis: int = 0, dtype: str = "int8") -> torch.Tensor:
    """The inverse of :func:`pack_int4`: ``orig_len`` int4 values along ``axis`` (signed for ``"int8"``).

    Example:
        >>> unpack_int4(torch.tensor([[-31], [3]], dtype=torch.int8), 3).flatten().tolist()
        [1, -2, 3]
    """
    if dtype not in ("int8", "uint8"):
        raise ValueError(f"Expected dtype to be 'int8' or 'uint8', but got '{dtype}'.")
    p = _tensor(packed)
    if standardize_dtype(p.dtype) not in ("int8", "uint8"):
        raise TypeError(f"Expected int8 or uint8 tensor for unpacking, got {standardize_dtype(p.dtype)}")
    a = np.moveaxis(p.cpu().numpy(), axis, 0).astype(np.uint8)
    low = np.bitwise_and(a, 0x0F).astype(np.int16)
    high = np.bitwise_and(np.right_shift(a, 4), 0x0F).astype(np.int16)
    if dtype == "int8":
        low, high = (low ^ 8) - 8, (high ^ 8) - 8
    both = np.stack([low, high], axis=1).reshape((-1,) + a.shape[1:])[:orig_len]
    return torch.from_numpy(np.ascontiguousarray(np.moveaxis(both.astype(dtype), 0, axis)))


class Quantizer:
    """Base class of quantizers: ``quantizer(x)`` returns ``x`` quantized (here: unchanged).

    Example:
        >>> Quantizer().output_dtype
        'int8'
    """

    def __init__(self, output_dtype: str = "int8") -> None:
        self.output_dtype = output_dtype

    def __call__(self, x: Any) -> Any:
        return x

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Quantizer:
        return cls(**config)

    def get_config(self) -> dict[str, Any]:
        raise NotImplementedError(f"{self} does not implement get_config()")


class AbsMaxQuantizer(Quantizer):
    """:func:`abs_max_quantize` as an object: ``AbsMaxQuantizer()(x, axis=-1)`` returns ``(q, scale)``.

    Raises:
        ValueError: an int8 ``value_range`` outside ``[-128, 127]``.

    Example:
        >>> AbsMaxQuantizer()(torch.tensor([2.0, -1.0]))[0].tolist()
        [127, -63]
    """

    def __init__(
        self,
        axis: Any = None,
        value_range: tuple[int, int] = (-127, 127),
        epsilon: float | None = None,
        output_dtype: str = "int8",
    ) -> None:
        super().__init__(output_dtype=output_dtype)
        self.axis = None if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
        self.value_range = value_range
        self.epsilon = default_epsilon() if epsilon is None else epsilon
        if output_dtype == "int8" and (value_range[0] < -128 or value_range[1] > 127):
            raise ValueError(
                "Quantizer with output_dtype='int8' requires value_range to be within the interval [-128, 127]. "
                f"Received: value_range={value_range}"
            )

    def __call__(self, x: Any, axis: Any = None, to_numpy: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        axis = self.axis if axis is None else axis
        return abs_max_quantize(x, -1 if axis is None else axis, self.value_range, self.output_dtype, self.epsilon)

    def get_config(self) -> dict[str, Any]:
        config: dict[str, Any] = {
            "value_range": self.value_range,
            "epsilon": self.epsilon,
            "output_dtype": self.output_dtype,
        }
        if self.axis is not None:
            config["axis"] = self.axis
        return config


class QuantizationConfig:
    """Base class of quantization configs: a weight quantizer, an activation quantizer and a ``mode``."""

    def __init__(
        self, weight_quantizer: Quantizer | None = None, activation_quantizer: Quantizer | None = None
    ) -> None:
        self.weight_quantizer = weight_quantizer
        self.activation_quantizer = activation_quantizer

    @property
    def mode(self) -> str:
        raise NotImplementedError(
            "Subclasses must implement this property. Do not instantiate QuantizationConfig directly."
        )

    def get_config(self) -> dict[str, Any]:
        return {
            "weight_quantizer": None if self.weight_quantizer is None else serialize(self.weight_quantizer),
            "activation_quantizer": None if self.activation_quantizer is None else serialize(self.activation_quantizer),
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> QuantizationConfig:
        w, a = config.get("weight_quantizer"), config.get("activation_quantizer")
        return cls(
            weight_quantizer=None if w is None else deserialize(w),
            activation_quantizer=None if a is None else deserialize(a),
        )


class Int8QuantizationConfig(QuantizationConfig):
    """Int8: an ``AbsMaxQuantizer`` for activations by default; a weight quantizer must output int8.

    Example:
        >>> Int8QuantizationConfig().mode
        'int8'
    """

    def __init__(self, weight_quantizer: Quantizer | None = None, activation_quantizer: Any = "default") -> None:
        if isinstance(activation_quantizer, str) and activation_quantizer == "default":
            activation_quantizer = AbsMaxQuantizer()
        super().__init__(weight_quantizer, activation_quantizer)
        if self.weight_quantizer is not None and self.weight_quantizer.output_dtype != "int8":
            raise ValueError(
                "Int8QuantizationConfig requires a weight_quantizer with output_dtype='int8'. "
                f"Received: output_dtype={self.weight_quantizer.output_dtype}"
            )

    @property
    def mode(self) -> str:
        return "int8"


class Int4QuantizationConfig(QuantizationConfig):
    """Int4 weights (no activation quantizer by default), in groups of ``block_size`` inputs or per channel.

    Raises:
        ValueError: a ``block_size`` that is not ``None``, ``-1`` or positive, or custom quantizers with groups.

    Example:
        >>> Int4QuantizationConfig(block_size=64).block_size
        64
    """

    def __init__(
        self,
        weight_quantizer: Quantizer | None = None,
        activation_quantizer: Any = "default",
        block_size: int | None = 128,
    ) -> None:
        if isinstance(activation_quantizer, str) and activation_quantizer == "default":
            activation_quantizer = None
        super().__init__(weight_quantizer, activation_quantizer)
        if block_size is not None and block_size != -1 and block_size <= 0:
            raise ValueError(f"block_size must be None, -1, or a positive integer. Received: block_size={block_size}")
        self.block_size = block_size
        if (
            block_size is not None
            and block_size > 0
            and (weight_quantizer is not None or self.activation_quantizer is not None)
        ):
            raise ValueError(
                "Int4 sub-channel quantization (block_size > 0) does not support custom quantizers. "
                "Either set block_size=None or -1 for per-channel quantization, or remove the custom quantizers."
            )

    @property
    def mode(self) -> str:
        return "int4"

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "block_size": self.block_size}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> QuantizationConfig:
        w, a = config.get("weight_quantizer"), config.get("activation_quantizer")
        return cls(
            weight_quantizer=None if w is None else deserialize(w),
            activation_quantizer=None if a is None else deserialize(a),
            block_size=config.get("block_size", 128),
        )


class Float8QuantizationConfig(QuantizationConfig):
    """Float8 mixed-precision training: no user quantizers; marks the mode only."""

    def __init__(self) -> None:
        super().__init__(None, None)

    @property
    def mode(self) -> str:
        return "float8"

    def get_config(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> QuantizationConfig:
        return cls()


_OBJECTS: dict[str, type] = {
    "Quantizer": Quantizer,
    "AbsMaxQuantizer": AbsMaxQuantizer,
    "abs_max_quantizer": AbsMaxQuantizer,
    "Int8QuantizationConfig": Int8QuantizationConfig,
    "Int4QuantizationConfig": Int4QuantizationConfig,
    "Float8QuantizationConfig": Float8QuantizationConfig,
}


def serialize(quantizer: Any) -> dict[str, Any]:
    """Keras's serialized form (``module``, ``class_name``, ``config``, ``registered_name``) of a quantizer."""
    return {
        "module": "keras.quantizers",
        "class_name": type(quantizer).__name__,
        "config": quantizer.get_config(),
        "registered_name": None,
    }


def deserialize(config: dict[str, Any] | str, custom_objects: dict[str, Any] | None = None) -> Any:
    """The quantizer a :func:`serialize` dict (or a name such as ``"abs_max_quantizer"``) describes.

    Raises:
        ValueError: an unknown class name.
    """
    name = config if isinstance(config, str) else str(config.get("class_name"))
    cls = (custom_objects or {}).get(name) or _OBJECTS.get(name)
    if cls is None:
        raise ValueError(f"Unknown quantizer {name!r}. Expected one of {format_choices(list(_OBJECTS))}.")
    options = {} if isinstance(config, str) else dict(config.get("config") or {})
    if "value_range" in options:
        options["value_range"] = tuple(options["value_range"])
    return cls.from_config(options) if hasattr(cls, "from_config") else cls(**options)


def get(identifier: Any, **kwargs: Any) -> Any:
    """A quantizer from a name, a :func:`serialize` dict or a quantizer (``None`` stays ``None``).

    Raises:
        ValueError: an identifier that names no quantizer.
    """
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    obj = _OBJECTS.get(identifier) if isinstance(identifier, str) else identifier
    if obj is None or not callable(obj):
        raise ValueError(f"Could not interpret quantizer identifier: {identifier}")
    return cast(Any, obj)(**kwargs) if isinstance(obj, type) else obj


_NOT_BUILT = {
    "GPTQConfig": "GPTQ post-training quantization",
    "AWQConfig": "AWQ post-training quantization",
    "abs_max_quantize_grouped_with_zero_point": "grouped int4 quantization with zero points",
}


def __getattr__(name: str) -> Any:
    if name in _NOT_BUILT:
        raise AttributeError(
            f"unison does not implement keras.quantizers.{name} ({_NOT_BUILT[name]}); "
            "in torch use torch.ao.quantization."
        )
    raise AttributeError(f"module 'unison.keras.quantizers' has no attribute {name!r}")
