"""Recurrent layers (Keras 3): ``LSTM``, ``GRU`` and ``SimpleRNN`` over ``(batch, steps, features)``.

Weights are in Keras's layout, so Keras weights load as they are: ``kernel`` ``(input_dim,
gates * units)``, ``recurrent_kernel`` ``(units, gates * units)``; gates ``i, f, c, o`` (LSTM),
``z, r, h`` (GRU), one (SimpleRNN). ``bias`` is ``(4 * units,)`` for LSTM, ``(2, 3 * units)``
(input and recurrent biases) for GRU with ``reset_after=True`` (the default) and ``(3 * units,)``
without it, ``(units,)`` for SimpleRNN.

With Keras's default activations (``tanh`` and ``sigmoid``; SimpleRNN: ``tanh`` or ``relu``) and
GRU's ``reset_after=True``, a call runs torch's fused kernel (``torch.lstm``/``torch.gru``/
``torch.rnn_tanh``, cuDNN on a GPU) on views of the Keras-layout weights: torch's LSTM gate order
``i, f, g, o`` is Keras's, and GRU's ``r, z, n`` is Keras's ``z, r, h`` reordered. Other
activations, ``reset_after=False``, masks that are not right-padded, and ``recurrent_dropout``
while training run a Python loop over the steps with the same equations.

Masks (``Embedding(mask_zero=True)``, ``Masking``, or ``mask=``): a masked step keeps the previous
state, and its output is the previous output (zeros before the first real step), as Keras's
generic implementation does. Right-padded masks (every row ``True...True False...False``) run
the fused kernel on packed sequences; any other mask runs the loop. With ``go_backwards=True``
the sequence is read from its last step and the outputs come back in that reversed order.

``dropout`` multiplies the inputs by one dropout mask per sequence (the same at every step) and
``recurrent_dropout`` the previous output likewise, only when training, as in Keras.

``stateful=True`` carries each sample's last states into the same row of the next batch until
``reset_states()``/``reset_state()`` (see :mod:`unison.keras.layers.rnn_state`); constraints
(``kernel_constraint``, ``recurrent_constraint``, ``bias_constraint``) are applied after each
optimizer update. ``unroll``, ``use_cudnn``
and ``implementation`` are accepted and ignored.

Example:
    >>> import torch
    >>> lstm = LSTM(4, return_sequences=True, return_state=True)
    >>> out, h, c = lstm(torch.zeros(2, 5, 3))
    >>> tuple(out.shape), tuple(h.shape), tuple(lstm.kernel.shape), tuple(lstm.recurrent_kernel.shape)
    ((2, 5, 4), (2, 4), (3, 16), (4, 16))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from unison.keras import activations
from unison.keras.layers.recurrent_base import RNNBase
from unison.keras.layers.recurrent_weights import GRUWeights, LSTMWeights


class LSTM(LSTMWeights, RNNBase):
    """Long Short-Term Memory layer (Hochreiter 1997), Keras 3's ``LSTM`` (see the module doc).

    Args:
        units: size of the output and of the states.
        activation: for the cell input and output (default ``"tanh"``).
        recurrent_activation: for the gates (default ``"sigmoid"``).
        unit_forget_bias: start the forget gate's bias at 1 (default ``True``).
        return_sequences: return every step's output ``(batch, steps, units)``, not the last one.
        return_state: return ``[output, h, c]``.
        go_backwards: read the sequence from the end (outputs come back reversed).
        dropout, recurrent_dropout: dropout rates for the inputs and the previous output, when training.
        seed: seed of the dropout masks.

    Call with ``initial_state=[h, c]`` to start from given states, ``mask=`` to mask steps.
    """

    _state_count = 2

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
        return_sequences: bool = False,
        return_state: bool = False,
        go_backwards: bool = False,
        stateful: bool = False,
        unroll: bool = False,
        zero_output_for_mask: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(return_sequences, return_state, go_backwards, stateful, zero_output_for_mask, **kwargs)
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

    def _fused_function(self) -> Callable[..., Any] | None:
        return torch.lstm if self._default_activations() else None

    def _step(
        self, xw: torch.Tensor, states: list[torch.Tensor], rec_mask: torch.Tensor | None
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        h, c = states
        h, c = self._lstm_step(xw, h * rec_mask if rec_mask is not None else h, c)
        return h, [h, c]


class GRU(GRUWeights, RNNBase):
    """Gated Recurrent Unit (Cho et al. 2014), Keras 3's ``GRU`` (see the module doc).

    ``reset_after=True`` (default, cuDNN's variant) applies the reset gate after the recurrent
    matrix product and has separate input and recurrent biases, ``bias`` of shape ``(2, 3 * units)``;
    ``reset_after=False`` applies it before (``bias`` ``(3 * units,)``) and runs the step loop.
    ``return_state=True`` returns ``[output, h]``. Other arguments as :class:`LSTM`.
    """

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
        return_sequences: bool = False,
        return_state: bool = False,
        go_backwards: bool = False,
        stateful: bool = False,
        unroll: bool = False,
        reset_after: bool = True,
        zero_output_for_mask: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(return_sequences, return_state, go_backwards, stateful, zero_output_for_mask, **kwargs)
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

    def _fused_function(self) -> Callable[..., Any] | None:
        return torch.gru if self.reset_after and self._default_activations() else None

    def _torch_weights(self) -> list[torch.Tensor]:
        u = self.units
        # torch orders the gates r, z, n; Keras z, r, h.
        order = torch.cat([torch.arange(u, 2 * u), torch.arange(0, u), torch.arange(2 * u, 3 * u)])
        order = order.to(self.kernel.device)
        weights = [self.kernel.index_select(1, order).t(), self.recurrent_kernel.index_select(1, order).t()]
        if self.bias is not None:
            weights += [self.bias[0].index_select(0, order), self.bias[1].index_select(0, order)]
        return weights

    def _step(
        self, xw: torch.Tensor, states: list[torch.Tensor], rec_mask: torch.Tensor | None
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        h = states[0]
        h = self._gru_step(xw, h, h * rec_mask if rec_mask is not None else h)
        return h, [h]


class SimpleRNN(RNNBase):
    """Fully-connected RNN, ``h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)``.

    ``return_state=True`` returns ``[output, h]``. Other arguments as :class:`LSTM`.
    """

    _config_omitted = frozenset({"seed"})  # Keras takes a seed but does not list it

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
        return_sequences: bool = False,
        return_state: bool = False,
        go_backwards: bool = False,
        stateful: bool = False,
        unroll: bool = False,
        zero_output_for_mask: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(return_sequences, return_state, go_backwards, stateful, zero_output_for_mask, **kwargs)
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
        self.recurrent_activation = activations.get(None)  # SimpleRNN has no gates: the identity

    def _fused_function(self) -> Callable[..., Any] | None:
        if type(self.activation) in (nn.Tanh, activations.Tanh):
            return torch.rnn_tanh
        if type(self.activation) is nn.ReLU:
            return torch.rnn_relu
        return None

    def _step(
        self, xw: torch.Tensor, states: list[torch.Tensor], rec_mask: torch.Tensor | None
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        h = states[0]
        h = self.activation(xw + torch.matmul(h * rec_mask if rec_mask is not None else h, self.recurrent_kernel))
        return h, [h]


__all__ = ["GRU", "LSTM", "SimpleRNN"]
