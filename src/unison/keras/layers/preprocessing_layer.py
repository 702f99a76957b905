"""``PreprocessingLayer``: Keras 2's base of the layers that learn state from data with ``adapt``.

``adapt(data)`` resets the state (once the layer is built; the first batch builds it), feeds ``update_state`` one batch at a time (an array or tensor
is one batch, or is cut into ``batch_size`` rows; a dataset or any iterable gives its batches,
of which ``steps`` are read) and ends with ``finalize_state``; ``is_adapted`` is then true. A
subclass implements those three hooks, as in tf_keras. ``Normalization``, ``Discretization``,
``StringLookup``, ``IntegerLookup`` and ``TextVectorization`` derive from it, as in tf_keras.

Example:
    >>> import numpy as np
    >>> class Max(PreprocessingLayer):
    ...     def build(self, input_shape):
    ...         self.reset_state()
    ...         self.built = True
    ...     def reset_state(self):
    ...         self.peak = -np.inf
    ...     def update_state(self, data):
    ...         self.peak = max(self.peak, float(np.max(data)))
    ...     def call(self, inputs):
    ...         return inputs / self.peak
    >>> layer = Max()
    >>> layer.adapt(np.array([1.0, 4.0, 2.0]), batch_size=1)
    >>> layer.is_adapted, layer.peak
    (True, 4.0)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import torch

from unison.keras.layers.base import Layer


class PreprocessingLayer(Layer):
    """A layer whose state comes from ``adapt(data)`` rather than from gradient descent."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._is_adapted = False

    @property
    def is_adapted(self) -> bool:
        """Whether ``adapt`` has run (and ``reset_state`` has not cleared it since)."""
        return bool(self.__dict__.get("_is_adapted", False))

    def update_state(self, data: Any) -> None:
        """Accumulate one batch into the layer's state (a subclass implements it)."""
        raise NotImplementedError(
            f"{type(self).__name__} does not implement update_state(data); a PreprocessingLayer "
            "subclass implements update_state (and reset_state, finalize_state) to support adapt()."
        )

    def reset_state(self) -> None:
        """Clear the state ``update_state`` accumulates."""
        self._is_adapted = False

    def finalize_state(self) -> None:
        """Turn the accumulated state into what ``call`` uses (nothing by default)."""

    def compile(self, run_eagerly: bool | None = None, steps_per_execution: int | None = None) -> None:
        """Accepted for tf_keras compatibility: ``adapt`` always runs eagerly, one batch per step."""
        if steps_per_execution is not None and (
            not isinstance(steps_per_execution, int) or isinstance(steps_per_execution, bool) or steps_per_execution < 1
        ):
            raise ValueError(
                f"`steps_per_execution` must be a positive integer. Received: steps_per_execution={steps_per_execution!r}"
            )

    def make_adapt_function(self) -> Any:
        """The function ``adapt`` calls per batch (``update_state``), as tf_keras returns it."""
        return self.update_state

    def adapt(self, data: Any, batch_size: int | None = None, steps: int | None = None) -> None:
        """Learn the layer's state from ``data``: ``reset_state``, ``update_state`` per batch, ``finalize_state``."""
        if steps is not None and (not isinstance(steps, int) or isinstance(steps, bool) or steps < 1):
            raise ValueError(f"`steps` must be a positive integer or None. Received: steps={steps!r}")
        if self.built:  # as tf_keras: a layer not yet built starts from its constructor's state
            self.reset_state()
        for i, batch in enumerate(_adapt_batches(data, batch_size)):
            if steps is not None and i >= steps:
                break
            if not self.built:  # tf_keras builds the layer on the first batch's shape
                self.build(torch.Size(np.shape(batch)))
                self.built = True
            self.update_state(batch)
        self.finalize_state()
        self._is_adapted = True


def _adapt_batches(data: Any, batch_size: int | None) -> Iterable[Any]:
    """An array or tensor cut into ``batch_size`` rows (one batch when None); an iterable's own batches."""
    if isinstance(data, (np.ndarray, torch.Tensor, list)):
        array = data if not isinstance(data, list) else np.asarray(data)
        if batch_size is None or len(array) == 0:
            yield array
            return
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"`batch_size` must be a positive integer. Received: batch_size={batch_size!r}")
        for start in range(0, len(array), batch_size):
            yield array[start : start + batch_size]
        return
    if not isinstance(data, Iterable):
        raise ValueError(
            "adapt() takes a NumPy array, a tensor, a list, or a dataset (an iterable of batches). "
            f"Received: data of type {type(data).__name__}"
        )
    for batch in data:
        yield batch[0] if isinstance(batch, tuple) else batch  # (features, labels): the features


__all__ = ["PreprocessingLayer"]
