"""``model.summary()``: Keras's table of layers, output shapes and parameter counts.

Example::

    Model: "sequential"
    ┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
    ┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
    ...
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import torch
from torch import nn

from unison.keras.utils.weight_lists import keras_weights

_W = (33, 24, 15)
_W_CONNECTED = (21, 19, 12, 19)  # Keras 3's four columns of a branching functional model
_TRAINABLE_W = 11  # show_trainable's column


def _row(
    cells: tuple[str, ...],
    widths: tuple[int, ...],
    aligns: tuple[str, ...] = ("<", "<", ">", "^"),
    left: str = "│",
    mid: str = "│",
    right: str = "│",
) -> str:
    """One table row; a cell longer than its column wraps onto more lines, as Keras's table does.

    ``aligns``: each column's format alignment (Keras: names and shapes left, counts right, a trainable flag centred).
    """
    import itertools

    wrapped = [_wrap(cell, width - 2) for cell, width in zip(cells, widths)]
    lines = []
    for parts in itertools.zip_longest(*wrapped, fillvalue=""):
        body = f" {mid} ".join(f"{part:{align}{width - 2}}" for part, align, width in zip(parts, aligns, widths))
        lines.append(f"{left} {body} {right}")
    return "\n".join(lines)


def _wrap(cell: str, width: int) -> list[str]:
    """``cell``'s lines in a column ``width`` wide, as Keras's (rich's) table sets them: broken
    between words; a word longer than the column cut with "…"."""
    import textwrap

    lines = textwrap.wrap(cell, width, break_long_words=False, break_on_hyphens=False) or [""]
    return [line if len(line) <= width else line[: width - 1] + "…" for line in lines]


def _widths(line_length: int | None, positions: Any, show_trainable: bool, connected: bool = False) -> tuple[int, ...]:
    """Column widths from Keras's ``line_length`` and ``positions`` (fractions or cumulative ends)."""
    widths: tuple[int, ...] = (_W_CONNECTED if connected else _W) + ((_TRAINABLE_W,) if show_trainable else ())
    # line_length is the whole printed line, as in Keras: the columns get it less their borders
    total = sum(widths) if line_length is None else int(line_length) - (len(widths) + 1)
    if positions is not None:
        ends = [float(p) for p in positions][: len(widths)]
        if len(ends) != len(widths) or any(b <= a for a, b in zip([0.0, *ends], ends)):
            raise ValueError(
                f"positions must give the end of each of the {len(widths)} columns, increasing "
                f"(fractions of line_length, or characters). Received: positions={positions!r}"
            )
        if ends[-1] <= 1.0:
            ends = [e * total for e in ends]
        cuts = [0, *(int(round(e)) for e in ends)]
        return tuple(max(4, b - a) for a, b in zip(cuts, cuts[1:]))
    if line_length is None:
        return widths
    cuts = [0]
    for w in widths:  # cumulative rounding: the columns add up to exactly the requested width
        cuts.append(cuts[-1] + w)
    cuts = [int(round(c * total / sum(widths))) for c in cuts]
    return tuple(max(4, b - a) for a, b in zip(cuts, cuts[1:]))


def _output_shapes(model: Any) -> dict[int, str]:
    """Run one example through the model and record each direct child's output shape."""
    if hasattr(model, "summary_shapes"):  # a functional model (or Sequential) knows them from its graph
        shapes: dict[int, str] = model.summary_shapes()
        if shapes:
            return shapes
    shapes = {}
    hint = getattr(model, "input_shape_hint", None) or model.__dict__.get("_called_shape")
    if hint is None or None in hint or not getattr(model, "built", False):
        return shapes
    hooks = []
    for child in model.layers:

        def record(mod: nn.Module, args: Any, out: Any, key: int = id(child)) -> None:
            if isinstance(out, torch.Tensor):
                shapes[key] = str((None, *out.shape[1:])).replace(",)", ")")

        hooks.append(child.register_forward_hook(record))
    try:
        model.build((1, *hint))
    finally:
        for h in hooks:
            h.remove()
    return shapes


class _InputRow:
    """The row Keras 3 gives a functional model's ``InputLayer`` (unison's graph keeps the Input tensor only)."""

    def __init__(self, kt: Any) -> None:
        self.name = kt.name
        self.kt = kt


def _type_name(child: Any) -> str:
    return "InputLayer" if isinstance(child, _InputRow) else type(child).__name__


def _count(layer: Any) -> int:
    return 0 if isinstance(layer, _InputRow) else sum(w.numel() for w in keras_weights(layer))


def _graph_parts(model: Any) -> tuple[list[Any], dict[int, str], dict[int, str] | None]:
    """The rows of a model (Input rows first for a functional one), their shapes, and Keras 3's
    "Connected to" cells, ``None`` when the model is sequential-like (Keras then shows no such column)."""
    shapes = dict(_output_shapes(model))
    nodes = getattr(model, "_nodes", None)
    inputs = getattr(model, "_flat_inputs", None)
    if nodes is None or inputs is None:  # Sequential and subclassed models: their layers, in order
        return list(model.layers), shapes, None
    input_rows = [_InputRow(kt) for kt in inputs]
    for row in input_rows:
        shapes[id(row)] = str(row.kt.shape).replace(",)", ")")
    layer_nodes = [node for node in nodes if isinstance(node.op, nn.Module)]
    rows = _with_inputs(model, input_rows, nodes)
    if _sequential_like(inputs, layer_nodes, getattr(model, "_flat_outputs", [])):
        return rows, shapes, None
    given = {id(kt) for kt in inputs}
    calls: dict[int, list[int]] = {}  # a layer's node index: which of its calls (in this graph) made a tensor
    for node in layer_nodes:
        calls.setdefault(id(node.op), []).append(id(node))
    connected: dict[int, list[str]] = {}
    for node in layer_nodes:
        parts = connected.setdefault(id(node.op), [])
        for parent in node.parents:
            producer = parent._node
            if producer is None or id(parent) in given or not isinstance(producer.op, nn.Module):
                parts.append(f"{parent.name}[0][0]")
                continue
            node_index = calls[id(producer.op)].index(id(producer))
            parts.append(f"{producer.op.name}[{node_index}][{producer.outputs.index(parent)}]")
    cells = {key: ", ".join(parts) or "-" for key, parts in connected.items()}
    cells.update({id(row): "-" for row in input_rows})
    return rows, shapes, cells


def _with_inputs(model: Any, input_rows: list[_InputRow], nodes: list[Any]) -> list[Any]:
    """``model.layers`` with the Input rows where Keras 3 lists its InputLayers: by depth (the
    longest path to an output, deepest first), then by when a walk from the outputs reached them.
    An input joined late (``Concatenate()([h, b])``) comes just before the layer it feeds."""
    given = {id(row.kt): row for row in input_rows}
    index: dict[int, int] = {}
    for out in getattr(model, "_flat_outputs", []):  # pre-order from the outputs, as Keras's _build_map
        stack = [out]
        while stack:
            kt = stack.pop()
            node = kt._node
            key = id(kt) if id(kt) in given or node is None else id(node.op)
            if key in index:
                continue
            index[key] = len(index)
            if id(kt) not in given and node is not None:
                stack.extend(reversed(node.parents))
    depth: dict[int, int] = {}
    node_depth: dict[int, int] = {}
    for node in reversed(nodes):  # nodes are in execution order: consumers after producers
        d = node_depth.get(id(node), 0)
        depth[id(node.op)] = max(depth.get(id(node.op), 0), d)
        for parent in node.parents:
            if id(parent) in given or parent._node is None:
                depth[id(parent)] = max(depth.get(id(parent), 0), d + 1)
            else:
                node_depth[id(parent._node)] = max(node_depth.get(id(parent._node), 0), d + 1)

    def rank(key: int) -> tuple[int, int]:
        return (-depth.get(key, 0), index.get(key, len(index)))

    pending = sorted(input_rows, key=lambda row: rank(id(row.kt)))
    rows: list[Any] = []
    for layer in model.layers:
        while pending and rank(id(pending[0].kt)) < rank(id(layer)):
            rows.append(pending.pop(0))
        rows.append(layer)
    return rows + pending


def _sequential_like(inputs: list[Any], layer_nodes: list[Any], outputs: list[Any]) -> bool:
    """Keras 3's test: one input, and a chain of single-input calls of distinct layers, each on the last's output."""
    if len(inputs) != 1 or len({id(node.op) for node in layer_nodes}) != len(layer_nodes):
        return False
    previous = [inputs[0]]
    for node in layer_nodes:
        if len(node.parents) != 1 or not any(node.parents[0] is kt for kt in previous):
            return False
        previous = node.outputs
    return all(any(out is kt for kt in previous) for out in outputs)


@functools.cache
def _init_takes_initializer(cls: Any) -> bool:
    try:
        parameters = inspect.signature(getattr(cls, "__init__")).parameters  # noqa: B009
    except (TypeError, ValueError):
        return False
    return any(name.endswith("initializer") for name in parameters)


def _params(layer: nn.Module) -> str:
    """The Param # cell: Keras writes "0 (unbuilt)" for a layer whose weights do not exist yet.

    Layers without weights (Dropout, ReLU, pooling) are built from the start in Keras 3, so they
    show a plain 0: the mark goes to a layer not built yet that makes weights, i.e. whose
    constructor takes an initializer (Dense's kernel_initializer, LSTM's, BatchNormalization's).
    """
    count = _count(layer)
    cls: Any = type(layer)
    if not count and getattr(layer, "built", True) is False and _init_takes_initializer(cls):
        return "0 (unbuilt)"
    return f"{count:,}"


def summary_lines(
    model: Any,
    line_length: int | None = None,
    positions: Any = None,
    expand_nested: bool = False,
    show_trainable: bool = False,
    layer_range: Any = None,
) -> list[str]:
    """The lines of ``model.summary()``, with Keras's options (see :meth:`Model.summary`).

    As Keras 3 prints it: a functional model's ``InputLayer`` rows, a line between rows, and for a
    functional model that is not a plain chain a "Connected to" column (``layer[node][tensor]``).
    """
    children, shapes, connections = _graph_parts(model)
    widths = _widths(line_length, positions, show_trainable, connections is not None)
    header: tuple[str, ...] = ("Layer (type)", "Output Shape", "Param #")
    if connections is not None:
        header += ("Connected to",)
    if show_trainable:
        header += ("Trainable",)
    aligns = ("<", "<", ">") + (("<",) if connections is not None else ()) + ("^",)
    lines = [f'Model: "{model.name}"']
    lines.append("┏" + "┳".join("━" * w for w in widths) + "┓")
    lines.append(_row(header, widths, aligns, "┃", "┃", "┃"))
    lines.append("┡" + "╇".join("━" * w for w in widths) + "┩")
    rows = []
    for depth, child, child_shapes in _rows(model, shapes, _layer_range(model, children, layer_range), expand_nested):
        name = getattr(child, "name", "") or type(child).__name__.lower()
        prefix = "   " * depth + "└ " if depth else ""  # Keras 3's mark for a nested model's layer
        cells: tuple[str, ...] = (
            prefix + f"{name} ({_type_name(child)})",
            child_shapes.get(id(child), "?"),
            _params(child),
        )
        if connections is not None:
            cells += (connections.get(id(child), "-") if depth == 0 else "",)
        if show_trainable:  # Keras 3: Y or N for a layer with weights, - for one without
            has_weights = not isinstance(child, _InputRow) and keras_weights(child)
            cells += (("Y" if getattr(child, "trainable", True) else "N") if has_weights else "-",)
        rows.append(_row(cells, widths, aligns))
    # Keras 3 (rich's show_lines) rules a line between every two rows
    lines.extend("\n".join(rows).split("\n") if len(rows) < 2 else _ruled(rows, widths))
    lines.append("└" + "┴".join("─" * w for w in widths) + "┘")
    # Keras counts every weight: moving statistics and other non-trainable states too.
    weights = keras_weights(model)
    total = sum(w.numel() for w in weights)
    trainable = sum(w.numel() for w in weights if isinstance(w, nn.Parameter) and w.requires_grad)
    size = sum(w.numel() * w.element_size() for w in weights)
    trainable_size = sum(
        w.numel() * w.element_size() for w in weights if isinstance(w, nn.Parameter) and w.requires_grad
    )
    optimizer = _optimizer_params(model)
    extra, extra_size = optimizer or (0, 0)
    lines.append(f" Total params: {total + extra:,} ({readable_size(size + extra_size)})")
    lines.append(f" Trainable params: {trainable:,} ({readable_size(trainable_size)})")
    lines.append(f" Non-trainable params: {total - trainable:,} ({readable_size(size - trainable_size)})")
    if optimizer is not None:  # Keras 3 adds them once the optimizer is built (after a step)
        lines.append(f" Optimizer params: {extra:,} ({readable_size(extra_size)})")
    return lines


def _ruled(rows: list[str], widths: tuple[int, ...]) -> list[str]:
    """The rows' lines with a ``├─┼─┤`` rule between two rows."""
    rule = "├" + "┼".join("─" * w for w in widths) + "┤"
    lines: list[str] = []
    for i, row in enumerate(rows):
        if i:
            lines.append(rule)
        lines.extend(row.split("\n"))
    return lines


def _optimizer_params(model: Any) -> tuple[int, int] | None:
    """(count, bytes) of the optimizer's variables as Keras 3 counts them, or None before its first step.

    Keras's optimizer variables are ``iterations``, the learning rate (a variable unless a schedule
    drives it) and the slots (Adam's momenta and velocities, ...): ``optimizer.variables`` holds
    ``iterations`` and the slots of the torch optimizer's state.
    """
    optimizer = getattr(model, "optimizer", None)
    built = getattr(optimizer, "torch_optimizer", None)
    if optimizer is None or built is None or not built.state:
        return None
    variables = [v for v in optimizer.variables if isinstance(v, torch.Tensor)]
    count = sum(v.numel() for v in variables)
    nbytes = sum(v.numel() * v.element_size() for v in variables)
    if getattr(optimizer, "_schedule", None) is None:
        count, nbytes = count + 1, nbytes + 4  # the learning-rate variable (float32)
    return count, nbytes


def readable_size(nbytes: float) -> str:
    """Keras's memory size in the summary: ``"96.00 B"``, ``"4.50 KB"``, ``"79.58 MB"`` (powers of 1024).

    Example:
        >>> readable_size(96), readable_size(4608), readable_size(83_445_920)
        ('96.00 B', '4.50 KB', '79.58 MB')
    """
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if nbytes < 1024:
            return f"{nbytes:.2f} {unit}"
        nbytes /= 1024
    return f"{nbytes:.2f} PB"


def _layer_range(model: Any, layers: list[Any], layer_range: Any) -> list[Any]:
    """The rows ``layers`` from the layer named ``layer_range[0]`` to the one named ``layer_range[1]``."""
    if layer_range is None:
        return layers
    if not isinstance(layer_range, (list, tuple)) or len(layer_range) != 2:
        raise ValueError(
            f"layer_range must be a list or tuple of two layer names [start, end]. Received: {layer_range!r}"
        )
    names = [getattr(layer, "name", "") for layer in layers]
    missing = [n for n in layer_range if n not in names]
    if missing:
        raise ValueError(
            f"layer_range names layers that model {model.name!r} does not have: {missing}. Its layers: {names}"
        )
    first, last = names.index(layer_range[0]), names.index(layer_range[1])
    if last < first:
        raise ValueError(f"layer_range's first layer {layer_range[0]!r} comes after its last {layer_range[1]!r}.")
    return layers[first : last + 1]


def _rows(model: Any, shapes: dict[int, str], layers: list[Any], expand_nested: bool, depth: int = 0) -> Any:
    """(depth, layer, the shapes its row reads) for each row; a nested model's layers follow it when expanded."""
    for child in layers:
        yield depth, child, shapes
        if expand_nested and hasattr(child, "layers") and child is not model and not isinstance(child, _InputRow):
            yield from _rows(child, _output_shapes(child), list(child.layers), True, depth + 1)
