"""unison: TensorFlow's distribution strategies and a distributed optimizer on PyTorch.

``import unison as tf`` runs a ``tf.distribute`` + ``tf.keras`` program on PyTorch.

Example:
    >>> import unison as tf
    >>> strategy = tf.distribute.MirroredStrategy()
    >>> strategy.num_replicas_in_sync
    1
"""

from unison import distribute, errors, keras, nn
from unison.optim import Average, DistributedOptimizer, Sum

__version__ = "0.1.0"

__all__ = ["Average", "DistributedOptimizer", "Sum", "__version__", "distribute", "errors", "keras", "nn"]
