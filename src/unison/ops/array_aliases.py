"""Top-level names TF keeps for old programs: ``tf.guarantee_const``.

(``tf.parallel_stack`` is left out: TF raises in eager mode, and unison is always eager.)

Example:
    >>> import unison as tf
    >>> tf.guarantee_const(tf.constant([1, 2])).tolist()
    [1, 2]
"""

from __future__ import annotations

from typing import Any

import torch

from unison.ops.dtypes import to_tensor

__all__ = ["guarantee_const"]


def guarantee_const(input: Any, name: str | None = None) -> torch.Tensor:  # noqa: A002 - TF's name
    """``tf.guarantee_const``: ``input`` unchanged (a hint for TF's graph optimiser; deprecated in TF).

    Example:
        >>> guarantee_const([1.0]).tolist()
        [1.0]
    """
    return to_tensor(input)
