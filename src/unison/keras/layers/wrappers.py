"""Layer wrappers (Keras 3): ``Wrapper`` (their base), ``Bidirectional`` (a recurrent layer run both
ways) and ``TimeDistributed``.

All save with the model: ``get_config`` holds the wrapped layer's ``{"class_name", "config"}``.

Example:
    >>> import torch
    >>> from unison.keras.layers.recurrent import LSTM
    >>> Bidirectional(LSTM(3, return_sequences=True))(torch.zeros(2, 5, 4)).shape
    torch.Size([2, 5, 6])
    >>> from unison.keras.layers.core import Dense
    >>> TimeDistributed(Dense(7))(torch.zeros(2, 5, 4)).shape
    torch.Size([2, 5, 7])
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.layers.base import Layer
from unison.keras.layers.masking import MaskedLayer, get_mask, set_mask

_MERGE_MODES = ("concat", "sum", "mul", "ave", None)


def _serialize(layer: torch.nn.Module) -> dict[str, Any]:
    from unison.keras.saving.serialization import layer_config

    return layer_config(layer)


def _deserialize(entry: Any) -> Any:
    if not isinstance(entry, dict):
        return entry
    from unison.keras.saving.serialization import from_config

    return from_config(entry)


def _clone(layer: Layer, name: str, **changes: Any) -> Layer:
    config = {**layer.get_config(), **changes, "name": name}
    return type(layer).from_config(config)


def _strip(name: str, prefix: str) -> str:
    return name[len(prefix) :] if name.startswith(prefix) else name


class Wrapper(MaskedLayer):
    """Base of layers that wrap one layer (Keras's ``layers.Wrapper``): it builds the wrapped layer
    and saves it in its config (``{"layer": {"class_name", "config"}}``).

    Subclasses implement ``call``; by default the wrapped layer's output passes through.

    Example:
        >>> import torch
        >>> from unison.keras.layers.core import Dense
        >>> Wrapper(Dense(2))(torch.zeros(1, 3)).shape
        torch.Size([1, 2])
    """

    supports_masking = False

    def __init__(self, layer: Any, **kwargs: Any) -> None:
        if not isinstance(layer, Layer):
            raise ValueError(
                f"Layer {layer!r:.80} supplied to Wrapper isn't a supported layer type. Please ensure wrapped "
                "layer is a valid Keras layer."
            )
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape: Any = None) -> None:
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True

    def forward(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        shape = getattr(inputs, "shape", None)
        self.ensure_built(tuple(shape) if shape is not None else None)
        return self.call(inputs, *args, **kwargs)

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return self.layer(inputs, *args, **kwargs)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return self.layer.compute_output_shape(input_shape)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config["layer"] = _serialize(self.layer)
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Wrapper:
        config = dict(config)
        config["layer"] = _deserialize(config["layer"])
        return cls(**config)


class Bidirectional(MaskedLayer):
    """Run a recurrent layer forwards and a copy of it backwards, and merge the two (Keras's ``Bidirectional``).

    ``layer`` is copied from its configuration into ``forward_layer`` and, with
    ``go_backwards`` flipped, ``backward_layer`` (or pass your own ``backward_layer``). With
    ``return_sequences`` the backward outputs are reversed back into step order, and masked steps
    output zeros in both directions (Keras forces ``zero_output_for_mask`` there).

    Args:
        layer: an ``LSTM``, ``GRU`` or ``SimpleRNN``.
        merge_mode: ``"concat"`` (default), ``"sum"``, ``"mul"``, ``"ave"``, or ``None`` (a list of both outputs).
        backward_layer: optional layer for the backward direction (``go_backwards=True``).

    ``return_state=True`` returns ``[output, *forward_states, *backward_states]``;
    ``initial_state`` takes the forward states then the backward ones.
    """

    def __init__(
        self,
        layer: Any,
        merge_mode: str | None = "concat",
        weights: Any = None,
        backward_layer: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        for what, value in (("layer", layer), ("backward_layer", backward_layer)):
            if value is None and what == "backward_layer":
                continue
            if not isinstance(value, Layer) or not hasattr(value, "go_backwards") or not hasattr(value, "get_config"):
                raise ValueError(
                    f"Bidirectional needs `{what}` to be a recurrent keras layer (LSTM, GRU, SimpleRNN). "
                    f"Received: {what}={value!r:.80}"
                )
        if merge_mode not in _MERGE_MODES:
            raise ValueError(
                f"Invalid merge mode. Received: {merge_mode!r}. Merge mode should be one of "
                '{"sum", "mul", "ave", "concat", None}'
            )
        if weights is not None:
            raise ValueError(
                "Bidirectional(weights=...) is not supported. Build the layer, then call layer.set_weights(...)."
            )
        self.forward_layer = _clone(layer, "forward_" + _strip(layer.name, "forward_"))
        if backward_layer is None:
            backward_layer = _clone(
                layer, "backward_" + _strip(layer.name, "backward_"), go_backwards=not layer.go_backwards
            )
        self.backward_layer = backward_layer
        fwd, bwd = self.forward_layer, self.backward_layer
        if fwd.go_backwards == bwd.go_backwards:
            raise ValueError(
                "Forward layer and backward layer should have different `go_backwards` value. Received: "
                f"forward_layer.go_backwards={fwd.go_backwards}, backward_layer.go_backwards={bwd.go_backwards}"
            )
        for attribute in ("return_sequences", "return_state"):
            if getattr(fwd, attribute) != getattr(bwd, attribute):
                raise ValueError(
                    f'Forward layer and backward layer are expected to have the same value for attribute "{attribute}", '
                    f"got {getattr(fwd, attribute)} and {getattr(bwd, attribute)}."
                )
        for sub in (fwd, bwd):
            sub.zero_output_for_mask = sub.return_sequences
        self.merge_mode = merge_mode
        self.return_sequences, self.return_state = fwd.return_sequences, fwd.return_state

    def build(self, input_shape: Any) -> None:
        pass

    def forward(self, inputs: Any, mask: Any = None, training: bool | None = None, initial_state: Any = None) -> Any:
        if mask is None:
            mask = get_mask(inputs)
        self.ensure_built(getattr(inputs, "shape", ()))
        forward_state = backward_state = None
        if initial_state is not None:
            states = list(initial_state)
            forward_state, backward_state = states[: len(states) // 2], states[len(states) // 2 :]
        y = self.forward_layer(inputs, mask=mask, training=training, initial_state=forward_state)
        y_rev = self.backward_layer(inputs, mask=mask, training=training, initial_state=backward_state)
        states_out: list[torch.Tensor] = []
        if self.return_state:
            states_out = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = y_rev.flip(1)
        out_mask = mask if self.return_sequences else None
        if self.merge_mode is None:
            merged: list[torch.Tensor] = [set_mask(y, out_mask), set_mask(y_rev, out_mask)]
            return merged + states_out
        if self.merge_mode == "concat":
            output = torch.cat([y, y_rev], dim=-1)
        elif self.merge_mode == "sum":
            output = y + y_rev
        elif self.merge_mode == "ave":
            output = (y + y_rev) / 2
        else:
            output = y * y_rev
        set_mask(output, out_mask)
        return [output, *states_out] if self.return_state else output

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config["layer"] = _serialize(self.forward_layer)
        config["backward_layer"] = _serialize(self.backward_layer)
        config.pop("weights", None)
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Bidirectional:
        config = dict(config)
        config["layer"] = _deserialize(config["layer"])
        if config.get("backward_layer") is not None:
            config["backward_layer"] = _deserialize(config["backward_layer"])
        return cls(**config)


class TimeDistributed(MaskedLayer):
    """Apply ``layer`` to every step of ``(batch, steps, ...)`` inputs: steps fold into the batch.

    The input's mask passes on to the output.
    """

    def __init__(self, layer: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(layer, torch.nn.Module):
            raise ValueError(
                f"Please initialize `TimeDistributed` layer with a `keras.layers.Layer` instance. Received: {layer!r:.80}"
            )
        self.layer = layer

    def build(self, input_shape: Any) -> None:
        pass

    def forward(self, inputs: Any, mask: Any = None, training: bool | None = None) -> Any:
        if not isinstance(inputs, torch.Tensor) or inputs.dim() < 3:
            raise ValueError(
                "`TimeDistributed` Layer should be passed inputs of at least rank 3 (batch, steps, ...). "
                f"Received: input shape {tuple(getattr(inputs, 'shape', ()))}"
            )
        if mask is None:
            mask = get_mask(inputs)
        self.ensure_built(inputs.shape)
        batch, steps = inputs.shape[:2]
        flat = inputs.reshape(batch * steps, *inputs.shape[2:])
        out = self.layer(flat) if training is None else self.layer(flat, training=training)
        return set_mask(out.reshape(batch, steps, *out.shape[1:]), mask)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config["layer"] = _serialize(self.layer)
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> TimeDistributed:
        config = dict(config)
        config["layer"] = _deserialize(config["layer"])
        return cls(**config)


__all__ = ["Bidirectional", "TimeDistributed", "Wrapper"]
