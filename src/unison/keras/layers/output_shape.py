"""``Layer.compute_output_shape``: a layer's output shape for an input shape, by running it.

Keras 3 layers each write ``compute_output_shape`` by hand; unison's infer it the way its functional
API infers a ``keras.Input``'s shapes (``keras/backend/keras_tensor.py``): the layer runs, without
gradients and on a copy (so the call neither builds nor updates the layer itself), on zeros of the
given shape, twice when some sizes are ``None`` (each time with other sizes there), and an output axis
whose sizes differ between the two runs is ``None``.

    >>> from unison.keras.layers import Dense
    >>> Dense(3).compute_output_shape((None, 4))
    (None, 3)
"""

from __future__ import annotations

import copy
from typing import Any

import torch

from unison.keras.backend.keras_tensor import SHORT_SIZES, VARIABLE_SIZES
from unison.ops import tree

__all__ = ["infer_output_shape"]


def _is_shape(value: Any) -> bool:
    return isinstance(value, (tuple, list, torch.Size)) and all(d is None or isinstance(d, int) for d in value)


def _examples(input_shape: Any, size: int) -> Any:
    """Zeros of ``input_shape`` (a shape, or a list of shapes for several inputs), ``size`` for ``None``."""
    if _is_shape(input_shape):
        return torch.zeros(tuple(size if d is None else int(d) for d in input_shape))
    if isinstance(input_shape, (tuple, list)):
        return [_examples(s, size) for s in input_shape]
    raise ValueError(
        f"compute_output_shape(input_shape): expected a shape (a tuple of ints, None for an unknown size) "
        f"or a list of shapes for a layer of several inputs. Received: input_shape={input_shape!r}"
    )


def _run(layer: Any, input_shape: Any, size: int) -> Any:
    with torch.no_grad():
        return layer(_examples(input_shape, size), training=False)


def _shape_of(first: Any, second: Any) -> Any:
    if isinstance(first, (tuple, list)):
        return [_shape_of(a, b) for a, b in zip(first, second)]
    a, b = tuple(first.shape), tuple(second.shape)
    if len(a) != len(b):
        return tuple(None for _ in a)
    return tuple(x if x == y else None for x, y in zip(a, b))


def infer_output_shape(layer: Any, input_shape: Any) -> Any:
    """The output shape (a tuple; a list of them for several outputs) of ``layer`` on ``input_shape``."""
    try:
        twin = copy.deepcopy(layer)
    except Exception:  # a layer holding something uncopyable (a lock, a file): run it as it is
        twin = layer
    variable = None in tree.flatten(input_shape)
    try:
        first = _run(twin, input_shape, VARIABLE_SIZES[0])
        second = _run(twin, input_shape, VARIABLE_SIZES[1]) if variable else first
    except (RuntimeError, IndexError):
        if not variable:
            raise
        # the sizes are too large for this layer (an embedding's input_dim): try small ones
        first = _run(twin, input_shape, SHORT_SIZES[0])
        second = _run(twin, input_shape, SHORT_SIZES[1])
    return _shape_of(first, second)
