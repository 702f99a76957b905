"""``tf.function``: accepted with TF's arguments; the Python function runs eagerly.

TF traces a ``tf.function`` into a graph; unison runs it as Python on torch every call, so the
results are exactly those of the undecorated function. What differs from TF: Python side effects
(``print``, appending to a list) happen on every call instead of only while tracing, and
``jit_compile``/``reduce_retracing`` change nothing. torch.compile is not used, as measured: on
the custom-training tutorial's convnet on CPU the compiled model's steps take 1.58x the eager
ones even after compilation (``benchmarks/custom_loop.py --compiled``), and it cannot compile
the collectives inside ``strategy.run``.

``input_signature`` is checked as TF checks it: the number of arguments, each tensor's rank,
its known dimensions and its dtype.

Example:
    >>> import unison as tf
    >>> @tf.function
    ... def double(x):
    ...     return x * 2
    >>> double(tf.constant(2.0)).item()
    4.0
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import torch

from unison.core.contention import follow_load
from unison.core.tape import _RECORDING
from unison.ops.control_more import function_body


class Function:
    """A function decorated with ``tf.function`` (callable like the original)."""

    def __init__(
        self,
        python_function: Callable[..., Any],
        input_signature: Sequence[Any] | None = None,
        jit_compile: bool | None = None,
        reduce_retracing: bool = False,
    ) -> None:
        if not callable(python_function):
            raise TypeError(f"tf.function decorates a callable. Received: {python_function!r:.80}")
        self.python_function = python_function
        self.input_signature = None if input_signature is None else tuple(input_signature)
        self.jit_compile = jit_compile
        self.reduce_retracing = reduce_retracing
        functools.update_wrapper(self, python_function)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.input_signature is not None:
            _check_signature(self.python_function, self.input_signature, args, kwargs)
        follow_load()  # a step boundary: idle threads spin only while the host is quiet (core/contention.py)
        with function_body():
            result = self.python_function(*args, **kwargs)
        if not _RECORDING.tapes:
            # Outside a GradientTape, a tf.function's results are plain values in TF: nothing can
            # differentiate them. torch would keep the autograd graph of the whole step alive in
            # them (and refuse .numpy()), so hand back detached tensors, as TF hands back values.
            result = _detach_results(result)
        return result

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        # A tf.function defined in a class binds to the instance, like a method.
        if instance is None:
            return self
        bound = Function.__new__(Function)
        bound.python_function = self.python_function.__get__(instance, owner)
        bound.input_signature = self.input_signature
        bound.jit_compile = self.jit_compile
        bound.reduce_retracing = self.reduce_retracing
        functools.update_wrapper(bound, bound.python_function)
        return bound

    def get_concrete_function(self, *args: Any, **kwargs: Any) -> ConcreteFunction:
        """TF returns a traced graph; here the function for those arguments (it runs eagerly)."""
        return ConcreteFunction(self)

    def experimental_get_tracing_count(self) -> int:
        """Always 0: nothing is traced."""
        return 0

    def __repr__(self) -> str:
        return f"<tf.function {getattr(self.python_function, '__qualname__', self.python_function)!r} (eager)>"


class ConcreteFunction:
    """What ``get_concrete_function`` returns: the ``tf.function`` for one input signature, callable.

    TF traces a graph for the given arguments; unison runs the same Python function, so calling it
    gives what calling the ``tf.function`` gives.
    """

    def __init__(self, function: Function) -> None:
        self._function = function
        self.function_type = inspect.signature(function.python_function)
        functools.update_wrapper(self, function.python_function)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<ConcreteFunction {getattr(self._function.python_function, '__qualname__', '?')!r} (eager)>"


def _detach_results(value: Any) -> Any:
    """``value`` with every computed tensor (one with a ``grad_fn``) detached; leaves as they are.

    Variables and parameters a function returns stay the same objects (TF returns the variable's
    value, but programs that return a variable use it as one).
    """
    if isinstance(value, torch.Tensor):
        return value.detach() if value.grad_fn is not None else value
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[_detach_results(v) for v in value])
    if isinstance(value, (list, tuple)):
        return type(value)(_detach_results(v) for v in value)
    if isinstance(value, dict):
        return {k: _detach_results(v) for k, v in value.items()}
    return value


def _check_signature(
    fn: Callable[..., Any], signature: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    given = list(args) + list(kwargs.values())
    problem = None
    if len(given) != len(signature):
        problem = f"{len(given)} arguments were given, the signature has {len(signature)}"
    else:
        for i, (value, spec) in enumerate(zip(given, signature)):
            problem = _spec_mismatch(value, spec)
            if problem:
                problem = f"argument {i}: {problem}"
                break
    if problem:
        name = getattr(fn, "__qualname__", repr(fn))
        raise TypeError(
            f"Python inputs incompatible with input_signature of {name}: {problem}. input_signature: {signature!r:.300}"
        )


def _spec_mismatch(value: Any, spec: Any) -> str | None:
    own_check = getattr(spec, "_unison_mismatch", None)
    if own_check is not None:  # the composite specs (tf.RaggedTensorSpec, ...) check their values
        problem: str | None = own_check(value)
        return problem
    shape = getattr(spec, "shape", None)
    dtype = getattr(spec, "dtype", None)
    if shape is None and dtype is None:
        return None  # not a TensorSpec-like object: nothing TF would check either
    if not isinstance(value, torch.Tensor):
        try:
            value = torch.as_tensor(value)
        except (TypeError, ValueError, RuntimeError):
            return f"expected a tensor, received {type(value).__name__}"
    if isinstance(dtype, torch.dtype) and value.dtype != dtype:
        return f"dtype {value.dtype} does not match {dtype}"
    dims = None
    if shape is not None:
        try:
            dims = list(shape)
        except TypeError:
            dims = None  # an unknown-rank shape
    if dims is not None:
        if len(dims) != value.dim():
            return f"shape {tuple(value.shape)} does not match {tuple(dims)} (rank differs)"
        for have, want in zip(value.shape, dims):
            want = getattr(want, "value", want)
            if want is not None and int(want) != have:
                return f"shape {tuple(value.shape)} does not match {tuple(dims)}"
    return None


def function(
    func: Callable[..., Any] | None = None,
    input_signature: Sequence[Any] | None = None,
    autograph: bool = True,
    jit_compile: bool | None = None,
    reduce_retracing: bool = False,
    experimental_implements: Any = None,
    experimental_autograph_options: Any = None,
    experimental_attributes: Any = None,
    experimental_relax_shapes: bool | None = None,
    experimental_compile: bool | None = None,
    experimental_follow_type_hints: Any = None,
) -> Any:
    """``tf.function``, as ``@tf.function`` or ``@tf.function(input_signature=...)``."""

    def decorate(f: Callable[..., Any]) -> Function:
        return Function(
            f,
            input_signature=input_signature,
            jit_compile=jit_compile if jit_compile is not None else experimental_compile,
            reduce_retracing=bool(reduce_retracing or experimental_relax_shapes),
        )

    return decorate if func is None else decorate(func)
