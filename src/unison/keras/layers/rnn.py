"""``keras.layers.RNN(cell)``: any recurrent cell run over a ``(batch, steps, ...)`` sequence.

A cell is a Keras layer (or any object) with ``state_size`` (an int, or a list with one entry per
state; the states of ``StackedRNNCells`` are nested per cell), optionally ``output_size`` (else
``state_size[0]``) and ``get_initial_state(batch_size)``, and ``call(inputs, states)`` returning
``(output, new_states)``; ``states`` arrives as a list, as Keras passes it. A list of cells is
stacked (``StackedRNNCells``).

Semantics are Keras's: ``return_sequences``, ``return_state`` (``[output, *states]``),
``go_backwards`` (the sequence is read from its end and the outputs come in that order),
``initial_state=``, masks (a masked step keeps the previous states, and its output is the
previous output, or zeros with ``zero_output_for_mask=True``), ``stateful=True`` with
``reset_states()``/``reset_state()``. ``unroll`` is accepted: the steps always run as a Python
loop (eager torch), which is what unrolling computes.

Example:
    >>> import torch
    >>> from unison import keras
    >>> class MinimalRNNCell(keras.layers.Layer):
    ...     def __init__(self, units, **kwargs):
    ...         super().__init__(**kwargs)
    ...         self.units = self.state_size = units
    ...     def build(self, input_shape):
    ...         self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="ones")
    ...         self.recurrent_kernel = self.add_weight(shape=(self.units, self.units), initializer="ones")
    ...     def call(self, inputs, states):
    ...         output = inputs @ self.kernel + states[0] @ self.recurrent_kernel
    ...         return output, [output]
    >>> RNN(MinimalRNNCell(2))(torch.ones(1, 3, 1)).tolist()   # h = 1, then 1 + 2 * 1, then 1 + 2 * 3
    [[7.0, 7.0]]
"""

from __future__ import annotations

import functools
from typing import Any

import torch

from unison.keras.layers.masking import MaskedLayer, get_mask, set_mask
from unison.keras.layers.rnn_cell import StackedRNNCells, build_cell, call_cell
from unison.keras.layers.rnn_state import HeldStates, tree_map

__all__ = ["RNN"]


def _zeros(size: Any, batch: int, like: torch.Tensor) -> torch.Tensor:
    # an int is a (batch, size) state; a tuple of ints a state of shape (batch, *size) (Keras's TensorShape)
    shape = (batch, int(size)) if isinstance(size, int) else (batch, *(int(d) for d in size))
    return like.new_zeros(shape)


class RNN(MaskedLayer):
    """Run ``cell`` over the steps of a sequence (Keras's ``keras.layers.RNN``).

    Args:
        cell: a cell (see the module doc) or a list of cells (stacked).
        return_sequences: return every step's output ``(batch, steps, ...)``, not only the last.
        return_state: also return the final states: ``[output, *states]``.
        go_backwards: read the sequence from its last step.
        stateful: carry each sample's final states into the same row of the next batch.
        unroll: accepted (the steps always run as a loop).
        zero_output_for_mask: masked steps output zeros instead of the previous output.
    """

    def __init__(
        self,
        cell: Any,
        return_sequences: bool = False,
        return_state: bool = False,
        go_backwards: bool = False,
        stateful: bool = False,
        unroll: bool = False,
        zero_output_for_mask: bool = False,
        **kwargs: Any,
    ) -> None:
        if kwargs.pop("time_major", False):
            _time_major_error()
        super().__init__(**kwargs)
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
            raise ValueError(
                "Argument `cell` should have a `call` method and a `state_size` attribute (the size of "
                f"the recurrent state, e.g. self.state_size = units). Received: cell={cell!r}"
            )
        self.cell = cell
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful = bool(go_backwards), bool(stateful)
        self.unroll, self.zero_output_for_mask = bool(unroll), bool(zero_output_for_mask)
        self._held = HeldStates(self.name)

    # --- states --------------------------------------------------------------------------------
    def get_initial_state(self, batch_size: int, like: torch.Tensor | None = None) -> list[Any]:
        """The states at the first step: the cell's ``get_initial_state``, else zeros."""
        like = like if like is not None else torch.zeros(())
        make = getattr(self.cell, "get_initial_state", None)
        if make is not None:
            states = make(batch_size=batch_size)
            states = list(states) if isinstance(states, (list, tuple)) else [states]
            return tree_map(lambda s: torch.as_tensor(s).to(device=like.device, dtype=like.dtype), states)
        size = self.cell.state_size
        sizes = list(size) if isinstance(size, (list, tuple)) else [size]
        return [_zeros(s, batch_size, like) for s in sizes]

    def reset_states(self, states: Any = None) -> None:
        """Zero the states a ``stateful=True`` layer carries between batches, or set them to ``states``."""
        self._held.reset(states)

    def reset_state(self) -> None:
        """Keras 3's name for :meth:`reset_states` (zeros)."""
        self._held.reset()

    @property
    def states(self) -> Any:
        """The held states of a stateful layer (``None`` before its first call or after a reset)."""
        return self._held.states

    # --- call ----------------------------------------------------------------------------------
    def forward(self, inputs: Any, mask: Any = None, training: bool | None = None, initial_state: Any = None) -> Any:
        if not isinstance(inputs, torch.Tensor) or inputs.dim() < 3:
            shape = tuple(getattr(inputs, "shape", ()))
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected ndim>=3 (batch, steps, "
                f"features). Full shape received: {shape}"
            )
        if mask is None:
            mask = get_mask(inputs)
        self.built = True
        if self.__dict__.pop("_cast_after_build", False):
            # a float64 policy's first call (see DTypePolicyMixin): the cell builds its weights in
            # its first step, so build it here and cast them before any step computes with them
            build_cell(self.cell, inputs)
            self._cast_variables()
        return self.call(inputs, mask=mask, training=self._training(training), initial_state=initial_state)

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False, initial_state: Any = None) -> Any:
        x = inputs if inputs.is_floating_point() else inputs.to(torch.get_default_dtype())
        batch, steps = x.shape[0], x.shape[1]
        if initial_state is None and self.stateful:
            initial_state = self._held.initial(batch)
        if initial_state is None:
            states = self.get_initial_state(batch, x)
        else:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
        keep = None
        if mask is not None:
            keep = torch.as_tensor(mask, device=x.device).bool()
            if tuple(keep.shape) != (batch, steps):
                raise ValueError(
                    f"Layer '{self.name}' received a mask of shape {tuple(keep.shape)} for inputs of shape "
                    f"{tuple(x.shape)}; expected {(batch, steps)} (batch, steps)."
                )
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        outputs: list[torch.Tensor] = []
        previous: torch.Tensor | None = None
        for t in order:
            out, new_states = call_cell(self.cell, x[:, t], states, training)
            new_states = list(new_states) if isinstance(new_states, (list, tuple)) else [new_states]
            if keep is not None:
                step = keep[:, t]
                states = tree_map(functools.partial(_keep_new, step), new_states, states)
                held = torch.zeros_like(out) if previous is None or self.zero_output_for_mask else previous
                out = torch.where(_rows(step, out), out, held)
            else:
                states = new_states
            outputs.append(out)
            previous = out
        for reset in ("reset_dropout_mask", "reset_recurrent_dropout_mask"):
            getattr(self.cell, reset, lambda: None)()
        if self.stateful:
            self._held.hold(states)
        result = torch.stack(outputs, dim=1) if self.return_sequences else outputs[-1]
        set_mask(result, mask if self.return_sequences else None)
        return [result, *states] if self.return_state else result

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return mask if self.return_sequences else None

    # --- saving (the cell by its config, as Bidirectional saves its layer) -----------------------
    def get_config(self) -> dict[str, Any]:
        from unison.keras.saving.serialization import layer_config

        config = super().get_config()
        config["cell"] = layer_config(self.cell)
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> RNN:
        from unison.keras.saving.serialization import from_config

        config = dict(config)
        if isinstance(config.get("cell"), dict):
            config["cell"] = from_config(config["cell"])
        return cls(**config)


def _keep_new(step: torch.Tensor, new: torch.Tensor, old: torch.Tensor) -> torch.Tensor:
    return torch.where(_rows(step, new), new, old)


def _rows(step: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """A (batch,) step mask broadcast over the other axes of ``like``."""
    return step.reshape(step.shape[0], *([1] * (like.dim() - 1)))


def _time_major_error() -> None:
    raise ValueError(
        "time_major=True is not supported: RNN takes (batch, steps, features) inputs. Received: "
        "time_major=True; transpose the inputs with tf.transpose(x, [1, 0, 2])."
    )
