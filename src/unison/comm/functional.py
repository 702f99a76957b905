"""Differentiable collectives (autograd flows through them across replicas).

A value computed from *every* replica's tensors (the global batch's statistics, a loss over
all replicas) needs the sum of the per-replica tensors on the way forward *and* the sum of the
gradients that flow back into them. ``torch.nn.SyncBatchNorm`` only runs on GPUs, so unison
carries this small autograd function of its own; synchronised ``BatchNormalization`` uses it
through ``get_replica_context().all_reduce``, and any program can call it directly::

    comm = tf.distribute.get_strategy().extended.communicator
    total = differentiable_all_reduce(local_sums, comm)    # the same on every replica
    loss = (total / global_count).square().mean()
    loss.backward()                 # local_sums.grad: every replica's upstream gradient, summed

Example:
    >>> import torch
    >>> from unison.comm.communicator import LocalCommunicator
    >>> x = torch.ones(3, requires_grad=True)
    >>> differentiable_all_reduce(x, LocalCommunicator()).sum().backward()
    >>> x.grad.tolist()
    [1.0, 1.0, 1.0]
"""

from __future__ import annotations

from typing import Any

import torch

from unison.comm.communicator import Communicator


class _AllReduceSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, tensor: torch.Tensor, comm: Communicator, name: str) -> torch.Tensor:
        ctx.comm, ctx.name = comm, name
        out = tensor.clone()
        return comm.all_reduce(out, name=name)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        # Every replica's loss depends on the global sum, so the gradient reaching this
        # replica's contribution is the sum of all replicas' upstream gradients.
        out = grad.contiguous().clone()
        return ctx.comm.all_reduce(out, name=f"{ctx.name}.grad"), None, None


def differentiable_all_reduce(
    tensor: torch.Tensor, comm: Communicator, name: str = "differentiable_all_reduce"
) -> torch.Tensor:
    """SUM-reduce ``tensor`` across replicas, with gradients SUM-reduced on the way back.

    Every replica must call it (it is a collective), with tensors of one shape and dtype.

    Args:
        tensor: this replica's contribution (floating point).
        comm: the replicas, e.g. ``strategy.extended.communicator``.
        name: the collective's name in error messages.
    """
    if not comm.is_distributed:
        return tensor
    return _AllReduceSum.apply(tensor, comm, name)
