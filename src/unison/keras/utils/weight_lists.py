"""Keras's variable lists of a layer (``weights``, ``trainable_weights``, ``non_trainable_weights``).

Keras lists a layer's own trainable variables, then its own non-trainable ones (frozen weights,
BatchNormalization's moving statistics), then those of each inner layer in the order they were
created. unison's weights are torch parameters and its states (moving statistics, a
Normalization layer's mean) persistent floating-point buffers, so the lists walk the module tree
in that order. ``Layer`` and ``Model`` share these functions.

Example:
    >>> import torch
    >>> from unison.keras.layers import BatchNormalization
    >>> bn = BatchNormalization()
    >>> _ = bn(torch.zeros(2, 3))
    >>> [v.shape[0] for v in keras_weights(bn)]
    [3, 3, 3, 3]
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from unison.ops.dtypes import as_torch


def _own_states(module: nn.Module) -> list[torch.Tensor]:
    """The module's own persistent floating-point buffers (int counters are not Keras weights)."""
    skipped: set[str] = getattr(module, "_non_persistent_buffers_set", set())
    return [
        b
        for name, b in module.named_buffers(recurse=False)
        if b is not None and b.is_floating_point() and name not in skipped
    ]


def keras_weights(module: nn.Module) -> list[torch.Tensor]:
    """Every variable of ``module`` in Keras's order, each once (shared weights are listed once).

    For each layer of the tree (pre-order, creation order): its trainable parameters, then its
    frozen parameters and states.
    """
    seen: set[int] = set()
    out: list[torch.Tensor] = []
    for sub in module.modules():
        params = [p for p in sub.parameters(recurse=False) if p is not None]
        own = [p for p in params if p.requires_grad] + [p for p in params if not p.requires_grad]
        for v in own + _own_states(sub):
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
    return out


def keras_trainable_weights(module: nn.Module) -> list[nn.Parameter]:
    """The variables that training updates (parameters with ``requires_grad``), in Keras's order."""
    return [v for v in keras_weights(module) if isinstance(v, nn.Parameter) and v.requires_grad]


def keras_non_trainable_weights(module: nn.Module) -> list[torch.Tensor]:
    """Frozen parameters and states (moving statistics), in Keras's order."""
    return [v for v in keras_weights(module) if not (isinstance(v, nn.Parameter) and v.requires_grad)]


def assign_weights(module: nn.Module, values: list[Any], owner: str) -> None:
    """Copy ``values`` (arrays in ``keras_weights`` order) into the module's variables, checking shapes."""
    targets = keras_weights(module)
    if len(values) != len(targets):
        raise ValueError(
            f"set_weights on {owner} expects {len(targets)} arrays (the layer's weights, in the order "
            f"of layer.weights), received {len(values)}. Build the layer first (call it on an input) "
            "and pass one array per weight."
        )
    with torch.no_grad():
        for i, (target, value) in enumerate(zip(targets, values)):
            tensor = as_torch(value).to(target.dtype)  # a read-only array is copied, not warned about
            if tuple(tensor.shape) != tuple(target.shape):
                raise ValueError(
                    f"set_weights on {owner}: weight {i} has shape {tuple(target.shape)}, received an array "
                    f"of shape {tuple(tensor.shape)}. Pass arrays in the order and shapes of layer.weights."
                )
            target.copy_(tensor.to(target.device))


def keras_submodules(module: nn.Module) -> tuple[nn.Module, ...]:
    """tf.Module's ``submodules`` of a Keras layer or model: every layer (or ``tf.Module``) inside it,
    depth first, each once; torch's own helper modules inside a layer are not TF modules."""
    from unison.core.module import Module

    # Layer and Model say so by a class flag: this module sits below both and imports neither.
    return tuple(
        m
        for m in module.modules()
        if m is not module and (isinstance(m, Module) or getattr(type(m), "_keras_submodule", False))
    )
