"""DistributedOptimizer: the one gradient-synchronisation path (buckets, overlap, accumulation)."""

from unison.optim.distributed import Average, DistributedOptimizer, ReduceOp, Sum

__all__ = ["Average", "DistributedOptimizer", "ReduceOp", "Sum"]
