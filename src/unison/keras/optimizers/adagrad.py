"""``Adagrad`` on ``torch.optim.Adagrad``, with Keras 3's defaults.

Example:
    >>> Adagrad().get_config()["initial_accumulator_value"]
    0.1
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from unison.keras.optimizers.optimizer import Optimizer, OptimizerOptions, ParamList, _for_torch, _number

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad; Keras 3 defaults (``initial_accumulator_value=0.1``).

    Example:
        >>> Adagrad().get_config()["initial_accumulator_value"]
        0.1
    """

    _CONFIG = ("initial_accumulator_value", "epsilon")

    def __init__(
        self,
        learning_rate: float = 0.001,
        initial_accumulator_value: float = 0.1,
        epsilon: float = 1e-7,
        **options: Unpack[OptimizerOptions],
    ) -> None:
        super().__init__(learning_rate, **options)
        self.initial_accumulator_value = _number(initial_accumulator_value, "initial_accumulator_value")
        self.epsilon = _number(epsilon, "epsilon")

    def _make(self, params: ParamList) -> torch.optim.Optimizer:
        return torch.optim.Adagrad(
            _for_torch(params),
            lr=self._learning_rate,
            eps=self.epsilon,
            initial_accumulator_value=self.initial_accumulator_value,
        )
