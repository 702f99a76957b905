"""``tf.dtypes``: the dtypes of ``unison.ops.dtypes`` with TF's functions that live in this namespace too.

``tf.dtypes.cast``, ``complex`` and ``saturate_cast`` are the top-level functions (TF exports them
in both places); ``tf.dtypes.experimental`` holds the 8-bit floats torch shares with TF.

Example:
    >>> import unison as tf
    >>> tf.dtypes.cast(tf.constant([1.7]), tf.dtypes.int32).tolist()
    [1]
"""

from __future__ import annotations

import types

import torch

from unison.ops.array import cast
from unison.ops.array_more import complex, saturate_cast
from unison.ops.dtypes import *  # noqa: F403  the dtypes themselves
from unison.ops.dtypes import __all__ as _dtype_names

# TF's float8 types are torch's (same bit layouts, round-to-nearest-even casts)
float8_e4m3fn = torch.float8_e4m3fn
float8_e5m2 = torch.float8_e5m2

experimental = types.SimpleNamespace(
    float8_e4m3fn=float8_e4m3fn,
    float8_e5m2=float8_e5m2,
)

__all__ = [*_dtype_names, "cast", "complex", "experimental", "saturate_cast"]
