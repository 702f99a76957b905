"""Keras 2's (``tf_keras``) premade models: ``experimental.LinearModel`` and ``experimental.WideDeepModel``.

``LinearModel`` is ``activation(sum_i inputs_i @ kernel_i + bias)``: one bias-free ``Dense`` per
input (a dict's inputs in sorted key order, each ``Dense`` named after its key; a list's in
order), one shared bias; zero-initialised as in Keras 2. ``WideDeepModel`` adds a linear
("wide") model's output to a deep model's: ``activation(linear(x_linear) + dnn(x_dnn))``, where
``inputs`` is the pair ``(x_linear, x_dnn)`` or one input both read. Both train with ``fit`` like
any model (one optimizer for every weight).

Example:
    >>> import torch
    >>> model = LinearModel(units=1, kernel_initializer="ones")
    >>> model(torch.tensor([[1.0, 2.0]])).tolist()
    [[3.0]]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from unison.keras import activations, initializers, regularizers
from unison.keras.layers.base import Layer
from unison.keras.layers.core import Dense
from unison.keras.models.model import Model

__all__ = ["LinearModel", "WideDeepModel"]


class _Bias(Layer):
    """LinearModel's shared bias, added to the summed kernels' outputs."""

    def __init__(self, units: int, initializer: Any, regularizer: Any) -> None:
        super().__init__(name="bias")
        self.bias = self.add_weight(name="bias", shape=(units,), initializer=initializer, regularizer=regularizer)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return inputs + self.bias


class LinearModel(Model):
    """A linear (wide) model over one input, a list of inputs or a dict of named inputs (Keras 2).

    Args:
        units: outputs per example.
        activation: applied to the sum (``None``: linear).
        use_bias: add one shared bias.
        kernel_initializer, bias_initializer: Keras 2 starts both at zeros.
        kernel_regularizer, bias_regularizer: penalties on the kernels and the bias.
        name: the model's name.

    Raises:
        ValueError: a dict input lacks a key the model was built with.
    """

    def __init__(
        self,
        units: int = 1,
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = "zeros",
        bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("trainable", None)
        kwargs.pop("dtype", None)
        super().__init__(name=name, **kwargs)
        if isinstance(units, bool) or not isinstance(units, int) or units < 1:
            raise ValueError(f"LinearModel: `units` must be a positive integer. Received: units={units!r}")
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer: Any = initializers.get(kernel_initializer)
        self.bias_initializer: Any = initializers.get(bias_initializer)
        self.kernel_regularizer: Any = regularizers.get(kernel_regularizer)
        self.bias_regularizer: Any = regularizers.get(bias_regularizer)
        self.dense_layers = nn.ModuleList()
        self._input_names: list[str] | None = None

    def _dense(self, name: str | None = None) -> Dense:
        return Dense(
            self.units,
            use_bias=False,
            kernel_initializer=self.kernel_initializer,
            kernel_regularizer=self.kernel_regularizer,
            name=name,
        )

    def _build_for(self, inputs: Any) -> None:
        if isinstance(inputs, Mapping):
            self._input_names = sorted(inputs)
            layers = [self._dense(name) for name in self._input_names]
        elif isinstance(inputs, (list, tuple)):
            layers = [self._dense() for _ in inputs]
        else:
            layers = [self._dense()]
        self.dense_layers.extend(layers)
        if self.use_bias:
            # a child layer after the kernels' layers: Keras 2 lists the kernels first, then the bias
            self.bias_layer = _Bias(self.units, self.bias_initializer, self.bias_regularizer)

    def call(self, inputs: Any) -> Any:
        if not len(self.dense_layers):
            self._build_for(inputs)
        if isinstance(inputs, Mapping):
            names = self._input_names or []
            missing = set(names) - set(inputs)
            if missing:
                raise ValueError(
                    "The `inputs` dictionary does not match the structure expected by the model.\n\t"
                    f"Expected keys: {set(names)}\n\tReceived keys: {set(inputs)}\n\tMissing keys: {missing}"
                )
            parts = [inputs[name] for name in names]
        elif isinstance(inputs, (list, tuple)):
            parts = list(inputs)
        else:
            parts = [inputs]
        result = None
        for part, layer in zip(parts, self.dense_layers):
            out = layer(torch.as_tensor(part, dtype=torch.get_default_dtype()) if not torch.is_tensor(part) else part)
            result = out if result is None else result + out
        if self.use_bias:
            result = self.bias_layer(result)
        return self.activation(result) if self.activation is not None else result

    def get_config(self) -> dict[str, Any]:
        """Keras 2's config: the arguments, the initializers and regularizers serialized."""
        return {
            "name": self.name,
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer)
            if self.kernel_regularizer is not None
            else None,
            "bias_regularizer": regularizers.serialize(self.bias_regularizer)
            if self.bias_regularizer is not None
            else None,
        }

    @classmethod
    def from_config(cls, config: dict[str, Any], custom_objects: Any = None) -> LinearModel:
        return cls(**config)


class WideDeepModel(Model):
    """``activation(linear_model(x_linear) + dnn_model(x_dnn))`` (Keras 2's wide & deep model).

    Args:
        linear_model: the wide part (e.g. a :class:`LinearModel`).
        dnn_model: the deep part (any model); it gets ``training=`` when its ``call`` takes it.
        activation: applied to the sum (to each output of nested outputs).
        name: the model's name.

    Example:
        >>> import torch
        >>> from unison import keras
        >>> dnn = keras.Sequential([keras.layers.Dense(1, kernel_initializer="ones", use_bias=False)])
        >>> model = WideDeepModel(LinearModel(kernel_initializer="ones"), dnn)
        >>> model(torch.tensor([[1.0, 2.0]])).tolist()
        [[6.0]]
    """

    def __init__(
        self,
        linear_model: nn.Module,
        dnn_model: nn.Module,
        activation: Any = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("trainable", None)
        kwargs.pop("dtype", None)
        super().__init__(name=name, **kwargs)
        for label, part in (("linear_model", linear_model), ("dnn_model", dnn_model)):
            if not isinstance(part, nn.Module):
                raise TypeError(
                    f"WideDeepModel: `{label}` must be a Keras model or layer (a torch.nn.Module). "
                    f"Received: {label}={part!r}"
                )
        self.linear_model = linear_model
        self.dnn_model = dnn_model
        self.activation = activations.get(activation)

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        if isinstance(inputs, (tuple, list)) and len(inputs) == 2:
            linear_inputs, dnn_inputs = inputs
        else:
            linear_inputs = dnn_inputs = inputs
        linear_output = self.linear_model(linear_inputs)
        dnn_output = (
            self.dnn_model(dnn_inputs, training=training) if training is not None else self.dnn_model(dnn_inputs)
        )
        if isinstance(linear_output, (list, tuple)):
            output: Any = [a + b for a, b in zip(linear_output, dnn_output)]
            return [self.activation(o) for o in output] if self.activation is not None else output
        output = linear_output + dnn_output
        return self.activation(output) if self.activation is not None else output
