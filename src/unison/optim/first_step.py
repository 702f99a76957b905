"""The first step of a multi-replica job refuses an optimizer that would step unsynchronised.

A Keras model compiled outside ``strategy.scope()`` of a MirroredStrategy or MultiWorkerMirroredStrategy
job trains on each replica alone; :func:`check_synchronised` raises before its first update instead.
It lives apart from :mod:`unison.optim.agreement` because it needs the ``DistributedOptimizer``
class, which (through the parameter check) needs the agreement module.

Example:
    >>> check_synchronised(object(), None)  # no torch optimizer: nothing to check
"""

from __future__ import annotations

from typing import Any

from unison.optim.agreement import _MULTI, UnsynchronizedTrainingError, _comm


def check_synchronised(optimizer: Any, torch_optimizer: Any) -> None:
    """Refuse the first step of an optimizer nothing synchronises in a multi-replica job.

    A Keras model compiled outside ``strategy.scope()`` of a MirroredStrategy or
    MultiWorkerMirroredStrategy job trains on each replica alone (different weights, the same
    logged loss). TF mirrors what it can and raises otherwise; unison raises.

    Raises:
        UnsynchronizedTrainingError: names the rank, the job's size and the optimizer.
    """
    comm = _comm()
    if comm is None or not getattr(comm, _MULTI, False) or torch_optimizer is None:
        return
    if getattr(optimizer, "_created_under", None) == 1:
        return  # made in an explicit one-replica strategy's scope: local training was asked for
    from unison.optim.distributed import DistributedOptimizer

    synchroniser = DistributedOptimizer.of(torch_optimizer)
    if synchroniser is not None and getattr(synchroniser.comm, "world_size", 1) == comm.world_size:
        return  # synchronised over the job's replicas (a one-process synchroniser, fit's on one replica, is not)
    from torch.distributed.tensor import DTensor

    if any(isinstance(p, DTensor) for g in torch_optimizer.param_groups for p in g["params"]):
        return  # a sharded model (FSDP2): its collectives synchronise it
    raise UnsynchronizedTrainingError(
        f"Optimizer {getattr(optimizer, 'name', type(optimizer).__name__)!r} is about to take its first step on "
        f"rank {comm.rank} of {comm.world_size} replicas without synchronising its gradients: the model and its "
        "optimizer were created (or the model compiled) outside strategy.scope(), so every replica would train "
        "its own copy. Expected a model built and compiled inside the scope. Fix: `with strategy.scope(): "
        "model = ...; model.compile(...)` (in a custom loop, call apply_gradients inside strategy.run)."
    )


__all__ = ["check_synchronised"]
