"""``keras.optimizers.experimental``: Keras 2.11's name for the new optimizers (``tf_keras``).

TF 2.9-2.10 programs wrote ``tf.keras.optimizers.experimental.AdamW(...)``; here they are the
optimizers of ``keras.optimizers``.

Example:
    >>> from unison.keras import optimizers
    >>> optimizers.experimental.SGD is optimizers.SGD
    True
"""

from unison.keras.optimizers.adagrad import Adagrad
from unison.keras.optimizers.adam import Adam, AdamW
from unison.keras.optimizers.adaptive import Adadelta, Adamax, Ftrl, Nadam
from unison.keras.optimizers.optimizer import Optimizer
from unison.keras.optimizers.recent import Adafactor
from unison.keras.optimizers.rmsprop import RMSprop
from unison.keras.optimizers.sgd import SGD

__all__ = [
    "SGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Ftrl",
    "Nadam",
    "Optimizer",
    "RMSprop",
]
