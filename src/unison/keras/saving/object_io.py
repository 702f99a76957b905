"""Keras's ``serialize``/``deserialize`` of single objects: ``{"module", "class_name", "config", "registered_name"}``.

``keras.losses.serialize``, ``keras.metrics.serialize``, ``keras.optimizers.serialize`` and
``keras.saving.serialize_keras_object`` all write this dict; a built-in function (``mse``) is
``{"module": "builtins", "class_name": "function", "config": "mean_squared_error", ...}``.
Deserializing finds the class in the ``unison`` package the ``module`` names (``keras.losses`` is
``unison.keras.losses``), among the registered custom objects, or in ``custom_objects``.

Example:
    >>> from unison.keras import losses
    >>> data = serialize_keras_object(losses.Huber(delta=0.5))
    >>> data["module"], data["class_name"]
    ('keras.losses', 'Huber')
    >>> deserialize_keras_object(data).delta
    0.5
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from unison.keras.utils.object_registration import get_custom_objects, get_registered_name

__all__ = ["deserialize_keras_object", "serialize_keras_object", "public_module"]

_PLAIN = (str, int, float, bool, type(None))


def public_module(cls: type) -> str:
    """The Keras module a unison class is exported from: ``unison.keras.losses.regression`` is ``keras.losses``."""
    parts = cls.__module__.split(".")
    if parts[:2] == ["unison", "keras"] and len(parts) >= 3:
        return ".".join(["keras", parts[2]])
    return cls.__module__


def serialize_keras_object(obj: Any) -> Any:
    """Keras's serialized form of ``obj``: plain values as they are, lists item by item, objects as a dict.

    Raises:
        TypeError: an object without ``get_config`` that is not a function.
    """
    if isinstance(obj, _PLAIN):
        return obj
    if isinstance(obj, (list, tuple)):
        return [serialize_keras_object(item) for item in obj]
    if isinstance(obj, dict):
        return {key: serialize_keras_object(value) for key, value in obj.items()}
    if callable(obj) and not hasattr(obj, "get_config") and hasattr(obj, "__name__"):
        return {"module": "builtins", "class_name": "function", "config": obj.__name__, "registered_name": "function"}
    if not hasattr(obj, "get_config"):
        raise TypeError(
            f"Cannot serialize {obj!r} ({type(obj).__name__}): it has no get_config(). Give its class a get_config() "
            "returning its constructor arguments."
        )
    registered = get_registered_name(type(obj))
    return {
        "module": public_module(type(obj)),
        "class_name": type(obj).__name__,
        "config": obj.get_config(),
        "registered_name": registered if registered != type(obj).__name__ else None,
    }


def _lookup(name: str, module: str | None, custom_objects: Mapping[str, Any] | None, namespace: Any) -> Any:
    for table in (custom_objects or {}, get_custom_objects()):
        if name in table:
            return table[name]
    places = [namespace] if namespace is not None else []
    if module and module.startswith("keras."):
        try:
            places.append(importlib.import_module("unison." + module))
        except ImportError:
            pass
    for place in places:
        found = getattr(place, name, None)
        if found is not None:
            return found
    return None


def deserialize_keras_object(
    config: Any,
    custom_objects: Mapping[str, Any] | None = None,
    safe_mode: bool = True,
    namespace: Any = None,
    what: str = "object",
    **kwargs: Any,
) -> Any:
    """The object :func:`serialize_keras_object` described (``namespace``: where bare names are looked up first).

    Raises:
        ValueError: a class or function name found nowhere.
    """
    if config is None or isinstance(config, (int, float, bool)):
        return config
    if isinstance(config, list):
        return [deserialize_keras_object(item, custom_objects, safe_mode, namespace, what) for item in config]
    if isinstance(config, str):
        found = _lookup(config, None, custom_objects, namespace)
        if found is None:
            raise ValueError(f"Unknown {what}: {config!r}. Use a name Keras exports, or pass custom_objects={{...}}.")
        return found() if isinstance(found, type) else found
    if not isinstance(config, dict) or "class_name" not in config:
        raise TypeError(f"Expected a dict with 'class_name' and 'config' or a name. Received: config={config!r}")
    class_name = config["class_name"]
    inner = config.get("config")
    if class_name == "function":
        found = _lookup(str(inner), config.get("module"), custom_objects, namespace)
        if not callable(found):
            raise ValueError(f"Unknown {what} function: {inner!r}.")
        return found
    name = config.get("registered_name") or class_name
    cls = _lookup(name, config.get("module"), custom_objects, namespace) or _lookup(
        class_name, config.get("module"), custom_objects, namespace
    )
    if not isinstance(cls, type):
        raise ValueError(
            f"Unknown {what}: {class_name!r} (module {config.get('module')!r}). Register it with "
            "@keras.saving.register_keras_serializable() or pass custom_objects={...}."
        )
    from_config: Callable[[Any], Any] | None = getattr(cls, "from_config", None)
    options = dict(inner or {})
    return from_config(options) if from_config is not None else cls(**options)
