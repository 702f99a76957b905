"""``keras.optimizers.legacy``: Keras 2's module name for its optimizers, for TF 2.11+ programs.

TF's tutorials written for ``tf_keras`` use ``tf.keras.optimizers.legacy.SGD()`` and friends;
here they are the same optimizers as ``keras.optimizers`` (their update rules are Keras 2's too,
compared with tf_keras in tests/conformance/test_vs_keras_optimizers_legacy.py), except ``Nadam``:
Keras 2's legacy Nadam computes its momentum schedule from its ``decay`` argument
(``0.96 ** (decay * t)``, a constant ``beta_1 / 2`` at the default ``decay=0``), so it has its own class.

Example:
    >>> from unison.keras import optimizers
    >>> optimizers.legacy.RMSprop(learning_rate=0.1).learning_rate
    0.1
"""

from typing import Any

import torch

from unison.keras.optimizers.adagrad import Adagrad
from unison.keras.optimizers.adam import Adam, AdamW
from unison.keras.optimizers.adaptive import Adadelta, Adamax, Ftrl, _NadamRule
from unison.keras.optimizers.adaptive import Nadam as _Nadam
from unison.keras.optimizers.optimizer import Optimizer
from unison.keras.optimizers.rmsprop import RMSprop
from unison.keras.optimizers.sgd import SGD


class Nadam(_Nadam):
    """Keras 2's legacy Nadam: the momentum schedule is ``u_t = b1 (1 - 0.5 * 0.96 ** (decay * t))``.

    Example:
        >>> Nadam(learning_rate=0.01).get_config()["decay"]
        0.0
    """

    def __init__(self, learning_rate: float = 0.001, *args: Any, decay: float = 0.0, **kwargs: Any) -> None:
        super().__init__(learning_rate, *args, **kwargs)
        self.decay = float(decay)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "decay": self.decay}

    def _make(self, params: Any) -> torch.optim.Optimizer:
        return _NadamRule(
            params,
            lr=self._learning_rate,
            beta_1=self.beta_1,
            beta_2=self.beta_2,
            eps=self.epsilon,
            schedule_scale=self.decay,
        )


# Keras 2's legacy module had Adadelta, Adagrad, Adam, Adamax, Ftrl, Nadam, RMSprop and SGD
# (AdamW is kept here for programs that reached it through this module before).
__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "Ftrl", "Nadam", "Optimizer", "RMSprop"]
