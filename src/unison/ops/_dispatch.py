"""Symbolic inputs: how a ``tf.*`` function called on a Keras symbolic tensor defers to it.

TF programs written for tf_keras pass symbolic tensors (``keras.Input(...)`` and layer outputs
in the functional API) to ``tf.*`` functions: ``tf.reduce_mean(embedding(inputs), axis=1)``. A
class of symbolic values opts in by defining ``__unison_tf_op__(fn, args, kwargs)`` (looked up
on the type); when any argument (or an element of a list/tuple argument) is such a value, the
``tf.*`` function returns ``type(value).__unison_tf_op__(fn, args, kwargs)`` instead of computing:
the symbolic class records ``fn`` as a node of the graph and calls it on real tensors later.
Without symbolic arguments the cost is one type lookup per argument.

Example:
    >>> import unison as tf
    >>> class Symbol:
    ...     @staticmethod
    ...     def __unison_tf_op__(fn, args, kwargs):
    ...         return f"deferred {fn.__name__}"
    >>> tf.reduce_mean(Symbol(), axis=1)
    'deferred reduce_mean'
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

HOOK = "__unison_tf_op__"


def _symbolic(value: Any) -> Any:
    if getattr(type(value), HOOK, None) is not None:
        return value
    if type(value) in (list, tuple):
        for item in value:
            if getattr(type(item), HOOK, None) is not None:
                return item
    return None


def symbolic_aware(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a ``tf.*`` function so symbolic arguments take over (see the module notes)."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        for value in args:
            found = _symbolic(value)
            if found is not None:
                return getattr(type(found), HOOK)(fn, args, kwargs)
        if kwargs:
            for value in kwargs.values():
                found = _symbolic(value)
                if found is not None:
                    return getattr(type(found), HOOK)(fn, args, kwargs)
        return fn(*args, **kwargs)

    return call


def wrap_namespace(namespace: dict[str, Any], names: list[str]) -> None:
    """Make every function in ``names`` of a module's namespace symbolic-aware, in place."""
    for name in names:
        value = namespace[name]
        if callable(value) and not isinstance(value, type) and getattr(value, "__module__", "").startswith("unison"):
            namespace[name] = symbolic_aware(value)
