"""Differentiable collectives (autograd flows through them across replicas).

Synchronised batch normalisation needs the sum of per-replica statistics *and* the sum of the
gradients that flow back into them; ``torch.nn.SyncBatchNorm`` only runs on GPUs, so unison
carries this small autograd function of its own.

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
    def forward(ctx: Any, tensor: torch.Tensor, comm: Communicator) -> torch.Tensor:
        ctx.comm = comm
        out = tensor.clone()
        return comm.all_reduce(out, name="sync_batch_norm.stats")

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        # Every replica's loss depends on the global sum, so the gradient reaching this
        # replica's contribution is the sum of all replicas' upstream gradients.
        out = grad.contiguous().clone()
        return ctx.comm.all_reduce(out, name="sync_batch_norm.grad"), None


def differentiable_all_reduce(tensor: torch.Tensor, comm: Communicator) -> torch.Tensor:
    """SUM-reduce ``tensor`` across replicas, with gradients SUM-reduced on the way back."""
    if not comm.is_distributed:
        return tensor
    return _AllReduceSum.apply(tensor, comm)
