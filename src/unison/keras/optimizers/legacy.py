"""``keras.optimizers.legacy``: Keras 2's module name for its optimizers, for TF 2.11+ programs.

TF's tutorials written for ``tf_keras`` use ``tf.keras.optimizers.legacy.SGD()`` and friends;
here they are the same optimizers as ``keras.optimizers`` (Keras 3 semantics and defaults).

Example:
    >>> from unison.keras import optimizers
    >>> optimizers.legacy.RMSprop(learning_rate=0.1).learning_rate
    0.1
"""

from unison.keras.optimizers.adagrad import Adagrad
from unison.keras.optimizers.adam import Adam, AdamW
from unison.keras.optimizers.adaptive import Adadelta, Adamax, Ftrl, Nadam
from unison.keras.optimizers.optimizer import Optimizer
from unison.keras.optimizers.rmsprop import RMSprop
from unison.keras.optimizers.sgd import SGD

# Keras 2's legacy module had Adadelta, Adagrad, Adam, Adamax, Ftrl, Nadam, RMSprop and SGD
# (AdamW is kept here for programs that reached it through this module before).
__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "Ftrl", "Nadam", "Optimizer", "RMSprop"]
