"""The machinery of the recurrent layers (see :mod:`unison.keras.layers.recurrent`): Keras-layout
weights, masks, initial states, dropout masks, and the choice between torch's fused kernel (on
packed sequences for right-padded masks) and a step loop.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import Any, cast

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from unison.keras import activations
from unison.keras.dtype_policies import autocast_enabled
from unison.keras.layers.masking import MaskedLayer, get_mask, set_mask
from unison.keras.layers.misc import keras_name
from unison.keras.layers.recurrent_weights import RecurrentWeights
from unison.keras.layers.rnn_state import HeldStates

_IGNORED = ("implementation", "use_cudnn")  # speed hints: unison picks torch's fused kernel when it can


def _is_sigmoid(module: nn.Module) -> bool:
    return isinstance(module, (activations.Sigmoid, nn.Sigmoid))


@contextlib.contextmanager
def _quiet_cudnn(x: torch.Tensor) -> Iterator[None]:
    # cuDNN copies weights that are views into its own buffer and warns about it on every call.
    if not x.is_cuda:
        yield
        return
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not part of single contiguous chunk.*")
        yield


def _reverse_valid(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Each row's first ``length`` steps in reverse order (the padding stays where it is)."""
    steps = torch.arange(x.shape[1], device=x.device).unsqueeze(0)
    index = torch.where(steps < lengths.unsqueeze(1), lengths.unsqueeze(1) - 1 - steps, steps)
    return x.gather(1, index.unsqueeze(-1).expand(-1, -1, x.shape[-1]))


_HALF = {"float16": torch.float16, "bfloat16": torch.bfloat16}


def _cpu_float16(x: torch.Tensor) -> bool:
    """Whether a recurrent kernel would run in float16 on the CPU (the input, or ``mixed_float16``'s autocast)."""
    if x.device.type != "cpu":
        return False
    if x.dtype == torch.float16:
        return True
    if not autocast_enabled("cpu"):
        return False
    try:
        return torch.get_autocast_dtype("cpu") == torch.float16
    except AttributeError:  # torch < 2.4
        return torch.get_autocast_cpu_dtype() == torch.float16


class RNNBase(MaskedLayer, RecurrentWeights):
    """A recurrent layer: weights, masks, states and the choice between fused kernel and loop.

    The cell arguments (the subclass passes them to ``_set_cell_arguments`` after this constructor),
    the weights and the input projection are :class:`RecurrentWeights`'s, which the one-step cells
    share; the gate equations of ``_step`` are the cells' too.
    """

    _config_extras = ("activity_regularizer",)  # Keras lists it for recurrent layers

    _state_count = 1
    recurrent_activation: Any  # set by the subclass (the identity for SimpleRNN)

    def __init__(
        self,
        return_sequences: bool,
        return_state: bool,
        go_backwards: bool,
        stateful: bool,
        zero_output_for_mask: bool,
        **kwargs: Any,
    ) -> None:
        for key in _IGNORED + ("unroll",):
            kwargs.pop(key, None)
        if kwargs.pop("time_major", False):
            raise ValueError(
                "time_major=True is not supported: unison's recurrent layers take (batch, steps, features) "
                "inputs. Received: time_major=True; transpose the inputs with tf.transpose(x, [1, 0, 2])."
            )
        kwargs.setdefault("name", None)
        kwargs["name"] = kwargs["name"] or keras_name(type(self))
        super().__init__(**kwargs)
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful = bool(go_backwards), bool(stateful)
        self._held = HeldStates(self.name)
        self.zero_output_for_mask = bool(zero_output_for_mask)

    # --- weights -----------------------------------------------------------------------------
    def build(self, input_shape: Any) -> None:
        if len(input_shape) != 3:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected ndim=3 (batch, steps, "
                f"features), found ndim={len(input_shape)}. Full shape received: {tuple(input_shape)}"
            )
        self.input_dim = int(input_shape[-1])
        self._build_weights(self.input_dim)

    # --- subclass hooks ----------------------------------------------------------------------
    def _fused_function(self) -> Callable[..., Any] | None:
        """torch's fused kernel for this configuration, or None (then the loop runs)."""
        return None

    def _torch_weights(self) -> list[torch.Tensor]:
        weights = [self.kernel.t(), self.recurrent_kernel.t()]
        if self.bias is not None:
            weights += [self.bias, torch.zeros_like(self.bias)]
        return weights

    def _step(
        self, xw: torch.Tensor, states: list[torch.Tensor], rec_mask: torch.Tensor | None
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        raise NotImplementedError

    # --- call --------------------------------------------------------------------------------
    def forward(self, inputs: Any, mask: Any = None, training: bool | None = None, initial_state: Any = None) -> Any:
        if not isinstance(inputs, torch.Tensor) or inputs.dim() != 3:
            shape = tuple(getattr(inputs, "shape", ()))
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected ndim=3 (batch, steps, "
                f"features). Full shape received: {shape}"
            )
        if mask is None:
            mask = get_mask(inputs)
        self.ensure_built(inputs.shape)
        return self.call(inputs, mask=mask, training=bool(training), initial_state=initial_state)

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False, initial_state: Any = None) -> Any:
        if inputs.shape[-1] != self.input_dim:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected axis -1 of input shape "
                f"to have value {self.input_dim}, but received input with shape {tuple(inputs.shape)}."
            )
        x = inputs.to(self.kernel.dtype) if inputs.is_floating_point() else inputs.float()
        if self.stateful and initial_state is None:
            initial_state = self._held.initial(x.shape[0])
        states = self._initial_states(initial_state, x)
        keep = self._keep_mask(mask, x)
        if training and self.dropout:
            x = x * self.random.keep_mask((x.shape[0], 1, x.shape[-1]), self.dropout, x)
        rec_mask = None
        if training and self.recurrent_dropout:
            rec_mask = self.random.keep_mask((x.shape[0], self.units), self.recurrent_dropout, x)
        fused = self._fused_function() if rec_mask is None else None
        right_padded = keep is None or not bool((keep[:, 1:] & ~keep[:, :-1]).any())
        if fused is not None and right_padded and _cpu_float16(x):
            # oneDNN has no float16 recurrent kernels ("could not create a primitive descriptor"):
            # the fused kernel runs in float32 and its results come back in float16
            with torch.autocast("cpu", enabled=False):
                outputs, states = self._run_fused(fused, x.float(), [s.float() for s in states], keep)
            outputs, states = outputs.half(), [s.half() for s in states]
        elif fused is not None and right_padded:
            outputs, states = self._run_fused(fused, x, states, keep)
        else:
            outputs, states = self._run_loop(x, states, keep, rec_mask)
        half = _HALF.get(str(self.compute_dtype))
        if half is not None and outputs.dtype == torch.float32:
            # a mixed policy: Keras's recurrent layers return the compute dtype (torch's GRU kernel and
            # the step loop give float32 under autocast)
            outputs, states = outputs.to(half), [s.to(half) for s in states]
        if self.stateful:
            self._held.hold(states)
        out = outputs if self.return_sequences else outputs[:, -1]
        set_mask(out, mask if self.return_sequences else None)
        return [out, *states] if self.return_state else out

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return mask if self.return_sequences else None

    # --- stateful=True ---------------------------------------------------------------------------
    def reset_states(self, states: Any = None) -> None:
        """Zero the states a ``stateful=True`` layer carries between batches, or set them to ``states``."""
        self._held.reset(states)

    def reset_state(self) -> None:
        """Keras 3's name for :meth:`reset_states` (zeros)."""
        self._held.reset()

    @property
    def states(self) -> list[Any]:
        """The held states of a stateful layer (zeros after a reset; ``None`` entries before its first call)."""
        held = self._held.states
        return list(held) if held is not None else [None] * self._state_count

    def get_initial_state(self, inputs_or_batch_size: Any) -> list[torch.Tensor]:
        """Zero states for a batch: Keras 3's ``get_initial_state(batch_size)``, or tf_keras's
        ``get_initial_state(inputs)`` (TF's text-generation tutorial passes its embedded inputs).

        Example:
            >>> import torch
            >>> from unison.keras.layers import GRU
            >>> [tuple(s.shape) for s in GRU(4).get_initial_state(torch.zeros(2, 5, 3))]
            [(2, 4)]
        """
        if isinstance(inputs_or_batch_size, torch.Tensor) and inputs_or_batch_size.dim() > 0:
            like = inputs_or_batch_size
            return [like.new_zeros(like.shape[0], self.units) for _ in range(self._state_count)]
        batch = int(inputs_or_batch_size)
        return [torch.zeros(batch, self.units) for _ in range(self._state_count)]

    def _initial_states(self, initial_state: Any, x: torch.Tensor) -> list[torch.Tensor]:
        batch = x.shape[0]
        if initial_state is None:
            return [x.new_zeros(batch, self.units) for _ in range(self._state_count)]
        states = [initial_state] if isinstance(initial_state, torch.Tensor) else list(initial_state)
        expected = (batch, self.units)
        if len(states) != self._state_count or any(
            not isinstance(s, torch.Tensor) or tuple(s.shape) != expected for s in states
        ):
            got = [tuple(getattr(s, "shape", ())) for s in states]
            raise ValueError(
                f"Layer '{self.name}' expects initial_state to be a list of {self._state_count} tensor(s) of shape "
                f"{expected} (batch, units). Received shapes: {got}"
            )
        return [s.to(device=x.device, dtype=x.dtype) for s in states]

    def _keep_mask(self, mask: Any, x: torch.Tensor) -> torch.Tensor | None:
        if mask is None:
            return None
        keep = torch.as_tensor(mask, device=x.device).bool()
        if tuple(keep.shape) != tuple(x.shape[:2]):
            raise ValueError(
                f"Layer '{self.name}' received a mask of shape {tuple(keep.shape)} for inputs of shape "
                f"{tuple(x.shape)}; expected {tuple(x.shape[:2])} (batch, steps)."
            )
        return None if bool(keep.all()) else keep

    def _run_fused(
        self, fn: Callable[..., Any], x: torch.Tensor, states: list[torch.Tensor], keep: torch.Tensor | None
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        weights = self._torch_weights()
        has_bias = self.bias is not None
        hx = [s.unsqueeze(0) for s in states]
        if keep is None:
            seq = x.flip(1) if self.go_backwards else x
            with _quiet_cudnn(x):
                result = fn(seq, tuple(hx) if len(hx) > 1 else hx[0], weights, has_bias, 1, 0.0, False, False, True)
            return result[0], [r[0] for r in result[1:]]
        lengths = keep.sum(dim=1)
        steps = x.shape[1]
        if self.go_backwards:
            x = _reverse_valid(x, lengths)
        # Rows with no real step still need length 1 to pack; their outputs and states are reset below.
        packed = pack_padded_sequence(x, lengths.clamp(min=1).cpu(), batch_first=True, enforce_sorted=False)
        order, unorder = cast(torch.Tensor, packed.sorted_indices), cast(torch.Tensor, packed.unsorted_indices)
        sorted_hx = [h.index_select(1, order) for h in hx]
        with _quiet_cudnn(x):
            result = fn(
                packed.data,
                packed.batch_sizes,
                tuple(sorted_hx) if len(hx) > 1 else sorted_hx[0],
                weights,
                has_bias,
                1,
                0.0,
                False,
                False,
            )
        unpacked = PackedSequence(result[0], packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
        padded, _ = pad_packed_sequence(unpacked, batch_first=True, total_length=steps)
        finals = [r[0].index_select(0, unorder) for r in result[1:]]
        empty = (lengths == 0).unsqueeze(1)
        finals = [torch.where(empty, s, f) for s, f in zip(states, finals)]
        return self._fill_padded_steps(padded, lengths), finals

    def _fill_padded_steps(self, out: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Keras's outputs at padded steps: the previous output (or zeros with zero_output_for_mask)."""
        length = lengths.unsqueeze(1)
        steps = torch.arange(out.shape[1], device=out.device).unsqueeze(0).expand(length.shape[0], -1)
        if self.go_backwards:  # the padding comes first in reading order: zeros there
            index = steps - (out.shape[1] - length)
            valid = index >= 0
        elif self.zero_output_for_mask:
            index, valid = steps, steps < length
        else:
            index = torch.minimum(steps, length - 1).clamp(min=0)
            valid = (length > 0) & (steps >= 0)
        gathered = out.gather(1, index.clamp(min=0).unsqueeze(-1).expand(-1, -1, out.shape[-1]))
        return gathered * valid.unsqueeze(-1).to(out.dtype)

    def _run_loop(
        self, x: torch.Tensor, states: list[torch.Tensor], keep: torch.Tensor | None, rec_mask: torch.Tensor | None
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        if self.go_backwards:
            x = x.flip(1)
            keep = keep.flip(1) if keep is not None else None
        xw = self._project_inputs(x)
        previous = torch.zeros_like(states[0])
        outputs = []
        for t in range(x.shape[1]):
            out, new_states = self._step(xw[:, t], states, rec_mask)
            if keep is not None:
                step_keep = keep[:, t].unsqueeze(1)
                states = [torch.where(step_keep, n, s) for n, s in zip(new_states, states)]
                out = torch.where(step_keep, out, torch.zeros_like(out) if self.zero_output_for_mask else previous)
            else:
                states = new_states
            outputs.append(out)
            previous = out
        return torch.stack(outputs, dim=1), states

    def _default_activations(self) -> bool:
        return isinstance(self.activation, nn.Tanh) and _is_sigmoid(self.recurrent_activation)


__all__ = ["RNNBase"]
