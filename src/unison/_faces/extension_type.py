"""``tf.experimental.ExtensionType``: user-defined composite values with typed, immutable fields.

A subclass declares fields with annotations (``values: tf.Tensor``, ``shape: tf.TensorShape``,
``name: str = "x"``); the generated constructor takes them positionally or by name, converts
values for ``tf.Tensor`` fields with ``tf.convert_to_tensor`` and for ``tf.TensorShape`` fields
with ``tf.TensorShape``, checks Python-typed fields (a TypeError naming the field), then calls
``__validate__``. Fields cannot be set afterwards (outside a custom ``__init__``), instances are
unhashable, ``==`` / ``!=`` give a boolean tensor (every field equal), and ``repr`` lists the
fields, as in TF. ``tf.experimental.dispatch_for_*`` overrides (:mod:`unison._faces.dispatch`)
apply to them. TF's tracing machinery (``Spec``, batching) is not implemented: values are used eagerly.

Example:
    >>> import unison as tf
    >>> class Masked(tf.experimental.ExtensionType):
    ...     __annotations__ = {"values": tf.Tensor, "mask": tf.Tensor}  # as `values: tf.Tensor` would
    >>> m = Masked([1, 2], [True, False])
    >>> m.values.dtype, bool(m == Masked([1, 2], [True, False]))
    (torch.int32, True)
"""

from __future__ import annotations

import inspect
import typing
from typing import Any, ClassVar

import torch

from unison.ops.control_flow import TensorShape
from unison.ops.dtypes import to_tensor

__all__ = ["ExtensionType", "as_dict"]

_MISSING = inspect.Parameter.empty


def _convert(field: str, annotation: Any, value: Any) -> Any:
    if annotation is torch.Tensor:
        return value if isinstance(value, torch.Tensor) else to_tensor(value)
    if annotation is TensorShape:
        return value if isinstance(value, TensorShape) else TensorShape(value)
    if annotation in (int, float, str, bool, bytes):
        ok = isinstance(value, annotation) and not (annotation is int and isinstance(value, bool))
        if annotation is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not ok:
            raise TypeError(f"{field}: expected '{annotation.__name__}', got '{type(value).__name__}'")
    if isinstance(annotation, type) and issubclass(annotation, ExtensionType) and not isinstance(value, annotation):
        raise TypeError(f"{field}: expected '{annotation.__name__}', got '{type(value).__name__}'")
    return value


class ExtensionType:
    """``tf.experimental.ExtensionType``: subclass it with annotated fields (see the module notes)."""

    _fields: ClassVar[dict[str, Any]] = {}
    _defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        hints = typing.get_type_hints(cls)
        fields = {
            name: hint
            for name, hint in hints.items()
            if not name.startswith("_")
            and typing.get_origin(hint) is not ClassVar
            and name in cls.__dict__.get("__annotations__", {})
            or name in getattr(cls, "_fields", {})
        }
        cls._fields = fields
        cls._defaults = {name: cls.__dict__[name] for name in fields if name in cls.__dict__}
        for name in cls._defaults:
            delattr(cls, name)  # the default lives in _defaults; the attribute is the instance's
        if "__init__" not in cls.__dict__:
            cls.__init__ = ExtensionType._generated_init  # type: ignore[method-assign,assignment]
        else:
            custom = cls.__dict__["__init__"]

            def init(self: ExtensionType, *args: Any, **kw: Any) -> None:
                object.__setattr__(self, "_constructing", True)
                try:
                    custom(self, *args, **kw)
                finally:
                    object.__setattr__(self, "_constructing", False)
                self._validate()

            cls.__init__ = init  # type: ignore[method-assign,assignment]

    def _generated_init(self, *args: Any, **kwargs: Any) -> None:
        params = [
            inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=self._defaults.get(name, _MISSING))
            for name in self._fields
        ]
        bound = inspect.Signature(params).bind(*args, **kwargs)
        bound.apply_defaults()
        for name, value in bound.arguments.items():
            object.__setattr__(self, name, _convert(name, self._fields[name], value))
        self._validate()

    def _validate(self) -> None:
        missing = [name for name in self._fields if name not in self.__dict__]
        if missing:
            raise ValueError(f"{type(self).__name__}'s constructor did not set the fields {missing}.")
        validate = getattr(self, "__validate__", None)
        if validate is not None:
            validate()

    def __setattr__(self, name: str, value: Any) -> None:
        if not self.__dict__.get("_constructing", False):
            raise AttributeError(f"Cannot mutate attribute `{name}` outside the custom constructor of ExtensionType.")
        if name in self._fields:
            value = _convert(name, self._fields[name], value)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Cannot mutate attribute `{name}` outside the custom constructor of ExtensionType.")

    def __eq__(self, other: object) -> Any:  # a boolean tensor, as TF's
        if type(other) is not type(self):
            return torch.tensor(False)
        conditions = []
        for name in self._fields:
            a, b = getattr(self, name), getattr(other, name)
            if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
                a, b = to_tensor(a), to_tensor(b)
                conditions.append(torch.tensor(a.shape == b.shape and bool(torch.equal(a, b.to(a.dtype)))))
            else:
                conditions.append(torch.tensor(bool(a == b)))
        return torch.stack(conditions).all() if conditions else torch.tensor(True)

    def __ne__(self, other: object) -> Any:
        return torch.logical_not(self.__eq__(other))

    __hash__ = None  # type: ignore[assignment]  # TF's extension types are unhashable

    @staticmethod
    def __unison_tf_op__(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A tf function called with an extension type: its ``dispatch_for_*`` override, if one matches."""
        from unison._faces.dispatch import dispatch

        return dispatch(fn, args, kwargs)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({fields})"


def as_dict(value: ExtensionType) -> dict[str, Any]:
    """``tf.experimental.extension_type.as_dict``: the fields of an extension type value, by name.

    Example:
        >>> class P(ExtensionType):
        ...     __annotations__ = {"x": int}
        >>> as_dict(P(3))
        {'x': 3}
    """
    if not isinstance(value, ExtensionType):
        raise TypeError(f"as_dict takes an ExtensionType value. Received: {type(value).__name__}")
    return {name: getattr(value, name) for name in value._fields}
