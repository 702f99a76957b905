"""``keras.utils.plot_model`` and ``model_to_dot``: a model's layer graph drawn by Graphviz.

As in Keras, the graph is built with ``pydot`` (``pip install pydot``, or ``unison[plot]``)
and drawn by Graphviz's ``dot`` program (Debian: ``apt-get install graphviz``; elsewhere
https://graphviz.org/download/). Without either, both functions raise an ``ImportError`` that
names what to install. A functional model is drawn as its recorded graph (one node per
``keras.Input`` and per layer or operation, an edge per tensor passed); a ``Sequential``
model as its chain of layers; any other model (a subclass with ``call``, a wrapped torch
module) as its direct sub-layers in order. Nodes carry Keras 3's labels (HTML tables with the
name, class, shapes, dtype, activation and trainability asked for) and the graph Keras 3's
attributes, so the ``pydot.Dot`` reads like Keras's.

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
    # Keras prints the shape tuple itself: "(None, 3)", "(None,)"
    return str(tuple(None if d is None else int(d) for d in shape))


def _shapes_text(shapes: list[str]) -> str:
    if not shapes:
        return "?"
    return shapes[0] if len(shapes) == 1 else "[" + ", ".join(shapes) + "]"


def _dtype_text(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def _cell(text: str) -> str:
    return f'<td bgcolor="white"><font point-size="14">{text}</font></td>'


def _activation_name(layer: Any, activation: Any) -> str:
    # Keras names the activation function ("relu", "linear"); unison's layers hold torch modules
    try:
        named = layer.get_config().get("activation")
    except (AttributeError, TypeError, ValueError, NotImplementedError):
        named = None
    if isinstance(named, str):
        return named
    if isinstance(activation, nn.Identity):
        return "linear"
    return (
        getattr(activation, "name", None) or getattr(activation, "__name__", None) or type(activation).__name__.lower()
    )


def _label(
    name: str,
    kind: str,
    options: dict[str, bool],
    layer: Any = None,
    in_shapes: list[str] | None = None,
    out_shapes: list[str] | None = None,
    dtype: str | None = None,
) -> str:
    """Keras 3's node label: an HTML table (name and class; activation; shapes, dtype, trainable)."""
    colspan = max(1, int(options["show_dtype"]) + int(options["show_trainable"]) + 2 * int(options["show_shapes"]))
    head = f"<b>{name}</b> ({kind})" if options["show_layer_names"] else f"<b>{kind}</b>"
    table = '<<table border="0" cellborder="1" bgcolor="black" cellpadding="10">'
    table += f'<tr><td colspan="{colspan}" bgcolor="black"><font point-size="16" color="white">{head}</font></td></tr>'
    activation = getattr(layer, "activation", None)
    if options["show_layer_activations"] and activation is not None:
        act = _activation_name(layer, activation)
        table += (
            f'<tr><td bgcolor="white" colspan="{colspan}"><font point-size="14">Activation: <b>{act}</b>'
            "</font></td></tr>"
        )
    cols: list[str] = []
    if options["show_shapes"]:
        if kind != "InputLayer":
            cols.append(_cell(f"Input shape: <b>{_shapes_text(in_shapes or [])}</b>"))
        cols.append(_cell(f"Output shape: <b>{_shapes_text(out_shapes or [])}</b>"))
    if options["show_dtype"]:
        cols.append(_cell(f"Output dtype: <b>{dtype or '?'}</b>"))
    weights = list(layer.parameters()) if isinstance(layer, nn.Module) else []
    if options["show_trainable"] and weights:
        if getattr(layer, "trainable", True):
            cols.append('<td bgcolor="forestgreen"><font point-size="14" color="white"><b>Trainable</b></font></td>')
        else:
            cols.append('<td bgcolor="firebrick"><font point-size="14" color="white"><b>Non-trainable</b></font></td>')
    if cols:
        table += f"<tr>{''.join(cols)}</tr>"
    return table + "</table>>"


def _op_name(op: Any) -> tuple[str, str]:
    if isinstance(op, nn.Module):
        return str(getattr(op, "name", "") or type(op).__name__.lower()), type(op).__name__
    name = getattr(op, "__name__", type(op).__name__)
    return name, "Operation"


def _functional_graph(model: Any, options: dict[str, bool]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """One node per input and per layer (a shared layer is one node, as in Keras), an edge per tensor."""
    nodes: list[tuple[str, str]] = []
    edges: list[tuple[str, str]] = []
    ids: dict[int, str] = {}
    for kt in model._flat_inputs:
        key = str(id(kt))
        ids[id(kt)] = key
        label = _label(kt.name, "InputLayer", options, None, None, [_shape_text(kt.shape)], _dtype_text(kt.dtype))
        nodes.append((key, label))
    seen: set[str] = set()
    for node in model._nodes:
        key = str(id(node.op))
        name, kind = _op_name(node.op)
        if key not in seen:
            seen.add(key)
            ins = [_shape_text(kt.shape) for kt in node.parents]
            outs = [_shape_text(kt.shape) for kt in node.outputs]
            dtype = _dtype_text(node.outputs[0].dtype) if node.outputs else None
            nodes.append((key, _label(name, kind, options, node.op, ins, outs, dtype)))
        for kt in node.parents:
            source = ids.get(id(kt))
            if source is not None and (source, key) not in edges:
                edges.append((source, key))
        for kt in node.outputs:
            ids[id(kt)] = key
    return nodes, edges


def _chain_graph(model: Any, options: dict[str, bool]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """A Sequential model: its layers in order (no input node, as Keras draws it)."""
    from unison.keras.utils.summary_utils import _output_shapes

    shapes = _output_shapes(model) if options["show_shapes"] else {}
    nodes: list[tuple[str, str]] = []
    hint = getattr(model, "input_shape_hint", None)
    previous = _shape_text((None, *hint)) if hint is not None else "?"
    for layer in model.layers:
        name, kind = _op_name(layer)
        out = shapes.get(id(layer), "?")
        out = out if out == "?" else _shape_text(tuple(None if d == "None" else int(d) for d in _dims(out)))
        dtype = getattr(layer, "compute_dtype", None)
        nodes.append((str(id(layer)), _label(name, kind, options, layer, [previous], [out], dtype)))
        previous = out
    edges = [(nodes[i][0], nodes[i + 1][0]) for i in range(len(nodes) - 1)]
    return nodes, edges


def _dims(text: str) -> list[str]:
    return [d.strip() for d in text.strip("()").split(",") if d.strip()]


def _check_kwargs(kwargs: dict[str, Any]) -> None:
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError("Argument `layer_range` is no longer supported (Keras 3 draws the whole model).")
    if kwargs:
        raise ValueError(
            f"Unrecognized keyword arguments: {kwargs}. Expected the arguments of keras.utils.model_to_dot "
            "(show_shapes, show_dtype, show_layer_names, rankdir, expand_nested, dpi, subgraph, ...)."
        )


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
    splines: str = "ortho",
    **kwargs: Any,
) -> Any:
    """The model's layer graph as a ``pydot.Dot`` (Keras's ``model_to_dot``), labelled as Keras 3 does.

    ``expand_nested`` and ``subgraph`` are accepted; nested models are drawn as one node.

    Raises:
        ImportError: pydot is not installed (the message says how to install it).
        ValueError: ``rankdir`` is not one of ``"TB"``, ``"LR"``, ``"BT"``, ``"RL"``.
    """
    pydot = _pydot("model_to_dot")
    _check_kwargs(kwargs)
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
    # Keras 3's graph: the same attributes, node style and edge width
    dot = pydot.Dot()
    dot.set("rankdir", rankdir)
    dot.set("concentrate", True)
    dot.set("dpi", dpi)
    dot.set("splines", splines)
    dot.set_node_defaults(shape="record")
    for key, label in nodes:
        node = pydot.Node(key, label=label)
        node.set("fontname", "Helvetica")
        node.set("border", "0")
        node.set("margin", "0")
        dot.add_node(node)
    for source, target in edges:
        edge = pydot.Edge(source, target)
        edge.set("penwidth", "2")
        dot.add_edge(edge)
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
    _check_kwargs(kwargs)
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
