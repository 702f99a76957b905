"""``tf.distribute``'s cross-device reduction choices, accepted so TF programs run unchanged.

TF lets ``MirroredStrategy(cross_device_ops=...)`` pick how gradients are all-reduced between the
GPUs of one host. unison has one reduction path whatever the choice: ``torch.distributed``
collectives through ``DistributedOptimizer`` (NCCL between GPUs, gloo on CPUs), which is what
TF's ``NcclAllReduce`` does on GPUs. The classes keep TF's constructor arguments so that a
program that passes them (TF's distributed-training guide does) needs no change; the choice
does not change results, only TF's internal copy pattern.

Example:
    >>> import unison as tf
    >>> ops = tf.distribute.HierarchicalCopyAllReduce(num_packs=1)
    >>> ops.num_packs
    1
"""

from __future__ import annotations

from typing import Any


class CrossDeviceOps:
    """Base of the reduction choices (TF's ``tf.distribute.CrossDeviceOps``)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _PackedAllReduce(CrossDeviceOps):
    def __init__(self, num_packs: int = 1) -> None:
        if isinstance(num_packs, bool) or not isinstance(num_packs, int) or num_packs < 0:
            raise ValueError(f"num_packs must be an int >= 0. Received: num_packs={num_packs!r}")
        self.num_packs = num_packs

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_packs={self.num_packs})"


class NcclAllReduce(_PackedAllReduce):
    """TF's default on GPUs: an NCCL all-reduce (unison's reduction on CUDA)."""


class HierarchicalCopyAllReduce(_PackedAllReduce):
    """TF's hierarchical copy for GPUs without NVLink/NCCL; unison reduces with its one path."""


class ReductionToOneDevice(CrossDeviceOps):
    """TF's reduce-on-one-device-then-broadcast; unison reduces with its one path."""

    def __init__(self, reduce_to_device: str | None = None, accumulation_fn: Any = None) -> None:
        self.reduce_to_device, self.accumulation_fn = reduce_to_device, accumulation_fn


__all__ = ["CrossDeviceOps", "HierarchicalCopyAllReduce", "NcclAllReduce", "ReductionToOneDevice"]
