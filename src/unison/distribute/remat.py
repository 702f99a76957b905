"""Activation checkpointing (rematerialisation) of a layer, a block or a function.

A checkpointed block keeps only its inputs during forward and recomputes its intermediate
activations in backward (``torch.utils.checkpoint.checkpoint`` with ``use_reentrant=False``):
the gradients are the same, peak activation memory falls from "every activation of every
block" to "the block inputs plus one block's activations", and a step costs one more forward.

The module is changed in place (its ``forward`` is wrapped), so parameter names, state dicts
and checkpoints stay as they were, and it composes with :func:`unison.distribute.sharding.shard_model`
(apply it first: the sharded block then gathers its parameters again for the recomputation).

Example:
    >>> import torch
    >>> from unison.distribute.remat import checkpoint_activations, is_rematerialized
    >>> block = checkpoint_activations(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh()))
    >>> is_rematerialized(block)
    True
    >>> block(torch.ones(2, 4, requires_grad=True)).sum().backward()
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import torch
from torch.utils.checkpoint import checkpoint

__all__ = ["checkpoint_activations", "is_rematerialized"]

_MARK = "_unison_remat_original_forward"
F = TypeVar("F", bound=Callable[..., Any])


def checkpoint_activations(target: Any) -> Any:
    """Recompute ``target``'s activations in backward instead of keeping them.

    Args:
        target: a ``torch.nn.Module`` (changed in place and returned) or a function (a wrapped
            function is returned). Calls without gradients (inference, ``torch.no_grad``) run
            the original forward untouched.

    Returns:
        The same module, or the wrapped function.

    Raises:
        TypeError: ``target`` is neither a module nor callable.
    """
    if isinstance(target, torch.nn.Module):
        if is_rematerialized(target):
            return target
        original = target.forward
        setattr(target, _MARK, original)
        target.forward = functools.partial(_checkpointed, original)
        return target
    if callable(target):
        return functools.wraps(target)(functools.partial(_checkpointed, target))
    raise TypeError(
        "checkpoint_activations expects a torch.nn.Module (a layer or block) or a function. "
        f"Received: {type(target).__name__}"
    )


def is_rematerialized(module: torch.nn.Module) -> bool:
    """True when ``module``'s activations are recomputed in backward."""
    return hasattr(module, _MARK)


def _checkpointed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    if not torch.is_grad_enabled():
        return fn(*args, **kwargs)
    # use_reentrant=False: supports keyword arguments, inputs that do not require grad and
    # nested checkpoints, and is the variant PyTorch recommends; RNG state is restored for
    # the recomputation, so dropout masks match the first forward.
    return checkpoint(fn, *args, use_reentrant=False, **kwargs)
