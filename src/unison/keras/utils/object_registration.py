"""Keras's registry of custom objects: ``register_keras_serializable``, ``custom_object_scope``.

``load_model`` rebuilds a custom layer, model, loss or metric from the name recorded in the file.
It finds the class (or function), in this order, in: the ``custom_objects`` given to
``load_model`` and any enclosing ``custom_object_scope``; the classes registered with
``@keras.saving.register_keras_serializable(package, name)`` (recorded as ``"package>name"``) or
put in ``get_custom_objects()``; then unison's own layers, losses and metrics.

Example:
    >>> from unison import keras
    >>> @keras.saving.register_keras_serializable(package="Doc")
    ... class Twice(keras.layers.Layer):
    ...     def call(self, x):
    ...         return 2 * x
    >>> keras.saving.get_registered_name(Twice)
    'Doc>Twice'
    >>> keras.saving.get_registered_object("Doc>Twice") is Twice
    True
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

T = TypeVar("T")

# "package>name" (or a name put there by hand) -> the class or function; and the reverse.
_GLOBAL_CUSTOM_OBJECTS: dict[str, Any] = {}
_GLOBAL_CUSTOM_NAMES: dict[Any, str] = {}
_SCOPES = threading.local()  # the stack of custom_object_scope dicts of this thread


def _scope_stack() -> list[dict[str, Any]]:
    stack: list[dict[str, Any]] | None = getattr(_SCOPES, "stack", None)
    if stack is None:
        stack = _SCOPES.stack = []
    return stack


class CustomObjectScope:
    """Within ``with CustomObjectScope({"name": obj}):``, loading resolves ``name`` to ``obj``.

    Args:
        custom_objects: dicts mapping names (a class's ``__name__`` or its registered
            ``"package>name"``) to classes or functions; ``None`` entries are skipped.

    Example:
        >>> from unison import keras
        >>> def my_fn(x):
        ...     return x
        >>> with keras.saving.custom_object_scope({"my_fn": my_fn}):
        ...     keras.saving.get_registered_object("my_fn") is my_fn
        True
    """

    def __init__(self, *custom_objects: dict[str, Any] | None) -> None:
        merged: dict[str, Any] = {}
        for objects in custom_objects:
            if objects is None:
                continue
            if not isinstance(objects, dict):
                raise TypeError(
                    "custom_object_scope takes dicts of {name: class or function}. "
                    f"Received: {type(objects).__name__} {objects!r:.80}."
                )
            merged.update(objects)
        self.custom_objects = merged

    def __enter__(self) -> CustomObjectScope:
        _scope_stack().append(self.custom_objects)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        _scope_stack().pop()


custom_object_scope = CustomObjectScope  # Keras's function-style name


def get_custom_objects() -> dict[str, Any]:
    """The global registry itself (``get_custom_objects()["name"] = obj`` registers ``obj``).

    Example:
        >>> from unison import keras
        >>> isinstance(keras.saving.get_custom_objects(), dict)
        True
    """
    return _GLOBAL_CUSTOM_OBJECTS


def register_keras_serializable(package: str = "Custom", name: str | None = None) -> Callable[[T], T]:
    """Class decorator recording ``obj`` as ``"package>name"`` so ``load_model`` finds it by itself.

    Args:
        package: the part of the registered name before ``>`` (groups your objects).
        name: the part after ``>``; the class's or function's ``__name__`` when ``None``.

    Raises:
        ValueError: ``package`` contains ``>``, the name is taken by another object, or a class
            without ``get_config()`` is registered.

    Example:
        >>> from unison import keras
        >>> @keras.saving.register_keras_serializable(package="Doc", name="halve")
        ... def halve(x):
        ...     return x / 2
        >>> keras.saving.get_registered_name(halve)
        'Doc>halve'
    """
    if not isinstance(package, str) or ">" in package:
        raise ValueError(
            f"register_keras_serializable: package must be a string without '>' (it separates package and "
            f"name in the registered name). Received: package={package!r}."
        )

    def decorator(arg: T) -> T:
        own = name if name is not None else getattr(arg, "__name__", None)
        if not isinstance(own, str) or not own:
            raise ValueError(
                f"register_keras_serializable cannot name {arg!r:.80}: pass name='...' or decorate a class or "
                "a function."
            )
        registered = f"{package}>{own}"
        if inspect.isclass(arg) and not hasattr(arg, "get_config"):
            raise ValueError(
                f"Cannot register {arg.__name__}: a class must define get_config() (returning its constructor "
                "arguments) to be saved and rebuilt."
            )
        previous = _GLOBAL_CUSTOM_OBJECTS.get(registered)
        if previous is not None and previous is not arg and _qualname(previous) != _qualname(arg):
            raise ValueError(
                f"{registered!r} is already registered to {_qualname(previous)}; cannot register "
                f"{_qualname(arg)} under the same name. Pass another package= or name=."
            )
        _GLOBAL_CUSTOM_OBJECTS[registered] = arg
        _GLOBAL_CUSTOM_NAMES[arg] = registered
        return arg

    return decorator


def _qualname(obj: Any) -> str:
    # A module run twice (a notebook cell, a script imported again) re-registers "the same" class.
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


def get_registered_name(obj: Any) -> str:
    """The name ``obj`` was registered under, else its ``__name__``.

    Example:
        >>> from unison import keras
        >>> keras.saving.get_registered_name(keras.layers.Dense)
        'Dense'
    """
    try:
        registered = _GLOBAL_CUSTOM_NAMES.get(obj)
    except TypeError:  # an unhashable object
        registered = None
    return registered if registered is not None else str(getattr(obj, "__name__", type(obj).__name__))


def is_registered(obj: Any) -> bool:
    """Whether ``obj`` was registered with :func:`register_keras_serializable`."""
    try:
        return obj in _GLOBAL_CUSTOM_NAMES
    except TypeError:
        return False


def get_registered_object(
    name: str, custom_objects: dict[str, Any] | None = None, module_objects: dict[str, Any] | None = None
) -> Any:
    """The class or function called ``name``: scopes, then the registry, ``custom_objects``, ``module_objects``.

    Returns ``None`` when none holds it.

    Example:
        >>> get_registered_object("NoSuchThing") is None
        True
    """
    for scope in reversed(_scope_stack()):
        if name in scope:
            return scope[name]
    if name in _GLOBAL_CUSTOM_OBJECTS:
        return _GLOBAL_CUSTOM_OBJECTS[name]
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if module_objects and name in module_objects:
        return module_objects[name]
    return None


__all__ = [
    "CustomObjectScope",
    "custom_object_scope",
    "get_custom_objects",
    "get_registered_name",
    "get_registered_object",
    "is_registered",
    "register_keras_serializable",
]
