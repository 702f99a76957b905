"""Keras's global backend settings: ``epsilon``, ``floatx``, ``image_data_format``.

``floatx`` *is* torch's default dtype (``torch.get_default_dtype()``), so layers that create weights
after ``set_floatx("float64")`` make float64 weights; ``epsilon`` and ``image_data_format`` are held
here, as Keras holds them in its own config module.

Example:
    >>> from unison.keras import backend
    >>> backend.epsilon(), backend.floatx(), backend.image_data_format()
    (1e-07, 'float32', 'channels_last')
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.ops._convert import floatx, standardize_dtype, torch_dtype

_SETTINGS: dict[str, Any] = {"epsilon": 1e-7, "image_data_format": "channels_last"}
_FLOATS = ("float16", "bfloat16", "float32", "float64")
_FORMATS = ("channels_last", "channels_first")


def epsilon() -> float:
    """The fuzz factor Keras adds to avoid dividing by zero (default ``1e-7``)."""
    return float(_SETTINGS["epsilon"])


def set_epsilon(value: float) -> None:
    """Set :func:`epsilon`. Example: ``keras.backend.set_epsilon(1e-5)``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"set_epsilon takes a non-negative float. Received: value={value!r}")
    _SETTINGS["epsilon"] = float(value)


def set_floatx(value: Any) -> None:
    """Set the default float dtype (torch's default dtype): ``"float16"``, ``"bfloat16"``, ``"float32"``, ``"float64"``.

    Weights made afterwards, ``keras.ops.zeros``/``ones`` and Python floats converted by ``keras.ops``
    use it. For mixed precision use ``keras.mixed_precision.set_global_policy`` instead, as Keras advises.
    """
    name = standardize_dtype(value) if not isinstance(value, str) or value in _FLOATS else value
    if name not in _FLOATS:
        raise ValueError(f"Unknown floatx type: {value!r}. Expected one of {list(_FLOATS)}.")
    torch.set_default_dtype(torch_dtype(name))


def image_data_format() -> str:
    """``"channels_last"`` (Keras's default) or ``"channels_first"``."""
    return str(_SETTINGS["image_data_format"])


def set_image_data_format(data_format: str) -> None:
    """Set :func:`image_data_format`; ``keras.ops`` conv/pool/resize read it when ``data_format=None``."""
    value = str(data_format).lower()
    if value not in _FORMATS:
        raise ValueError(f"The data_format argument must be one of {list(_FORMATS)}. Received: {data_format!r}")
    _SETTINGS["image_data_format"] = value


def standardize_data_format(data_format: str | None) -> str:
    """``data_format`` checked, or :func:`image_data_format` when ``None``."""
    if data_format is None:
        return image_data_format()
    value = str(data_format).lower()
    if value not in _FORMATS:
        raise ValueError(f"The data_format argument must be one of {list(_FORMATS)}. Received: {data_format!r}")
    return value


__all__ = [
    "epsilon",
    "floatx",
    "image_data_format",
    "set_epsilon",
    "set_floatx",
    "set_image_data_format",
    "standardize_data_format",
]
