"""What a Keras optimizer does right after it updates the weights: the moving average of the
weights (``use_ema``) and the weight constraints (``kernel_constraint=``, ``add_weight(constraint=)``).

Keras 3's order, per update (``BaseOptimizer.apply``): the update itself, then the moving average
``average = m * average + (1 - m) * weight`` with ``m = 0`` on the optimizer's first update and
``ema_momentum`` after it, then, every ``ema_overwrite_frequency`` updates, the weights take the
averages' values, then each constrained weight becomes ``constraint(weight)``.

Both run as one torch step post-hook on the optimizer's torch optimizer, registered when the
optimizer is built and only when there is something to do: a model without constraints and
without ``use_ema`` pays nothing per step. Every replica runs the same hook on the same
(synchronised) weights, so the weights and their averages stay equal across replicas.

Example:
    >>> import torch
    >>> from unison.keras import optimizers
    >>> w = torch.nn.Parameter(torch.tensor([1.0]))
    >>> opt = optimizers.SGD(learning_rate=0.5, use_ema=True, ema_momentum=0.9)
    >>> for _ in range(2):
    ...     _ = opt.apply_gradients([(torch.tensor([1.0]), w)])
    >>> round(float(w), 4), round(float(ema_average_of(opt, w)), 4)   # 1 - 0.5 - 0.5; 0.9*0.5 + 0.1*0
    (0.0, 0.45)
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.constraints import apply_constraints, constrained

__all__ = [
    "after_step",
    "copy_weights_to_averages",
    "ema_average_of",
    "finalize_variable_values",
    "swap_ema_weights",
]


class _EMAState:
    """The averages of one optimizer's weights, in the torch optimizer's parameter order."""

    def __init__(self, params: list[torch.Tensor], momentum: float, overwrite_every: int | None) -> None:
        self.params = params
        with torch.no_grad():
            self.averages = [p.detach().clone() for p in params]
        self.momentum = momentum
        self.overwrite_every = overwrite_every
        self.updates = 0
        self.index = {id(p): i for i, p in enumerate(params)}

    def update(self) -> None:
        with torch.no_grad():
            # lerp_(w, 1 - m): average + (1 - m) * (w - average) = m * average + (1 - m) * w;
            # Keras's first update copies the weights (momentum 0).
            weight = 1.0 if self.updates == 0 else 1.0 - self.momentum
            torch._foreach_lerp_(self.averages, [p.detach() for p in self.params], weight)
            self.updates += 1
            if self.overwrite_every and self.updates % self.overwrite_every == 0:
                torch._foreach_copy_([p.data for p in self.params], self.averages)


def _trainable(params: Any) -> list[torch.Tensor]:
    found: list[torch.Tensor] = []
    for item in params:
        group = item["params"] if isinstance(item, dict) else [item]
        found.extend(p for p in group if isinstance(p, torch.Tensor) and p.requires_grad)
    return found


def after_step(optimizer: Any, torch_optimizer: torch.optim.Optimizer, params: Any) -> None:
    """Register the post-update work of ``optimizer`` (a Keras optimizer) on its torch optimizer."""
    params = list(params)
    ema: _EMAState | None = None
    if getattr(optimizer, "use_ema", False):
        ema = _EMAState(_trainable(params), optimizer.ema_momentum, optimizer.ema_overwrite_frequency)
    optimizer._ema_state = ema
    with_constraints = constrained(params)
    if ema is None and not with_constraints:
        return

    def hook(_opt: torch.optim.Optimizer, _args: Any, _kwargs: Any) -> None:
        if ema is not None:
            ema.update()
        if with_constraints:
            apply_constraints(with_constraints)

    torch_optimizer.register_step_post_hook(hook)


def _state(optimizer: Any) -> _EMAState | None:
    inner = getattr(optimizer, "inner_optimizer", None)  # LossScaleOptimizer keeps its own in the inner one
    return getattr(inner if inner is not None else optimizer, "_ema_state", None)


def ema_average_of(optimizer: Any, variable: torch.Tensor) -> torch.Tensor | None:
    """The moving average the optimizer keeps for ``variable`` (``None`` without ``use_ema``)."""
    state = _state(optimizer)
    if state is None or id(variable) not in state.index:
        return None
    return state.averages[state.index[id(variable)]]


def finalize_variable_values(optimizer: Any, var_list: Any) -> None:
    """Keras's ``finalize_variable_values``: with ``use_ema``, the weights take their averages."""
    state = _state(optimizer)
    if state is None:
        return
    with torch.no_grad():
        for variable in var_list:
            i = state.index.get(id(variable))
            if i is not None:
                variable.data.copy_(state.averages[i])


def swap_ema_weights(optimizer: Any, var_list: Any) -> bool:
    """Exchange the values of the weights in ``var_list`` and their averages (``SwapEMAWeights``);
    ``False`` when there are no averages yet (the optimizer is not built)."""
    state = _state(optimizer)
    if state is None:
        return False
    with torch.no_grad():
        for variable in var_list:
            i = state.index.get(id(variable))
            if i is not None:
                held = variable.detach().clone()
                variable.data.copy_(state.averages[i])
                state.averages[i].copy_(held)
    return True


def copy_weights_to_averages(optimizer: Any, var_list: Any) -> None:
    """The averages take the weights' values (SwapEMAWeights's last epoch, before finalize)."""
    state = _state(optimizer)
    if state is None:
        return
    with torch.no_grad():
        for variable in var_list:
            i = state.index.get(id(variable))
            if i is not None:
                state.averages[i].copy_(variable.detach())
