"""Symbolic tensors of the functional API: ``keras.Input`` and what layers return when called on it.

A :class:`KerasTensor` stands for the batch of values a model will receive. It carries a small
concrete *example* (two rows of zeros, or what the layers made of them): calling a layer on a
KerasTensor runs the layer on that example, which builds its lazily-sized weights and gives the
output shape, and records a :class:`Node` (the layer and its arguments). An ``Input`` with
``None`` sizes (``shape=(None,)``, variable-length sequences; ``(None, None, 3)``, images of any
size) carries a second example whose ``None`` axes have another size: every operation runs on
both, and an output axis whose sizes differ is ``None`` in its ``shape``. Torch functions applied
to a KerasTensor (``torch.mean(x, dim=1)``, and so unison's ``tf.reduce_mean``, ``x + 1``,
``x[:, 0]``) are recorded the same way through ``__torch_function__``. ``keras.Model(inputs,
outputs)`` (:mod:`unison.keras.models.functional`) replays the recorded nodes on real tensors.

Example:
    >>> import torch
    >>> x = Input(shape=(3,), name="x")
    >>> y = torch.mean(x * 2, dim=1)
    >>> y.shape
    (None,)
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from unison.keras.backend.torch_mode import set_torch_mode
from unison.ops import tree

EXAMPLE_ROWS = 2  # rows of the example batch (two, so batch statistics are defined)
# The sizes a ``None`` axis of an Input takes in the two examples: large enough for the strided
# convolutions and poolings of image models, and far enough apart that downsampling keeps them
# apart (64 -> 2 and 96 -> 3 after five halvings), so the axis is recognised as variable.
VARIABLE_SIZES = (64, 96)
# The sizes a layer that fails on those gets instead (its values bound the axis: a position embedding
# of input_dim=sequence_length): the smallest that still tell a variable axis from a fixed one.
SHORT_SIZES = (2, 3)
MASK_ATTR = "_keras_mask"  # keras.layers.masking's attribute (that module imports this one)

_DTYPES = {
    "float32": torch.float32,
    "float64": torch.float64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int32": torch.int32,
    "int64": torch.int64,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}


def torch_dtype(dtype: Any) -> torch.dtype:
    """The torch dtype of an ``Input``'s ``dtype=``: Keras's own (``"int32"`` stays int32)."""
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    name = getattr(dtype, "name", dtype)
    if isinstance(name, str) and name in _DTYPES:
        return _DTYPES[name]
    raise ValueError(
        f"keras.Input got an unsupported dtype. Received: dtype={dtype!r}; expected one of "
        f"{sorted(_DTYPES)} or 'string'."
    )


def is_string_dtype(dtype: Any) -> bool:
    """``tf.string`` / ``"string"``: the inputs are numpy arrays of ``str``/``bytes``."""
    if dtype in (str, bytes, object, np.str_, np.bytes_, np.object_):
        return True
    return (
        dtype is not None
        and not isinstance(dtype, torch.dtype)
        and str(getattr(dtype, "name", dtype)) in ("string", "str", "object")
    )


class Node:
    """One recorded call: ``op(*args, **kwargs)`` where some arguments are KerasTensors."""

    def __init__(self, op: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.op = op
        self.args = args
        self.kwargs = kwargs
        self.parents: list[KerasTensor] = flatten((args, kwargs))
        self.outputs: list[KerasTensor] = []
        self.structured_outputs: Any = None  # the outputs as the op returned them (a layer's .output)

    def run(self, values: dict[int, Any]) -> list[Any]:
        """Call ``op`` with the KerasTensors replaced by ``values`` (by id); the flat outputs."""
        args, kwargs = map_keras_tensors(lambda kt: values[id(kt)], (self.args, self.kwargs))
        return flatten_values(self.op(*args, **kwargs))


class KerasTensor:
    """A symbolic batch: ``shape`` (batch axis ``None``), ``dtype``, ``name``, and its producer."""

    # The batch size an Input fixed (``keras.Input(shape, batch_size=4)``), carried to the outputs of
    # the ops that keep the batch axis; None: the batch axis varies.
    _batch_size: int | None = None

    def __init__(
        self, example: Any, node: Node | None = None, name: str | None = None, variable_example: Any = None
    ) -> None:
        self._example = example
        # The example with other sizes on the variable (None) axes; None when every size is known.
        self._variable_example = variable_example
        self._node = node
        self.name = name or (f"keras_tensor_{id(self):x}")

    @property
    def shape(self) -> tuple[int | None, ...]:
        sizes = tuple(self._example.shape[1:])
        other = self._variable_example
        batch = self._batch_size
        if other is None or tuple(other.shape) == tuple(self._example.shape):
            return (batch, *sizes)
        if other.ndim != self._example.ndim:
            return (batch, *(None for _ in sizes))  # an op whose rank depends on a size: nothing is known
        return (batch, *(a if a == b else None for a, b in zip(sizes, other.shape[1:])))

    @property
    def dtype(self) -> Any:
        """A torch dtype, or ``"string"`` for string inputs (numpy arrays of str at run time)."""
        return "string" if isinstance(self._example, np.ndarray) else self._example.dtype

    @property
    def ndim(self) -> int:
        return int(self._example.ndim)

    @property
    def is_input(self) -> bool:
        return self._node is None

    def __repr__(self) -> str:
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, name={self.name}>"

    def __reduce__(self) -> Any:
        # A pickled model (a parameter-server step, deepcopy) carries the graph's shapes, not the
        # example values: a tensor example travels as a "meta" tensor (shape and dtype, no data).
        def meta(example: Any) -> Any:
            if isinstance(example, torch.Tensor):
                return torch.empty(example.shape, dtype=example.dtype, device="meta")
            return example

        return (
            KerasTensor,
            (meta(self._example), None, self.name, meta(self._variable_example)),
            {"_node": self._node, "_batch_size": self._batch_size},
        )

    def __bool__(self) -> bool:
        raise TypeError(
            "A symbolic KerasTensor has no truth value: it stands for data that arrives "
            "at fit/predict time. Use a layer or a torch function on it instead of `if`."
        )

    def numpy(self) -> Any:
        raise TypeError(
            f"{self!r} is symbolic and has no values. Build a keras.Model(inputs, outputs) "
            "and call it (or predict) on real data."
        )

    @classmethod
    def __torch_function__(
        cls, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        return symbolic_call(func, tuple(args), dict(kwargs or {}))

    @staticmethod
    def __unison_tf_op__(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # tf.* functions on symbolic tensors (tf_keras programs: tf.reduce_mean(emb(inputs), axis=1))
        # become nodes of the functional graph, run on real tensors when the model is called.
        return symbolic_call(fn, tuple(args), dict(kwargs))

    def __neg__(self) -> KerasTensor:
        return symbolic_call(operator.neg, (self,), {})

    def __abs__(self) -> KerasTensor:
        return symbolic_call(operator.abs, (self,), {})

    def __getitem__(self, key: Any) -> KerasTensor:
        return symbolic_call(operator.getitem, (self, key), {})

    def __getattr__(self, name: str) -> Any:
        if name == MASK_ATTR and isinstance(getattr(self.__dict__.get("_example"), MASK_ATTR, None), torch.Tensor):
            # Keras's symbolic mask (`x._keras_mask` after Embedding(mask_zero=True)): a node that
            # reads the mask of the real tensor when the model runs
            return symbolic_call(_keras_mask_of, (self,), {})
        # Tensor methods (x.mean(1), x.reshape(...)) recorded as calls on the example's method.
        if name.startswith("_") or not hasattr(torch.Tensor, name):
            raise AttributeError(f"'KerasTensor' object has no attribute {name!r}")
        method = getattr(torch.Tensor, name)
        return lambda *a, **k: symbolic_call(method, (self, *a), k)


def _keras_mask_of(x: torch.Tensor) -> Any:
    """The Keras mask attached to ``x`` (the run-time side of a symbolic ``x._keras_mask``)."""
    return getattr(x, MASK_ATTR, None)


def _binary(op: Callable[[Any, Any], Any], reflected: bool = False) -> Callable[..., Any]:
    if reflected:
        return lambda self, other: symbolic_call(op, (other, self), {})
    return lambda self, other: symbolic_call(op, (self, other), {})


for _name, _op in [
    ("add", operator.add),
    ("sub", operator.sub),
    ("mul", operator.mul),
    ("truediv", operator.truediv),
    ("floordiv", operator.floordiv),
    ("pow", operator.pow),
    ("matmul", operator.matmul),
    ("mod", operator.mod),
]:
    setattr(KerasTensor, f"__{_name}__", _binary(_op))
    setattr(KerasTensor, f"__r{_name}__", _binary(_op, reflected=True))
for _name, _op in [
    ("lt", operator.lt),
    ("le", operator.le),
    ("gt", operator.gt),
    ("ge", operator.ge),
    ("and", operator.and_),
    ("or", operator.or_),
]:
    setattr(KerasTensor, f"__{_name}__", _binary(_op))


def Input(
    shape: Any = None,
    batch_size: int | None = None,
    dtype: Any = None,
    name: str | None = None,
    sparse: Any = None,
    batch_shape: Any = None,
    **kwargs: Any,
) -> KerasTensor:
    """``keras.Input``: a symbolic model input of per-example ``shape`` (no batch axis).

    Args:
        shape: shape of one example, e.g. ``(784,)``; ``None`` for a size that varies from batch
            to batch (``(None,)`` for sequences of any length, ``(None, None, 3)`` for images).
        batch_size: a fixed batch size: the input's ``shape`` (and that of the outputs computed
            from it) starts with it instead of ``None``, as in Keras. Data of other batch sizes
            still runs (unison's graph does not specialise on it).
        dtype: ``"float32"`` (default), ``"int32"``/``"int64"`` (ids) ...
        name: the input's name (the key of a dict of inputs).
    """
    if kwargs:
        raise TypeError(f"Input got unexpected keyword arguments: {sorted(kwargs)}.")
    if shape is None and batch_shape is not None:
        shape = tuple(batch_shape)[1:]
        if batch_size is None:
            batch_size = tuple(batch_shape)[0]
    if batch_size is not None and (not isinstance(batch_size, (int, np.integer)) or batch_size <= 0):
        raise ValueError(
            f"Input's batch_size must be a positive int (or None for any batch size). Received: batch_size={batch_size!r}"
        )
    if shape is None:
        raise ValueError("Input needs shape=, the shape of one example, e.g. Input(shape=(784,)).")
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    if not all(s is None or (isinstance(s, (int, np.integer)) and s >= 0) for s in shape):
        raise ValueError(
            f"Input shape entries must be non-negative ints, or None for a size that varies. Received: shape={shape!r}"
        )
    sizes = [tuple(size if s is None else int(s) for s in shape) for size in VARIABLE_SIZES]
    variable = None in shape
    name = name or _input_name()
    if is_string_dtype(dtype):  # string preprocessing models (StringLookup on a string Input)
        examples = [np.full((EXAMPLE_ROWS, *dims), SYMBOLIC_STRING, dtype=object) for dims in sizes]
        kt = KerasTensor(examples[0], None, name, examples[1] if variable else None)
    else:
        as_dtype, device = torch_dtype(dtype), _device()
        examples_t = [torch.zeros((EXAMPLE_ROWS, *dims), dtype=as_dtype, device=device) for dims in sizes]
        kt = KerasTensor(examples_t[0], None, name, examples_t[1] if variable else None)
    kt._batch_size = None if batch_size is None else int(batch_size)
    return kt


_INPUT_COUNT = [0]

# What a string Input holds while a functional model is being built: not data, so lookups map it
# to a valid id instead of refusing it as out-of-vocabulary (num_oov_indices=0 in TF's tutorial).
SYMBOLIC_STRING = "\x00unison:symbolic-string"


def _input_name() -> str:
    _INPUT_COUNT[0] += 1
    return "input_layer" if _INPUT_COUNT[0] == 1 else f"input_layer_{_INPUT_COUNT[0] - 1}"


def _device() -> torch.device:
    from unison.distribute.strategy import get_strategy

    return get_strategy().extended.device


def flatten(obj: Any) -> list[KerasTensor]:
    """Every KerasTensor inside nested lists, tuples and dicts, in order (dicts in insertion order)."""
    return tree.flatten(obj, sort_keys=False, only=KerasTensor)


def flatten_values(obj: Any) -> list[Any]:
    """Every tensor inside a nested output structure, in order (a lone tensor is a list of one)."""
    return tree.flatten(obj, sort_keys=False)


def map_keras_tensors(fn: Callable[[KerasTensor], Any], obj: Any) -> Any:
    """``obj`` with every KerasTensor replaced by ``fn(kt)`` (in :func:`flatten`'s order)."""
    return tree.map_structure(fn, obj, only=KerasTensor, sort_keys=False)


def pack_like(structure: Any, flat: list[Any]) -> Any:
    """Rebuild ``structure`` (of KerasTensors) with the values of ``flat`` in order."""
    it = iter(flat)
    return map_keras_tensors(lambda kt: next(it), structure)


def has_keras_tensor(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    if not kwargs and all(type(a) is torch.Tensor for a in args):
        return False  # the training hot path: concrete tensors only, nothing to walk
    return bool(flatten((args, kwargs)))


def symbolic_call(
    op: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], run: Callable[..., Any] | None = None
) -> Any:
    """Run ``op`` on the examples of its KerasTensor arguments and record a node; symbolic outputs.

    ``run`` (default ``op``) is what runs now: a layer passes its un-intercepted ``__call__``.
    Layers run in inference mode without gradients, so tracing changes no statistics.
    """
    node = Node(op, args, kwargs)
    ex_args, ex_kwargs = map_keras_tensors(lambda kt: kt._example, (args, kwargs))
    variable = any(kt._variable_example is not None for kt in node.parents)
    other: Any = None
    try:
        out = _run_example(op, run, ex_args, ex_kwargs)
    except (RuntimeError, ValueError, IndexError):
        if not variable:
            raise
        # A layer whose values bound a variable axis (a position embedding of input_dim=sequence_length
        # over tf.range(tf.shape(x)[1])) fails on the long examples; Keras traces without values.
        # Run it on the examples cut to SHORT_SIZES on their variable axes; else the first error.
        short = _short_examples(args, kwargs)
        if short is None:
            raise
        try:
            out, other = (_run_example(op, run, *example) for example in short)
        except (RuntimeError, ValueError, IndexError):
            out = None
        if out is None:
            raise
        variable = False  # both sizes ran
    if variable:
        var_args, var_kwargs = map_keras_tensors(
            lambda kt: kt._example if kt._variable_example is None else kt._variable_example, (args, kwargs)
        )
        try:
            other = _run_example(op, run, var_args, var_kwargs)
        except (RuntimeError, ValueError, IndexError) as exc:
            shapes = [kt.shape for kt in node.parents]
            raise ValueError(
                f"{_op_name(op)} cannot take inputs with a variable (None) size: it ran on inputs of "
                f"shape {shapes} with one size for the None axes and failed with another "
                f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}). Give keras.Input "
                "the size of every axis this layer depends on."
            ) from exc

    batches = {kt._batch_size for kt in node.parents}
    batch = batches.pop() if len(batches) == 1 else None

    def wrap(value: Any, other_value: Any) -> Any:
        if isinstance(value, (torch.Tensor, np.ndarray)):
            suffix = f"_{len(node.outputs)}" if node.outputs else ""
            kt = KerasTensor(value, node, f"{_op_name(op)}_output{suffix}", other_value)
            if batch is not None and value.ndim and value.shape[0] == EXAMPLE_ROWS:
                kt._batch_size = batch  # the op kept the batch axis (as Keras's output spec does)
            node.outputs.append(kt)
            return kt
        pairs = _pair_structure(value, other_value)
        if isinstance(value, tuple):
            return tuple(wrap(v, o) for v, o in pairs)
        if isinstance(value, list):
            return [wrap(v, o) for v, o in pairs]
        if isinstance(value, dict):
            return {k: wrap(v, o) for k, (v, o) in zip(value, pairs)}
        raise TypeError(
            f"{_op_name(op)} returned {type(value).__name__} on a symbolic input; the functional "
            "API records operations that return tensors."
        )

    result = wrap(out, other)
    if isinstance(op, torch.nn.Module):
        # Keras's layer.input / layer.output: the tensors of the layer's first call.
        inbound = op.__dict__.setdefault("_inbound_nodes", [])
        node.structured_outputs = result
        inbound.append(node)
    return result


def conform_input(value: torch.Tensor, dtype: Any) -> torch.Tensor:
    """A real input converted to its ``keras.Input``'s dtype, as Keras's functional models do.

    Integer or boolean data (raw MNIST pixels, uint8) given to a float input becomes float, and
    float64 (NumPy's default) becomes the input's float dtype; float data given to an integer
    (ids) input becomes int64. Other float dtypes (a bfloat16 policy's cast) are kept.
    """
    if not isinstance(dtype, torch.dtype) or value.dtype == dtype:
        return value
    if value.is_complex() and not dtype.is_complex:
        raise TypeError(
            f"The model's input is {str(dtype).removeprefix('torch.')}, but the data is complex "
            f"({str(value.dtype).removeprefix('torch.')}, shape {tuple(value.shape)}): converting it would drop the "
            "imaginary part without a word. Fix: pass real data, e.g. np.concatenate([x.real, x.imag], axis=-1) "
            "(and an Input twice as wide), or np.abs(x) if only the magnitude matters."
        )
    if dtype.is_floating_point:
        if not value.is_floating_point() or value.dtype == torch.float64:
            return value.to(dtype)
        return value
    if dtype != torch.bool and value.is_floating_point():
        return value.to(dtype)
    return value


def layer_call_tensor(layer: torch.nn.Module, what: str) -> Any:
    """Keras's ``layer.input`` / ``layer.output``: the symbolic tensors of the layer's first call.

    Example:
        >>> from unison import keras
        >>> dense = keras.layers.Dense(2)
        >>> x = keras.Input(shape=(3,))
        >>> dense(x).shape == dense.output.shape == (None, 2)
        True
    """
    nodes = layer.__dict__.get("_inbound_nodes") or []
    if not nodes:
        name = getattr(layer, "name", type(layer).__name__)
        # ValueError, as Keras 3.0-3.3: an AttributeError would be replaced by torch's generic
        # "has no attribute" message (nn.Module.__getattr__), losing the explanation.
        raise ValueError(
            f"Layer {name!r} has never been called on a symbolic input and thus has no defined {what}. "
            "Call it on a keras.Input (or build a keras.Model / a Sequential starting with keras.Input) first."
        )
    node = nodes[0]
    if what == "output":
        return node.structured_outputs
    return node.args[0] if node.args else next(iter(node.kwargs.values()))


class _CannotCut(Exception):
    """An example whose variable axes cannot be cut (a string array, a rank that varies, too short)."""


def _short_examples(args: Any, kwargs: Any) -> tuple[tuple[Any, Any], tuple[Any, Any]] | None:
    """``(args, kwargs)`` of both examples with every variable axis cut to ``SHORT_SIZES``, or None."""

    def cutter(size: int, second: bool) -> Callable[[KerasTensor], Any]:
        def cut(kt: KerasTensor) -> Any:
            if kt._variable_example is None:
                return kt._example
            return _cut(kt, kt._variable_example if second else kt._example, size)

        return cut

    try:
        first, other = (map_keras_tensors(cutter(size, i == 1), (args, kwargs)) for i, size in enumerate(SHORT_SIZES))
    except _CannotCut:
        return None
    return first, other


def _cut(kt: KerasTensor, example: Any, size: int) -> torch.Tensor:
    """``example`` with the axes on which ``kt``'s two examples differ cut to ``size`` (mask too)."""
    first, second = kt._example, kt._variable_example
    if not isinstance(example, torch.Tensor) or first.ndim != second.ndim:
        raise _CannotCut
    axes = [a for a in range(1, first.ndim) if first.shape[a] != second.shape[a]]
    if not axes or any(example.shape[a] < size for a in axes):
        raise _CannotCut
    out = example
    for axis in axes:
        out = out.narrow(axis, 0, size)
    mask = getattr(example, MASK_ATTR, None)
    if isinstance(mask, torch.Tensor):
        for axis in axes:
            if axis < mask.ndim and mask.shape[axis] == example.shape[axis]:
                mask = mask.narrow(axis, 0, size)
        setattr(out, MASK_ATTR, mask)
    return out


def _run_example(op: Callable[..., Any], run: Callable[..., Any] | None, args: Any, kwargs: Any) -> Any:
    modules = [op] if isinstance(op, torch.nn.Module) else []
    modes = [m.training for m in modules]
    for m in modules:
        set_torch_mode(m, False)
    try:
        with torch.no_grad():
            return (run or op)(*args, **kwargs)
    finally:
        for m, mode in zip(modules, modes):
            set_torch_mode(m, mode)
            reset = getattr(m, "reset_states", None)
            if getattr(m, "stateful", False) and callable(reset):
                reset()  # a stateful RNN keeps no states from a symbolic example


def _pair_structure(value: Any, other: Any) -> list[tuple[Any, Any]]:
    """The items of a list/tuple/dict output with those of the variable-size run (or ``None``)."""
    items = list(value.values()) if isinstance(value, dict) else list(value) if isinstance(value, (list, tuple)) else []
    if other is None:
        return [(v, None) for v in items]
    others = list(other.values()) if isinstance(other, dict) else list(other)
    return list(zip(items, others))


def _op_name(op: Any) -> str:
    return getattr(op, "name", None) or getattr(op, "__name__", None) or type(op).__name__


__all__ = ["Input", "KerasTensor", "Node", "conform_input", "layer_call_tensor", "symbolic_call"]
