"""``input_shape``/``output_shape`` of models and layers, as Keras programs read them.

Keras 3 has ``model.input_shape``/``model.output_shape`` for functional and Sequential models
(from the symbolic graph, or from the first call of a Sequential model built by calling it);
Keras 2 (``tf_keras``) also has ``layer.input_shape``/``layer.output_shape`` for a layer called on
symbolic inputs. Both raise ``AttributeError`` for a subclassed model (it has no graph) and for a
layer never called on a ``keras.Input``; unison does the same.

Example:
    >>> from unison import keras
    >>> model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(3), keras.layers.Dense(1)])
    >>> model.input_shape, model.output_shape, model.layers[0].output_shape
    ((None, 4), (None, 1), (None, 3))
"""

from __future__ import annotations

from typing import Any

__all__ = ["layer_shape", "model_shape"]


def _shapes(structure: Any) -> Any:
    """The shapes of a (nested) structure of symbolic tensors: tuples, lists and dicts of tuples."""
    if isinstance(structure, dict):
        return {k: _shapes(v) for k, v in structure.items()}
    if isinstance(structure, (list, tuple)) and not hasattr(structure, "shape"):
        return [_shapes(v) for v in structure]
    return tuple(structure.shape)


def layer_shape(layer: Any, what: str) -> Any:
    """``layer.input_shape`` (``what="input"``) or ``output_shape``: from its first symbolic call.

    Raises:
        AttributeError: the layer was never called on a symbolic input (as in Keras 2).
    """
    nodes = layer.__dict__.get("_inbound_nodes") or []
    if not nodes:
        raise AttributeError(
            f"The layer {getattr(layer, 'name', type(layer).__name__)!r} has never been called on a "
            f"symbolic input and thus has no defined {what} shape."
        )
    return _shapes(getattr(layer, what))


def model_shape(model: Any, what: str) -> Any:
    """``model.input_shape``/``output_shape``: one tuple per input/output (a list when several).

    A Sequential model built by a call gives the shapes of that call (as Keras 3 does).

    Raises:
        AttributeError: a subclassed model, or a Sequential model never built.
    """
    called = model.__dict__.get(f"_called_{what}_shape")
    try:
        tensors = model.inputs if what == "input" else model.outputs
    except (AttributeError, ValueError):
        tensors = None
    if tensors:
        shapes = [tuple(t.shape) for t in tensors]
        return shapes[0] if len(shapes) == 1 else shapes
    if called is not None:
        return called
    raise AttributeError(
        f"Model {getattr(model, 'name', type(model).__name__)!r} has no defined {what} shape: "
        "only functional and Sequential models built on a keras.Input (or by a first call) have one."
    )
