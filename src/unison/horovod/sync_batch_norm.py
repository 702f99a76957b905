"""Horovod's ``hvd.SyncBatchNorm``: batch normalisation with statistics of the whole global batch.

Each process normalises its rows with the mean and variance of every process's rows (sums and
counts all-reduced, differentiably, so the backward pass is the global batch's too). It runs on
CPU and GPU (``torch.nn.SyncBatchNorm`` needs CUDA and DDP). Alone, or in ``eval()``, it is
``torch.nn.BatchNorm``.

Example:
    >>> import torch, unison as hvd
    >>> hvd.init()
    >>> bn = hvd.SyncBatchNorm(3)
    >>> bn(torch.randn(8, 3)).shape
    torch.Size([8, 3])
"""

from __future__ import annotations

import torch

from unison.comm.functional import differentiable_all_reduce
from unison.horovod.basics import _comm


class SyncBatchNorm(torch.nn.modules.batchnorm._BatchNorm):
    """``BatchNorm`` over the global batch of all processes (any input of rank >= 2, channels at dim 1).

    Args: as ``torch.nn.BatchNorm1d/2d/3d`` (``num_features``, ``eps``, ``momentum``,
    ``affine``, ``track_running_stats``).

    Contract: in training every process calls it in the same order (it is a collective); a
    process may hold zero rows.
    """

    def _check_input_dim(self, input: torch.Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(
                f"SyncBatchNorm expects an input of at least 2 dimensions (batch, channels, ...). "
                f"Received: shape {tuple(input.shape)}"
            )

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        self._check_input_dim(input)
        comm = _comm()
        if not (self.training and comm.is_distributed):
            return super().forward(input)
        if input.shape[1] != self.num_features:
            raise ValueError(
                f"SyncBatchNorm({self.num_features}) received {input.shape[1]} channels (dim 1 of shape "
                f"{tuple(input.shape)}). Pass num_features equal to the input's channels."
            )
        dims = [d for d in range(input.dim()) if d != 1]
        x = input.float()
        count = torch.tensor([float(input.numel() // max(1, input.shape[1]))], device=x.device)
        local = torch.cat([x.sum(dims), (x * x).sum(dims), count])
        total = differentiable_all_reduce(local, comm, name="SyncBatchNorm")
        c = self.num_features
        n = total[2 * c]
        mean = total[:c] / n
        var = (total[c : 2 * c] / n - mean * mean).clamp_min(0.0)
        if self.track_running_stats and self.running_mean is not None and self.running_var is not None:
            if self.num_batches_tracked is not None:
                self.num_batches_tracked.add_(1)
            momentum = self.momentum
            if momentum is None:  # a cumulative moving average, as torch's BatchNorm
                momentum = 1.0 / float(self.num_batches_tracked or 1)
            with torch.no_grad():
                unbiased = var * n / (n - 1).clamp_min(1.0)
                self.running_mean.mul_(1 - momentum).add_(mean.detach().to(self.running_mean.dtype), alpha=momentum)
                self.running_var.mul_(1 - momentum).add_(unbiased.detach().to(self.running_var.dtype), alpha=momentum)
        shape = [1, c] + [1] * (input.dim() - 2)
        out = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            out = out * self.weight.view(shape) + self.bias.view(shape)
        return out.to(input.dtype)


__all__ = ["SyncBatchNorm"]
