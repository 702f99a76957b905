"""Keras's settings that ``keras.ops`` reads: ``epsilon`` and ``image_data_format``.

``keras.backend`` (``backend/config.py``) is their public face, with ``floatx`` (torch's default
dtype, ``_convert.py``); they live here so that the ops, below the backend, read them without
importing it.

Example:
    >>> epsilon(), standardize_data_format(None)
    (1e-07, 'channels_last')
"""

from __future__ import annotations

from typing import Any

_SETTINGS: dict[str, Any] = {"epsilon": 1e-7, "image_data_format": "channels_last"}
_FORMATS = ("channels_last", "channels_first")


def epsilon() -> float:
    """The fuzz factor Keras adds to avoid dividing by zero (default ``1e-7``)."""
    return float(_SETTINGS["epsilon"])


def set_epsilon(value: float) -> None:
    """Set :func:`epsilon`. Example: ``keras.backend.set_epsilon(1e-5)``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"set_epsilon takes a non-negative float. Received: value={value!r}")
    _SETTINGS["epsilon"] = float(value)


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
