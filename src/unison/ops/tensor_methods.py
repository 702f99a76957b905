"""TF's ``Tensor.get_shape()``, ``Tensor.set_shape()`` and ``Tensor.ref()`` on torch tensors.

TF programs assert a tensor's static shape with ``t.set_shape([None, 6, 19])`` (the time-series
tutorial's ``split_window`` does so on every window) and read it with ``t.get_shape().as_list()``;
torch tensors have neither. Importing unison adds both to ``torch.Tensor``: ``get_shape()`` is the
shape as a :class:`~unison.ops.control_flow.TensorShape` (so ``as_list()`` works), and
``set_shape(shape)`` checks, as TF's eager tensors do, that the shape is compatible (``None``
matches any size; ``set_shape(None)`` anything) and raises TF's ``ValueError`` otherwise. An
eager tensor's shape is always fully known, so nothing is changed. ``t.ref()`` (and
``experimental_ref()``) is TF's hashable reference, the key TF programs use to keep tensors and
variables in sets and dicts: two references are equal when they refer to the same object, and
``ref.deref()`` gives it back.

Example:
    >>> import unison as tf
    >>> t = tf.zeros([2, 3])
    >>> t.set_shape([None, 3])
    >>> t.get_shape().as_list()
    [2, 3]
    >>> t.set_shape([3, 3])
    Traceback (most recent call last):
    ...
    ValueError: Tensor's shape (2, 3) is not compatible with supplied shape (3, 3).
"""

from __future__ import annotations

from typing import Any

import torch

from unison.ops.control_flow import TensorShape


def _get_shape(self: torch.Tensor) -> TensorShape:
    """The tensor's shape as a ``tf.TensorShape`` (TF's ``Tensor.get_shape()``)."""
    return TensorShape(tuple(self.shape))


def _set_shape(self: torch.Tensor, shape: Any) -> None:
    """Check that ``shape`` is compatible with the tensor's shape (TF's ``Tensor.set_shape``)."""
    wanted = TensorShape(shape)
    have = TensorShape(tuple(self.shape))
    if not have.is_compatible_with(wanted):
        raise ValueError(f"Tensor's shape {have} is not compatible with supplied shape {wanted}.")


class Reference:
    """TF's ``Tensor.ref()``: a hashable reference to a tensor or variable, equal by identity.

    Example:
        >>> import torch
        >>> t = torch.zeros(2)
        >>> {t.ref(): "weights"}[t.ref()], t.ref().deref() is t, t.ref() == torch.zeros(2).ref()
        ('weights', True, False)
    """

    __slots__ = ("_obj",)

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def deref(self) -> Any:
        """The tensor or variable this refers to."""
        return self._obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reference) and other._obj is self._obj

    def __hash__(self) -> int:
        return id(self._obj)

    def __repr__(self) -> str:
        return f"<Reference wrapping {self._obj!r}>"


def _ref(self: torch.Tensor) -> Reference:
    """A hashable reference to this tensor (TF's ``Tensor.ref()``)."""
    return Reference(self)


def install() -> None:
    """Give tensors TF's get_shape/set_shape/ref (idempotent; torch has none of these names)."""
    for name in ("ref", "experimental_ref"):
        if not hasattr(torch.Tensor, name):
            setattr(torch.Tensor, name, _ref)
    if not hasattr(torch.Tensor, "set_shape"):
        torch.Tensor.set_shape = _set_shape  # type: ignore[attr-defined]
    if not hasattr(torch.Tensor, "get_shape"):
        torch.Tensor.get_shape = _get_shape  # type: ignore[attr-defined]
