"""``tf.variable_creator_scope``: creators that ``tf.Variable(...)`` calls instead of making the variable.

Inside ``with tf.variable_creator_scope(creator):`` each ``tf.Variable(...)`` calls
``creator(next_creator, **kwargs)`` with TF's keyword arguments (``initial_value``, ``name``,
``trainable``, ``dtype``, ``shape``, ...); the creator may change them and call
``next_creator(**kwargs)``, or return any object of its own. Scopes nest: the innermost creator
runs first and its ``next_creator`` is the next scope's creator, ending in the real constructor.
The stack is per thread, as TF's.

Example:
    >>> import unison as tf
    >>> def rename(next_creator, **kwargs):
    ...     kwargs["name"] = "renamed"
    ...     return next_creator(**kwargs)
    >>> with tf.variable_creator_scope(rename):
    ...     tf.Variable(1.0, name="x").name
    'renamed:0'
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["creators", "run_creators", "variable_creator_scope"]

_LOCAL = threading.local()


def creators() -> list[Callable[..., Any]]:
    """This thread's creator stack, outermost first."""
    stack: list[Callable[..., Any]] | None = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = []
    return stack


@contextlib.contextmanager
def variable_creator_scope(variable_creator: Callable[..., Any]) -> Iterator[None]:
    """``tf.variable_creator_scope``: run ``variable_creator`` for each ``tf.Variable`` made inside.

    Example:
        >>> with variable_creator_scope(lambda next_creator, **kw: "not a variable"):
        ...     pass
    """
    if not callable(variable_creator):
        raise TypeError(
            "tf.variable_creator_scope takes a callable creator(next_creator, **kwargs). "
            f"Received: {variable_creator!r}"
        )
    stack = creators()
    stack.append(variable_creator)
    try:
        yield
    finally:
        stack.remove(variable_creator)


def run_creators(make: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Call the creator chain (innermost first) ending in ``make(**kwargs)``."""
    chain = list(creators())

    def at(level: int) -> Callable[..., Any]:
        if level < 0:
            return make
        creator = chain[level]

        def call(**kw: Any) -> Any:
            return creator(at(level - 1), **kw)

        return call

    return at(len(chain) - 1)(**kwargs)
