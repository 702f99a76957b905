"""``tf.autograph``: TF's Python-to-graph converter, where no conversion is needed.

``tf.function`` in unison runs the Python function eagerly on torch tensors, so Python's own ``if``,
``for`` and ``while`` already do what AutoGraph's converted code does: converting is the identity.
``to_graph`` returns the function unchanged (calling it gives what TF's converted function gives),
``to_code`` returns the source unison runs (TF returns its generated code, which differs in text,
not in what it computes), and the directives (``set_loop_options``, ``do_not_convert``) are
accepted and have TF's eager effect: none.

Example:
    >>> import unison as tf
    >>> def relu(x):
    ...     return x if x > 0 else 0 * x
    >>> tf.autograph.to_graph(relu)(tf.constant(-2.0)).item()
    -0.0
    >>> print(tf.autograph.to_code(relu).splitlines()[0])
    def relu(x):
"""

from __future__ import annotations

import enum
import functools
import inspect
import os
import textwrap
from collections.abc import Callable
from typing import Any

__all__ = ["experimental", "set_verbosity", "to_code", "to_graph", "trace"]

_VERBOSITY_VAR = "AUTOGRAPH_VERBOSITY"  # TF's variable: the level when set_verbosity was not called
_verbosity: list[int] = []


def _check_callable(entity: Any, api: str) -> None:
    if not callable(entity):
        raise TypeError(
            f"tf.autograph.{api} expects a function, a method or a class. Received: entity={entity!r} "
            f"of type {type(entity).__name__}. Pass the Python function itself, not its result."
        )


def to_graph(entity: Callable[..., Any], recursive: bool = True, experimental_optional_features: Any = None) -> Any:
    """``tf.autograph.to_graph``: the function as TF would run it, here the function itself.

    Example:
        >>> f = lambda x: x + 1
        >>> to_graph(f) is f
        True
    """
    _check_callable(entity, "to_graph")
    return entity


def to_code(entity: Callable[..., Any], recursive: bool = True, experimental_optional_features: Any = None) -> str:
    """``tf.autograph.to_code``: the source of the function as unison runs it (dedented).

    Example:
        >>> def square(x):
        ...     return x * x
        >>> "return x * x" in to_code(square)
        True
    """
    _check_callable(entity, "to_code")
    try:
        return textwrap.dedent(inspect.getsource(to_graph(entity)))
    except (OSError, TypeError) as error:
        raise ValueError(
            f"tf.autograph.to_code could not read the source of {entity!r}: {error}. Define the "
            "function in a file (or a notebook cell), not with exec() or in a compiled module."
        ) from error


def set_verbosity(level: int, alsologtostdout: bool = False) -> None:
    """``tf.autograph.set_verbosity``: the level of AutoGraph's logging (unison converts nothing).

    Example:
        >>> set_verbosity(0)
    """
    if not isinstance(level, int) or isinstance(level, bool) or level < 0:
        raise ValueError(f"tf.autograph.set_verbosity expects an int >= 0. Received: level={level!r}.")
    _verbosity[:] = [level]


def get_verbosity() -> int:
    """The level set by :func:`set_verbosity`, else ``$AUTOGRAPH_VERBOSITY``, else 0 (TF's order)."""
    return _verbosity[0] if _verbosity else int(os.getenv(_VERBOSITY_VAR, "0"))


def trace(*args: Any) -> None:
    """``tf.autograph.trace``: prints its arguments, as TF does when the function runs eagerly.

    Example:
        >>> trace("x is", 3)
        x is 3
    """
    print(*args)


class Feature(enum.Enum):
    """``tf.autograph.experimental.Feature``: AutoGraph's optional conversions (TF's names and values)."""

    ALL = "ALL"
    AUTO_CONTROL_DEPS = "AUTO_CONTROL_DEPS"
    ASSERT_STATEMENTS = "ASSERT_STATEMENTS"
    BUILTIN_FUNCTIONS = "BUILTIN_FUNCTIONS"
    EQUALITY_OPERATORS = "EQUALITY_OPERATORS"
    LISTS = "LISTS"
    NAME_SCOPES = "NAME_SCOPES"


def do_not_convert(func: Callable[..., Any] | None = None) -> Any:
    """``tf.autograph.experimental.do_not_convert``: run ``func`` as plain Python (unison always does).

    Usable bare (``@do_not_convert``) or called (``@do_not_convert()``), as in TF.

    Example:
        >>> @do_not_convert
        ... def double(x):
        ...     return 2 * x
        >>> double(4)
        8
    """
    if func is None:
        return do_not_convert

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return wrapper


def set_loop_options(
    parallel_iterations: Any = None,
    swap_memory: Any = None,
    maximum_iterations: Any = None,
    shape_invariants: Any = None,
) -> None:
    """``tf.autograph.experimental.set_loop_options``: options of a converted loop; eager loops ignore them.

    TF ignores the call outside a converted loop too (a loop in eager code is a Python loop).

    Example:
        >>> set_loop_options(maximum_iterations=10)
    """


class _Experimental:
    """``tf.autograph.experimental``'s names."""

    Feature = Feature
    do_not_convert = staticmethod(do_not_convert)
    set_loop_options = staticmethod(set_loop_options)


experimental = _Experimental()
