"""``tf.py_function``, ``tf.numpy_function``, ``tf.custom_gradient`` and ``tf.recompute_grad``.

unison runs eagerly, so ``py_function`` calls the Python function (its torch operations stay on
the autograd graph, as TF's eager ``py_function`` is differentiable) and converts the results to
``Tout``; ``numpy_function`` hands it numpy arrays and does not differentiate. ``custom_gradient``
is a ``torch.autograd.Function`` whose backward is the user's ``grad_fn``; ``recompute_grad`` is
``torch.utils.checkpoint`` (activations recomputed in the backward pass).

Example:
    >>> import unison as tf
    >>> @tf.custom_gradient
    ... def log1pexp(x):
    ...     e = tf.exp(x)
    ...     def grad(upstream):
    ...         return upstream * (1 - 1 / (1 + e))
    ...     return tf.math.log(1 + e), grad
    >>> x = tf.constant(100.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = log1pexp(x)
    >>> float(tape.gradient(y, x))
    1.0
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.utils.checkpoint

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import as_dtype, to_tensor


def _outputs(result: Any, tout: Any, convert: Callable[[Any, Any], Any], op: str) -> Any:
    if tout is None:
        return None
    many = isinstance(tout, (list, tuple))
    types = list(tout) if many else [tout]
    # a function returning None returns no values (TF: `py_function(lambda: time.sleep(1), [], ())` is [])
    values = list(result) if many and isinstance(result, (list, tuple)) else [] if result is None else [result]
    if len(values) != len(types):
        raise InvalidArgumentError(
            None, None, f"tf.{op}: the function returned {len(values)} values, Tout lists {len(types)}."
        )
    out = [convert(v, as_dtype(t)) for v, t in zip(values, types)]
    return out if many else out[0]


def py_function(
    func: Callable[..., Any] | None = None, inp: Any = None, Tout: Any = None, name: str | None = None
) -> Any:
    """``tf.py_function``: ``func(*inp)`` converted to ``Tout`` (a dtype or a list of them)."""
    if func is None:
        return functools.partial(_decorated_py_function, inp=inp, Tout=Tout)
    args = list(inp) if isinstance(inp, (list, tuple)) else ([] if inp is None else [inp])
    result = func(*[to_tensor(a) if not isinstance(a, torch.Tensor) else a for a in args])

    def convert(value: Any, dtype: Any) -> Any:
        t = to_tensor(value)
        if isinstance(t, torch.Tensor) and isinstance(value, torch.Tensor) and t.dtype != dtype:
            raise InvalidArgumentError(
                None,
                None,
                f"tf.py_function: the function returned a {t.dtype} tensor where Tout says {dtype}; return "
                "that dtype or change Tout.",
            )
        return to_tensor(value, dtype)

    return _outputs(result, Tout, convert, "py_function")


def _decorated_py_function(func: Callable[..., Any], inp: Any, Tout: Any) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapped(*args: Any) -> Any:
        return py_function(func, list(args), Tout)

    return wrapped


def numpy_function(
    func: Callable[..., Any] | None = None, inp: Any = None, Tout: Any = None, stateful: bool = True, name: Any = None
) -> Any:
    """``tf.numpy_function``: ``func`` on numpy arrays; its numpy results become tensors (their own
    dtype, as TF keeps it: ``Tout`` only names what to expect)."""
    if func is None:
        return lambda f: numpy_function(f, inp, Tout, stateful)
    args = list(inp) if isinstance(inp, (list, tuple)) else ([] if inp is None else [inp])
    arrays = [a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a) for a in args]
    result = func(*arrays)

    def convert(value: Any, dtype: Any) -> Any:
        arr = np.asarray(value)
        return to_tensor(arr) if arr.dtype.kind not in "OUS" else to_tensor(arr.astype(object))

    return _outputs(result, Tout, convert, "numpy_function")


class _CustomGradient(torch.autograd.Function):
    """Outputs computed already (detached), inputs and variables as the graph's edges, the user's
    ``grad_fn`` as the backward."""

    @staticmethod
    def forward(ctx: Any, grad_fn: Any, n_out: int, n_in: int, *tensors: torch.Tensor) -> Any:
        ctx.grad_fn, ctx.n_out, ctx.n_in = grad_fn, n_out, n_in
        ctx.n_vars = len(tensors) - n_out - n_in
        return tuple(t.view_as(t) for t in tensors[:n_out])

    @staticmethod
    def backward(ctx: Any, *upstream: torch.Tensor) -> Any:
        if ctx.n_vars:
            input_grads, variable_grads = ctx.grad_fn(*upstream, variables=ctx.variables)
        else:
            input_grads, variable_grads = ctx.grad_fn(*upstream), []
        grads = list(input_grads) if isinstance(input_grads, (list, tuple)) else [input_grads]
        if len(grads) != ctx.n_in:
            raise ValueError(
                f"tf.custom_gradient: grad_fn returned {len(grads)} gradients for {ctx.n_in} tensor inputs."
            )
        return (None, None, None) + (None,) * ctx.n_out + tuple(grads) + tuple(variable_grads)


def _variables_of(outputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """The leaf parameters (tf.Variables) the outputs were computed from, in the order a walk of the
    graph from the outputs meets them (TF lists them in the order they were read: the same for one)."""
    seen: dict[int, torch.Tensor] = {}
    stack: list[Any] = [o.grad_fn for o in outputs if o.grad_fn is not None]
    visited: set[int] = set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in visited:
            continue
        visited.add(id(node))
        variable = getattr(node, "variable", None)
        if isinstance(variable, torch.nn.Parameter):
            seen.setdefault(id(variable), variable)
        stack.extend(n for n, _ in node.next_functions)
    return list(seen.values())


def custom_gradient(f: Callable[..., Any] | None = None) -> Any:
    """``tf.custom_gradient``: ``f(*x)`` returns ``(y, grad_fn)``; gradients of ``y`` come from
    ``grad_fn(*dy)`` (one per tensor input), or, when ``grad_fn`` takes ``variables``, from
    ``grad_fn(*dy, variables=...)`` returning ``(input_grads, variable_grads)``."""
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        out, grad_fn = f(*args, **kwargs)
        many = isinstance(out, (list, tuple))
        outs = [to_tensor(o) for o in (out if many else [out])]
        inputs = [a for a in args if isinstance(a, torch.Tensor)]
        wants_variables = "variables" in inspect.signature(grad_fn).parameters
        variables = _variables_of(outs) if wants_variables else []
        if not torch.is_grad_enabled() or not any(t.requires_grad for t in inputs + variables):
            return out
        detached = [o.detach() for o in outs]

        class _Bound(_CustomGradient):
            @staticmethod
            def forward(ctx: Any, *a: Any) -> Any:
                ctx.variables = variables
                return _CustomGradient.forward(ctx, *a)

        results = _Bound.apply(grad_fn, len(outs), len(inputs), *detached, *inputs, *variables)
        return (type(out)(results) if isinstance(out, tuple) else list(results)) if many else results[0]

    return decorated


def recompute_grad(f: Callable[..., Any]) -> Callable[..., Any]:
    """``tf.recompute_grad``: ``f`` whose intermediate activations are recomputed in the backward
    pass instead of kept (``torch.utils.checkpoint``); values and gradients are ``f``'s."""

    @functools.wraps(f)
    def inner(*args: Any, **kwargs: Any) -> Any:
        if not torch.is_grad_enabled():
            return f(*args, **kwargs)
        return torch.utils.checkpoint.checkpoint(f, *args, use_reentrant=False, **kwargs)

    return inner


def grad_pass_through(f: Callable[..., Any]) -> Callable[..., Any]:
    """``tf.grad_pass_through``: ``f``'s value, with the gradient of the identity (a straight-through
    estimator: gradients reach ``x`` as if ``f(x)`` were ``x``)."""

    @functools.wraps(f)
    def inner(x: Any) -> Any:
        t = to_tensor(x)
        out = to_tensor(f(x))
        if not isinstance(t, torch.Tensor) or not t.requires_grad:
            return out
        return t + (out - t).detach()

    return inner


def nondifferentiable_batch_function(
    num_batch_threads: int,
    max_batch_size: int,
    batch_timeout_micros: int,
    allowed_batch_sizes: list[int] | None = None,
    max_enqueued_batches: int = 10,
    autograph: bool = True,
    enable_large_batch_splitting: bool = True,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``tf.nondifferentiable_batch_function``: a decorator whose function runs on batched tensors, without gradients.

    TF queues concurrent calls (in a serving process) and runs them as one batch of up to
    ``max_batch_size`` rows; each caller gets its own rows back, so the values are those of calling
    the function on its own inputs, which is what this does (eagerly, one call at a time). As in
    TF: every argument must be a tensor (not a ``tf.Variable``) with a batch dimension, all of one
    size and at most ``max_batch_size``, and no gradient flows through the result.
    ``allowed_batch_sizes`` is checked (increasing, ending with ``max_batch_size``) but sets no
    further limit here; TF 2.21 with it also refuses some calls of fewer rows. A gradient asked
    through the result is ``None`` here (TF raises ``LookupError``: no gradient is registered).

    Example:
        >>> import unison as tf
        >>> @tf.nondifferentiable_batch_function(1, 2, 10)
        ... def double(x):
        ...     return x * 2
        >>> double(tf.constant([[1.0], [2.0]])).tolist()
        [[2.0], [4.0]]
    """
    for label, value in (("num_batch_threads", num_batch_threads), ("max_batch_size", max_batch_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(
                f"nondifferentiable_batch_function: {label} must be a positive integer. Received: {value!r}"
            )
    if allowed_batch_sizes and (
        list(allowed_batch_sizes) != sorted(set(allowed_batch_sizes)) or allowed_batch_sizes[-1] != max_batch_size
    ):
        raise ValueError(
            "nondifferentiable_batch_function: allowed_batch_sizes must increase and end with max_batch_size="
            f"{max_batch_size}. Received: {list(allowed_batch_sizes)}"
        )

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        from unison.errors import InvalidArgumentError

        def decorated(*args: Any) -> Any:  # TF's name for it too (no functools.wraps there)
            rows = set()
            for arg in args:
                if isinstance(arg, torch.nn.Parameter) or not isinstance(arg, torch.Tensor):  # tf.Variable is one
                    raise ValueError(
                        "All arguments to functions decorated with `batch_function` are supposed to be Tensors; "
                        f"found {arg!r:.80}. Pass tf.convert_to_tensor(value) (a tf.Variable's value: v.value())."
                    )
                if arg.dim() == 0:
                    raise InvalidArgumentError(
                        f"{fn.__name__}: batching input tensors must have at least one dimension. Received a scalar."
                    )
                rows.add(arg.shape[0])
            if len(rows) > 1:
                raise InvalidArgumentError(
                    f"{fn.__name__}: batching input tensors must have equal 0th-dimension sizes. Received {sorted(rows)}."
                )
            if rows and max(rows) > max_batch_size:  # TF 2.21 refuses it, whatever enable_large_batch_splitting says
                raise InvalidArgumentError(
                    f"{fn.__name__}: task size {max(rows)} is larger than maximum input batch size {max_batch_size}. "
                    "Call it on at most max_batch_size rows at a time, or raise max_batch_size."
                )
            with torch.no_grad():
                return fn(*args)

        return decorated

    return decorate


__all__ = [
    "custom_gradient",
    "grad_pass_through",
    "nondifferentiable_batch_function",
    "numpy_function",
    "py_function",
    "recompute_grad",
]
