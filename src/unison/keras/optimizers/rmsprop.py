"""``RMSprop`` on ``torch.optim.RMSprop``, with Keras 3's defaults.

Example:
    >>> RMSprop().get_config()["rho"]
    0.9
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from unison.keras.optimizers.optimizer import Optimizer, OptimizerOptions, ParamList, _for_torch, _number

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["RMSprop"]


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
        return torch.optim.RMSprop(
            _for_torch(params),
            lr=self._learning_rate,
            alpha=self.rho,
            eps=self.epsilon,
            momentum=self.momentum,
            centered=self.centered,
        )
