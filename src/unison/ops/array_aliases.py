"""Top-level names TF keeps for old programs: ``tf.guarantee_const`` and ``tf.parallel_stack``.

``tf.parallel_stack`` is a graph op: TF refuses it in eager code (``RuntimeError``) and stacks inside
a ``tf.function``; so does unison, whose ``tf.function`` marks its body while it runs.

Example:
    >>> import unison as tf
    >>> tf.guarantee_const(tf.constant([1, 2])).tolist()
    [1, 2]
"""

from __future__ import annotations

from typing import Any

import torch

from unison.ops.dtypes import to_tensor

__all__ = ["guarantee_const", "parallel_stack"]


def guarantee_const(input: Any, name: str | None = None) -> torch.Tensor:  # noqa: A002 - TF's name
    """``tf.guarantee_const``: ``input`` unchanged (a hint for TF's graph optimiser; deprecated in TF).

    Example:
        >>> guarantee_const([1.0]).tolist()
        [1.0]
    """
    return to_tensor(input)


def parallel_stack(values: Any, name: str = "parallel_stack") -> torch.Tensor:
    """``tf.parallel_stack``: ``tf.stack(values)`` along a new first axis, inside a ``tf.function`` only.

    Raises:
        RuntimeError: called eagerly (outside a ``tf.function``), as TF does.

    Example:
        >>> import unison as tf
        >>> tf.function(lambda: parallel_stack([tf.ones([2]), tf.zeros([2])]))().tolist()
        [[1.0, 1.0], [0.0, 0.0]]
    """
    from unison.ops.array import stack
    from unison.ops.control_more import in_function_body

    if not in_function_body():
        raise RuntimeError(
            "tf.parallel_stack() is not compatible with eager execution. Call it inside a tf.function, or use "
            "tf.stack(values) in eager code."
        )
    return stack(values, axis=0)
