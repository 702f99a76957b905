"""TF's shapes, devices and control flow (``tf.TensorShape``, ``tf.device``, ``tf.cond``,
``tf.while_loop``, ``tf.map_fn``, ...), run eagerly: a Python ``if`` or loop on torch tensors.

Example:
    >>> import unison as tf
    >>> tf.cond(tf.constant(True), lambda: 1, lambda: 2)
    1
"""

from __future__ import annotations

import builtins
import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from unison.ops._dispatch import wrap_namespace
from unison.ops.dtypes import as_dtype, to_tensor

# --- shapes, devices and control flow (run eagerly) ----------------------------------------------


def _dimension(value: Any) -> int | None:
    value = getattr(value, "value", value)  # a TF-1 style Dimension
    if value is None:
        return None
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, (builtins.bool, float)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"tf.TensorShape: a dimension must be an int or None. Received: {value!r:.80}")
    if value < 0:
        raise ValueError(f"tf.TensorShape: a dimension must be >= 0 (None if unknown). Received: {value}")
    return int(value)


class TensorShape:
    """``tf.TensorShape``: a possibly partial shape (``None`` for an unknown dimension or rank).

    Compares equal to a list, tuple or ``torch.Size`` of the same dimensions; indexing gives an
    ``int`` (or ``None``), slicing a ``TensorShape``.

    Example:
        >>> import unison as tf
        >>> s = tf.TensorShape([None, 28, 28])
        >>> s.rank, s.as_list(), s[1:], s == [None, 28, 28]
        (3, [None, 28, 28], TensorShape([28, 28]), True)
        >>> tf.TensorShape(tf.zeros([2, 3]).shape) == (2, 3)
        True
    """

    def __init__(self, dims: Any) -> None:
        if dims is None:
            self._dims: tuple[int | None, ...] | None = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif isinstance(dims, (str, bytes)):
            raise TypeError(f"tf.TensorShape takes a list of dimensions or None. Received: {dims!r:.80}")
        else:
            try:
                items = list(dims)
            except TypeError:
                items = [dims]  # a single dimension, as TF accepts
            self._dims = tuple(_dimension(d) for d in items)

    @property
    def rank(self) -> int | None:
        """The number of dimensions, or ``None`` when unknown."""
        return None if self._dims is None else len(self._dims)

    @property
    def ndims(self) -> int | None:
        """Alias of :attr:`rank`."""
        return self.rank

    @property
    def dims(self) -> list[int | None] | None:
        """The dimensions (``None`` when the rank is unknown)."""
        return None if self._dims is None else list(self._dims)

    def as_list(self) -> list[int | None]:
        """The dimensions as a list; an error for an unknown rank."""
        if self._dims is None:
            raise ValueError("as_list() is not defined on a TensorShape of unknown rank (TensorShape(None)).")
        return list(self._dims)

    def is_fully_defined(self) -> builtins.bool:
        """Whether the rank and every dimension are known."""
        return self._dims is not None and builtins.all(d is not None for d in self._dims)

    def num_elements(self) -> int | None:
        """The number of elements, or ``None`` unless fully defined."""
        if not self.is_fully_defined():
            return None
        count = 1
        for d in self._dims or ():
            count *= d or 0
        return count

    def is_compatible_with(self, other: Any) -> builtins.bool:
        """Whether ``other`` could be the same shape (unknown dimensions match anything)."""
        o = other if isinstance(other, TensorShape) else TensorShape(other)
        if self._dims is None or o._dims is None:
            return True
        return len(self._dims) == len(o._dims) and builtins.all(
            a is None or b is None or a == b for a, b in zip(self._dims, o._dims)
        )

    def assert_is_compatible_with(self, other: Any) -> None:
        """Raises ValueError unless :meth:`is_compatible_with` (TF's message: "Shapes (3,) and (2,) are incompatible")."""
        o = other if isinstance(other, TensorShape) else TensorShape(other)
        if not self.is_compatible_with(o):
            raise ValueError(f"Shapes {self} and {o} are incompatible")

    def concatenate(self, other: Any) -> TensorShape:
        """This shape's dimensions followed by ``other``'s."""
        o = other if isinstance(other, TensorShape) else TensorShape(other)
        if self._dims is None or o._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + o._dims)

    def merge_with(self, other: Any) -> TensorShape:
        """The most specific shape compatible with both (TF's ``TensorShape.merge_with``)."""
        theirs = other if isinstance(other, TensorShape) else TensorShape(other)
        if self._dims is None:
            return theirs
        if theirs._dims is None:
            return self
        if not self.is_compatible_with(theirs):
            raise ValueError(f"Shapes {self} and {theirs} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, theirs._dims)])

    def __add__(self, other: Any) -> TensorShape:
        return self.concatenate(other)

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of a TensorShape of unknown rank.")
        return len(self._dims)

    def __bool__(self) -> builtins.bool:
        return self._dims is not None

    def __iter__(self) -> Iterator[int | None]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a TensorShape of unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key: Any) -> Any:
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __eq__(self, other: object) -> builtins.bool:
        if isinstance(other, TensorShape):
            return self._dims == other._dims
        if isinstance(other, (list, tuple)):  # torch.Size is a tuple
            try:
                return self._dims == TensorShape(other)._dims
            except (TypeError, ValueError):
                return False
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._dims)

    def __repr__(self) -> str:
        return "TensorShape(None)" if self._dims is None else f"TensorShape({list(self._dims)})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        return "(" + ", ".join(str(d) for d in self._dims) + ("," if len(self._dims) == 1 else "") + ")"


_DEVICE_EXAMPLES = "'/CPU:0', '/GPU:1', 'gpu:0', '/device:GPU:0' or '/job:worker/replica:0/task:1/device:CPU:0'"


def _device_error(device_name: str, reason: str) -> ValueError:
    return ValueError(
        f"tf.device: cannot parse the device string {device_name!r}: {reason}. Expected TF's form, "
        f"e.g. {_DEVICE_EXAMPLES}."
    )


def _check_device(device_name: str) -> None:
    kind = None
    for part in device_name.split("/"):
        if not part:
            continue
        fields = part.split(":")
        head = fields[0].lower()
        if len(fields) == 2 and head == "job" and fields[1]:
            continue
        if len(fields) == 2 and head in ("replica", "task"):
            if not fields[1].isdigit():
                raise _device_error(device_name, f"{head} must be a non-negative integer, not {fields[1]!r}")
            continue
        if head == "device" and len(fields) == 3:
            this_kind, index = fields[1], fields[2]
        elif fields[0].upper() in ("CPU", "GPU", "TPU") and len(fields) <= 2:
            this_kind, index = fields[0], (fields[1] if len(fields) == 2 else "*")
        else:
            raise _device_error(device_name, f"unknown part {part!r}")
        if kind is not None:
            raise _device_error(device_name, "it names more than one device")
        if not this_kind or not (index == "*" or index.isdigit()):
            raise _device_error(device_name, f"{part!r} is not a device type with an optional index")
        kind = this_kind


def device(device_name: str | None) -> contextlib.AbstractContextManager[None]:
    """``tf.device``: checks the device string and otherwise changes nothing.

    unison places tensors by the distribution strategy (each replica process owns its device);
    tensors are created on the CPU unless a program moves them, so a ``with tf.device(...)`` block
    runs exactly as the code around it. A malformed string is an error, as in TF.

    Example:
        >>> import unison as tf
        >>> with tf.device("/GPU:0"):
        ...     x = tf.ones([2])
        >>> x.device.type
        'cpu'
    """
    if device_name is not None:
        if callable(device_name):
            raise RuntimeError(
                "tf.device does not take a device function when executing eagerly (unison is always "
                "eager). Pass a device string such as '/GPU:0'."
            )
        if not isinstance(device_name, str):
            raise TypeError(f"tf.device takes a device string or None. Received: {device_name!r:.80}")
        _check_device(device_name)
    return contextlib.nullcontext()


def control_dependencies(control_inputs: Any) -> contextlib.AbstractContextManager[None]:
    """``tf.control_dependencies``: nothing to order (torch runs in program order).

    Callables among ``control_inputs`` are called, as TF does when executing eagerly.
    """
    for item in control_inputs or ():
        if callable(item):
            item()
    return contextlib.nullcontext()


def executing_eagerly() -> builtins.bool:
    """``tf.executing_eagerly``: always ``True`` (``tf.function`` runs the Python function too)."""
    return True


def get_logger() -> logging.Logger:
    """``tf.get_logger``: the ``"tensorflow"`` logger of the ``logging`` module."""
    return logging.getLogger("tensorflow")


def _scalar_bool(pred: Any, fn: str) -> builtins.bool:
    p = pred if isinstance(pred, (builtins.bool, np.bool_)) else to_tensor(pred)
    if isinstance(p, torch.Tensor) and p.numel() != 1:
        raise ValueError(
            f"{fn}: the condition must be a scalar boolean. Received a tensor of shape {list(p.shape)}; "
            "reduce it first (tf.reduce_all / tf.reduce_any)."
        )
    return builtins.bool(p)


def cond(
    pred: Any,
    true_fn: Callable[[], Any] | None = None,
    false_fn: Callable[[], Any] | None = None,
    name: str | None = None,
) -> Any:
    """``tf.cond``: calls ``true_fn()`` or ``false_fn()`` (eagerly, in Python: only the chosen branch runs).

    Example:
        >>> import unison as tf
        >>> tf.cond(tf.constant(2) > 1, lambda: "yes", lambda: "no")
        'yes'
    """
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError(
            "tf.cond: true_fn and false_fn must be callables taking no arguments. "
            f"Received: true_fn={true_fn!r:.60}, false_fn={false_fn!r:.60}"
        )
    return true_fn() if _scalar_bool(pred, "tf.cond") else false_fn()


def while_loop(
    cond: Callable[..., Any],
    body: Callable[..., Any],
    loop_vars: Any,
    shape_invariants: Any = None,
    parallel_iterations: int = 10,
    back_prop: builtins.bool = True,
    swap_memory: builtins.bool = False,
    maximum_iterations: Any = None,
    name: str | None = None,
) -> Any:
    """``tf.while_loop``: ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``, run eagerly in Python.

    The result has the structure of ``loop_vars`` (a body returning one value for a one-element
    ``loop_vars`` is accepted). Gradients flow through the iterations like any Python loop.

    Example:
        >>> import unison as tf
        >>> i, total = tf.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + i), (0, 0))
        >>> int(i), int(total)
        (4, 6)
    """
    from unison.ops import nest

    if not callable(cond) or not callable(body):
        raise TypeError(
            f"tf.while_loop: cond and body must be callables. Received: cond={cond!r:.60}, body={body!r:.60}"
        )
    if int(parallel_iterations) < 1:
        raise ValueError(f"tf.while_loop: parallel_iterations must be >= 1. Received: {parallel_iterations}")
    single = not isinstance(loop_vars, (list, tuple))
    if not single and not loop_vars:
        raise ValueError("tf.while_loop: loop_vars must not be empty. Received: loop_vars=[]")
    limit = None if maximum_iterations is None else int(to_tensor(maximum_iterations))
    state = loop_vars
    steps = 0
    while limit is None or steps < limit:
        if not _scalar_bool(cond(state) if single else cond(*state), "tf.while_loop"):
            break
        result = body(state) if single else body(*state)
        if not single and len(loop_vars) == 1 and not isinstance(result, (list, tuple)):
            result = [result]
        try:
            nest.assert_same_structure(loop_vars, result, check_types=False)
        except (ValueError, TypeError) as exc:
            reason = str(exc).split("\n")[0]
            raise ValueError(
                f"tf.while_loop: body must return values nested as loop_vars ({loop_vars!r:.100}). {reason}"
            ) from None
        state = result if single else nest.pack_sequence_as(loop_vars, nest.flatten(result))
        steps += 1
    return state


def map_fn(
    fn: Callable[[Any], Any],
    elems: Any,
    dtype: Any = None,
    parallel_iterations: int | None = None,
    back_prop: builtins.bool = True,
    swap_memory: builtins.bool = False,
    infer_shape: builtins.bool = True,
    name: str | None = None,
    fn_output_signature: Any = None,
) -> Any:
    """``tf.map_fn``: ``fn`` applied to each slice along axis 0 of ``elems``, the results stacked.

    ``elems`` is a tensor or a nest of tensors; ``fn`` runs eagerly, once per slice, in a Python loop.
    ``fn_output_signature`` (or the older ``dtype``) may give the result dtype(s).

    Example:
        >>> import unison as tf
        >>> tf.map_fn(lambda x: x * x, tf.constant([1, 2, 3])).tolist()
        [1, 4, 9]
        >>> tf.map_fn(lambda p: p[0] + p[1], (tf.constant([1, 2]), tf.constant([10, 20]))).tolist()
        [11, 22]
    """
    from unison.ops import nest

    if not callable(fn):
        raise TypeError(f"tf.map_fn: fn must be callable. Received: {fn!r:.80}")
    leaves = [to_tensor(e) for e in nest.flatten(elems)]
    if not leaves or builtins.any(t.dim() == 0 for t in leaves):
        raise ValueError("tf.map_fn: elems must be a tensor (or a nest of tensors) with at least one axis.")
    n = leaves[0].shape[0]
    if builtins.any(t.shape[0] != n for t in leaves):
        raise ValueError(
            f"tf.map_fn: every tensor in elems must have the same first dimension. Received "
            f"{[int(t.shape[0]) for t in leaves]}."
        )
    signature = fn_output_signature if fn_output_signature is not None else dtype
    if n == 0:
        outputs = nest.pack_sequence_as(elems, [t[:0] for t in leaves])
    else:
        results = [fn(nest.pack_sequence_as(elems, [t[i] for t in leaves])) for i in builtins.range(n)]
        columns = zip(*(nest.flatten(r) for r in results))
        outputs = nest.pack_sequence_as(results[0], [torch.stack([to_tensor(v) for v in c]) for c in columns])
    if signature is None:
        return outputs
    dtypes = nest.flatten(signature)
    flat = nest.flatten(outputs)
    if len(dtypes) == 1 and len(flat) > 1:
        dtypes = dtypes * len(flat)
    cast_to = [as_dtype(getattr(d, "dtype", d)) for d in dtypes]
    return nest.pack_sequence_as(outputs, [t.to(d) for t, d in zip(flat, cast_to)])


__all__ = [
    "cond",
    "control_dependencies",
    "device",
    "executing_eagerly",
    "get_logger",
    "map_fn",
    "while_loop",
]
__all__ += ["TensorShape"]

wrap_namespace(globals(), __all__)
