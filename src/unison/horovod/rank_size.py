"""``rank`` and ``size``: Horovod's (no argument: this process) and TF's (a tensor's) in one name.

``import unison as hvd; hvd.rank()`` is the process rank; ``import unison as tf; tf.rank(x)``
is the number of dimensions of ``x``. The argument decides, so both programs run unchanged.

Example:
    >>> import unison
    >>> unison.init(); unison.rank(), unison.rank(unison.zeros([2, 3])).item()
    (0, 2)
    >>> unison.size(), unison.size(unison.zeros([2, 3])).item()
    (1, 6)
"""

from __future__ import annotations

from typing import Any

from unison.horovod import basics
from unison.ops import array


def rank(input: Any = None, name: str | None = None) -> Any:
    """No argument: this process's rank (Horovod). A tensor: its number of dimensions (``tf.rank``)."""
    return basics.rank() if input is None else array.rank(input)


def size(input: Any = None, out_type: Any = None, name: str | None = None) -> Any:
    """No argument: the number of processes (Horovod). A tensor: its element count (``tf.size``)."""
    if input is None:
        return basics.size()
    return array.size(input) if out_type is None else array.size(input, out_type)
