"""``tf.config.experimental.enable_op_determinism`` and the seed rule it brings.

With op determinism on, TF runs every op deterministically and refuses what cannot be: a random op
with neither a global seed (``tf.random.set_seed``) nor an op seed raises ``RuntimeError`` ("Random
ops require a seed to be set when determinism is enabled..."), and so does
``tf.random.Generator.from_non_deterministic_state``. unison does the same: its random ops call
:func:`require_seed`, and enabling turns on ``torch.use_deterministic_algorithms`` (torch then
picks its deterministic kernels, e.g. for CUDA scatter/index-add, and raises for ops that have
none). ``disable_op_determinism`` (not public in TF either, where tests use it the same way)
turns both off again.

Example:
    >>> import unison as tf
    >>> from unison.ops import determinism
    >>> tf.random.set_seed(None)
    >>> tf.config.experimental.enable_op_determinism()
    >>> try:
    ...     tf.random.normal([2])
    ... except RuntimeError as e:
    ...     print(str(e)[:46])
    Random ops require a seed to be set when deter
    >>> determinism.disable_op_determinism()
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator

import torch

__all__ = [
    "disable_op_determinism",
    "enable_op_determinism",
    "global_seed",
    "is_op_determinism_enabled",
    "note_global_seed",
    "require_seed",
    "seeded",
]

# The process's two settings TF keeps in its context: determinism on/off and the global seed.
_STATE: dict[str, object] = {"enabled": False, "seed": None}
# Draws made inside a seeded scope (the stateless ops, Generators) are seeded whatever the global seed;
# a thread-local depth, since tf.data may draw on its worker threads.
_SCOPE = threading.local()

SEED_REQUIRED = (
    "Random ops require a seed to be set when determinism is enabled. Please set a seed before running "
    "the op, e.g. by calling tf.random.set_seed(1)."
)


def _torch_deterministic(mode: bool) -> None:
    """``torch.use_deterministic_algorithms(mode)`` without its import of torch._inductor (8 s on a
    small machine, for a compiler unison's eager functions do not use); set there too once loaded."""
    inductor = sys.modules.get("torch._inductor.config")
    if inductor is not None:
        setattr(inductor, "deterministic", mode)  # noqa: B010 (a config module mypy cannot see into)
    torch._C._set_deterministic_algorithms(mode)


def enable_op_determinism() -> None:
    """Run ops deterministically from now on (TF's ``tf.config.experimental.enable_op_determinism``).

    Random ops then need a seed (``tf.random.set_seed`` or the op's ``seed=``), else ``RuntimeError``.
    """
    _torch_deterministic(True)
    _STATE["enabled"] = True


def disable_op_determinism() -> None:
    """Undo :func:`enable_op_determinism` (TF keeps this one private; tests use it to restore state)."""
    _torch_deterministic(False)
    _STATE["enabled"] = False


def is_op_determinism_enabled() -> bool:
    """Whether :func:`enable_op_determinism` is in effect."""
    return bool(_STATE["enabled"])


def note_global_seed(seed: int | None) -> None:
    """Record ``tf.random.set_seed``'s seed (None: no global seed, as at start-up)."""
    _STATE["seed"] = seed


def global_seed() -> int | None:
    """The global seed ``tf.random.set_seed`` set, or None."""
    seed = _STATE["seed"]
    return None if seed is None else int(seed)  # type: ignore[call-overload]


def require_seed(op_seed: object = None) -> None:
    """Raise TF's ``RuntimeError`` for an unseeded random op while determinism is on."""
    if _STATE["enabled"] and op_seed is None and _STATE["seed"] is None and not getattr(_SCOPE, "depth", 0):
        raise RuntimeError(SEED_REQUIRED)


@contextlib.contextmanager
def seeded() -> Iterator[None]:
    """Draws inside are seeded (a stateless op's seed, a Generator's state): :func:`require_seed` passes."""
    _SCOPE.depth = getattr(_SCOPE, "depth", 0) + 1
    try:
        yield
    finally:
        _SCOPE.depth -= 1
