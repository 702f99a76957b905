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
_TRAINABLE_W = 11  # show_trainable's column


def _row(cells: tuple[str, ...], widths: tuple[int, ...], left: str = "│", mid: str = "│", right: str = "│") -> str:
    """One table row; a cell longer than its column wraps onto more lines, as Keras's table does.

    The first two columns are left-aligned, the parameter count right-aligned, a trainable flag centred.
    """
    import itertools
    import textwrap

    wrapped = [textwrap.wrap(cell, width - 2, break_on_hyphens=False) or [""] for cell, width in zip(cells, widths)]
    aligns = ("<", "<", ">", "^")
    lines = []
    for parts in itertools.zip_longest(*wrapped, fillvalue=""):
        body = f" {mid} ".join(f"{part:{align}{width - 2}}" for part, align, width in zip(parts, aligns, widths))
        lines.append(f"{left} {body} {right}")
    return "\n".join(lines)


def _widths(line_length: int | None, positions: Any, show_trainable: bool) -> tuple[int, ...]:
    """Column widths from Keras's ``line_length`` and ``positions`` (fractions or cumulative ends)."""
    widths: tuple[int, ...] = _W + ((_TRAINABLE_W,) if show_trainable else ())
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


def _count(layer: nn.Module) -> int:
    return sum(w.numel() for w in keras_weights(layer))


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
    """The lines of ``model.summary()``, with Keras's options (see :meth:`Model.summary`)."""
    widths = _widths(line_length, positions, show_trainable)
    shapes = _output_shapes(model)
    header = ("Layer (type)", "Output Shape", "Param #") + (("Trainable",) if show_trainable else ())
    lines = [f'Model: "{model.name}"']
    lines.append("┏" + "┳".join("━" * w for w in widths) + "┓")
    lines.append(_row(header, widths, "┃", "┃", "┃"))
    lines.append("┡" + "╇".join("━" * w for w in widths) + "┩")
    for row, (depth, child, child_shapes) in enumerate(
        _rows(model, shapes, _layer_range(model, layer_range), expand_nested)
    ):
        if row:  # Keras 3's table rules a line between rows (rich's show_lines=True)
            lines.append("├" + "┼".join("─" * w for w in widths) + "┤")
        name = getattr(child, "name", "") or type(child).__name__.lower()
        cells: tuple[str, ...] = (
            "  " * depth + f"{name} ({type(child).__name__})",
            child_shapes.get(id(child), "?"),
            _params(child),
        )
        if show_trainable:  # Keras 3: Y or N for a layer with weights, - for one without
            cells += (("Y" if getattr(child, "trainable", True) else "N") if keras_weights(child) else "-",)
        lines.extend(_row(cells, widths).split("\n"))
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


def _layer_range(model: Any, layer_range: Any) -> list[Any]:
    """``model.layers`` from the layer named ``layer_range[0]`` to the one named ``layer_range[1]``."""
    layers = list(model.layers)
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
        if expand_nested and hasattr(child, "layers") and child is not model:
            yield from _rows(child, _output_shapes(child), list(child.layers), True, depth + 1)
