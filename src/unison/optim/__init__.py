"""DistributedOptimizer: the one gradient-synchronisation path (buckets, overlap, accumulation,
compression, cross-replica safety checks, ZeRO-1)."""

from unison.optim.compression import Compression, Compressor
from unison.optim.distributed import Adasum, Average, DistributedOptimizer, ReduceOp, Sum
from unison.optim.safety import NonFiniteGradientError, ReplicaMismatchError

__all__ = [
    "Adasum",
    "Average",
    "Compression",
    "Compressor",
    "DistributedOptimizer",
    "NonFiniteGradientError",
    "ReduceOp",
    "ReplicaMismatchError",
    "Sum",
]
