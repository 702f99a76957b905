"""``tf.experimental.ExtensionType``: user-defined composite values with typed, immutable fields.

A subclass declares fields with annotations (``values: tf.Tensor``, ``shape: tf.TensorShape``,
``name: str = "x"``); the generated constructor takes them positionally or by name, converts
values for ``tf.Tensor`` fields with ``tf.convert_to_tensor`` and for ``tf.TensorShape`` fields
with ``tf.TensorShape``, checks Python-typed fields (a TypeError naming the field), then calls
``__validate__``. Fields cannot be set afterwards (outside a custom ``__init__``), instances are
unhashable, ``==`` / ``!=`` give a boolean tensor (every field equal), and ``repr`` lists the
fields, as in TF. ``tf.experimental.dispatch_for_*`` overrides (:mod:`unison._faces.dispatch`)
apply to them. Each subclass gets its ``Spec`` (a ``tf.experimental.ExtensionTypeSpec``, what
``tf.type_spec_from_value`` and ``value._type_spec`` give): a ``TensorSpec`` per tensor field, the
nested type's ``Spec`` per extension-type field, the value itself for a Python field. Batching them
(``BatchableExtensionType``) is not implemented: values are used eagerly.

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

from unison._faces.type_specs import TypeSpec
from unison.ops.control_flow import TensorShape
from unison.ops.dtypes import to_tensor

__all__ = ["ExtensionType", "ExtensionTypeSpec", "as_dict"]

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
    Spec: ClassVar[type[ExtensionTypeSpec]]  # made for each subclass (see _spec_class)

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
        cls.Spec = _spec_class(cls)
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

    @property
    def _type_spec(self) -> ExtensionTypeSpec:
        """This value's ``Spec`` (TF's ``value._type_spec``)."""
        return type(self).Spec.from_value(self)


class ExtensionTypeSpec(TypeSpec):
    """``tf.experimental.ExtensionTypeSpec``: the base of every extension type's ``Spec``.

    ``MyType.Spec(field=spec, ...)`` takes the fields of ``MyType`` by name or position: a
    ``tf.TensorSpec`` for a tensor field, the nested type's ``Spec`` for an extension-type field,
    the value for a Python field.

    Example:
        >>> import unison as tf
        >>> class Masked(tf.experimental.ExtensionType):
        ...     __annotations__ = {"values": tf.Tensor, "mask": tf.Tensor}
        >>> spec = tf.type_spec_from_value(Masked([1.0, 2.0], [True, False]))
        >>> spec
        Masked.Spec(values=TensorSpec(shape=(2,), dtype=tf.float32, name=None), mask=TensorSpec(shape=(2,), dtype=tf.bool, name=None))
        >>> spec.is_compatible_with(Masked([3.0, 4.0], [False, False])), spec.value_type is Masked
        (True, True)
    """

    _value_type: ClassVar[type[ExtensionType]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not hasattr(type(self), "_value_type"):
            raise TypeError(
                "ExtensionTypeSpec is the base of each extension type's Spec: make `MyType.Spec(...)` instead."
            )
        fields = self._value_type._fields
        params = [
            inspect.Parameter(
                name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=self._value_type._defaults.get(name, _MISSING)
            )
            for name in fields
        ]
        bound = inspect.Signature(params).bind(*args, **kwargs)
        bound.apply_defaults()
        for name, value in bound.arguments.items():
            expected = _field_spec_type(fields[name])
            if expected is not None and not isinstance(value, expected):
                raise TypeError(f"{name}: expected a {expected.__name__}, got '{type(value).__name__}'")
            object.__setattr__(self, name, value)

    @property
    def value_type(self) -> type[ExtensionType]:
        """The extension type this spec describes."""
        return self._value_type

    @classmethod
    def from_value(cls, value: Any) -> ExtensionTypeSpec:
        """The spec of ``value``, an instance of this spec's extension type."""
        if not isinstance(value, ExtensionType):
            raise TypeError(f"{cls.__qualname__}.from_value takes an extension type value. Received: {value!r:.80}")
        spec_type = type(value).Spec
        return spec_type(**{name: _spec_of(getattr(value, name)) for name in value._fields})

    def _field_values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._value_type._fields)

    def is_compatible_with(self, other: Any) -> bool:
        """Whether ``other`` (a value or a spec) has this type and compatible fields."""
        if isinstance(other, ExtensionType):
            other = other._type_spec
        if type(other) is not type(self):
            return False
        for mine, theirs in zip(self._field_values(), other._field_values()):
            if isinstance(mine, TypeSpec) or hasattr(mine, "is_compatible_with"):
                if not mine.is_compatible_with(theirs):
                    return False
            elif mine != theirs:
                return False
        return True

    def _to_components(self, value: ExtensionType) -> list[Any]:
        """The tensors of ``value``, field by field (nested extension types flattened)."""
        parts: list[Any] = []
        for name in self._value_type._fields:
            field = getattr(value, name)
            if isinstance(field, ExtensionType):
                parts += field._type_spec._to_components(field)
            elif isinstance(field, torch.Tensor):
                parts.append(field)
        return parts

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._field_values() == other._field_values()

    def __hash__(self) -> int:
        return hash(repr(self))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._value_type._fields)
        return f"{self._value_type.__qualname__}.Spec({fields})"


def _field_spec_type(annotation: Any) -> type | None:
    """The spec class a field of this annotation takes in a Spec (``None``: any value)."""
    if annotation is torch.Tensor:
        from unison.data.specs import TensorSpec

        return TensorSpec
    if isinstance(annotation, type) and issubclass(annotation, ExtensionType):
        return annotation.Spec
    return None


def _spec_of(value: Any) -> Any:
    if isinstance(value, ExtensionType):
        return value._type_spec
    if isinstance(value, torch.Tensor):
        from unison.data.specs import TensorSpec

        return TensorSpec.from_tensor(value)
    return value


def _spec_class(value_type: type[ExtensionType]) -> type[ExtensionTypeSpec]:
    """``value_type.Spec``: a subclass of ``ExtensionTypeSpec`` (and of a ``Spec`` the class body declared)."""
    declared = value_type.__dict__.get("Spec")
    bases: tuple[type, ...] = (ExtensionTypeSpec,)
    if isinstance(declared, type) and not issubclass(declared, ExtensionTypeSpec):
        bases = (declared, ExtensionTypeSpec)  # TF lets the body add methods to its Spec

    class Spec(*bases):  # type: ignore[misc]
        _value_type = value_type

    Spec.__qualname__ = f"{value_type.__qualname__}.Spec"
    Spec.__module__ = value_type.__module__
    return Spec


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
