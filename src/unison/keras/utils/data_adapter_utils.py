"""How a training step's ``data`` splits into inputs, targets and sample weights (Keras's helper).

Kept in ``utils`` (as Keras 3 keeps it beside its data adapters) so that ``keras.utils`` and the
trainer both import it from below, not from each other.
"""

from __future__ import annotations

from typing import Any

__all__ = ["pack_x_y_sample_weight", "unpack_x_y_sample_weight"]


def unpack_x_y_sample_weight(data: Any) -> tuple[Any, Any, Any]:
    """``(x, y, sample_weight)`` from a step's ``data`` (Keras's ``keras.utils.unpack_x_y_sample_weight``).

    Example:
        >>> unpack_x_y_sample_weight((1, 2))
        (1, 2, None)
    """
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data[0], data[1], data[2]
    raise ValueError(
        "Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`. "
        f"Received a tuple of length {len(data)}: {data!r:.120}"
    )


def pack_x_y_sample_weight(x: Any, y: Any = None, sample_weight: Any = None) -> Any:
    """The inverse of :func:`unpack_x_y_sample_weight` (Keras's ``keras.utils.pack_x_y_sample_weight``).

    ``x`` alone is returned as ``(x,)`` when it is a tuple or list (so it is not read as
    ``(x, y)``), else as itself; otherwise a tuple of the parts given.

    Example:
        >>> pack_x_y_sample_weight(1, 2)
        (1, 2)
        >>> pack_x_y_sample_weight([1, 2])
        ([1, 2],)
    """
    if y is None:
        return (x,) if isinstance(x, (tuple, list)) else x
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)
