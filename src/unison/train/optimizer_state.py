"""Everything of a Keras optimizer that ``tf.train.Checkpoint`` saves and restores.

TF's checkpoint of a Keras optimizer holds its variables: ``iterations``, the learning rate when
it is a number (a schedule is code, not state: it follows ``iterations``), every slot (Adam's
momenta and velocities), the moving averages of ``use_ema``, and a ``LossScaleOptimizer``'s scale
and its count of finite steps. A restored run must continue exactly as the uninterrupted one:
``iterations`` drives the schedule and Adam's bias correction, so it is restored even when
the optimizer has not taken a step yet. The slots and averages of an optimizer that is not built
yet (a fresh one, before its first step) wait on it and are loaded when it is built, as TF
restores slot variables when they are created (deferred restoration).

Example:
    >>> import torch
    >>> from unison import keras
    >>> from unison.train.optimizer_state import optimizer_state, restore_optimizer_state
    >>> w = torch.nn.Parameter(torch.zeros(2))
    >>> opt = keras.optimizers.Adam(0.1)
    >>> _ = opt.apply_gradients([(torch.ones(2), w)])
    >>> fresh = keras.optimizers.Adam(0.1)
    >>> load = lambda torch_opt, state, path, name: torch_opt.load_state_dict(state)
    >>> restore_optimizer_state(fresh, optimizer_state(opt), "ckpt", "optimizer", load)
    False
    >>> int(fresh.iterations)
    1
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

__all__ = ["apply_deferred", "optimizer_state", "restore_optimizer_state"]


def _ema(optimizer: Any) -> Any:
    return getattr(optimizer, "_ema_state", None)


def _builder(optimizer: Any) -> Any:
    """The optimizer whose ``build`` makes the torch optimizer (a LossScaleOptimizer's inner one)."""
    inner = getattr(optimizer, "inner_optimizer", None)
    return inner if inner is not None else optimizer


def optimizer_state(optimizer: Any) -> dict[str, Any]:
    """The checkpoint entry of a Keras optimizer (``unison.keras.optimizers.Optimizer``)."""
    builder = _builder(optimizer)
    built = optimizer.torch_optimizer
    state: dict[str, Any] = {
        "torch": None if built is None else built.state_dict(),
        # a schedule is not state (TF saves no learning-rate variable for one): it follows iterations
        "learning_rate": (
            float(optimizer.learning_rate)
            if hasattr(optimizer, "learning_rate") and getattr(builder, "_schedule", None) is None
            else None
        ),
        "iterations": int(optimizer.iterations),
    }
    if builder is not optimizer:
        state["inner_iterations"] = int(builder.iterations)
    ema = _ema(builder)
    if ema is not None:
        state["ema"] = {"averages": [a.detach().cpu().clone() for a in ema.averages], "updates": int(ema.updates)}
    if hasattr(optimizer, "dynamic_scale"):
        state["loss_scale"] = {
            "dynamic_scale": float(optimizer.dynamic_scale),
            "step_counter": int(optimizer.step_counter),
            "skipped_steps": int(optimizer.skipped_steps),
        }
    return state


def restore_optimizer_state(
    optimizer: Any, state: dict[str, Any], path: str, name: str, restore: Callable[[Any, Any, str, str], None]
) -> bool:
    """Restore ``state`` into ``optimizer``; False when its slots wait for the optimizer's build.

    Raises:
        ValueError: the saved slots or averages do not fit this optimizer's parameters (another model).
    """
    builder = _builder(optimizer)
    if state.get("learning_rate") is not None and getattr(builder, "_schedule", None) is None:
        optimizer.learning_rate = state["learning_rate"]
    if state.get("iterations") is not None:
        optimizer.iterations.fill_(int(state["iterations"]))
    if state.get("inner_iterations") is not None and builder is not optimizer:
        builder.iterations.fill_(int(state["inner_iterations"]))
    scale = state.get("loss_scale")
    if scale is not None and hasattr(optimizer, "dynamic_scale"):
        optimizer.dynamic_scale = float(scale["dynamic_scale"])
        optimizer.step_counter = int(scale["step_counter"])
        optimizer.skipped_steps = int(scale["skipped_steps"])
    if state.get("torch") is None:
        return True
    if optimizer.torch_optimizer is None:
        builder.__dict__["_restore_on_build"] = (state, path, name, restore)  # TF's deferred slot restoration
        return False
    _load_built(builder, state, path, name, restore)
    return True


def apply_deferred(optimizer: Any) -> None:
    """Called by ``Optimizer.build``: load the slots a restore left waiting for this build."""
    waiting = optimizer.__dict__.pop("_restore_on_build", None)
    if waiting is not None:
        _load_built(optimizer, *waiting)


def _load_built(
    builder: Any, state: dict[str, Any], path: str, name: str, restore: Callable[[Any, Any, str, str], None]
) -> None:
    # ``restore`` is the checkpoint's own state loader (its checks and messages), handed in so this
    # module, which checkpoint.py imports, imports nothing back
    restore(builder.torch_optimizer, state["torch"], path, name)
    saved = state.get("ema")
    ema = _ema(builder)
    if saved is None or ema is None:
        return
    averages = saved["averages"]
    if [tuple(a.shape) for a in averages] != [tuple(a.shape) for a in ema.averages]:
        raise ValueError(
            f"Checkpoint {path!r}: the moving averages of {name!r} (use_ema) were saved for weights of "
            f"shapes {[tuple(a.shape) for a in averages][:5]}, but this optimizer averages weights of shapes "
            f"{[tuple(a.shape) for a in ema.averages][:5]}. It is a checkpoint of another model."
        )
    with torch.no_grad():
        for mine, value in zip(ema.averages, averages):
            mine.copy_(value.to(mine.device, mine.dtype))
    ema.updates = int(saved["updates"])
