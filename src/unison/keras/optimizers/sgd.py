"""``SGD``: gradient descent with optional (Nesterov) momentum, on ``torch.optim.SGD``.

Example:
    >>> SGD(learning_rate=0.1).learning_rate
    0.1
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from unison.keras.optimizers.optimizer import Optimizer, OptimizerOptions, ParamList, _for_torch, _number

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["SGD"]


class SGD(Optimizer):
    """Gradient descent with optional (Nesterov) momentum; Keras 3 defaults.

    Example:
        >>> SGD(momentum=0.9).get_config()["momentum"]
        0.9
    """

    _CONFIG = ("momentum", "nesterov")

    def __init__(
        self,
        learning_rate: float = 0.01,
        momentum: float = 0.0,
        nesterov: bool = False,
        **options: Unpack[OptimizerOptions],
    ) -> None:
        super().__init__(learning_rate, **options)
        self.momentum = _number(momentum, "momentum", high=1.0)
        self.nesterov = bool(nesterov)

    def _make(self, params: ParamList) -> torch.optim.Optimizer:
        # torch rejects nesterov without momentum; Keras's update is then plain SGD anyway.
        nesterov = self.nesterov and self.momentum > 0
        return torch.optim.SGD(_for_torch(params), lr=self._learning_rate, momentum=self.momentum, nesterov=nesterov)
