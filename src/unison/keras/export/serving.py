"""What every serving export traces: the model's inputs as specs and a module of flat tensors.

A Keras model's ``call`` takes one tensor, a list or a dict and may return any of them; the
exporters (``torch.onnx.export``, ``torch.export.export``, TensorFlow's rebuild) want a fixed
list of named tensors in and out. :func:`input_specs` reads the model's inputs (its
``keras.Input``s, the Sequential's input shape, the shape a subclassed model was first called
with, or ``input_signature=``), and :class:`ServingModule` is a ``torch.nn.Module`` whose
``forward(*tensors)`` packs them the model's way, runs it in inference mode and returns a tuple.

Example:
    >>> import torch, unison as tf
    >>> model = tf.keras.Sequential([tf.keras.Input((3,), name="x"), tf.keras.layers.Dense(2)])
    >>> specs = input_specs(model)
    >>> [(s.name, s.shape) for s in specs]
    [('x', (None, 3))]
    >>> [tuple(t.shape) for t in ServingModule(model, specs)(torch.ones(4, 3))]
    [(4, 2)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from unison.errors import ModelNotBuiltError

__all__ = ["ServingInput", "ServingModule", "example_inputs", "input_specs", "output_names"]


@dataclass(frozen=True)
class ServingInput:
    """One input of a serving signature: its name, shape (``None`` = any size) and torch dtype."""

    name: str
    shape: tuple[int | None, ...]
    dtype: torch.dtype


def _dtype(value: Any) -> torch.dtype:
    if isinstance(value, torch.dtype):
        return value
    name = str(getattr(value, "name", value)).replace("torch.", "")
    found = getattr(torch, name, None)
    if not isinstance(found, torch.dtype):
        raise TypeError(f"input_signature: unknown dtype {value!r}. Use a torch dtype or a name such as 'float32'.")
    return found


def _symbolic_inputs(model: Any) -> list[Any]:
    try:
        inputs = getattr(model, "inputs", None)
    except (ValueError, AttributeError):  # a Sequential without keras.Input has no symbolic inputs
        return []
    return list(inputs or [])


def _from_signature(input_signature: Any) -> list[ServingInput]:
    items = list(input_signature) if isinstance(input_signature, (list, tuple)) else [input_signature]
    specs = []
    for i, item in enumerate(items):
        shape = getattr(item, "shape", None)
        if shape is None:
            raise TypeError(
                "input_signature takes a list of tf.TensorSpec (or keras.Input) objects, one per model input. "
                f"Received item {i}: {item!r:.80}"
            )
        name = getattr(item, "name", None) or f"input_{i}"
        specs.append(ServingInput(str(name), tuple(shape), _dtype(getattr(item, "dtype", torch.float32))))
    return specs


def input_specs(model: Any, input_signature: Any = None) -> list[ServingInput]:
    """The inputs a serving export of ``model`` takes (batch axis first, ``None`` when any size).

    Raises:
        ModelNotBuiltError: the model has no ``keras.Input``, no input shape and was never called.
    """
    if input_signature is not None:
        return _from_signature(input_signature)
    symbolic = _symbolic_inputs(model)
    if symbolic:
        return [ServingInput(str(kt.name), tuple(kt.shape), _dtype(getattr(kt, "dtype", "float32"))) for kt in symbolic]
    hint = getattr(model, "input_shape_hint", None) or model.__dict__.get("_called_shape")
    first = model.__dict__.get("_first_input")  # (shape, dtype) of a subclassed model's first call
    if hint is None and first is not None:
        hint = first[0]
    if hint is None or not getattr(model, "built", False):
        raise ModelNotBuiltError(
            f"Model {getattr(model, 'name', type(model).__name__)!r} cannot be exported: its input shape is not "
            "known (no keras.Input, no input_shape= on the first layer, never called). Call the model on a "
            "batch (or fit it) first, start it with keras.Input(shape=...), or pass "
            "input_signature=[tf.TensorSpec(shape=(None, ...), dtype='float32')] to export()."
        )
    dtype = first[1] if first is not None and tuple(first[0]) == tuple(hint) else torch.float32
    return [ServingInput("inputs", (None, *tuple(hint)), dtype)]


def example_inputs(specs: list[ServingInput], batch: int = 2) -> tuple[torch.Tensor, ...]:
    """Tensors of ``specs``' shapes to trace with (``None`` batch -> ``batch``; torch.export
    specialises a size of 1, so the default traces with 2 rows)."""
    tensors = []
    generator = torch.Generator().manual_seed(0)
    for spec in specs:
        if any(d is None for d in spec.shape[1:]):
            raise ModelNotBuiltError(
                f"Input {spec.name!r} has shape {spec.shape}: only the batch axis may be None in an export. "
                "Pass input_signature= with every other size given."
            )
        shape = tuple(batch if d is None else int(d) for d in spec.shape)
        if spec.dtype.is_floating_point:
            tensors.append(torch.rand(shape, generator=generator).to(spec.dtype))
        else:
            tensors.append(torch.zeros(shape, dtype=spec.dtype))  # ids: 0 is valid for every vocabulary
    return tuple(tensors)


def _flatten(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        return [t for key in sorted(value) for t in _flatten(value[key])]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _flatten(item)]
    raise TypeError(f"A model's outputs must be tensors (or lists/dicts of them) to export. Received: {type(value)}")


class ServingModule(nn.Module):
    """``model`` as a module of flat tensors: ``forward(*inputs) -> tuple of outputs`` in inference mode.

    Functional models get their inputs back in their own structure (a list, or a dict by input
    name); a one-input model gets the tensor. Outputs come flat (a dict's in key order).
    """

    def __init__(self, model: nn.Module, specs: list[ServingInput]) -> None:
        super().__init__()
        self.model = model
        self.names = [s.name for s in specs]
        structure = getattr(model, "_input_structure", None)
        self.as_dict = isinstance(structure, dict)

    def forward(self, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        if len(inputs) == 1 and not self.as_dict:
            packed: Any = inputs[0]
        elif self.as_dict:
            packed = dict(zip(self.names, inputs))
        else:
            packed = list(inputs)
        return tuple(_flatten(self.model(packed, training=False)))


def output_names(count: int) -> list[str]:
    """Keras 3's names for an export's outputs: ``output_0``, ``output_1``, ..."""
    return [f"output_{i}" for i in range(count)]
