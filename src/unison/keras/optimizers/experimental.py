"""``keras.optimizers.experimental``: Keras 2.11's name for the new optimizers (``tf_keras``).

TF 2.9-2.10 programs wrote ``tf.keras.optimizers.experimental.AdamW(...)``; here they are the
optimizers of ``keras.optimizers``. ``Adafactor`` is not built: asking for it says so.

Example:
    >>> from unison.keras import optimizers
    >>> optimizers.experimental.SGD is optimizers.SGD
    True
"""

from typing import Any

from unison.keras.optimizers.adagrad import Adagrad
from unison.keras.optimizers.adam import Adam, AdamW
from unison.keras.optimizers.adaptive import Adadelta, Adamax, Ftrl, Nadam
from unison.keras.optimizers.optimizer import Optimizer
from unison.keras.optimizers.rmsprop import RMSprop
from unison.keras.optimizers.sgd import SGD

__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "Ftrl", "Nadam", "Optimizer", "RMSprop"]


def __getattr__(name: str) -> Any:
    if name == "Adafactor":
        raise AttributeError(
            "unison does not implement keras.optimizers.experimental.Adafactor; in torch use torch.optim.Adafactor "
            "(wrap it: keras.optimizers.get(torch_optimizer))."
        )
    raise AttributeError(f"module 'unison.keras.optimizers.experimental' has no attribute {name!r}")
