"""``tf.print``: print tensors the way TF does (numpy layout, long tensors summarised, stderr).

Example:
    >>> import sys, unison as tf
    >>> tf.print("x:", tf.constant([1, 2, 3]), output_stream=sys.stdout)
    x: [1 2 3]
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import torch


def _format(value: Any, summarize: int) -> str:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        edge = summarize if summarize >= 0 else sys.maxsize
        return np.array2string(
            value,
            separator=" ",
            threshold=2 * edge if summarize >= 0 else sys.maxsize,
            edgeitems=max(edge, 1) if summarize >= 0 else 3,
        )
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_format(v, summarize) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_format(v, summarize)}" for k, v in value.items()) + "}"
    return str(value)


def tf_print(
    *inputs: Any,
    output_stream: Any = None,
    summarize: int = 3,
    sep: str = " ",
    end: str = "\n",
    name: str | None = None,
) -> None:
    """``tf.print``: to ``sys.stderr`` by default, as TF; ``summarize=-1`` prints every element."""
    stream = sys.stderr if output_stream is None else output_stream
    if isinstance(stream, str):
        raise TypeError(f"output_stream must be a stream such as sys.stdout. Received: {stream!r}")
    stream.write(sep.join(_format(v, summarize) for v in inputs) + end)
    stream.flush()
