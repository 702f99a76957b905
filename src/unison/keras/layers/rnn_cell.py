"""Keras's recurrent cells: ``SimpleRNNCell``, ``LSTMCell``, ``GRUCell`` and ``StackedRNNCells``.

A cell computes one time step: ``cell(inputs_t, states) -> (output_t, new_states)`` with
``states`` a list (one tensor per entry of ``cell.state_size``). ``keras.layers.RNN(cell)`` runs
it over a sequence. The weights are in Keras's layout and named as Keras names them (``kernel``
``(input_dim, gates * units)``, ``recurrent_kernel``, ``bias``), with Keras's gate orders
(``i, f, c, o`` for LSTM; ``z, r, h`` for GRU), so ``RNN(LSTMCell(n))`` computes what ``LSTM(n)``
computes with the same weights (the layers run torch's fused kernels; cells run step by step).

``dropout``/``recurrent_dropout`` draw one mask per sequence (Keras's ``DropoutRNNCell``): the
``RNN`` layer calls ``reset_dropout_mask()``/``reset_recurrent_dropout_mask()`` after each
sequence.

Example:
    >>> import torch
    >>> cell = LSTMCell(4)
    >>> out, (h, c) = cell(torch.zeros(2, 3), [torch.zeros(2, 4), torch.zeros(2, 4)])
    >>> tuple(out.shape), cell.state_size, tuple(cell.kernel.shape)
    ((2, 4), [4, 4], (3, 16))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from unison.keras import activations
from unison.keras.layers.base import Layer, finish_build
from unison.keras.layers.recurrent_weights import GRUWeights, LSTMWeights, RecurrentWeights

__all__ = ["GRUCell", "LSTMCell", "SimpleRNNCell", "StackedRNNCells"]


class _Cell(RecurrentWeights):
    """The built-in cells' dropout masks and states (the arguments and weights are the layers')."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._masks: dict[str, torch.Tensor | None] = {"input": None, "recurrent": None}

    @property
    def state_size(self) -> Any:
        return self.units

    @property
    def output_size(self) -> int:
        return self.units

    def build(self, input_shape: Any) -> None:
        self._build_weights(int(input_shape[-1]))

    def _dropped(self, kind: str, x: torch.Tensor, rate: float, training: bool) -> torch.Tensor:
        if not (training and rate):
            return x
        mask = self._masks[kind]
        if mask is None or mask.shape != x.shape:
            mask = self._masks[kind] = self.random.keep_mask(tuple(x.shape), rate, x)
        return x * mask

    def reset_dropout_mask(self) -> None:
        """Draw a new input dropout mask at the next step (the RNN layer calls it per sequence)."""
        self._masks["input"] = None

    def reset_recurrent_dropout_mask(self) -> None:
        """Draw a new recurrent dropout mask at the next step."""
        self._masks["recurrent"] = None

    def get_initial_state(self, batch_size: int | None = None) -> list[torch.Tensor]:
        """Zeros of shape ``(batch_size, units)``, one per state."""
        sizes = self.state_size if isinstance(self.state_size, list) else [self.state_size]
        return [torch.zeros(int(batch_size or 1), size) for size in sizes]


def _inputs(inputs: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return inputs.to(like.dtype)  # integer steps (e.g. token ids fed as features) compute in the weights' dtype


class SimpleRNNCell(_Cell):
    """One step of ``SimpleRNN``: ``h = activation(x @ kernel + bias + h_prev @ recurrent_kernel)``."""

    def __init__(
        self,
        units: int,
        activation: Any = "tanh",
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        recurrent_initializer: Any = "orthogonal",
        bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None,
        recurrent_regularizer: Any = None,
        bias_regularizer: Any = None,
        dropout: float = 0.0,
        recurrent_dropout: float = 0.0,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._set_cell_arguments(
            units,
            activation,
            use_bias,
            (kernel_initializer, recurrent_initializer, bias_initializer),
            (kernel_regularizer, recurrent_regularizer, bias_regularizer),
            dropout,
            recurrent_dropout,
            seed,
        )

    def call(self, inputs: torch.Tensor, states: Any = None, training: bool = False) -> Any:
        prev = states[0] if isinstance(states, (list, tuple)) else states
        x = self._dropped("input", _inputs(inputs, self.kernel), self.dropout, training)
        prev_in = self._dropped("recurrent", prev, self.recurrent_dropout, training)
        output = self.activation(self._project_inputs(x) + prev_in @ self.recurrent_kernel)
        return output, [output]


class LSTMCell(LSTMWeights, _Cell):
    """One step of ``LSTM`` (gates ``i, f, c, o``; states ``[h, c]``; Keras's ``unit_forget_bias``)."""

    def __init__(
        self,
        units: int,
        activation: Any = "tanh",
        recurrent_activation: Any = "sigmoid",
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        recurrent_initializer: Any = "orthogonal",
        bias_initializer: Any = "zeros",
        unit_forget_bias: bool = True,
        kernel_regularizer: Any = None,
        recurrent_regularizer: Any = None,
        bias_regularizer: Any = None,
        dropout: float = 0.0,
        recurrent_dropout: float = 0.0,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._set_cell_arguments(
            units,
            activation,
            use_bias,
            (kernel_initializer, recurrent_initializer, bias_initializer),
            (kernel_regularizer, recurrent_regularizer, bias_regularizer),
            dropout,
            recurrent_dropout,
            seed,
        )
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)

    @property
    def state_size(self) -> list[int]:
        return [self.units, self.units]

    def call(self, inputs: torch.Tensor, states: Any = None, training: bool = False) -> Any:
        h_prev, c_prev = states[0], states[1]
        x = self._dropped("input", _inputs(inputs, self.kernel), self.dropout, training)
        h_in = self._dropped("recurrent", h_prev, self.recurrent_dropout, training)
        h, c = self._lstm_step(x @ self.kernel, h_in, c_prev, self.bias)
        return h, [h, c]


class GRUCell(GRUWeights, _Cell):
    """One step of ``GRU`` (gates ``z, r, h``); ``reset_after=True`` (Keras's default) applies the
    reset gate after the recurrent matrix product and has a ``(2, 3 * units)`` bias."""

    def __init__(
        self,
        units: int,
        activation: Any = "tanh",
        recurrent_activation: Any = "sigmoid",
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        recurrent_initializer: Any = "orthogonal",
        bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None,
        recurrent_regularizer: Any = None,
        bias_regularizer: Any = None,
        dropout: float = 0.0,
        recurrent_dropout: float = 0.0,
        seed: int | None = None,
        reset_after: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._set_cell_arguments(
            units,
            activation,
            use_bias,
            (kernel_initializer, recurrent_initializer, bias_initializer),
            (kernel_regularizer, recurrent_regularizer, bias_regularizer),
            dropout,
            recurrent_dropout,
            seed,
        )
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = bool(reset_after)

    def call(self, inputs: torch.Tensor, states: Any = None, training: bool = False) -> Any:
        h_prev = states[0] if isinstance(states, (list, tuple)) else states
        x = self._dropped("input", _inputs(inputs, self.kernel), self.dropout, training)
        h_in = self._dropped("recurrent", h_prev, self.recurrent_dropout, training)
        h = self._gru_step(self._project_inputs(x), h_prev, h_in)
        return h, [h]


def _has_training(fn: Callable[..., Any]) -> bool:
    import inspect

    try:
        return "training" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def call_cell(cell: Any, inputs: torch.Tensor, states: Any, training: bool) -> tuple[Any, Any]:
    """Run one step of any cell (a Keras layer with ``call(inputs, states[, training])`` or a callable)."""
    call = getattr(cell, "call", None)
    kwargs = {"training": training} if call is not None and _has_training(call) else {}
    return cell(inputs, states, **kwargs) if callable(cell) else call(inputs, states, **kwargs)  # type: ignore[misc]


def build_cell(cell: Any, inputs: torch.Tensor) -> None:
    """Build a cell that builds itself on its first step (a Keras layer cell, or each cell of a
    stack) for the steps of ``inputs`` ``(batch, steps, ...)``; other cells are left as they are."""
    cells = cell.cells if isinstance(cell, StackedRNNCells) else [cell]
    shape = torch.Size((inputs.shape[0], *inputs.shape[2:]))
    for one in cells:
        if isinstance(one, Layer) and not one.built:
            one.build(shape)
            finish_build(one)
        size = getattr(one, "output_size", None)
        if not isinstance(size, int):
            return  # the next cell's input shape is not known here: it builds on its first step
        shape = torch.Size((*shape[:-1], size))


class StackedRNNCells(Layer):
    """Several cells run as one: each step feeds the output of one cell to the next.

    ``state_size`` lists each cell's ``state_size``; the states are nested the same way (one
    entry per cell). The output is the last cell's.

    Args:
        cells: the cells, first to last.

    Example:
        >>> import torch
        >>> stack = StackedRNNCells([SimpleRNNCell(3), LSTMCell(2)])
        >>> stack.state_size, stack.output_size
        ([3, [2, 2]], 2)
    """

    def __init__(self, cells: Sequence[Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not cells:
            raise ValueError("StackedRNNCells needs at least one cell. Received: cells=[]")
        for cell in cells:
            if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
                raise ValueError(
                    "All cells must have a `call` method and a `state_size` attribute. "
                    f"Received: cell={cell!r} ({type(cell).__name__})"
                )
        self.cells = torch.nn.ModuleList(c for c in cells if isinstance(c, torch.nn.Module))
        self._cells = list(cells)

    @property
    def state_size(self) -> list[Any]:
        return [c.state_size for c in self._cells]

    @property
    def output_size(self) -> Any:
        last = self._cells[-1]
        if getattr(last, "output_size", None) is not None:
            return last.output_size
        return last.state_size[0] if isinstance(last.state_size, (list, tuple)) else last.state_size

    def get_initial_state(self, batch_size: int | None = None) -> list[Any]:
        """Each cell's initial states (its ``get_initial_state``, else zeros), one entry per cell."""
        found: list[Any] = []
        for cell in self._cells:
            make = getattr(cell, "get_initial_state", None)
            if make is not None:
                found.append(make(batch_size=batch_size))
            elif isinstance(cell.state_size, (list, tuple)):
                found.append([torch.zeros(int(batch_size or 1), int(d)) for d in cell.state_size])
            else:
                found.append(torch.zeros(int(batch_size or 1), int(cell.state_size)))
        return found

    def forward(self, inputs: Any, states: Any = None, training: bool = False) -> Any:
        # The cells build themselves on their first call: nothing to build here.
        self.built = True
        return self.call(inputs, states, training=training)

    def call(self, inputs: torch.Tensor, states: Any = None, training: bool = False) -> Any:
        new_states = []
        for cell, cell_states in zip(self._cells, states):
            nested = isinstance(cell_states, (list, tuple))
            inputs, out_states = call_cell(cell, inputs, list(cell_states) if nested else [cell_states], training)
            if not isinstance(out_states, (list, tuple)):
                out_states = [out_states]
            new_states.append(list(out_states) if nested else out_states[0])
        return inputs, new_states

    def get_config(self) -> dict[str, Any]:
        from unison.keras.saving.serialization import layer_config

        config = super().get_config()
        config["cells"] = [layer_config(c) for c in self._cells]
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> StackedRNNCells:
        from unison.keras.saving.serialization import from_config

        config = dict(config)
        config["cells"] = [from_config(c) if isinstance(c, dict) else c for c in config.get("cells", [])]
        return cls(**config)

    def reset_dropout_mask(self) -> None:
        for cell in self._cells:
            getattr(cell, "reset_dropout_mask", lambda: None)()

    def reset_recurrent_dropout_mask(self) -> None:
        for cell in self._cells:
            getattr(cell, "reset_recurrent_dropout_mask", lambda: None)()
