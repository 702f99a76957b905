"""``keras.utils.plot_model`` and ``model_to_dot``: a model's layer graph drawn by Graphviz.

As in Keras, the graph is built with ``pydot`` (``pip install pydot``, or ``unison[plot]``)
and drawn by Graphviz's ``dot`` program (Debian: ``apt-get install graphviz``; elsewhere
https://graphviz.org/download/). Without either, both functions raise an ``ImportError`` that
names what to install. A functional model is drawn as its recorded graph (one node per
``keras.Input`` and per layer or operation call, an edge per tensor passed); a ``Sequential``
model as its chain of layers, after an input node when its input shape is known; any other
model (a subclass with ``call``, a wrapped torch module) as its direct sub-layers in order.

Example::

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    keras.utils.plot_model(model, "model.png", show_shapes=True)
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from torch import nn

__all__ = ["model_to_dot", "plot_model"]

_PYDOT_MISSING = "You must install pydot (`pip install pydot`, or `pip install 'unison[plot]'`) for `{fn}` to work."
_GRAPHVIZ_MISSING = (
    "You must install Graphviz's `dot` program for `{fn}` to work: on Debian/Ubuntu `apt-get install graphviz`, "
    "elsewhere see https://graphviz.org/download/. It was not found on PATH."
)


def _pydot(fn: str) -> Any:
    try:
        import pydot
    except ImportError as exc:
        raise ImportError(_PYDOT_MISSING.format(fn=fn)) from exc
    return pydot


def _shape_text(shape: Any) -> str:
    return str(tuple(shape)).replace(",)", ")")


def _label(name: str, kind: str, show_layer_names: bool, extra: list[str]) -> str:
    head = f"{name} ({kind})" if show_layer_names else kind
    return "\n".join([head, *extra])


def _layer_details(
    layer: Any, in_shapes: list[str], out_shapes: list[str], options: dict[str, bool], dtype: str | None
) -> list[str]:
    extra: list[str] = []
    if options["show_shapes"]:
        extra.append(f"Input shape: {', '.join(in_shapes) or '?'}  |  Output shape: {', '.join(out_shapes) or '?'}")
    if options["show_dtype"] and dtype:
        extra.append(f"Output dtype: {dtype}")
    activation = getattr(layer, "activation", None)
    if options["show_layer_activations"] and activation is not None:
        extra.append(f"Activation: {getattr(activation, '__name__', type(activation).__name__).lower()}")
    if options["show_trainable"] and isinstance(layer, nn.Module):
        extra.append(f"Trainable: {'T' if getattr(layer, 'trainable', True) else 'F'}")
    return extra


def _op_name(op: Any) -> tuple[str, str]:
    if isinstance(op, nn.Module):
        return str(getattr(op, "name", "") or type(op).__name__.lower()), type(op).__name__
    name = getattr(op, "__name__", type(op).__name__)
    return name, "Operation"


def _functional_graph(model: Any, options: dict[str, bool]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    nodes: list[tuple[str, str]] = []
    edges: list[tuple[str, str]] = []
    ids: dict[int, str] = {}
    show_names = options["show_layer_names"]
    for kt in model._flat_inputs:
        key = f"input_{len(ids)}"
        ids[id(kt)] = key
        extra = [f"Output shape: {_shape_text(kt.shape)}"] if options["show_shapes"] else []
        if options["show_dtype"]:
            extra.append(f"Output dtype: {kt.dtype}")
        nodes.append((key, _label(kt.name, "InputLayer", show_names, extra)))
    for i, node in enumerate(model._nodes):
        key = f"node_{i}"
        name, kind = _op_name(node.op)
        ins = [_shape_text(kt.shape) for kt in node.parents]
        outs = [_shape_text(kt.shape) for kt in node.outputs]
        dtype = str(node.outputs[0].dtype) if node.outputs else None
        nodes.append((key, _label(name, kind, show_names, _layer_details(node.op, ins, outs, options, dtype))))
        for kt in node.parents:
            source = ids.get(id(kt))
            if source is not None and (source, key) not in edges:
                edges.append((source, key))
        for kt in node.outputs:
            ids[id(kt)] = key
    return nodes, edges


def _chain_graph(model: Any, options: dict[str, bool]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    from unison.keras.utils.summary_utils import _output_shapes

    shapes = _output_shapes(model) if options["show_shapes"] else {}
    nodes: list[tuple[str, str]] = []
    hint = getattr(model, "input_shape_hint", None)
    previous = _shape_text((None, *hint)) if hint is not None else "?"
    if hint is not None:
        extra = [f"Output shape: {previous}"] if options["show_shapes"] else []
        nodes.append(("input_0", _label("input_layer", "InputLayer", options["show_layer_names"], extra)))
    for i, layer in enumerate(model.layers):
        name, kind = _op_name(layer)
        out = shapes.get(id(layer), "?")
        details = _layer_details(layer, [previous], [out], options, None)
        nodes.append((f"node_{i}", _label(name, kind, options["show_layer_names"], details)))
        previous = out
    edges = [(nodes[i][0], nodes[i + 1][0]) for i in range(len(nodes) - 1)]
    return nodes, edges


def model_to_dot(
    model: Any,
    show_shapes: bool = False,
    show_dtype: bool = False,
    show_layer_names: bool = True,
    rankdir: str = "TB",
    expand_nested: bool = False,
    dpi: int = 200,
    subgraph: bool = False,
    show_layer_activations: bool = False,
    show_trainable: bool = False,
    **kwargs: Any,
) -> Any:
    """The model's layer graph as a ``pydot.Dot`` (Keras's ``model_to_dot``).

    ``expand_nested`` and ``subgraph`` are accepted; nested models are drawn as one node.

    Raises:
        ImportError: pydot is not installed (the message says how to install it).
        ValueError: ``rankdir`` is not one of ``"TB"``, ``"LR"``, ``"BT"``, ``"RL"``.
    """
    pydot = _pydot("model_to_dot")
    if rankdir not in ("TB", "LR", "BT", "RL"):
        raise ValueError(f"rankdir must be one of 'TB', 'LR', 'BT', 'RL'. Received: rankdir={rankdir!r}")
    options = {
        "show_shapes": show_shapes,
        "show_dtype": show_dtype,
        "show_layer_names": show_layer_names,
        "show_layer_activations": show_layer_activations,
        "show_trainable": show_trainable,
    }
    functional = hasattr(model, "_nodes") and hasattr(model, "_flat_inputs")
    nodes, edges = _functional_graph(model, options) if functional else _chain_graph(model, options)
    dot = pydot.Dot(graph_type="digraph", rankdir=rankdir, dpi=str(dpi), concentrate="true")
    dot.set_node_defaults(shape="box", fontname="Helvetica")
    for key, label in nodes:
        dot.add_node(pydot.Node(key, label=label))
    for source, target in edges:
        dot.add_edge(pydot.Edge(source, target))
    return dot


def plot_model(
    model: Any,
    to_file: str | os.PathLike[str] = "model.png",
    show_shapes: bool = False,
    show_dtype: bool = False,
    show_layer_names: bool = True,
    rankdir: str = "TB",
    expand_nested: bool = False,
    dpi: int = 200,
    show_layer_activations: bool = False,
    show_trainable: bool = False,
    **kwargs: Any,
) -> Any:
    """Draw the model's layer graph into ``to_file`` (Keras's ``plot_model``).

    The format follows the file's extension (``.png``, ``.svg``, ``.pdf``, ``.dot``, ...). In a
    notebook (IPython importable) it returns an ``IPython.display.Image`` of a PNG/JPEG, as Keras
    does; otherwise ``None``.

    Raises:
        ImportError: pydot or Graphviz's ``dot`` program is missing (the message says what to
            install and how).
    """
    _pydot("plot_model")
    if shutil.which("dot") is None:
        raise ImportError(_GRAPHVIZ_MISSING.format(fn="plot_model"))
    dot = model_to_dot(
        model,
        show_shapes=show_shapes,
        show_dtype=show_dtype,
        show_layer_names=show_layer_names,
        rankdir=rankdir,
        expand_nested=expand_nested,
        dpi=dpi,
        show_layer_activations=show_layer_activations,
        show_trainable=show_trainable,
    )
    path = os.fspath(to_file)
    extension = os.path.splitext(path)[1][1:].lower() or "png"
    if extension == "dot":
        dot.write(path, format="raw")
    else:
        dot.write(path, format=extension)
    if extension in ("png", "jpg", "jpeg"):
        try:
            from IPython import display
        except ImportError:
            return None
        return display.Image(filename=path)
    return None
