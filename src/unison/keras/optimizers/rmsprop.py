"""``RMSprop`` with Keras's update rule and Keras 3's defaults.

Keras divides by ``sqrt(velocity + epsilon)``, torch's ``RMSprop`` by ``sqrt(velocity) + epsilon``
(another step wherever the velocity is small or ``epsilon`` large), so the rule is written here as
a small ``torch.optim.Optimizer`` (the pattern of :mod:`.adaptive`).

Example:
    >>> RMSprop().get_config()["rho"]
    0.9
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from unison.keras.optimizers.adaptive import _RuleOptimizer
from unison.keras.optimizers.optimizer import Optimizer, OptimizerOptions, ParamList, _number

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["RMSprop"]


class _RMSpropRule(_RuleOptimizer):
    # Keras's slots, in its order: velocities, then momentums (momentum > 0), then average gradients
    # (centered), the last two made on first use so that `variables` lists only what Keras has
    _SLOTS = ("velocity",)

    def _update(self, p: torch.Tensor, g: torch.Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        rho, momentum = group["rho"], group["momentum"]
        velocity = state["velocity"]
        velocity.mul_(rho).addcmul_(g, g, value=1.0 - rho)
        if momentum > 0 and "momentum" not in state:
            state["momentum"] = torch.zeros_like(p)
        denominator = velocity
        if group["centered"]:
            average = state.setdefault("average_gradient", torch.zeros_like(p))
            average.mul_(rho).add_(g, alpha=1.0 - rho)
            denominator = velocity - average * average
        increment = group["lr"] * g / (denominator + group["eps"]).sqrt()
        if momentum > 0:
            state["momentum"].mul_(momentum).add_(increment)
            p.sub_(state["momentum"])
        else:
            p.sub_(increment)


class RMSprop(Optimizer):
    """RMSprop (plain momentum, optional centering); Keras 3 defaults.

    Example:
        >>> RMSprop().get_config()["rho"]
        0.9
    """

    _CONFIG = ("rho", "momentum", "epsilon", "centered")

    def __init__(
        self,
        learning_rate: float = 0.001,
        rho: float = 0.9,
        momentum: float = 0.0,
        epsilon: float = 1e-7,
        centered: bool = False,
        **options: Unpack[OptimizerOptions],
    ) -> None:
        super().__init__(learning_rate, **options)
        self.rho = _number(rho, "rho", high=1.0)
        self.momentum = _number(momentum, "momentum")
        self.epsilon = _number(epsilon, "epsilon")
        self.centered = bool(centered)

    def _make(self, params: ParamList) -> torch.optim.Optimizer:
        return _RMSpropRule(
            params,
            lr=self._learning_rate,
            rho=self.rho,
            eps=self.epsilon,
            momentum=self.momentum,
            centered=self.centered,
        )
