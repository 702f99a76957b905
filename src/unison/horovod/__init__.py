"""Horovod's API on unison beyond ``init``/``rank``/``size``: collectives, the TF tape, Keras pieces, elastic.

``import unison as hvd`` reaches every name here (``hvd.allreduce``, ``hvd.DistributedGradientTape``,
``hvd.callbacks.MetricAverageCallback``, ``hvd.elastic.run``, ...); see docs/horovod.md.
"""

from unison.horovod import callbacks, elastic
from unison.horovod.collectives import (
    Handle,
    ProcessSet,
    allgather,
    allgather_object,
    allreduce,
    allreduce_,
    allreduce_async,
    allreduce_async_,
    alltoall,
    broadcast,
    broadcast_,
    broadcast_object,
    global_process_set,
    grouped_allreduce,
    grouped_allreduce_,
    join,
    poll,
    reducescatter,
    synchronize,
)
from unison.horovod.keras_optimizer import DistributedOptimizer as KerasDistributedOptimizer
from unison.horovod.sync_batch_norm import SyncBatchNorm
from unison.horovod.tape import DistributedGradientTape, broadcast_variables

__all__ = [
    "DistributedGradientTape",
    "Handle",
    "KerasDistributedOptimizer",
    "ProcessSet",
    "SyncBatchNorm",
    "allgather",
    "allgather_object",
    "allreduce",
    "allreduce_",
    "allreduce_async",
    "allreduce_async_",
    "alltoall",
    "broadcast",
    "broadcast_",
    "broadcast_object",
    "broadcast_variables",
    "callbacks",
    "elastic",
    "global_process_set",
    "grouped_allreduce",
    "grouped_allreduce_",
    "join",
    "poll",
    "reducescatter",
    "synchronize",
]
