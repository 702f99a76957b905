"""``tf.experimental.dispatch_for_*``: overrides of TF functions for ``tf.experimental.ExtensionType`` values.

``dispatch_for_api(api, *signatures)`` registers a function to run instead of ``api`` when the
call's arguments match a signature (``{"x": MaskedTensor}``: the argument named ``x`` is an
instance; ``typing.Union`` and ``typing.List`` work as in TF); without signatures, the target's own
annotations are the signature. ``dispatch_for_unary_elementwise_apis(x_type)`` and
``dispatch_for_binary_elementwise_apis(x_type, y_type)`` register one handler,
``handler(api_func, x)`` / ``handler(api_func, x, y)``, for every elementwise function of tf.math;
``unregister_dispatch_for(target)`` removes a registration. The check runs before the function
computes, as TF's type-based dispatch. unison consults it when an argument (or an element of a
list argument) is an ``ExtensionType`` instance, via the hook of :mod:`unison.ops._dispatch`, for
the functions of tf.math (TF's elementwise ones and the rest), tf.linalg, tf.signal and tf.image.

Example:
    >>> import unison as tf
    >>> class Box(tf.experimental.ExtensionType):
    ...     __annotations__ = {"v": tf.Tensor}
    >>> @tf.experimental.dispatch_for_unary_elementwise_apis(Box)
    ... def box_unary(api_func, x):
    ...     return Box(api_func(x.v))
    >>> tf.math.abs(Box([-1.0, 2.0])).v.tolist()
    [1.0, 2.0]
    >>> tf.experimental.unregister_dispatch_for(box_unary)
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

__all__ = [
    "dispatch",
    "dispatch_for_api",
    "dispatch_for_binary_elementwise_apis",
    "dispatch_for_unary_elementwise_apis",
    "unregister_dispatch_for",
]

# TF's elementwise APIs among tf.math's functions (tf.math.<name>); the handler gets tf.math.<name>
UNARY = (
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "digamma", "erf", "erfc",
    "erfinv", "exp", "expm1", "floor", "imag", "is_finite", "is_inf", "is_nan", "lgamma", "log", "log1p",
    "log_sigmoid", "logical_not", "ndtri", "negative", "real", "reciprocal", "reciprocal_no_nan", "rint", "round",
    "rsqrt", "sigmoid", "sign", "sin", "sinh", "softplus", "sqrt", "square", "tan", "tanh", "conj", "angle",
)  # fmt: skip
BINARY = (
    "add", "atan2", "divide", "divide_no_nan", "equal", "floordiv", "floormod", "greater", "greater_equal", "less",
    "less_equal", "logical_and", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "multiply_no_nan",
    "not_equal", "pow", "squared_difference", "subtract", "truediv", "xdivy", "xlog1py", "xlogy", "zeta", "igamma",
    "igammac", "nextafter", "polygamma", "truncatediv", "truncatemod",
)  # fmt: skip

# api's inner function -> [(signatures, target)]; target -> what to undo
_REGISTRY: dict[Any, list[tuple[list[dict[str, Any]], Callable[..., Any]]]] = {}
_PUBLIC: dict[Any, Any] = {}  # inner function -> the public (wrapped) function a handler is given


def _inner(api: Any) -> Any:
    return getattr(api, "__wrapped__", api)


def _matches(value: Any, annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin is typing.Union:
        return any(_matches(value, a) for a in typing.get_args(annotation))
    if origin in (list, typing.List):  # noqa: UP006  TF's signatures are written with typing.List
        (item,) = typing.get_args(annotation) or (Any,)
        return isinstance(value, (list, tuple)) and all(_matches(v, item) for v in value)
    if annotation is Any:
        return True
    return isinstance(annotation, type) and isinstance(value, annotation)


def _check_signature(api: Any, signature: dict[str, Any]) -> None:
    params = inspect.signature(_inner(api)).parameters
    for name in signature:
        if name not in params:
            raise ValueError(
                f"Dispatch signature for {getattr(api, '__name__', api)} names the parameter {name!r}, which it does "
                f"not have. Its parameters: {list(params)}."
            )


def dispatch_for_api(api: Callable[..., Any], *signatures: dict[str, Any]) -> Callable[[Any], Any]:
    """``tf.experimental.dispatch_for_api``: a decorator registering an override of ``api``.

    Example:
        >>> import unison as tf
        >>> class Box(tf.experimental.ExtensionType):
        ...     __annotations__ = {"v": tf.Tensor}
        >>> @dispatch_for_api(tf.math.reduce_sum, {"input_tensor": Box})
        ... def box_sum(input_tensor, axis=None, keepdims=False, name=None):
        ...     return tf.math.reduce_sum(input_tensor.v, axis)
        >>> float(tf.math.reduce_sum(Box([1.0, 2.0])))
        3.0
        >>> unregister_dispatch_for(box_sum)
    """
    if not callable(api):
        raise TypeError(f"dispatch_for_api: api must be a TF function. Received: {api!r}")
    for signature in signatures:
        if not isinstance(signature, dict):
            raise TypeError(f"dispatch_for_api: each signature must be a dict {{param: type}}. Received: {signature!r}")
        _check_signature(api, signature)

    def register(target: Callable[..., Any]) -> Callable[..., Any]:
        api_sig = inspect.signature(_inner(api))
        target_sig = inspect.signature(target)
        if list(target_sig.parameters) != list(api_sig.parameters):
            raise ValueError(
                f"Dispatch function's signature {target_sig} does not match API's signature {api_sig}. "
                "Give the target the same parameters."
            )
        sigs = list(signatures)
        if not sigs:
            hints = typing.get_type_hints(target)
            sigs = [{name: hint for name, hint in hints.items() if name != "return"}]
            if not sigs[0]:
                raise ValueError("dispatch_for_api: give signatures, or annotate the dispatch target's parameters.")
        _REGISTRY.setdefault(_inner(api), []).append((sigs, target))
        _PUBLIC[_inner(api)] = api
        return target

    return register


def _elementwise(names: tuple[str, ...], types_: dict[str, Any], arity: int) -> Callable[[Any], Any]:
    from unison.ops import math as tf_math

    def register(handler: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            api = getattr(tf_math, name, None)
            if api is None:
                continue
            params = list(inspect.signature(_inner(api)).parameters)[:arity]

            def target(*args: Any, _api: Any = api, **kwargs: Any) -> Any:
                bound = inspect.signature(_inner(_api)).bind(*args, **kwargs)
                values = list(bound.arguments.values())[:arity]
                return handler(_api, *values)

            target._unison_handler = handler  # type: ignore[attr-defined]
            sig = {params[i]: t for i, t in enumerate(types_.values())}
            _REGISTRY.setdefault(_inner(api), []).append(([sig], target))
            _PUBLIC[_inner(api)] = api
        return handler

    return register


def dispatch_for_unary_elementwise_apis(x_type: Any) -> Callable[[Any], Any]:
    """``tf.experimental.dispatch_for_unary_elementwise_apis``: ``handler(api_func, x)`` for tf.math's unary ops."""
    return _elementwise(UNARY, {"x": x_type}, 1)


def dispatch_for_binary_elementwise_apis(x_type: Any, y_type: Any) -> Callable[[Any], Any]:
    """``tf.experimental.dispatch_for_binary_elementwise_apis``: ``handler(api_func, x, y)`` for binary ops."""
    return _elementwise(BINARY, {"x": x_type, "y": y_type}, 2)


def unregister_dispatch_for(dispatch_target: Callable[..., Any]) -> None:
    """``tf.experimental.unregister_dispatch_for``: remove every registration of ``dispatch_target``."""
    found = False
    for key, entries in list(_REGISTRY.items()):
        keep = [
            (sigs, target)
            for sigs, target in entries
            if target is not dispatch_target and getattr(target, "_unison_handler", None) is not dispatch_target
        ]
        found = found or len(keep) != len(entries)
        _REGISTRY[key] = keep
    if not found:
        raise ValueError(f"Function {dispatch_target} was not registered using a `@dispatch_for_*` decorator.")


def dispatch(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The registered override of ``fn`` whose signature the arguments match, or ``fn`` itself."""
    entries = _REGISTRY.get(fn)
    if entries:
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except TypeError:
            bound = None
        if bound is not None:
            for sigs, target in reversed(entries):  # the latest registration first
                for sig in sigs:
                    if all(name in bound.arguments and _matches(bound.arguments[name], t) for name, t in sig.items()):
                        return target(*args, **kwargs)
    return fn(*args, **kwargs)
