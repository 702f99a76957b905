"""Horovod's torch API on unison: ``init``, ``rank``, ``size``, collectives, broadcasts.

For raw PyTorch loops that want data parallelism without a strategy::

    import unison
    unison.init()                       # from unison launch / torchrun env; alone: a no-op
    opt = unison.DistributedOptimizer(torch.optim.Adam(model.parameters()),
                                      named_parameters=model.named_parameters())
    unison.broadcast_parameters(model.state_dict(), root_rank=0)
    unison.broadcast_optimizer_state(opt, root_rank=0)

Example:
    >>> import unison
    >>> unison.init(); (unison.rank(), unison.size())
    (0, 1)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import torch

from unison.comm.communicator import Communicator, LocalCommunicator, collective_timeout, joined
from unison.distribute.join import join_environment
from unison.optim.distributed import Adasum, Average, DistributedOptimizer, Sum

_ALONE: list[Communicator] = []


def init(timeout_seconds: float = 300.0) -> None:
    """Join the job described by the environment (``unison launch``/torchrun); alone: no-op."""
    if join_environment(collective_timeout(timeout_seconds)) is None and not _ALONE:
        _ALONE.append(LocalCommunicator())


def _comm() -> Communicator:
    comm = joined()
    if comm is not None:
        return comm
    if not _ALONE:
        raise RuntimeError("unison is not initialised: call unison.init() first.")
    return _ALONE[0]


def rank() -> int:
    """This process's rank in the job (0 alone)."""
    return _comm().rank


def size() -> int:
    """Number of processes in the job (1 alone)."""
    return _comm().world_size


def local_rank() -> int:
    """This process's rank among the processes of its host."""
    return _comm().local_rank


def local_size() -> int:
    """Number of processes of the job on this host."""
    return _comm().local_size


def cross_size() -> int:
    """Horovod's ``cross_size()``: the number of hosts (nodes) of the job.

    unison's launchers start the same number of processes on every host, so it is
    ``size() // local_size()``.
    """
    comm = _comm()
    return max(1, comm.world_size // max(1, comm.local_size))


def cross_rank() -> int:
    """Horovod's ``cross_rank()``: the index of this process's host among the job's hosts."""
    comm = _comm()
    return comm.rank // max(1, comm.local_size)


def is_initialized() -> bool:
    """Whether ``init()`` (or a strategy) has joined this process to a job (Horovod's name)."""
    return joined() is not None or bool(_ALONE)


def shutdown() -> None:
    """Leave the job (Horovod's ``hvd.shutdown()``) and its process group.

    Every process calls it; collectives after it fail until ``init()`` is called again.
    """
    comm = joined()
    if comm is not None:
        comm.shutdown()
    _ALONE.clear()


def barrier() -> None:
    """Wait until every process arrives."""
    _comm().barrier()


def broadcast_parameters(
    params: Mapping[str, torch.Tensor] | Iterable[tuple[str, torch.Tensor]], root_rank: int = 0
) -> None:
    """Overwrite parameters/buffers in place with ``root_rank``'s (a ``state_dict`` or named pairs)."""
    items = sorted(params.items() if isinstance(params, Mapping) else list(params), key=lambda kv: kv[0])
    comm = _comm()
    if not comm.is_distributed:
        return
    for name, t in items:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"broadcast_parameters expects tensors; '{name}' is {type(t).__name__}.")
    comm.broadcast_coalesced([t for _, t in items], src=root_rank, name="broadcast_parameters")


def broadcast_optimizer_state(optimizer: Any, root_rank: int = 0) -> None:
    """Give every process ``root_rank``'s optimizer state (hyper-parameters and moments)."""
    comm = _comm()
    if not comm.is_distributed:
        return
    inner = optimizer.optimizer if isinstance(optimizer, DistributedOptimizer) else optimizer
    if not isinstance(inner, torch.optim.Optimizer):
        raise TypeError(f"broadcast_optimizer_state expects an optimizer. Received: {type(optimizer).__name__}")
    state = comm.broadcast_object(
        inner.state_dict() if comm.rank == root_rank else None, src=root_rank, name="broadcast_optimizer_state"
    )
    inner.load_state_dict(state)


def nccl_built() -> bool:
    """Horovod's ``hvd.nccl_built()``: whether torch can all-reduce over NCCL (CUDA builds)."""
    return bool(torch.distributed.is_available() and torch.distributed.is_nccl_available())


def gloo_built() -> bool:
    """Horovod's ``hvd.gloo_built()``: whether torch has gloo (unison's CPU transport)."""
    return bool(torch.distributed.is_available() and torch.distributed.is_gloo_available())


def mpi_built() -> bool:
    """Horovod's ``hvd.mpi_built()``: always False (unison does not use MPI)."""
    return False


__all__ = [
    "Adasum",
    "Average",
    "Sum",
    "barrier",
    "broadcast_optimizer_state",
    "broadcast_parameters",
    "cross_rank",
    "cross_size",
    "gloo_built",
    "init",
    "is_initialized",
    "local_rank",
    "local_size",
    "mpi_built",
    "nccl_built",
    "rank",
    "shutdown",
    "size",
]
