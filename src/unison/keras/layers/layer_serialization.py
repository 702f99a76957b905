"""``keras.layers.serialize`` / ``keras.layers.deserialize``: a layer to Keras's config dict and back.

Example:
    >>> from unison.keras.layers.core import Dense
    >>> entry = serialize(Dense(3, name="d"))
    >>> entry["class_name"], entry["config"]["units"]
    ('Dense', 3)
    >>> deserialize(entry).units
    3
"""

from __future__ import annotations

from typing import Any

from torch import nn

from unison.errors import SavingError, UnknownLayerError
from unison.keras.saving.serialization import from_config, layer_config


def serialize(layer: nn.Module) -> dict[str, Any]:
    """``{"module", "class_name", "config", "registered_name"}`` of ``layer`` (Keras 3's layout)."""
    if not isinstance(layer, nn.Module):
        raise TypeError(
            f"keras.layers.serialize takes a layer. Received: {layer!r:.80} of type {type(layer).__name__}."
        )
    entry = layer_config(layer)
    return {
        "module": "keras.layers",
        "class_name": entry["class_name"],
        "config": entry["config"],
        "registered_name": entry.get("registered_name"),
    }


def deserialize(config: dict[str, Any], custom_objects: dict[str, Any] | None = None) -> nn.Module:
    """A new layer from :func:`serialize`'s output (or any ``{"class_name", "config"}``)."""
    if not isinstance(config, dict) or "class_name" not in config or "config" not in config:
        raise ValueError(
            "keras.layers.deserialize takes the dict keras.layers.serialize returns, with 'class_name' and "
            f"'config'. Received: {config!r:.120}"
        )
    try:
        return from_config(config, custom_objects)
    except SavingError as exc:
        if "Unknown layer or model class" not in str(exc):
            raise
        # Keras 3 raises TypeError ("Could not locate class ..."): callers catch that
        raise UnknownLayerError(str(exc)) from None


__all__ = ["deserialize", "serialize"]
