"""``keras.optimizers.legacy``: Keras 2's module name for its optimizers, for TF 2.11+ programs.

TF's tutorials written for ``tf_keras`` use ``tf.keras.optimizers.legacy.SGD()`` and friends;
here they are the same optimizers as ``keras.optimizers`` (Keras 3 semantics and defaults).

Example:
    >>> from unison.keras import optimizers
    >>> optimizers.legacy.RMSprop(learning_rate=0.1).learning_rate
    0.1
"""

from unison.keras.optimizers import SGD, Adagrad, Adam, AdamW, Optimizer, RMSprop

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop"]
