"""Keras 3's ``keras.backend`` functions beyond the settings: the backend's name, sessions, dtypes,
shapes and variable values.

``backend()`` returns ``"torch"``: unison's tensors *are* torch tensors, so code a program runs for
the torch backend (``x.detach().cpu().numpy()``, ``torch.no_grad()``) is the code that works here,
while its ``"tensorflow"`` branches may call TF APIs unison does not have.

Example:
    >>> from unison.keras import backend
    >>> backend.backend(), backend.standardize_dtype("float"), backend.int_shape(backend.zeros((2, 3)))
    ('torch', 'float32', (2, 3))
"""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import torch

from unison.keras.backend.keras_tensor import KerasTensor
from unison.keras.ops._convert import standardize_dtype, tensor, torch_dtype

_UIDS: dict[str, int] = {}  # Keras's per-prefix counters for get_uid
_COUNTERS: dict[str, int] = {}  # the layers' default names (dense, dense_1, ...), reset by clear_session


def backend() -> str:
    """The backend's name: ``"torch"`` (see the module notes)."""
    return "torch"


def clear_session(free_memory: bool = True) -> None:
    """Forget the default layer names (the next ``Dense`` is ``"dense"`` again) and free cached memory.

    Models already built keep working; only new names and caches are reset, as in Keras.
    """
    _COUNTERS.clear()
    _UIDS.clear()
    if free_memory:
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def get_uid(prefix: str = "") -> int:
    """Keras's ``get_uid``: 1, 2, 3... per ``prefix`` (reset by :func:`clear_session`)."""
    _UIDS[prefix] = _UIDS.get(prefix, 0) + 1
    return _UIDS[prefix]


def is_keras_tensor(x: Any) -> bool:
    """Whether ``x`` is a symbolic tensor of the functional API (``keras.Input`` or a layer's output on one)."""
    return isinstance(x, KerasTensor)


def get_source_inputs(tensor: Any) -> list[Any]:
    """The ``keras.Input`` tensors ``tensor`` is computed from (Keras's ``utils.get_source_inputs``).

    Example:
        >>> from unison import keras
        >>> x = keras.Input((2,), name="x")
        >>> [t.name for t in get_source_inputs(keras.layers.Dense(1)(x))]
        ['x']
    """
    if not isinstance(tensor, KerasTensor):
        raise ValueError(
            f"get_source_inputs expects a symbolic tensor (keras.Input or a layer's output on one). "
            f"Received: {type(tensor).__name__}"
        )
    found: list[Any] = []
    seen: set[int] = set()
    stack = [tensor]
    while stack:  # depth first, the first parents first (Keras's order)
        kt = stack.pop()
        if id(kt) in seen:
            continue
        seen.add(id(kt))
        if kt._node is None:
            found.append(kt)
        else:
            stack.extend(reversed(kt._node.parents))
    return found


def is_float_dtype(dtype: Any) -> bool:
    """Whether ``dtype`` is a floating-point dtype."""
    return torch_dtype(dtype).is_floating_point


def is_int_dtype(dtype: Any) -> bool:
    """Whether ``dtype`` is an integer dtype (signed or unsigned)."""
    dt = torch_dtype(dtype)
    return not dt.is_floating_point and not dt.is_complex and dt != torch.bool


def result_type(*dtypes: Any) -> str:
    """The dtype two or more dtypes promote to (torch's promotion, which matches Keras's for tensors)."""
    if not dtypes:
        return standardize_dtype(None)
    out = torch_dtype(dtypes[0])
    for d in dtypes[1:]:
        out = torch.promote_types(out, torch_dtype(d))
    return standardize_dtype(out)


def int_shape(x: Any) -> tuple[int | None, ...]:
    """``K.int_shape(x)``: the shape as a tuple (``None`` for the batch axis of a symbolic input)."""
    shape = getattr(x, "shape", None)
    if shape is None:
        shape = tensor(x).shape
    return tuple(None if d is None else int(d) for d in shape)


def get_value(x: Any) -> Any:
    """``K.get_value(x)``: a variable's (or tensor's) value as numpy (a learning rate: a Python float).

    An optimizer's ``learning_rate`` attribute may be a float already; it is returned unchanged.
    """
    if isinstance(x, (int, float)):
        return x
    if isinstance(x, torch.Tensor):
        t = x.detach().cpu()
        # a copy, as Keras's: later updates of the variable must not change a value already read
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy().copy()
    if hasattr(x, "numpy"):
        return x.numpy()
    return np.asarray(x)


def set_value(x: Any, value: Any) -> None:
    """``K.set_value(x, value)``: write ``value`` into variable ``x`` in place (its shape and dtype stay).

    ``x`` may also be an optimizer's ``learning_rate`` (``K.set_value(model.optimizer.learning_rate, 1e-4)``).
    """
    if not isinstance(x, torch.Tensor):
        assign = getattr(x, "assign", None)
        if callable(assign):
            # An optimizer's learning rate (a float with .assign, like Keras's variable): the
            # Keras 2 idiom K.set_value(model.optimizer.learning_rate, 0.001) lands here.
            assign(float(np.asarray(get_value(value))) if np.ndim(get_value(value)) == 0 else value)
            return
        raise TypeError(
            f"K.set_value needs a variable (a tensor to write into). Received {type(x).__name__}. "
            "For an optimizer's learning rate set optimizer.learning_rate = value."
        )
    new = tensor(value).to(device=x.device, dtype=x.dtype)
    if tuple(new.shape) != tuple(x.shape):
        raise ValueError(
            f"K.set_value: value of shape {tuple(new.shape)} does not match the variable's shape {tuple(x.shape)}."
        )
    with torch.no_grad():
        x.copy_(new)


def batch_get_value(tensors: list[Any]) -> list[Any]:
    """``K.batch_get_value``: :func:`get_value` of each."""
    return [get_value(t) for t in tensors]


def batch_set_value(tuples: list[tuple[Any, Any]]) -> None:
    """``K.batch_set_value([(variable, value), ...])``."""
    for variable, value in tuples:
        set_value(variable, value)


def count_params(x: Any) -> int:
    """``K.count_params(x)``: the number of values in ``x``."""
    return int(tensor(x).numel()) if not isinstance(x, torch.Tensor) else int(x.numel())


def variable(value: Any, dtype: Any = None, name: str | None = None, constraint: Any = None) -> Any:
    """``K.variable(value, dtype=None, name=None)``: a ``unison.Variable`` (a trainable torch parameter)."""
    from unison.core.variables import Variable

    return Variable(
        tensor(value, dtype if dtype is not None else (None if isinstance(value, torch.Tensor) else "float32")),
        name=name,
    )


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str | None = None) -> torch.Tensor:
    """``K.constant(value, dtype=None, shape=None)``: a floatx tensor unless ``dtype`` is given."""
    t = tensor(value, dtype if dtype is not None else standardize_dtype(None))
    return torch.broadcast_to(t, tuple(shape)).clone() if shape is not None else t


_PHASES: list[int] = []  # K.learning_phase_scope's values, innermost last


def learning_phase() -> int:
    """``K.learning_phase()``: 0, as in TF 2's eager Keras (inside ``K.learning_phase_scope(v)``: ``v``;
    after ``K.set_learning_phase(v)``: ``v``); layers take ``training=`` instead."""
    if _PHASES:
        return _PHASES[-1]
    return _SET_PHASE[0] if _SET_PHASE else 0


_SET_PHASE: list[int] = []  # K.set_learning_phase's value (empty: never set), below every scope


def global_learning_phase() -> int | None:
    """The learning phase a Keras 2 program chose (``K.learning_phase_scope``, ``K.set_learning_phase``),
    else None. As in tf_keras, a layer called without ``training=`` outside any other call runs in it.

    Example:
        >>> global_learning_phase() is None
        True
    """
    if _PHASES:
        return _PHASES[-1]
    return _SET_PHASE[0] if _SET_PHASE else None


def set_learning_phase(value: int) -> None:
    """``K.set_learning_phase`` (deprecated in Keras 2): ``learning_phase()`` returns ``value`` afterwards.

    As in tf_keras, layers called without ``training=`` (and outside a call given one) then run in
    that phase: ``1`` turns on Dropout and BatchNorm's batch statistics.

    Example:
        >>> set_learning_phase(1); learning_phase()
        1
        >>> _SET_PHASE.clear()  # back to never set (tf_keras has no public way)
    """
    if value not in (0, 1):
        raise ValueError(f"K.set_learning_phase expects 0 or 1. Received: value={value!r}")
    _SET_PHASE[:] = [int(value)]


__all__ = [
    "backend",
    "batch_get_value",
    "batch_set_value",
    "clear_session",
    "constant",
    "get_source_inputs",
    "count_params",
    "get_uid",
    "get_value",
    "int_shape",
    "is_float_dtype",
    "is_int_dtype",
    "is_keras_tensor",
    "learning_phase",
    "result_type",
    "set_learning_phase",
    "set_value",
    "standardize_dtype",
    "variable",
]
