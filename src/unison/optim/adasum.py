"""Adasum: combine gradients so that parallel replicas act like sequential steps.

For two gradients ``a`` and ``b``::

    adasum(a, b) = (1 - a.b / (2 |a|^2)) a + (1 - a.b / (2 |b|^2)) b

Orthogonal gradients add; identical ones average. N replicas combine in a pairwise tree
(Maleki et al., 2020; Horovod's ``op=hvd.Adasum``), separately for every parameter.

Example:
    >>> import torch
    >>> adasum_pair(torch.tensor([1.0, 0.0]), torch.tensor([1.0, 0.0])).tolist()
    [1.0, 0.0]
    >>> adasum_pair(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])).tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def adasum_pair(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Adasum of two gradients of one parameter (computed in float64 for the dot products)."""
    a64, b64 = a.double(), b.double()
    dot = torch.dot(a64, b64)
    na, nb = torch.dot(a64, a64), torch.dot(b64, b64)
    ca = torch.where(na > 0, 1 - dot / (2 * na.clamp_min(1e-300)), torch.zeros_like(na))
    cb = torch.where(nb > 0, 1 - dot / (2 * nb.clamp_min(1e-300)), torch.zeros_like(nb))
    return (ca * a64 + cb * b64).to(a.dtype)


def adasum_tree(parts: Sequence[torch.Tensor]) -> torch.Tensor:
    """Combine one parameter's gradients of all replicas, pairwise, in rank order."""
    level = list(parts)
    while len(level) > 1:
        nxt = [adasum_pair(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]
