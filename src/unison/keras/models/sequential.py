"""``keras.Sequential``: a linear stack of layers (Keras 3's ``models/sequential.py``).

Configs and ``Model.from_config`` reach it through the serialization registry
(``saving/serialization.py``), so ``model.py`` never imports it.

Example:
    >>> from unison import keras
    >>> keras.Sequential([keras.layers.Dense(2, input_shape=(3,))]).count_params()
    8
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from unison.keras.backend.keras_tensor import KerasTensor
from unison.keras.layers.base import Layer
from unison.keras.layers.conv import conv_relu_pool_fusable, run_conv_relu_pool
from unison.keras.layers.core import InputLayer
from unison.keras.models.model import Model


class Sequential(Model):
    """A linear stack of layers (``keras.Sequential``).

    The first layer's ``input_shape=`` (or a leading ``keras.Input``) builds every layer at
    once, so the weights exist (and are mirrored) inside ``strategy.scope()``. Such a model also
    has a symbolic graph, as in Keras: ``model.inputs``/``outputs`` and each layer's
    ``input``/``output``, so ``keras.Model(model.inputs, [l.output for l in model.layers])``
    extracts intermediate features.

    Example:
        >>> from unison import keras
        >>> model = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(4), keras.layers.Dense(2)])
        >>> features = keras.Model(model.inputs, [layer.output for layer in model.layers])
        >>> [tuple(kt.shape) for kt in features.outputs]
        [(None, 4), (None, 2)]
    """

    def __init__(self, layers: Sequence[Any] | None = None, name: str | None = None, trainable: bool = True) -> None:
        super().__init__(name=name)
        self.stack = nn.ModuleList()
        # (input, last output) of the symbolic graph, when the input shape is known
        self._graph: tuple[KerasTensor, Any] | None = None
        self._graph_input: KerasTensor | None = None
        for layer in layers or []:
            self.add(layer)
        if not trainable:
            self.trainable = False

    def add(self, layer: Any) -> None:
        """Append a layer (a ``keras.layers`` layer, any ``torch.nn.Module``, or an ``Input``)."""
        if isinstance(layer, (InputLayer, KerasTensor)):
            if len(self.stack):
                raise ValueError("keras.Input must come first in a Sequential model.")
            if isinstance(layer, KerasTensor) and not layer.is_input:
                raise TypeError(
                    f"Sequential takes layers; {layer!r} is the output of a layer. Use "
                    "keras.Model(inputs, outputs) for a graph of layers."
                )
            if isinstance(layer, KerasTensor):
                self._graph_input = layer
                self.input_shape_hint = tuple(layer.shape[1:])  # type: ignore[arg-type]
            else:
                self.input_shape_hint = layer.shape
            return
        if not isinstance(layer, nn.Module):
            raise TypeError(
                f"Sequential takes layers (torch.nn.Module instances). Received: {layer!r} of type "
                f"{type(layer).__name__}."
            )
        if not len(self.stack) and self.input_shape_hint is None:
            # a first layer given input_shape=, or a model that knows its input (a Sequential of
            # augmentation layers, as in the image-classification tutorial): the model is built now
            self.input_shape_hint = getattr(layer, "input_shape_arg", None)
            inner = getattr(layer, "_graph_input", None) if isinstance(layer, Model) else None
            if self.input_shape_hint is None and isinstance(inner, KerasTensor):
                from unison.keras.backend.keras_tensor import Input

                # the inner model's own input (its dtype too: a string input stays a string input)
                self._graph_input = Input(shape=tuple(inner.shape[1:]), dtype=inner.dtype)
                self.input_shape_hint = tuple(inner.shape[1:])  # type: ignore[arg-type]
        self.stack.append(layer)
        if self.input_shape_hint is not None:
            self._extend_graph([layer])

    def pop(self) -> nn.Module:
        """Remove and return the last layer (Keras's ``Sequential.pop``)."""
        if not len(self.stack):
            raise IndexError(f"There are no layers in Sequential model {self.name!r} to pop.")
        layer = self.stack[-1]
        del self.stack[-1]
        self._graph = None
        if self.input_shape_hint is not None:
            self._extend_graph(list(self.stack))
        return layer

    def _extend_graph(self, layers: list[nn.Module]) -> None:
        """Call ``layers`` on the graph's last symbolic tensor (builds their weights too).

        Keras layers (and models) are recorded symbolically; a plain torch module ends the graph
        and the model is built on a zero example instead, as before.
        """
        hint = self.input_shape_hint
        if hint is None:
            return
        if not all(isinstance(m, (Layer, Model)) for m in self.stack):
            self._graph = None
            if None not in hint:
                self.build((1, *hint))
            return
        if self._graph is None:
            from unison.keras.backend.keras_tensor import Input

            if self._graph_input is None:
                self._graph_input = Input(shape=hint)
            self._graph = (self._graph_input, self._graph_input)
            layers = list(self.stack)
        start, x = self._graph
        try:
            for layer in layers:
                x = layer(x)
        except (RuntimeError, ValueError, TypeError):
            # A layer that cannot run on the symbolic example (e.g. dtype policies that only
            # agree under fit's autocast): no graph; build on a zero example as before, which
            # raises the layer-naming error when the shapes really do not fit.
            self._graph = None
            if None not in hint:
                self.build((1, *hint))
            return
        self._graph = (start, x)

    def _adjust_input_rank(self, kt: KerasTensor, value: Any) -> Any:
        """Keras 3 runs a Sequential with an input shape as a functional model, with its rank rule:
        data one rank short of an input whose last size is 1 gets that axis (``(N,)`` data for
        ``input_shape=[1]``), data one rank over it whose last size is 1 loses it; other data is
        left for the first layer to judge."""
        if value.ndim == kt.ndim - 1 and kt.shape[-1] == 1:
            return value[..., None]
        if value.ndim == kt.ndim + 1 and value.shape[-1] == 1:
            return value.squeeze(-1)
        return value

    def _symbolic_graph(self, what: str) -> tuple[KerasTensor, Any]:
        if self._graph is None:  # ValueError: see layer_call_tensor
            raise ValueError(
                f"Sequential model {self.name!r} has no defined {what}: its input shape is unknown. "
                "Start it with keras.Input(shape=...) (or give the first layer input_shape=)."
            )
        return self._graph

    @property
    def inputs(self) -> list[KerasTensor]:
        """``[keras.Input]`` of the model's symbolic graph."""
        return [self._symbolic_graph("inputs")[0]]

    @property
    def outputs(self) -> list[KerasTensor]:
        """``[last layer's symbolic output]``."""
        return [self._symbolic_graph("outputs")[1]]

    @property
    def input(self) -> KerasTensor:
        return self._symbolic_graph("input")[0]

    @property
    def output(self) -> Any:
        return self._symbolic_graph("output")[1]

    def summary_shapes(self) -> dict[int, str]:
        """Output shape of each layer from the symbolic graph (empty without one)."""
        if self._graph is None:
            return {}
        shapes: dict[int, str] = {}
        for layer in self.stack:
            nodes = layer.__dict__.get("_inbound_nodes") or []
            if nodes and nodes[-1].outputs:
                shapes[id(layer)] = str(nodes[-1].outputs[0].shape).replace(",)", ")")
        return shapes

    @property
    def layers(self) -> list[nn.Module]:
        return list(self.stack)

    def call(self, inputs: Any) -> Any:
        x = inputs
        if isinstance(x, dict) and self._refuses_structures():
            raise ValueError(
                "The structure of `inputs` doesn't match the expected structure. Expected: one tensor "
                f"(a Sequential model has a single input). Received: inputs={_describe(x)}. For named "
                "inputs build a functional model: keras.Model(inputs={'a': keras.Input(shape)}, outputs=...); "
                "or pass the one array itself."
            )
        if self._graph_input is None and isinstance(x, np.ndarray) and x.dtype.kind in "biuf":
            from unison.ops.dtypes import as_torch

            # Keras converts a numpy batch to a tensor of floatx (float64 data computes in float32)
            x = as_torch(x)
            x = x.float() if x.dtype == torch.float64 else x
        first_call = "_called_shape" not in self.__dict__ and isinstance(x, torch.Tensor)
        if first_call:
            # the shape a model without an input shape was built on, for summary() and input_shape
            self.__dict__["_called_shape"] = tuple(x.shape[1:])
            self.__dict__["_called_input_shape"] = tuple(x.shape)
        text = isinstance(x, np.ndarray) and x.dtype.kind in "OUS"  # strings stay numpy (TextVectorization)
        if self._graph_input is not None and isinstance(x, (torch.Tensor, np.ndarray)) and not text:
            from unison.keras.backend.keras_tensor import conform_input
            from unison.ops.dtypes import as_torch

            x = conform_input(as_torch(x), self._graph_input.dtype)  # as a functional model does
            x = self._adjust_input_rank(self._graph_input, x)
        layers = list(self.stack)
        i = 0
        while i < len(layers):
            layer = layers[i]
            try:
                if i + 1 < len(layers) and conv_relu_pool_fusable(layer, layers[i + 1], x):
                    # Conv2D(activation="relu") + MaxPooling2D: the ReLU after the pool (same numbers)
                    x = run_conv_relu_pool(layer, layers[i + 1], x)
                    i += 2
                    continue
                x = layer(x)
                i += 1
            except RuntimeError as exc:
                # A raw torch shape error from deep inside a kernel becomes one that names the layer.
                name = getattr(layer, "name", type(layer).__name__)
                raise ValueError(
                    f"Layer '{name}' (layer {i} of {self.name!r}) failed on an input of shape "
                    f"{tuple(getattr(x, 'shape', ()))}: {str(exc).splitlines()[0]}"
                ) from exc
        if first_call and isinstance(x, torch.Tensor):
            self.__dict__["_called_output_shape"] = tuple(x.shape)  # Keras 3's output_shape once built by a call
        return x

    def _refuses_structures(self) -> bool:
        """Keras's structure check: a Sequential built on an Input takes one tensor; so does a
        first layer of unison's own (a user's layer may take a dict)."""
        if self._graph_input is not None:
            return True
        first = next(iter(self.stack), None)
        return first is not None and type(first).__module__.startswith("unison.")


def _describe(x: dict[Any, Any]) -> str:
    parts = [f"{k!r}: {type(v).__name__}(shape={tuple(getattr(v, 'shape', ()))})" for k, v in x.items()]
    return "{" + ", ".join(parts) + "}"


__all__ = ["Sequential"]
