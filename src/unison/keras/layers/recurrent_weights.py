"""What a recurrent layer (``LSTM``, ``GRU``, ``SimpleRNN``) and its one-step cell share.

Both take the same cell arguments (``units``, ``activation``, ``use_bias``, the initializers and
regularizers of ``kernel``, ``recurrent_kernel`` and ``bias``, ``dropout``, ``recurrent_dropout``,
``seed``), check them with the same messages, hold the same Keras-layout weights and compute a
step with the same gate equations: the layer (:mod:`unison.keras.layers.recurrent`) projects a
whole sequence's inputs at once and runs the step in a loop when torch's fused kernel cannot
serve; the cell (:mod:`unison.keras.layers.rnn_cell`) projects one step's inputs and runs it.

Example:
    >>> import torch
    >>> from unison.keras.layers.recurrent import LSTM
    >>> from unison.keras.layers.rnn_cell import LSTMCell
    >>> isinstance(LSTM(2), LSTMWeights), isinstance(LSTMCell(2), LSTMWeights)
    (True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from unison.keras import activations, initializers
from unison.keras.layers.base import Layer
from unison.keras.layers.misc import RandomSource, check_rate


def unit_forget_bias(initializer: Any, units: int) -> Callable[[torch.Tensor], None]:
    """Keras's ``unit_forget_bias``: the forget gate's bias starts at 1, the rest from ``initializer``."""
    init = initializers.get(initializer)

    def fill(tensor: torch.Tensor) -> None:
        init(tensor[:units])
        tensor[units : 2 * units].fill_(1.0)
        init(tensor[2 * units :])

    return fill


class RecurrentWeights(Layer):
    """The cell arguments, Keras-layout weights and input projection of a recurrent layer or cell.

    ``_gates`` is the number of gates: ``kernel`` is ``(input_dim, gates * units)``,
    ``recurrent_kernel`` ``(units, gates * units)`` and ``bias`` ``_bias_shape()``.
    """

    _gates = 1

    def _set_cell_arguments(
        self,
        units: int,
        activation: Any,
        use_bias: bool,
        initializer_args: tuple[Any, Any, Any],
        regularizer_args: tuple[Any, Any, Any],
        dropout: float,
        recurrent_dropout: float,
        seed: int | None,
    ) -> None:
        """Check and keep the arguments every Keras recurrent layer and cell takes."""
        if isinstance(units, bool) or not isinstance(units, int) or units < 1:
            raise ValueError(
                f"Received an invalid value for argument `units`, expected a positive integer, got {units!r}"
            )
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.dropout = check_rate(dropout, "dropout")
        self.recurrent_dropout = check_rate(recurrent_dropout, "recurrent_dropout")
        self.random = RandomSource(seed)
        self._initializers, self._regularizers = initializer_args, regularizer_args

    def _bias_shape(self) -> tuple[int, ...]:
        return (self._gates * self.units,)

    def _bias_initializer(self) -> Any:
        return self._initializers[2]

    def _build_weights(self, input_dim: int) -> None:
        """Create ``kernel``, ``recurrent_kernel`` and (with ``use_bias``) ``bias``, in Keras's order."""
        k_init, r_init, _ = self._initializers
        k_reg, r_reg, b_reg = self._regularizers
        width = self._gates * self.units
        self.kernel = self.add_weight(name="kernel", shape=(input_dim, width), initializer=k_init, regularizer=k_reg)
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel", shape=(self.units, width), initializer=r_init, regularizer=r_reg
        )
        self.bias = (
            self.add_weight(
                name="bias", shape=self._bias_shape(), initializer=self._bias_initializer(), regularizer=b_reg
            )
            if self.use_bias
            else None
        )

    def _project_inputs(self, x: torch.Tensor) -> torch.Tensor:
        """``x @ kernel + bias``: the inputs' share of every gate (one step or a whole sequence)."""
        out = torch.matmul(x, self.kernel)
        return out + self.bias if self.bias is not None else out


class LSTMWeights(RecurrentWeights):
    """LSTM's gates ``i, f, c, o``, Keras's ``unit_forget_bias`` and the step's equations."""

    _gates = 4
    unit_forget_bias: bool
    recurrent_activation: Any

    def _bias_initializer(self) -> Any:
        init = self._initializers[2]
        return unit_forget_bias(init, self.units) if self.unit_forget_bias else init

    def _lstm_step(
        self, xw: torch.Tensor, h_in: torch.Tensor, c: torch.Tensor, bias: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The new ``(h, c)`` from the projected inputs ``xw``, the (dropped-out) previous ``h`` and ``c``.

        The layer folds the bias into ``xw`` for the whole sequence; the cell passes ``x @ kernel``
        and ``bias``, added last as Keras's ``LSTMCell`` does.
        """
        z = xw + torch.matmul(h_in, self.recurrent_kernel)
        if bias is not None:
            z = z + bias
        zi, zf, zc, zo = z.chunk(4, dim=-1)
        act, gate = self.activation, self.recurrent_activation
        c = gate(zf) * c + gate(zi) * act(zc)
        return gate(zo) * act(c), c


class GRUWeights(RecurrentWeights):
    """GRU's gates ``z, r, h``, both bias layouts (``reset_after``) and the step's equations."""

    _gates = 3
    reset_after: bool
    recurrent_activation: Any

    def _bias_shape(self) -> tuple[int, ...]:
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _project_inputs(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.matmul(x, self.kernel)
        if self.bias is None:
            return out
        return out + (self.bias[0] if self.reset_after else self.bias)

    def _gru_step(self, xw: torch.Tensor, h: torch.Tensor, h_in: torch.Tensor) -> torch.Tensor:
        """The new ``h`` from the projected inputs ``xw``, the previous ``h`` and its dropped-out ``h_in``."""
        u, act, gate = self.units, self.activation, self.recurrent_activation
        xz, xr, xh = xw.chunk(3, dim=-1)
        if self.reset_after:
            inner = torch.matmul(h_in, self.recurrent_kernel)
            if self.bias is not None:
                inner = inner + self.bias[1]
            rz, rr, rh = inner.chunk(3, dim=-1)
            z, r = gate(xz + rz), gate(xr + rr)
            candidate = act(xh + r * rh)
        else:
            inner = torch.matmul(h_in, self.recurrent_kernel[:, : 2 * u])
            rz, rr = inner.chunk(2, dim=-1)
            z, r = gate(xz + rz), gate(xr + rr)
            candidate = act(xh + torch.matmul(r * h_in, self.recurrent_kernel[:, 2 * u :]))
        return z * h + (1 - z) * candidate


__all__ = ["GRUWeights", "LSTMWeights", "RecurrentWeights", "unit_forget_bias"]
