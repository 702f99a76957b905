"""More of TF's top-level control flow and graph-era names, with their eager (TF 2) meaning.

TF 2 runs these eagerly outside ``tf.function``, and unison always runs eagerly: ``foldl``/``foldr``
/``scan`` loop in Python over axis 0, ``case``/``switch_case`` call the chosen branch, ``group``
and ``no_op`` do nothing and return None, ``name_scope`` yields its name. ``tf.gradients`` and
``tf.hessians`` raise TF's own eager error (use ``tf.GradientTape``). Compared with TensorFlow by
``tests/conformance/test_vs_tf_array.py``.

Example:
    >>> import unison as tf
    >>> tf.foldl(lambda a, x: a + x, tf.constant([1, 2, 3])).item()
    6
    >>> tf.scan(lambda a, x: a * x, tf.constant([1, 2, 3, 4])).tolist()
    [1, 2, 6, 24]
"""

from __future__ import annotations

import builtins
import contextlib
import enum
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import to_tensor

_SCOPES: list[str] = []


def _slices(elems: Any) -> builtins.tuple[Any, list[torch.Tensor], int]:
    from unison.ops import nest

    leaves = [to_tensor(e) for e in nest.flatten(elems)]
    if not leaves or builtins.any(t.dim() == 0 for t in leaves):
        raise ValueError("elems must be a tensor (or a nest of tensors) with at least one axis.")
    return elems, leaves, int(leaves[0].shape[0])


def _fold(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any, reverse: builtins.bool, what: str) -> Any:
    from unison.ops import nest

    elems, leaves, n = _slices(elems)
    order = list(builtins.range(n - 1, -1, -1) if reverse else builtins.range(n))
    if initializer is None:
        if n == 0:
            raise ValueError(f"tf.{what}: elems has no elements and no initializer was given.")
        acc = nest.pack_sequence_as(elems, [t[order[0]] for t in leaves])
        order = order[1:]
    else:
        acc = initializer
    for i in order:
        acc = fn(acc, nest.pack_sequence_as(elems, [t[i] for t in leaves]))
    return acc


def foldl(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None, parallel_iterations: int = 10,
          back_prop: builtins.bool = True, swap_memory: builtins.bool = False, name: str | None = None) -> Any:  # fmt: skip
    """``tf.foldl``: ``fn(...fn(fn(init, e0), e1)..., en)`` over axis 0 of ``elems``."""
    return _fold(fn, elems, initializer, False, "foldl")


def foldr(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None, parallel_iterations: int = 10,
          back_prop: builtins.bool = True, swap_memory: builtins.bool = False, name: str | None = None) -> Any:  # fmt: skip
    """``tf.foldr``: the fold from the last element to the first."""
    return _fold(fn, elems, initializer, True, "foldr")


def scan(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None, parallel_iterations: int = 10,
         back_prop: builtins.bool = True, swap_memory: builtins.bool = False, infer_shape: builtins.bool = True,
         reverse: builtins.bool = False, name: str | None = None) -> Any:  # fmt: skip
    """``tf.scan``: every intermediate accumulator of the fold, stacked along axis 0."""
    from unison.ops import nest

    elems, leaves, n = _slices(elems)
    order = list(builtins.range(n - 1, -1, -1) if reverse else builtins.range(n))
    results: list[Any] = []
    if initializer is None:
        acc = nest.pack_sequence_as(elems, [t[order[0]] for t in leaves])
        results.append(acc)
        order = order[1:]
    else:
        acc = initializer
    for i in order:
        acc = fn(acc, nest.pack_sequence_as(elems, [t[i] for t in leaves]))
        results.append(acc)
    if reverse:
        results.reverse()
    columns = zip(*(nest.flatten(r) for r in results))
    return nest.pack_sequence_as(results[0], [torch.stack([to_tensor(v) for v in c]) for c in columns])


def case(pred_fn_pairs: Any, default: Callable[[], Any] | None = None, exclusive: builtins.bool = False,
         strict: builtins.bool = False, name: str = "case") -> Any:  # fmt: skip
    """``tf.case``: the function of the first true predicate (or ``default``)."""
    pairs = list(pred_fn_pairs.items() if isinstance(pred_fn_pairs, dict) else pred_fn_pairs)
    chosen = [fn for pred, fn in pairs if builtins.bool(to_tensor(pred))]
    if exclusive and len(chosen) > 1:
        raise InvalidArgumentError(f"tf.case: more than one condition is true with exclusive=True ({len(chosen)}).")
    if chosen:
        return chosen[0]()
    if default is None:
        if not pairs:
            raise ValueError("tf.case: pred_fn_pairs is empty and no default was given.")
        return pairs[-1][1]()  # TF runs the last branch when nothing is true and there is no default
    return default()


def switch_case(branch_index: Any, branch_fns: Any, default: Callable[[], Any] | None = None,
                name: str = "switch_case") -> Any:  # fmt: skip
    """``tf.switch_case``: ``branch_fns[branch_index]()``; out of range runs ``default`` (else the last)."""
    fns = dict(branch_fns) if isinstance(branch_fns, dict) else dict(enumerate(branch_fns))
    index = int(to_tensor(branch_index))
    if index in fns:
        return fns[index]()
    return default() if default is not None else fns[builtins.max(fns)]()


def group(*inputs: Any, **kwargs: Any) -> None:
    """``tf.group``: the operations already ran eagerly; nothing to wait for."""
    return None


def no_op(name: str | None = None) -> None:
    """``tf.no_op``: does nothing."""
    return None


def tuple(tensors: Sequence[Any], control_inputs: Any = None, name: str | None = None) -> list[Any]:  # noqa: A001
    """``tf.tuple``: the tensors, as a list (eagerly, every one is already computed)."""
    return [None if t is None else to_tensor(t) for t in tensors]


@contextlib.contextmanager
def name_scope(name: str) -> Iterator[str]:
    """``tf.name_scope``: yields the scope's full name (``"outer/inner/"``); names carry no scopes in unison."""
    if not isinstance(name, str):
        raise TypeError(f"tf.name_scope: name must be a string. Received: {name!r}")
    _SCOPES.append(name)
    try:
        yield "/".join(_SCOPES) + "/"
    finally:
        _SCOPES.pop()


def get_current_name_scope() -> str:
    """``tf.get_current_name_scope``: the names of the open ``tf.name_scope``s, joined by '/'."""
    return "/".join(_SCOPES)


@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """``tf.init_scope``: lifts code out of a graph in TF; unison is always eager, so it changes nothing."""
    yield


_FUNCTION_BODY = threading.local()  # how deep this thread is in tf.function bodies


@contextlib.contextmanager
def function_body() -> Iterator[None]:
    """Marks a ``tf.function``'s body while it runs: ops TF allows only in graphs (``parallel_stack``) run there."""
    _FUNCTION_BODY.depth = getattr(_FUNCTION_BODY, "depth", 0) + 1
    try:
        yield
    finally:
        _FUNCTION_BODY.depth -= 1


def in_function_body() -> builtins.bool:
    """Whether a ``tf.function``'s body is running on this thread."""
    return getattr(_FUNCTION_BODY, "depth", 0) > 0


def inside_function() -> builtins.bool:
    """``tf.inside_function``: False: unison's ``tf.function`` runs the Python function eagerly."""
    return False


def is_symbolic_tensor(tensor: Any) -> builtins.bool:
    """``tf.is_symbolic_tensor``: whether ``tensor`` is a symbolic (Keras functional-API) value."""
    return getattr(type(tensor), "__unison_tf_op__", None) is not None


def _eager_gradients(what: str) -> RuntimeError:
    return RuntimeError(f"tf.{what} is not supported when eager execution is enabled. Use tf.GradientTape instead.")


def gradients(ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients", gate_gradients: builtins.bool = False,
              aggregation_method: Any = None, stop_gradients: Any = None,
              unconnected_gradients: Any = "none") -> Any:  # fmt: skip
    """``tf.gradients``: TF 2 refuses it outside a graph, and unison is always eager: use ``tf.GradientTape``."""
    raise _eager_gradients("gradients")


def hessians(ys: Any, xs: Any, gate_gradients: builtins.bool = False, aggregation_method: Any = None,
             name: str = "hessians") -> Any:  # fmt: skip
    """``tf.hessians``: graph-only in TF 2, as ``tf.gradients``: use nested ``tf.GradientTape``s."""
    raise RuntimeError("tf.hessians is not supported when eager execution is enabled. Use tf.GradientTape instead.")


def timestamp(name: str | None = None) -> torch.Tensor:
    """``tf.timestamp``: seconds since the epoch, as a float64 scalar."""
    return torch.tensor(time.time(), dtype=torch.float64)


class VariableAggregation(enum.Enum):
    """``tf.VariableAggregation``: how a mirrored variable's replica updates combine."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


class VariableSynchronization(enum.Enum):
    """``tf.VariableSynchronization``: when a distributed variable is synchronised."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class AggregationMethod:
    """``tf.AggregationMethod``: how gradients are summed in a graph (torch's autograd always adds them)."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


__all__ = [
    "AggregationMethod",
    "VariableAggregation",
    "VariableSynchronization",
    "case",
    "foldl",
    "foldr",
    "get_current_name_scope",
    "gradients",
    "group",
    "hessians",
    "init_scope",
    "inside_function",
    "is_symbolic_tensor",
    "name_scope",
    "no_op",
    "scan",
    "switch_case",
    "timestamp",
    "tuple",
]
