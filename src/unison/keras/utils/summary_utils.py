"""``model.summary()``: Keras's table of layers, output shapes and parameter counts.

Example::

    Model: "sequential"
    ┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
    ┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
    ...
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from unison.keras.layers.weight_lists import keras_weights

_W = (33, 24, 15)


def _row(cells: tuple[str, str, str], left: str = "│", mid: str = "│", right: str = "│") -> str:
    """One table row; a cell longer than its column wraps onto more lines, as Keras's table does."""
    import itertools
    import textwrap

    wrapped = [textwrap.wrap(cell, width - 2, break_on_hyphens=False) or [""] for cell, width in zip(cells, _W)]
    lines = []
    for a, b, c in itertools.zip_longest(*wrapped, fillvalue=""):
        lines.append(f"{left} {a:<{_W[0] - 2}} {mid} {b:<{_W[1] - 2}} {mid} {c:>{_W[2] - 2}} {right}")
    return "\n".join(lines)


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


def summary_lines(model: Any) -> list[str]:
    """The lines of ``model.summary()``."""
    shapes = _output_shapes(model)
    lines = [f'Model: "{model.name}"']
    lines.append("┏" + "┳".join("━" * w for w in _W) + "┓")
    lines.append(_row(("Layer (type)", "Output Shape", "Param #"), "┃", "┃", "┃"))
    lines.append("┡" + "╇".join("━" * w for w in _W) + "┩")
    for child in model.layers:
        name = getattr(child, "name", "") or type(child).__name__.lower()
        params = _count(child)
        lines.extend(_row((f"{name} ({type(child).__name__})", shapes.get(id(child), "?"), f"{params:,}")).split("\n"))
    lines.append("└" + "┴".join("─" * w for w in _W) + "┘")
    # Keras counts every weight: moving statistics and other non-trainable states too.
    weights = keras_weights(model)
    total = sum(w.numel() for w in weights)
    trainable = sum(w.numel() for w in weights if isinstance(w, nn.Parameter) and w.requires_grad)
    size = sum(w.numel() * w.element_size() for w in weights)
    lines.append(f" Total params: {total:,} ({size / 1024:.2f} KB)")
    lines.append(f" Trainable params: {trainable:,}")
    lines.append(f" Non-trainable params: {total - trainable:,}")
    return lines
