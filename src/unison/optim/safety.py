"""Cross-replica safety checks: same model everywhere, one verdict on non-finite gradients.

Nobody else checks these, and each one otherwise ends in a replica quietly diverging:

* :func:`check_consistency` compares parameter names, shapes, dtypes and values across replicas
  (one small all-gather of checksums) and raises on *every* replica naming the first difference.
* :func:`nonfinite_error` names the ranks and the first parameter with a NaN/Inf gradient, after
  the flag that travels in every gradient bucket said there was one.

Example:
    >>> import torch
    >>> from unison.comm import LocalCommunicator
    >>> check_consistency([("w", torch.zeros(2))], LocalCommunicator())
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import torch

from unison.comm.communicator import Communicator
from unison.errors import NonFiniteGradientError, ReplicaMismatchError


def _describe(named: Sequence[tuple[str, torch.Tensor]]) -> list[tuple[str, tuple[int, ...], str]]:
    return [(n, tuple(p.shape), str(p.dtype).replace("torch.", "")) for n, p in named]


def check_consistency(named: Sequence[tuple[str, torch.Tensor]], comm: Communicator, optimizer: Any = None) -> None:
    """Raise :class:`ReplicaMismatchError` on every replica unless all hold the same parameters
    and train with the same optimizer, hyper-parameters, loss and global batch.

    ``optimizer`` (the torch optimizer being synchronised) adds its class and param-group
    hyper-parameters to what is compared; Keras optimizers and losses note themselves
    (:mod:`unison.optim.agreement`). The facts travel in the structure digest: no extra
    collective unless the replicas differ.
    """
    if not comm.is_distributed:
        return
    from unison.optim import agreement

    if optimizer is not None:
        agreement.note("torch optimizer (class and param groups)", optimizer, comm)
    meta = _describe(named)
    digest = hashlib.sha1((repr(meta) + agreement.digest(comm)).encode()).hexdigest()
    digests = comm.all_gather_object(digest, name="consistency.structure")
    if len(set(digests)) > 1:
        details = comm.all_gather_object((meta, agreement.noted(comm)), name="consistency.structure_detail")
        metas = [d[0] for d in details]
        if any(m != metas[0] for m in metas):
            raise ReplicaMismatchError(_structure_difference(metas))
        message = agreement.difference([d[1] for d in details])
        if message is not None:
            raise ReplicaMismatchError(message)
    with torch.no_grad():
        sums = (
            torch.stack(
                [torch.stack([p.detach().double().sum(), p.detach().double().square().sum()]) for _, p in named]
            )
            if named
            else torch.zeros((0, 2), dtype=torch.float64)
        )
    gathered = comm.all_gather(sums.reshape(1, -1).to(comm.device), name="consistency.values")
    table = torch.cat(gathered).reshape(comm.world_size, -1, 2).cpu()
    differs = (table != table[0:1]).any(dim=2)  # (ranks, params)
    if bool(differs.any()):
        index = int(differs.any(dim=0).nonzero()[0])
        ranks = [r for r in range(comm.world_size) if bool(differs[r, index])]
        raise ReplicaMismatchError(
            f"Replicas hold different values for parameter '{named[index][0]}': ranks {ranks} "
            f"differ from rank 0. Start every replica from the same weights: create the model "
            "under strategy.scope(), or call unison.broadcast_parameters(model.state_dict(), "
            "root_rank=0) before training."
        )


def _structure_difference(metas: list[list[tuple[str, tuple[int, ...], str]]]) -> str:
    ref = metas[0]
    for rank, meta in enumerate(metas[1:], start=1):
        if meta == ref:
            continue
        for i, (a, b) in enumerate(zip(ref, meta)):
            if a != b:
                return (
                    f"Replicas hold different models: parameter #{i} is {a[0]} {a[1]} {a[2]} on "
                    f"rank 0 but {b[0]} {b[1]} {b[2]} on rank {rank}. Every replica must build "
                    "the same model (same code, same arguments)."
                )
        return (
            f"Replicas hold different models: rank 0 has {len(ref)} parameters, rank {rank} "
            f"has {len(meta)}. Every replica must build the same model."
        )
    return "Replicas hold different models."


def all_finite(params: Sequence[torch.Tensor]) -> bool:
    """Whether every gradient of ``params`` is finite (a sharded one: this replica's shard).

    One sum per gradient and one read: NaN or Inf anywhere survives the sums (~20 us a step for
    the seed MLP, where a check per parameter reads each flag).
    """
    grads = [p.grad for p in params if p.grad is not None]
    grads = [g if type(g) is torch.Tensor or not hasattr(g, "to_local") else g.to_local() for g in grads]
    return not grads or math.isfinite(torch.stack([g.sum() for g in grads]).sum().item())


def first_nonfinite(named: Sequence[tuple[str, torch.Tensor]]) -> str | None:
    """Name of the first parameter whose local gradient holds NaN or Inf."""
    for name, p in named:
        if p.grad is not None and not bool(torch.isfinite(p.grad).all()):
            return name
    return None


def nonfinite_error(local: str | None, comm: Communicator, step: int) -> NonFiniteGradientError:
    """Build the error every replica raises once the shared flag reported a non-finite gradient."""
    found = comm.all_gather_object(local, name="nonfinite.which")
    ranks = [r for r, name in enumerate(found) if name is not None]
    first = next(((r, name) for r, name in enumerate(found) if name is not None), None)
    where = f" (first: '{first[1]}' on rank {first[0]})" if first else ""
    return NonFiniteGradientError(
        f"Non-finite gradient (NaN or Inf) at step {step} on ranks {ranks}{where}. The policy is "
        "nonfinite='raise'. Lower the learning rate, clip gradients (clip_grad_norm=...), check "
        "the inputs for NaN, or pass nonfinite='skip' to skip such steps on all replicas together."
    )
