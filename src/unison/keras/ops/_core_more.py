"""``keras.ops`` core, part 2: ``associative_scan``, ``custom_gradient`` and einops' ``rearrange``.

Example:
    >>> from unison.keras import ops
    >>> ops.associative_scan(lambda a, b: a + b, ops.convert_to_tensor([1, 2, 3, 4])).tolist()
    [1, 3, 6, 10]
    >>> tuple(ops.rearrange(ops.zeros((2, 3, 4)), "b h w -> b (h w)").shape)
    (2, 12)
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable
from typing import Any

import torch

from unison.keras.ops._convert import tensor as _as_tensor
from unison.ops import nest as _nest
from unison.ops._dispatch import wrap_namespace

Tensor = torch.Tensor


def associative_scan(f: Callable[[Any, Any], Any], elems: Any, reverse: builtins.bool = False, axis: int = 0) -> Any:
    """``keras.ops.associative_scan(f, elems, reverse=False, axis=0)``: the inclusive scan of ``elems``
    (a tensor or a structure of tensors) along ``axis`` with the associative ``f``, in
    ``log2(n)`` vectorised steps (Hillis-Steele): ``f`` is called on whole shifted slices.
    """
    leaves = [_as_tensor(leaf) for leaf in _nest.flatten(elems)]
    if not leaves:
        raise ValueError("keras.ops.associative_scan: elems must hold at least one tensor.")
    ndim = leaves[0].dim()
    if ndim == 0:
        raise ValueError("keras.ops.associative_scan: elems must be at least 1-D (the scanned axis).")
    ax = axis % ndim
    n = leaves[0].shape[ax]
    if any(leaf.shape[ax] != n for leaf in leaves):
        raise ValueError(
            "keras.ops.associative_scan: every tensor of elems needs the same size along axis "
            f"{axis}. Received shapes {[tuple(leaf.shape) for leaf in leaves]}."
        )
    if reverse:
        leaves = [leaf.flip(ax) for leaf in leaves]

    def call(a: list[Tensor], b: list[Tensor]) -> list[Tensor]:
        out = f(_nest.pack_sequence_as(elems, a), _nest.pack_sequence_as(elems, b))
        return [_as_tensor(o) for o in _nest.flatten(out)]

    current = leaves
    step = 1
    while step < n:
        earlier = [leaf.narrow(ax, 0, n - step) for leaf in current]
        later = [leaf.narrow(ax, step, n - step) for leaf in current]
        combined = call(earlier, later)
        current = [
            torch.cat([leaf.narrow(ax, 0, step), c.to(leaf.dtype)], dim=ax) for leaf, c in zip(current, combined)
        ]
        step *= 2
    if reverse:
        current = [leaf.flip(ax) for leaf in current]
    return _nest.pack_sequence_as(elems, current)


def custom_gradient(f: Callable[..., Any]) -> Callable[..., Any]:
    """``keras.ops.custom_gradient(f)``: a decorator for ``f(*args)`` returning ``(y, grad_fn)``;
    autograd then uses ``grad_fn(upstream)`` (or ``grad_fn(*args, upstream=...)``) for the
    gradients of ``args`` instead of differentiating ``f``.

    Example:
        >>> import torch
        >>> @custom_gradient
        ... def clipped(x):
        ...     return x * 1.0, lambda upstream: torch.clamp(upstream, -0.5, 0.5)
        >>> x = torch.tensor([2.0], requires_grad=True)
        >>> clipped(x).backward(torch.tensor([3.0])); x.grad.tolist()
        [0.5]
    """

    def wrapped(*args: Any) -> Any:
        state: dict[str, Any] = {}

        class _Fn(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, *inputs: Tensor) -> Any:
                with torch.enable_grad():
                    y, grad_fn = f(*[i.detach() for i in inputs])
                state["grad_fn"] = grad_fn
                flat = [_as_tensor(o).detach() for o in _nest.flatten(y)]
                state["structure"] = y
                return tuple(flat) if len(flat) > 1 else flat[0]

            @staticmethod
            def backward(ctx: Any, *upstream: Tensor) -> Any:
                grad_fn = state["grad_fn"]
                up = upstream[0] if len(upstream) == 1 else _nest.pack_sequence_as(state["structure"], list(upstream))
                try:
                    grads = grad_fn(up)
                except TypeError:
                    grads = grad_fn(*args, upstream=up)
                grads = grads if isinstance(grads, (tuple, list)) else (grads,)
                return tuple(None if g is None else _as_tensor(g) for g in grads)

        inputs = [_as_tensor(a) for a in args]
        out = _Fn.apply(*inputs)
        if isinstance(out, tuple):
            return _nest.pack_sequence_as(state["structure"], list(out))
        return out

    wrapped.__name__ = getattr(f, "__name__", "custom_gradient")
    wrapped.__doc__ = getattr(f, "__doc__", None)
    return wrapped


_TOKEN = re.compile(r"\(|\)|[A-Za-z_][A-Za-z0-9_]*|1|\.\.\.")


def _parse(side: str, pattern: str) -> list[list[str]]:
    groups: list[list[str]] = []
    current: list[str] | None = None
    position = 0
    for match in _TOKEN.finditer(side):
        if side[position : match.start()].strip():
            raise ValueError(
                f"keras.ops.rearrange: cannot read {side[position : match.start()]!r} in pattern {pattern!r}."
            )
        position = match.end()
        token = match.group()
        if token == "(":
            if current is not None:
                raise ValueError(f"keras.ops.rearrange: nested parentheses in pattern {pattern!r}.")
            current = []
        elif token == ")":
            if current is None:
                raise ValueError(f"keras.ops.rearrange: unbalanced ')' in pattern {pattern!r}.")
            groups.append(current)
            current = None
        elif current is not None:
            if token != "1":
                current.append(token)
        else:
            groups.append([] if token == "1" else [token])
    if side[position:].strip() or current is not None:
        raise ValueError(f"keras.ops.rearrange: cannot read the pattern {pattern!r}.")
    return groups


def rearrange(tensor: Any, pattern: str, **axes_lengths: int) -> Tensor:
    """``keras.ops.rearrange(tensor, pattern, **axes_lengths)``: einops' ``rearrange``: reorders,
    merges ``(h w)`` and splits axes by a pattern such as ``"b (h w) c -> b h w c"`` (with ``h=...``).
    """
    t = _as_tensor(tensor)
    if "->" not in pattern:
        raise ValueError(f"keras.ops.rearrange: the pattern needs '->'. Received: pattern={pattern!r}")
    left_text, right_text = pattern.split("->")
    if "..." in pattern:
        raise ValueError(f"keras.ops.rearrange: '...' is not supported by unison's rearrange. Received {pattern!r}.")
    left, right = _parse(left_text, pattern), _parse(right_text, pattern)
    if len(left) != t.dim():
        raise ValueError(
            f"keras.ops.rearrange: the pattern {left_text.strip()!r} names {len(left)} axes but the tensor has "
            f"{t.dim()} (shape {tuple(t.shape)})."
        )
    left_names = [n for g in left for n in g]
    right_names = [n for g in right for n in g]
    if sorted(left_names) != sorted(right_names) or len(set(left_names)) != len(left_names):
        raise ValueError(
            f"keras.ops.rearrange: both sides must name the same axes once each. Received: pattern={pattern!r}"
        )
    sizes: dict[str, int] = {k: int(v) for k, v in axes_lengths.items()}
    for group, size in zip(left, t.shape):
        unknown = [n for n in group if n not in sizes]
        known = 1
        for n in group:
            if n in sizes:
                known *= sizes[n]
        if len(unknown) > 1:
            raise ValueError(f"keras.ops.rearrange: give the sizes of all but one of {group} (as keyword arguments).")
        if unknown:
            if known == 0 or size % known:
                raise ValueError(f"keras.ops.rearrange: cannot split an axis of size {size} into {group}.")
            sizes[unknown[0]] = size // known
        elif known != size:
            raise ValueError(f"keras.ops.rearrange: the axis {group} has size {size}, not {known}.")
    split = t.reshape([sizes[n] for n in left_names]) if left_names else t.reshape(())
    moved = split.permute([left_names.index(n) for n in right_names]) if right_names else split
    out_shape = []
    for group in right:
        size = 1
        for n in group:
            size *= sizes[n]
        out_shape.append(size)
    return moved.reshape(out_shape)


__all__ = ["associative_scan", "custom_gradient", "rearrange"]

# Symbolic keras.Input tensors defer rearrange to the functional graph (see unison.ops._dispatch).
wrap_namespace(globals(), ["rearrange"])
