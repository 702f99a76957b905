"""Hints for the data mistakes of a first hour: an unbatched ``tf.data`` dataset, labels that are strings.

Each function returns the text (or the error) that tells what happened, what was expected and the
fix; the data adapters and the losses call them where the mistake shows.

Example::

    >>> unbatched_hint(expected=(784,), received=(784,))
    ''
    >>> print(unbatched_hint(expected=(784,), received=()))
    <BLANKLINE>
    The dataset looks unbatched: each element is one example of shape (784,), so fit saw batches of shape (None,). Did you forget `.batch()`? e.g. dataset = dataset.batch(32) (tf.data yields single examples until it is batched).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def unbatched_hint(expected: Sequence[int | None], received: Sequence[int | None]) -> str:
    """The "did you forget ``.batch()``?" sentence when ``received`` is ``expected`` less its first axis.

    Args:
        expected: the model's input shape of one example (no batch axis), e.g. ``(784,)``.
        received: the shape of one example as fit read the data (no batch axis). An unbatched
            dataset of ``(784,)`` elements is read as batches of 784 examples of shape ``()``:
            its first axis taken for the batch.

    Returns:
        ``"\nThe dataset looks unbatched: ..."``, or ``""`` when the shapes do not say so.
    """
    expected, received = tuple(expected), tuple(received)
    if not expected or not _same(received, expected[1:]):
        return ""
    return (
        f"\nThe dataset looks unbatched: each element is one example of shape {expected}, so fit saw batches "
        f"of shape {(None, *received)}. Did you forget `.batch()`? e.g. dataset = dataset.batch(32) (tf.data "
        "yields single examples until it is batched)."
    )


def _same(a: Sequence[int | None], b: Sequence[int | None]) -> bool:
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def non_numeric_labels_error(name: str, values: Any) -> ValueError | None:
    """A ``ValueError`` for labels (or inputs) that are strings or Python objects, else ``None``.

    Example::

        >>> print(non_numeric_labels_error("y", np.array(["cat", "dog"])))
        y holds strings (dtype <U3, e.g. 'cat'), but a model trains on numbers. Map the class names to integer ids first, e.g. `classes, y = np.unique(y, return_inverse=True)` or a keras.layers.StringLookup layer, then use loss='sparse_categorical_crossentropy'.
    """
    if not isinstance(values, np.ndarray) or values.dtype.kind not in "OUS":
        return None
    first = values.reshape(-1)[0] if values.size else None
    kind = "strings" if values.dtype.kind in "US" or isinstance(first, (str, bytes)) else "Python objects"
    if isinstance(first, np.str_):
        first = str(first)
    return ValueError(
        f"{name} holds {kind} (dtype {values.dtype}, e.g. {first!r}), but a model trains on numbers. Map the class "
        f"names to integer ids first, e.g. `classes, {name} = np.unique({name}, return_inverse=True)` or a "
        "keras.layers.StringLookup layer, then use loss='sparse_categorical_crossentropy'."
    )
