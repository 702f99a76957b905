"""Keras 2's object (de)serializers: ``tf_keras.utils.legacy`` and Keras 3's ``keras.legacy.saving``.

The legacy format is ``{"class_name": <registered name>, "config": <get_config()>}`` for an
object with ``get_config``, the registered name for a function, ``None`` for ``None``; it has no
``module`` or ``registered_name`` keys (those are Keras 3's format, :mod:`.object_io`). Reading
it back looks a name up in the ``custom_object_scope``s, the registry, ``custom_objects`` and
then ``module_objects``, the table a caller passes (the legacy reader knows no built-ins).

Example:
    >>> def double(x):
    ...     return 2 * x
    >>> serialize_keras_object(double)
    'double'
    >>> deserialize_keras_object("double", module_objects={"double": double}) is double
    True
"""

from __future__ import annotations

import inspect
from typing import Any

from unison.keras.utils.object_registration import (
    CustomObjectScope,
    get_registered_name,
    get_registered_object,
)

__all__ = ["deserialize_keras_object", "serialize_keras_object"]

_PASSIVE = "__passive_serialization__"


def serialize_keras_object(instance: Any) -> Any:
    """``instance`` in Keras 2's format: a class-and-config dict, a function's name or ``None``.

    Raises:
        ValueError: the object has neither ``get_config()`` nor a name.
    """
    if instance is None:
        return None
    if hasattr(instance, "get_config") and not isinstance(instance, type):
        config = instance.get_config()
        serialized: dict[str, Any] = {}
        for key, item in config.items():
            if isinstance(item, str):
                serialized[key] = item
                continue
            try:
                inner = serialize_keras_object(item)
            except ValueError:
                serialized[key] = item  # numbers, lists and dicts stay as they are
                continue
            if isinstance(inner, dict) and not isinstance(item, dict):
                inner[_PASSIVE] = True  # a nested object: the reader rebuilds it
            serialized[key] = inner
        return {"class_name": get_registered_name(type(instance)), "config": serialized}
    if hasattr(instance, "__name__"):
        return get_registered_name(instance)
    raise ValueError(
        f"Cannot serialize {instance} because it doesn't implement `get_config()`. Give its class a "
        "get_config() method (and from_config) or pass a named function."
    )


def _class_and_config(
    config: Any, module_objects: dict[str, Any] | None, custom_objects: dict[str, Any] | None, printable: str
) -> tuple[Any, Any]:
    if not isinstance(config, dict) or "class_name" not in config or "config" not in config:
        raise ValueError(
            f"Improper config format for {config}. Expecting python dict contains `class_name` and `config` as keys"
        )
    class_name = config["class_name"]
    cls = get_registered_object(class_name, custom_objects, module_objects)
    if cls is None:
        raise ValueError(
            f"Unknown {printable}: '{class_name}'. Please ensure you are using a `keras.utils.custom_object_scope` "
            "and that this object is included in the scope, or pass it in custom_objects= or module_objects=."
        )
    cls_config = config["config"]
    if isinstance(cls_config, list):
        return cls, cls_config
    for key, item in list(cls_config.items()):
        if key == "name":
            continue
        if isinstance(item, dict) and _PASSIVE in item:
            cls_config[key] = deserialize_keras_object(item, module_objects, custom_objects, "config_item")
        elif isinstance(item, str) and inspect.isfunction(get_registered_object(item, custom_objects)):
            cls_config[key] = get_registered_object(item, custom_objects)
    return cls, cls_config


def deserialize_keras_object(
    identifier: Any,
    module_objects: dict[str, Any] | None = None,
    custom_objects: dict[str, Any] | None = None,
    printable_module_name: str = "object",
) -> Any:
    """The object Keras 2's format describes, built from ``module_objects``/``custom_objects``.

    Raises:
        ValueError: an unknown name, a dict without ``class_name`` and ``config``, or a value that
            is no serialized form.
    """
    if identifier is None:
        return None
    custom = custom_objects or {}
    if isinstance(identifier, dict):
        cls, cls_config = _class_and_config(identifier, module_objects, custom_objects, printable_module_name)
        from_config = getattr(cls, "from_config", None)
        if from_config is not None and "custom_objects" in inspect.signature(from_config).parameters:
            return from_config(cls_config, custom_objects=custom)
        with CustomObjectScope(custom):
            return from_config(cls_config) if from_config is not None else cls(**cls_config)
    if isinstance(identifier, str):
        obj = get_registered_object(identifier, custom_objects, module_objects)
        if obj is None:
            raise ValueError(
                f"Unknown {printable_module_name}: '{identifier}'. Please ensure you are using a "
                "`keras.utils.custom_object_scope` and that this object is included in the scope, or pass it "
                "in custom_objects= or module_objects=."
            )
        return obj() if inspect.isclass(obj) else obj
    if inspect.isfunction(identifier):
        return identifier
    raise ValueError(
        f"Could not interpret serialized {printable_module_name}: {identifier}. Expected None, a name or a "
        "{'class_name': ..., 'config': ...} dict."
    )
