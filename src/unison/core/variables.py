"""``tf.Variable``: a ``torch.nn.Parameter`` with TF's methods.

A Variable *is* a parameter, so it works as a model weight (assign it to a module attribute
and it appears in ``module.parameters()``), in any torch optimizer, and in
:class:`unison.GradientTape` (trainable variables are watched automatically, as in TF).
Arithmetic on a Variable returns a plain ``torch.Tensor``, as TF returns a ``tf.Tensor``; torch
records it for autograd, and its ``.numpy()`` reads the value as TF's does
(:mod:`unison.ops.eager_numpy`). ``Variable.numpy()`` is a copy taken now (a later ``assign``
does not change it), a numpy scalar for a 0-d variable, as in TF.

Example:
    >>> import unison as tf
    >>> v = tf.Variable(1.0, name="v")
    >>> _ = v.assign_add(2.0)
    >>> v.numpy(), v.name, v.trainable
    (np.float32(3.0), 'v:0', True)
    >>> (v * 2).numpy()
    np.float32(6.0)
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import torch

from unison.ops.dtypes import to_tensor
from unison.ops.tensor_repr import numpy_text


def _operand(other: Any, dtype: torch.dtype) -> Any:
    """A list, tuple or array operand as a tensor of ``dtype``; numbers and tensors as they are."""
    if isinstance(other, (list, tuple, np.ndarray)):
        return to_tensor(other, dtype)
    return other


def _rebuild_variable(data: torch.Tensor, trainable: bool, name: str) -> Variable:
    variable = Variable(data, trainable=trainable, name=name.rsplit(":", 1)[0])
    variable._tf_name = name  # as it was: "v:0" for a tf.Variable, "kernel" for a Keras layer's weight
    return variable


class Variable(torch.nn.Parameter):
    """A mutable tensor that holds state (TF's ``tf.Variable``).

    Args:
        initial_value: a tensor, array or number (or a callable returning one, as TF allows).
        trainable: whether gradients flow to it (``requires_grad``) and tapes watch it.
        name: TF-style name; ``.name`` reads ``"<name>:0"``.
        dtype: cast the initial value to this dtype (a ``tf.float32``-style dtype).
        shape: checked against the initial value's shape when given.
    """

    _tf_name: str
    _tf_trainable: bool

    def __new__(
        cls,
        initial_value: Any = None,
        trainable: bool | None = None,
        name: str | None = None,
        dtype: Any = None,
        shape: Any = None,
        **kwargs: Any,
    ) -> Variable:
        from unison.core.variable_creators import creators, run_creators

        if creators() and not kwargs.pop("_skip_creators", False):  # tf.variable_creator_scope's hook
            from unison.ops.control_more import VariableAggregation, VariableSynchronization

            tf_kwargs = {
                "initial_value": initial_value, "trainable": trainable, "validate_shape": True,
                "caching_device": None, "name": name, "variable_def": None, "dtype": dtype, "import_scope": None,
                "constraint": None, "synchronization": VariableSynchronization.AUTO,
                "aggregation": VariableAggregation.NONE, "shape": shape, "experimental_enable_variable_lifting": None,
            }  # fmt: skip
            tf_kwargs.update(kwargs)
            return cast(Variable, run_creators(lambda **kw: cls(_skip_creators=True, **kw), tf_kwargs))
        kwargs.pop("_skip_creators", None)
        trainable = True if trainable is None else trainable
        if initial_value is None:
            raise ValueError(
                "tf.Variable needs an initial_value. Received: initial_value=None. Example: tf.Variable(tf.zeros([3]))"
            )
        if callable(initial_value):
            initial_value = initial_value()
        data = to_tensor(initial_value, dtype).detach().clone()
        if shape is not None and tuple(shape) != tuple(data.shape) and None not in tuple(shape):
            raise ValueError(
                f"tf.Variable's initial_value has shape {tuple(data.shape)}, which does "
                f"not match shape={tuple(shape)}. Pass a value of that shape or drop shape=."
            )
        requires_grad = bool(trainable) and (data.is_floating_point() or data.is_complex())
        self = super().__new__(cls, data, requires_grad)
        self._tf_name = f"{name or 'Variable'}:0"
        self._tf_trainable = bool(trainable)
        return self

    # --- TF's attributes -----------------------------------------------------------------------
    @property
    def name(self) -> str:
        """TF's variable name, ``"<name>:0"``."""
        return self._tf_name

    @property
    def trainable(self) -> bool:
        """Whether an optimizer and a tape treat it as a weight."""
        return self._tf_trainable

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The value now, as a numpy array of its own (TF reads a variable into a new tensor: a later
        ``assign`` or optimizer step does not change an array read before it)."""
        value = np.array(self.detach().cpu().numpy(), copy=True)
        return value[()] if value.ndim == 0 else value  # a scalar is a numpy scalar, as in TF

    # `[[1., 2., 3.]] @ w`, `w * [3., 4.]`: TF converts a list (or array) operand to a tensor of
    # the variable's dtype; torch's operators would treat a list as an index or refuse it. Anything
    # else goes to torch's own operator unchanged (its NotImplemented lets e.g. a symbolic Keras
    # tensor's reflected operator run).
    def __matmul__(self, other: Any) -> torch.Tensor:
        return torch.Tensor.__matmul__(self, _operand(other, self.dtype))

    def __rmatmul__(self, other: Any) -> torch.Tensor:
        return torch.Tensor.__rmatmul__(self, _operand(other, self.dtype))

    def __add__(self, other: Any) -> torch.Tensor:
        return torch.Tensor.__add__(self, _operand(other, self.dtype))

    def __radd__(self, other: Any) -> torch.Tensor:
        return torch.Tensor.__radd__(self, _operand(other, self.dtype))

    def __sub__(self, other: Any) -> torch.Tensor:
        return torch.Tensor.__sub__(self, _operand(other, self.dtype))

    def __rsub__(self, other: Any) -> torch.Tensor:
        return torch.Tensor.__rsub__(self, _operand(other, self.dtype))

    def __mul__(self, other: Any) -> torch.Tensor:
        return torch.Tensor.__mul__(self, _operand(other, self.dtype))

    def __rmul__(self, other: Any) -> torch.Tensor:
        return torch.Tensor.__rmul__(self, _operand(other, self.dtype))

    def __truediv__(self, other: Any) -> torch.Tensor:
        return torch.Tensor.__truediv__(self, _operand(other, self.dtype))

    def __rtruediv__(self, other: Any) -> torch.Tensor:
        return torch.Tensor.__rtruediv__(self, _operand(other, self.dtype))

    # float(v)/int(v) read the value, as in TF (torch warns when a tensor that requires grad is converted)
    def __float__(self) -> float:
        return float(self.detach())

    def __int__(self) -> int:
        return int(self.detach())

    def read_value(self) -> torch.Tensor:
        """The current value as a new tensor (gradients flow back to the variable)."""
        return self.clone()

    def value(self) -> torch.Tensor:
        """Same as :meth:`read_value`."""
        return self.clone()

    # --- assignment (in place, never recorded by autograd, as TF's assign is not differentiable)
    def assign(
        self, value: Any, use_locking: bool = False, name: str | None = None, read_value: bool = True
    ) -> Variable:
        """Overwrite the value; the shape must match (TF raises too)."""
        new = to_tensor(value, self.dtype)
        if new.shape != self.shape and new.numel() != 1:
            raise ValueError(
                f"Cannot assign a value of shape {tuple(new.shape)} to variable "
                f"{self.name!r} of shape {tuple(self.shape)}."
            )
        with torch.no_grad():
            self.copy_(new)
        return self

    def assign_add(
        self, delta: Any, use_locking: bool = False, name: str | None = None, read_value: bool = True
    ) -> Variable:
        """Add ``delta`` in place."""
        with torch.no_grad():
            self.add_(to_tensor(delta, self.dtype).to(self.device))
        return self

    def assign_sub(
        self, delta: Any, use_locking: bool = False, name: str | None = None, read_value: bool = True
    ) -> Variable:
        """Subtract ``delta`` in place."""
        with torch.no_grad():
            self.sub_(to_tensor(delta, self.dtype).to(self.device))
        return self

    # --- `v += x` rebinds the name to a new tensor, as in TF (torch would write into the leaf) ---
    # (cast: `other` may be anything tensor-like, so mypy types `self + other` Any.)
    def __iadd__(self, other: Any) -> torch.Tensor:
        return cast(torch.Tensor, self + other)

    def __isub__(self, other: Any) -> torch.Tensor:
        return cast(torch.Tensor, self - other)

    def __imul__(self, other: Any) -> torch.Tensor:
        return cast(torch.Tensor, self * other)

    def __itruediv__(self, other: Any) -> torch.Tensor:
        return cast(torch.Tensor, self / other)

    # --- copies keep the TF attributes ----------------------------------------------------------
    def __deepcopy__(self, memo: dict[int, Any]) -> Variable:
        if id(self) in memo:
            return cast(Variable, memo[id(self)])
        result = _rebuild_variable(self.data.clone(), self._tf_trainable, self._tf_name)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto: Any) -> Any:
        return (_rebuild_variable, (self.data, self._tf_trainable, self._tf_name))

    def __repr__(self, **kwargs: Any) -> str:  # type: ignore[override]
        # TF's form: `dtype=float32, numpy=1.0`, a multi-line array on its own line
        array = self.numpy()
        numpy = repr(array.item()) if array.ndim == 0 else repr(array)
        dtype = str(self.dtype).removeprefix("torch.")
        return f"<tf.Variable '{self._tf_name}' shape={tuple(self.shape)} dtype={dtype}, numpy={numpy_text(numpy)}>"
