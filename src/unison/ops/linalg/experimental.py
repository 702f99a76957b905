"""``tf.linalg.experimental``: the conjugate-gradient solver for self-adjoint positive definite operators.

Example:
    >>> import unison as tf
    >>> op = tf.linalg.LinearOperatorFullMatrix([[4.0, 1.0], [1.0, 3.0]], is_self_adjoint=True, is_positive_definite=True)
    >>> state = tf.linalg.experimental.conjugate_gradient(op, tf.constant([1.0, 2.0]))
    >>> [round(v, 4) for v in state.x.tolist()]
    [0.0909, 0.6364]
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import torch

from unison.ops.dtypes import to_tensor

CGState = namedtuple("CGState", ["i", "x", "r", "p", "gamma"])


def _dot(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x.conj() * y).sum(-1) if x.is_complex() else (x * y).sum(-1)


def conjugate_gradient(
    operator: Any,
    rhs: Any,
    preconditioner: Any = None,
    x: Any = None,
    tol: float = 1e-5,
    max_iter: int = 20,
    name: str = "conjugate_gradient",
) -> CGState:
    """``tf.linalg.experimental.conjugate_gradient``: solve ``operator @ x = rhs`` by conjugate gradients.

    Iterates until every batch member's residual norm is at most ``tol * norm(rhs)`` or after
    ``max_iter`` steps (TF's stopping rule); returns ``CGState(i, x, r, p, gamma)``.
    """
    if not (getattr(operator, "is_self_adjoint", False) and getattr(operator, "is_positive_definite", False)):
        raise ValueError(
            "tf.linalg.experimental.conjugate_gradient: Expected a self-adjoint, positive definite operator. "
            "Build it with is_self_adjoint=True, is_positive_definite=True."
        )
    b = to_tensor(rhs)
    batch = torch.broadcast_shapes(b.shape[:-1], tuple(operator.batch_shape.as_list()))
    r = b.expand(*batch, b.shape[-1])
    limit = tol * torch.linalg.vector_norm(r, dim=-1)
    if x is None:
        x_k = torch.zeros_like(r)
    else:
        x_k = to_tensor(x).to(b.dtype)
        r = b - operator.matvec(x_k)
    p = r if preconditioner is None else preconditioner.matvec(r)
    gamma = _dot(r, p)
    i = 0
    # One Python step per CG iteration (TF's while_loop); each step is whole-batch tensor work.
    while i < int(max_iter) and bool((torch.linalg.vector_norm(r, dim=-1) > limit).any()):
        z = operator.matvec(p)
        alpha = gamma / _dot(p, z)
        x_k = x_k + alpha.unsqueeze(-1) * p
        r = r - alpha.unsqueeze(-1) * z
        q = r if preconditioner is None else preconditioner.matvec(r)
        new_gamma = _dot(r, q)
        p = q + (new_gamma / gamma).unsqueeze(-1) * p
        gamma = new_gamma
        i += 1
    return CGState(torch.tensor(i, dtype=torch.int32), x_k, r, p, gamma)


__all__ = ["conjugate_gradient"]


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.linalg.experimental", name)
