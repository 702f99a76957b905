"""unison: TensorFlow's distribution strategies and a distributed optimizer on PyTorch.

``import unison as tf`` runs a ``tf.distribute`` + ``tf.keras`` program on PyTorch.

Example:
    >>> import unison as tf
    >>> strategy = tf.distribute.MirroredStrategy()
    >>> strategy.num_replicas_in_sync
    1
"""

from unison import distribute, errors, keras, nn
from unison import summary as summary  # tf.summary (TensorBoard event files)
from unison.api import (
    allgather,
    allreduce,
    barrier,
    broadcast,
    broadcast_optimizer_state,
    broadcast_parameters,
    init,
    local_rank,
    local_size,
    rank,
    size,
)
from unison.optim import Adasum, Average, Compression, DistributedOptimizer, Sum

__version__ = "0.1.0"

__all__ = [
    "Adasum", "Average", "Compression", "DistributedOptimizer", "Sum", "__version__", "allgather",
    "allreduce", "barrier", "broadcast", "broadcast_optimizer_state", "broadcast_parameters",
    "distribute", "errors", "init", "keras", "local_rank", "local_size", "nn", "rank", "size",
]
