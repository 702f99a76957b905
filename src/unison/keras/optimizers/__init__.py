"""``keras.optimizers``: the registry of Keras optimizers (``get``) over the modules that define them.

This package owns the Keras optimizers. ``optimizer.py`` holds the base (``Optimizer``, its
options, clipping, the variables list) and the optimizers torch ships (SGD, Adam, AdamW, RMSprop,
Adagrad, a wrapped torch optimizer); ``adaptive.py`` Keras 3's other update rules, ``recent.py`` its newer ones (Adafactor, Lamb,
Muon, ScheduleFreeAdamW); ``apply.py``
the custom-loop half (``apply_gradients``, ``minimize``, iterations, learning rates);
``schedules.py`` and ``legacy.py`` the ``keras.optimizers.schedules``/``legacy`` namespaces.
The modules import only ``optimizer.py`` and ``unison.distribute`` (a custom loop's gradients go
through the strategy), never this face, so the registry below closes no circle. Nothing here
imports layers, models or trainers.

Example:
    >>> from unison.keras import optimizers
    >>> optimizers.get("RMSprop")
    RMSprop(learning_rate=0.001)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, cast

import torch

from unison.errors import did_you_mean, format_choices

# ``keras.optimizers.schedules`` and ``keras.optimizers.legacy`` (Keras 2's module name for the
# same optimizers) are attributes of this package, as in Keras.
from unison.keras.optimizers import experimental, legacy, schedules
from unison.keras.optimizers.adagrad import Adagrad
from unison.keras.optimizers.adam import Adam, AdamW
from unison.keras.optimizers.adaptive import Adadelta, Adamax, Ftrl, Lion, Nadam
from unison.keras.optimizers.optimizer import (
    ClipOptions,
    Optimizer,
    OptimizerOptions,
    OptimizerVariables,
    TorchOptimizer,
)
from unison.keras.optimizers.optimizer import Params as Params
from unison.keras.optimizers.optimizer_map import OptimizerMap
from unison.keras.optimizers.recent import Adafactor, Lamb, Muon, ScheduleFreeAdamW
from unison.keras.optimizers.rmsprop import RMSprop
from unison.keras.optimizers.sgd import SGD
from unison.keras.saving.serialization import register_namespace

__all__ = [
    "SGD",
    "Adagrad",
    "Adam",
    "AdamW",
    "ClipOptions",
    "Optimizer",
    "OptimizerOptions",
    "RMSprop",
    "TorchOptimizer",
    "get",
]


_REGISTRY: dict[str, Callable[[], Optimizer]] = {
    "sgd": SGD,
    "adam": Adam,
    "adamw": AdamW,
    "rmsprop": RMSprop,
    "adagrad": Adagrad,
    "adadelta": Adadelta,
    "adamax": Adamax,
    "nadam": Nadam,
    "lion": Lion,
    "ftrl": Ftrl,
    "adafactor": Adafactor,
    "muon": Muon,
    "schedulefreeadamw": ScheduleFreeAdamW,
}  # Keras 3.15's get() does not know "lamb" either
__all__ += ["Adadelta", "Adamax", "Ftrl", "Lion", "Nadam", "OptimizerVariables"]
__all__ += ["Adafactor", "Lamb", "Muon", "OptimizerMap", "ScheduleFreeAdamW"]

OptimizerLike = str | Optimizer | torch.optim.Optimizer


def get(identifier: OptimizerLike) -> Optimizer:
    """Resolve a Keras optimizer identifier to an ``Optimizer``.

    Args:
        identifier: ``"sgd"``, ``"adam"``, ``"adamw"``, ``"rmsprop"``, ``"adagrad"``,
            ``"adadelta"``, ``"adamax"``, ``"nadam"`` or ``"lion"`` (any case; Keras default
            hyper-parameters), an ``Optimizer`` instance (returned as is)
            or class, or a ``torch.optim.Optimizer`` (wrapped in ``TorchOptimizer``).

    Raises:
        ValueError: for an unknown name or an unsupported identifier.

    Example:
        >>> get("RMSprop")
        RMSprop(learning_rate=0.001)
    """
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, torch.optim.Optimizer):
        return TorchOptimizer(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Optimizer):
        return identifier()  # concrete optimizers have defaults
    if isinstance(identifier, str):
        cls = _REGISTRY.get(identifier.lower())
        if cls is None:
            raise ValueError(
                f"Unknown optimizer: {identifier!r}{did_you_mean(identifier, _REGISTRY)}. Expected one of: "
                f"{format_choices(list(_REGISTRY))}. Received: optimizer={identifier!r}"
            )
        return cls()
    raise ValueError(
        "Could not interpret optimizer identifier: expected a name such as 'adam', a "
        "unison.keras.optimizers.Optimizer or a torch.optim.Optimizer. "
        f"Received: optimizer={identifier!r}"
    )


__all__ += ["experimental", "legacy", "schedules"]

# saving_lib (below this package) rebuilds a compiled optimizer by its class name through this entry.
register_namespace("optimizers", sys.modules[__name__], Optimizer, Optimizer)


def serialize(optimizer: Any) -> Any:
    """Keras's serialized form of a optimizer (``{"module", "class_name", "config", "registered_name"}``).

    Example:
        >>> serialize(SGD())["class_name"]
        'sgd'
    """
    from unison.keras.saving.object_io import serialize_keras_object

    data = serialize_keras_object(optimizer)
    if isinstance(data, dict) and str(data.get("class_name", "")).lower() in _REGISTRY:
        data["class_name"] = data["class_name"].lower()  # Keras writes the built-ins' short names ("adam")
    return data


def deserialize(config: Any, custom_objects: Any = None, **kwargs: Any) -> Any:
    """The optimizer a :func:`serialize` dict (or a name) describes.

    Raises:
        ValueError: a name this module does not export.
    """
    from unison.keras.saving.object_io import deserialize_keras_object

    if isinstance(config, dict) and str(config.get("class_name", "")).lower() in _REGISTRY:
        cls = _REGISTRY[str(config["class_name"]).lower()]
        return cast(Any, cls).from_config(dict(config.get("config") or {}))
    if isinstance(config, str) and config.lower() in _REGISTRY:
        return _REGISTRY[config.lower()]()
    return deserialize_keras_object(config, custom_objects, namespace=sys.modules[__name__], what="optimizer")


__all__ += ["deserialize", "serialize"]
