"""``ConvLSTM1D``, ``ConvLSTM2D``, ``ConvLSTM3D``: Keras's convolutional LSTMs, one rank-generic class.

Inputs are ``(batch, time, *spatial, channels)`` (``channels_first``: ``(batch, time, channels,
*spatial)``). The gates follow Keras's ``ConvLSTMCell``: ``z = conv(x_t, kernel) + bias +
conv_same(h, recurrent_kernel)`` split into ``i, f, c, o`` along the channels, then ``c = f * c +
i * tanh(c~)``, ``h = o * tanh(c)``. Weights are Keras's: ``kernel`` ``(*kernel_size, in, 4 *
filters)``, ``recurrent_kernel`` ``(*kernel_size, filters, 4 * filters)``, ``bias`` ``(4 *
filters,)``. The input convolution does not depend on the state, so it runs once over all time
steps (one batched native ``conv{1,2,3}d``); the loop runs only the recurrent convolution.

Example:
    >>> import torch
    >>> ConvLSTM2D(4, 3, padding="same")(torch.zeros(2, 5, 8, 8, 3)).shape
    torch.Size([2, 8, 8, 4])
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras import activations
from unison.keras.dtype_policies import DTypePolicyMixin
from unison.keras.layers.base import Layer
from unison.keras.layers.conv import _check_padding
from unison.keras.layers.conv_base import _positive
from unison.keras.layers.conv_nd import conv_fn, conv_same, ntuple, pad_same_nd
from unison.keras.layers.data_format import use_data_format
from unison.keras.layers.misc import RandomSource, check_rate

__all__ = ["ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"]

_AXES = {1: "batch, time, steps, channels", 2: "batch, time, rows, cols, channels"}


class _ConvLSTM(DTypePolicyMixin, Layer):
    _config_extras = ("activity_regularizer",)  # Keras lists it for recurrent layers
    rank = 2

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str | None = None,
        dilation_rate: Any = 1,
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
        super().__init__(**kwargs)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        # the channels sit at axis 2 (after time): call() moves them itself, not Layer.forward
        self._first = use_data_format(self, data_format) == "channels_first"
        self.__dict__["_channels_first"] = False
        self.filters = _positive(filters, "filters")
        self.kernel_size = ntuple(kernel_size, self.rank, "kernel_size")
        self.strides = ntuple(strides, self.rank, "strides")
        self.dilation_rate = ntuple(dilation_rate, self.rank, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(
                f"`strides > 1` is not compatible with `dilation_rate > 1`. Received: strides={self.strides} and "
                f"dilation_rate={self.dilation_rate}. Fix: pass strides=1 or dilation_rate=1."
            )
        self.padding = _check_padding(padding)
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.dropout = check_rate(dropout, "dropout")
        self.recurrent_dropout = check_rate(recurrent_dropout, "recurrent_dropout")
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful = bool(go_backwards), bool(stateful)
        self.random = RandomSource(seed)
        self._weight_args = (
            (kernel_initializer, kernel_regularizer),
            (recurrent_initializer, recurrent_regularizer),
            (bias_initializer, bias_regularizer),
        )
        self._states: list[torch.Tensor] | None = None

    def _check_input(self, shape: Any) -> None:
        if len(shape) != self.rank + 3:
            axes = _AXES.get(self.rank, "batch, time, depth, rows, cols, channels")
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected ndim={self.rank + 3} "
                f"({axes}), found ndim={len(shape)}. Full shape received: {tuple(shape)}"
            )

    def build(self, input_shape: torch.Size) -> None:
        self._check_input(input_shape)
        self.in_channels = int(input_shape[2] if self._first else input_shape[-1])
        (k_init, k_reg), (r_init, r_reg), (b_init, b_reg) = self._weight_args
        gates = 4 * self.filters
        self.kernel = self.add_weight(
            name="kernel", shape=(*self.kernel_size, self.in_channels, gates), initializer=k_init, regularizer=k_reg
        )
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel",
            shape=(*self.kernel_size, self.filters, gates),
            initializer=r_init,
            regularizer=r_reg,
        )
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=(gates,), initializer=b_init, regularizer=b_reg)
            if self.unit_forget_bias:  # Keras: the forget gate's bias starts at one
                with torch.no_grad():
                    self.bias[self.filters : 2 * self.filters] = 1.0
        else:
            self.bias = None  # type: ignore[assignment]

    def _torch_kernel(self, kernel: torch.Tensor) -> torch.Tensor:
        return kernel.permute(self.rank + 1, self.rank, *range(self.rank))  # (4F, in, *k)

    def reset_states(self) -> None:
        """Forget the states a ``stateful`` layer kept from its last call."""
        self._states = None

    def call(self, inputs: torch.Tensor, training: bool = False, initial_state: Any = None, mask: Any = None) -> Any:
        self._check_input(inputs.shape)
        x = inputs.movedim(2, -1) if self._first else inputs  # (N, T, *s, C)
        if x.shape[-1] != self.in_channels:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected {self.in_channels} "
                f"channels, but received input with shape {tuple(inputs.shape)}."
            )
        batch, steps = x.shape[0], x.shape[1]
        if training and self.dropout:
            x = x * self.random.keep_mask((batch, 1, *x.shape[2:]), self.dropout, x)
        # the input convolution of every step at once: (N * T, C, *s)
        flat = x.reshape(batch * steps, *x.shape[2:]).movedim(-1, 1)
        padding: tuple[int, ...] = (0,) * self.rank
        if self.padding == "same":
            flat, padding = conv_same(flat, self.kernel_size, self.strides, self.dilation_rate)
        conv = conv_fn(self.rank)
        xw = conv(flat, self._torch_kernel(self.kernel), self.bias, self.strides, padding, self.dilation_rate)
        xw = xw.reshape(batch, steps, *xw.shape[1:])  # (N, T, 4F, *out)
        out_spatial = tuple(xw.shape[3:])
        h, c = self._initial(initial_state, x, out_spatial)
        rec_mask = None
        if training and self.recurrent_dropout:
            rec_mask = self.random.keep_mask(h.shape, self.recurrent_dropout, x)
        rk = self._torch_kernel(self.recurrent_kernel)
        ones = (1,) * self.rank
        # the recurrent convolution is "same" at stride 1: padded by the convolution itself for odd kernels
        symmetric = all(k % 2 for k in self.kernel_size)
        rec_padding = tuple(k // 2 for k in self.kernel_size) if symmetric else (0,) * self.rank
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        step_mask = self._step_mask(mask, batch, steps, x.device)
        outputs = []
        last = h
        if step_mask is not None:
            last = torch.zeros_like(h)  # Keras's output before the first step, kept by masked steps
        for t in order:
            hr = h if rec_mask is None else h * rec_mask
            hp = hr if symmetric else pad_same_nd(hr, self.kernel_size, ones)
            z = xw[:, t] + conv(hp, rk, None, 1, rec_padding)
            zi, zf, zc, zo = z.chunk(4, dim=1)
            i, f, o = self.recurrent_activation(zi), self.recurrent_activation(zf), self.recurrent_activation(zo)
            c_new = f * c + i * self.activation(zc)
            h_new = o * self.activation(c_new)
            if step_mask is None:
                h, c, last = h_new, c_new, h_new
            else:
                # Keras's masked step: the states carry over; the output repeats the last one (zeros
                # with zero_output_for_mask)
                keep = step_mask[:, t].view(-1, *([1] * (h.dim() - 1)))
                h, c = torch.where(keep, h_new, h), torch.where(keep, c_new, c)
                last = torch.where(keep, h_new, torch.zeros_like(h_new) if self.zero_output_for_mask else last)
            if self.return_sequences:
                outputs.append(last)
        if self.stateful:
            self._states = [h.detach(), c.detach()]
        out = torch.stack(outputs, dim=1) if self.return_sequences else last  # channels at axis 2 / 1
        if not self._first:
            out = out.movedim(2 if self.return_sequences else 1, -1)
        if not self.return_state:
            return out
        states = [h, c] if self._first else [h.movedim(1, -1), c.movedim(1, -1)]
        return [out, *states]

    def _step_mask(self, mask: Any, batch: int, steps: int, device: torch.device) -> torch.Tensor | None:
        """The ``(batch, steps)`` boolean mask of the steps to run (``None``: every step)."""
        if mask is None:
            return None
        step_mask = torch.as_tensor(mask, device=device).bool()
        if tuple(step_mask.shape) != (batch, steps):
            raise ValueError(
                f"Layer '{self.name}' takes a mask of shape (batch, timesteps) = {(batch, steps)}. Received a mask "
                f"of shape {tuple(step_mask.shape)}."
            )
        return step_mask

    def _initial(self, initial_state: Any, x: torch.Tensor, spatial: tuple[int, ...]) -> tuple[torch.Tensor, ...]:
        shape = (x.shape[0], self.filters, *spatial)
        if initial_state is not None:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
            if len(states) != 2:
                raise ValueError(
                    f"Layer '{self.name}' takes 2 initial states (h, c); received {len(states)}. "
                    "Pass initial_state=[h, c]."
                )
            out = []
            for s in states:
                s = torch.as_tensor(s, dtype=x.dtype, device=x.device)
                s = s if self._first else s.movedim(-1, 1)
                if tuple(s.shape) != shape:
                    raise ValueError(
                        f"Layer '{self.name}': an initial state must have shape {shape if self._first else (shape[0], *spatial, self.filters)}; "
                        f"received {tuple(s.shape if self._first else s.movedim(1, -1).shape)}."
                    )
                out.append(s)
            return out[0], out[1]
        if self.stateful and self._states is not None and tuple(self._states[0].shape) == shape:
            return self._states[0], self._states[1]
        zeros = x.new_zeros(shape)
        return zeros, zeros


class ConvLSTM1D(_ConvLSTM):
    """Convolutional LSTM over ``(batch, time, steps, channels)`` (Keras's ``ConvLSTM1D``)."""

    rank = 1


class ConvLSTM2D(_ConvLSTM):
    """Convolutional LSTM over ``(batch, time, rows, cols, channels)`` (Keras's ``ConvLSTM2D``).

    Args:
        filters: channels of the state and output.
        kernel_size, strides, dilation_rate: an int or a tuple of 2 ints (the input convolution;
            the recurrent one has stride 1 and ``"same"`` padding).
        return_sequences: output every step (``(batch, time, *out, filters)``) or only the last.
        return_state: also return the final ``h`` and ``c``.
        zero_output_for_mask: with a ``mask=`` of ``(batch, time)`` booleans, a masked step keeps the
            states and outputs zeros instead of repeating the last output (Keras's semantics).
    """

    rank = 2


class ConvLSTM3D(_ConvLSTM):
    """Convolutional LSTM over ``(batch, time, depth, rows, cols, channels)`` (Keras's ``ConvLSTM3D``)."""

    rank = 3
