"""Keras's global backend settings: ``epsilon``, ``floatx``, ``image_data_format``.

``floatx`` *is* torch's default dtype (``torch.get_default_dtype()``), so layers that create weights
after ``set_floatx("float64")`` make float64 weights; ``epsilon`` and ``image_data_format`` are held
in ``keras/ops/_config.py``, below this module, because ``keras.ops`` reads them (the backend sits
above the ops, which never import it).

Example:
    >>> from unison.keras import backend
    >>> backend.epsilon(), backend.floatx(), backend.image_data_format()
    (1e-07, 'float32', 'channels_last')
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.ops._config import (
    epsilon,
    image_data_format,
    set_epsilon,
    set_image_data_format,
    standardize_data_format,
)
from unison.keras.ops._convert import floatx, standardize_dtype, torch_dtype

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def set_floatx(value: Any) -> None:
    """Set the default float dtype (torch's default dtype): ``"float16"``, ``"bfloat16"``, ``"float32"``, ``"float64"``.

    Weights made afterwards, ``keras.ops.zeros``/``ones`` and Python floats converted by ``keras.ops``
    use it. For mixed precision use ``keras.mixed_precision.set_global_policy`` instead, as Keras advises.
    """
    name = standardize_dtype(value) if not isinstance(value, str) or value in _FLOATS else value
    if name not in _FLOATS:
        raise ValueError(f"Unknown floatx type: {value!r}. Expected one of {list(_FLOATS)}.")
    torch.set_default_dtype(torch_dtype(name))


__all__ = [
    "epsilon",
    "floatx",
    "image_data_format",
    "set_epsilon",
    "set_floatx",
    "set_image_data_format",
    "standardize_data_format",
]
