"""``tf.distribute``: strategies, replica contexts and input distribution on PyTorch.

Example:
    >>> import unison as tf
    >>> tf.distribute.get_strategy().num_replicas_in_sync
    1
"""

from unison.distribute import cluster_resolver, coordinator, experimental
from unison.distribute.input import InputContext
from unison.distribute.mirrored import MirroredStrategy
from unison.distribute.multi_worker import MultiWorkerMirroredStrategy
from unison.distribute.parameter_server import ParameterServerStrategy, Server
from unison.distribute.strategy import (
    OneDeviceStrategy,
    ReduceOp,
    ReplicaContext,
    Strategy,
    StrategyExtended,
    get_replica_context,
    get_strategy,
    has_strategy,
    in_cross_replica_context,
)

__all__ = [
    "InputContext",
    "MirroredStrategy",
    "MultiWorkerMirroredStrategy",
    "OneDeviceStrategy",
    "ParameterServerStrategy",
    "ReduceOp",
    "ReplicaContext",
    "Server",
    "Strategy",
    "StrategyExtended",
    "cluster_resolver",
    "coordinator",
    "experimental",
    "get_replica_context",
    "get_strategy",
    "has_strategy",
    "in_cross_replica_context",
]
