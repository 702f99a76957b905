"""tf_keras's ``layers.AbstractRNNCell``: the base of a custom recurrent cell for ``layers.RNN``.

A subclass defines ``state_size``, ``output_size`` and ``call(inputs, states)`` returning
``(output, new_states)``; ``get_initial_state`` gives zero states of ``state_size``.

Example:
    >>> import torch
    >>> from unison.keras.layers.rnn import RNN
    >>> class Sum(AbstractRNNCell):
    ...     state_size = output_size = 2
    ...     def call(self, inputs, states):
    ...         total = states[0] + inputs
    ...         return total, [total]
    >>> RNN(Sum())(torch.ones(1, 3, 2)).tolist()
    [[3.0, 3.0]]
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.layers.base import Layer


def _zeros(size: Any, batch: int, dtype: torch.dtype) -> torch.Tensor:
    shape = (batch, int(size)) if isinstance(size, int) else (batch, *(int(d) for d in size))
    return torch.zeros(shape, dtype=dtype)


class AbstractRNNCell(Layer):
    """Base of recurrent cells (tf_keras's ``AbstractRNNCell``): subclasses give ``state_size``,
    ``output_size`` and ``call(inputs, states)``."""

    def call(self, inputs: torch.Tensor, states: Any) -> Any:  # type: ignore[override]
        """One step: ``(output, new_states)`` from the step's inputs and the previous states."""
        raise NotImplementedError(
            f"{type(self).__name__} must define call(inputs, states) returning (output, new_states)."
        )

    @property
    def state_size(self) -> Any:
        """The size of the state(s): an int, a shape, or a list of them."""
        raise NotImplementedError(f"{type(self).__name__} must define state_size (e.g. state_size = units).")

    @property
    def output_size(self) -> Any:
        """The size of the output."""
        raise NotImplementedError(f"{type(self).__name__} must define output_size (e.g. output_size = units).")

    def get_initial_state(self, inputs: Any = None, batch_size: int | None = None, dtype: Any = None) -> Any:
        """Zero states for a batch (from ``inputs``' batch size, or ``batch_size``)."""
        if batch_size is None:
            if inputs is None:
                raise ValueError("get_initial_state needs inputs or batch_size (the number of sequences).")
            batch_size = int(inputs.shape[0])
        torch_dtype = dtype if isinstance(dtype, torch.dtype) else torch.float32
        if inputs is not None and dtype is None and getattr(inputs, "is_floating_point", lambda: False)():
            torch_dtype = inputs.dtype
        size = self.state_size
        if isinstance(size, (list, tuple)):  # nested: one state per entry, as tf_keras
            return [_zeros(s, batch_size, torch_dtype) for s in size]
        return _zeros(size, batch_size, torch_dtype)


__all__ = ["AbstractRNNCell"]
