"""``tf.distribute``: strategies, replica contexts and input distribution on PyTorch.

Example:
    >>> import unison as tf
    >>> tf.distribute.get_strategy().num_replicas_in_sync
    1
"""

from typing import Any

from unison.distribute import cluster_resolver, experimental
from unison.distribute.cross_device_ops import (
    CrossDeviceOps,
    HierarchicalCopyAllReduce,
    NcclAllReduce,
    ReductionToOneDevice,
)
from unison.distribute.input import InputContext
from unison.distribute.input_options import InputOptions, InputReplicationMode
from unison.distribute.mirrored import MirroredStrategy
from unison.distribute.multi_worker import MultiWorkerMirroredStrategy
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
from unison.distribute.tpu import TPUStrategy
from unison.distribute.values import (
    DistributedDataset,
    DistributedIterator,
    DistributedValues,
    RunOptions,
    experimental_set_strategy,
)

__all__ = [
    "CrossDeviceOps",
    "DistributedDataset",
    "DistributedIterator",
    "DistributedValues",
    "HierarchicalCopyAllReduce",
    "InputContext",
    "InputOptions",
    "InputReplicationMode",
    "MirroredStrategy",
    "MultiWorkerMirroredStrategy",
    "NcclAllReduce",
    "OneDeviceStrategy",
    "ParameterServerStrategy",
    "ReduceOp",
    "ReductionToOneDevice",
    "ReplicaContext",
    "RunOptions",
    "Server",
    "Strategy",
    "StrategyExtended",
    "TPUStrategy",
    "cluster_resolver",
    "coordinator",
    "experimental",
    "experimental_set_strategy",
    "get_replica_context",
    "get_strategy",
    "has_strategy",
    "in_cross_replica_context",
]


def __getattr__(name: str) -> Any:
    # The parameter-server stack (grpc, cloudpickle) loads on first use, not at `import unison`.
    import importlib

    if name == "coordinator":
        return importlib.import_module("unison.distribute.coordinator")
    if name in ("ParameterServerStrategy", "Server"):
        from unison.distribute import parameter_server

        return getattr(parameter_server, name)
    if name in _OTHER_STRATEGIES:
        raise AttributeError(
            f"unison does not implement tf.distribute.{name}: {_OTHER_STRATEGIES[name]} unison's strategies are "
            "MirroredStrategy, MultiWorkerMirroredStrategy, ParameterServerStrategy, OneDeviceStrategy and "
            "experimental.CentralStorageStrategy."
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# TF strategies unison leaves out, and what to use instead (named in the AttributeError).
_OTHER_STRATEGIES = {
    "CentralStorageStrategy": "TF has it only as tf.distribute.experimental.CentralStorageStrategy, which unison "
    "implements.",
}
