"""``tf.distribute.experimental``: options and strategies TF keeps under ``experimental``.

Example:
    >>> import unison as tf
    >>> opts = tf.distribute.experimental.CommunicationOptions(timeout_seconds=60)
    >>> opts.implementation is tf.distribute.experimental.CommunicationImplementation.AUTO
    True
"""

from typing import Any

from unison.distribute.central_storage import CentralStorageStrategy
from unison.distribute.experimental import partitioners
from unison.distribute.experimental.compat import CollectiveHints, MultiWorkerMirroredStrategy, PreemptionWatcher
from unison.distribute.input_options import ValueContext
from unison.distribute.multi_worker import (
    CollectiveCommunication,
    CommunicationImplementation,
    CommunicationOptions,
)
from unison.distribute.preemption import PreemptionCheckpointHandler, TerminationConfig
from unison.distribute.tpu import TPUStrategyV1 as TPUStrategy

__all__ = [
    "CentralStorageStrategy",
    "CollectiveCommunication",
    "CollectiveHints",
    "CommunicationImplementation",
    "CommunicationOptions",
    "MultiWorkerMirroredStrategy",
    "ParameterServerStrategy",
    "PreemptionCheckpointHandler",
    "PreemptionWatcher",
    "ShardedCheckpoint",
    "TPUStrategy",
    "TerminationConfig",
    "ValueContext",
    "checkpoint_activations",
    "coordinator",
    "partitioners",
    "rpc",
    "shard_model",
]

# Sharded state (FSDP2, DCP) loads torch.distributed's checkpoint and FSDP modules on first use.
_SHARDING = {
    "shard_model": "unison.distribute.sharding",
    "ShardedCheckpoint": "unison.distribute.sharded_checkpoint",
    "checkpoint_activations": "unison.distribute.remat",
}


def __getattr__(name: str) -> Any:
    # The parameter-server stack (grpc, cloudpickle) loads on first use, not at `import unison`.
    import importlib

    if name == "coordinator":
        return importlib.import_module("unison.distribute.experimental.coordinator")
    if name in _SHARDING:
        return getattr(importlib.import_module(_SHARDING[name]), name)
    if name == "ParameterServerStrategy":
        from unison.distribute import parameter_server

        return parameter_server.ParameterServerStrategy
    if name == "rpc":
        return importlib.import_module("unison.distribute.experimental.rpc")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
