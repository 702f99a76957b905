"""``keras.ops.linalg``: inverse, solve, decompositions, determinants and norms (numpy's semantics).

Example:
    >>> from unison.keras import ops
    >>> ops.solve([[2.0, 0.0], [0.0, 4.0]], [[2.0], [8.0]]).tolist()
    [[1.0], [2.0]]
    >>> float(ops.norm([3.0, 4.0]))
    5.0
"""

from __future__ import annotations

import builtins
from typing import Any

import torch

from unison.keras.ops._convert import float_of, tensor
from unison.keras.ops._math_more import LINALG_NAMES as _more_names
from unison.keras.ops._math_more import cholesky_inverse, jvp, matrix_rank, pinv  # noqa: F401
from unison.ops._dispatch import wrap_namespace

Tensor = torch.Tensor


def _matrices(x: Any, fn: str, square: builtins.bool = True) -> Tensor:
    t = float_of(tensor(x))
    if t.dim() < 2 or (square and t.shape[-1] != t.shape[-2]):
        kind = "square matrices" if square else "matrices"
        raise ValueError(
            f"keras.ops.{fn} takes {kind} (shape (..., M, M)). Received a tensor of shape {tuple(t.shape)}."
        )
    return t


def inv(x: Any) -> Tensor:
    """``keras.ops.inv(x)``: the inverse of (batches of) square matrices."""
    return torch.linalg.inv(_matrices(x, "inv"))


def det(x: Any) -> Tensor:
    """``keras.ops.det(x)``: determinants."""
    return torch.linalg.det(_matrices(x, "det"))


def slogdet(x: Any) -> tuple[Tensor, Tensor]:
    """``keras.ops.slogdet(x)``: ``(sign, log|det|)``."""
    sign, logabs = torch.linalg.slogdet(_matrices(x, "slogdet"))
    return sign, logabs


def solve(a: Any, b: Any) -> Tensor:
    """``keras.ops.solve(a, b)``: ``x`` with ``a @ x = b``."""
    m = _matrices(a, "solve")
    return torch.linalg.solve(m, tensor(b).to(m.dtype))


def solve_triangular(a: Any, b: Any, lower: builtins.bool = False) -> Tensor:
    """``keras.ops.solve_triangular(a, b, lower=False)``."""
    m = _matrices(a, "solve_triangular")
    rhs = tensor(b).to(m.dtype)
    vector = rhs.dim() == m.dim() - 1
    out = torch.linalg.solve_triangular(m, rhs.unsqueeze(-1) if vector else rhs, upper=not lower)
    return out.squeeze(-1) if vector else out


def lstsq(a: Any, b: Any, rcond: float | None = None) -> Tensor:
    """``keras.ops.lstsq(a, b, rcond=None)``: the least-squares solution."""
    m = _matrices(a, "lstsq", square=False)
    rhs = tensor(b).to(m.dtype)
    vector = rhs.dim() == 1
    out = torch.linalg.lstsq(m, rhs.unsqueeze(-1) if vector else rhs, rcond=rcond, driver="gelsd").solution
    return out.squeeze(-1) if vector else out


def cholesky(x: Any, upper: builtins.bool = False) -> Tensor:
    """``keras.ops.cholesky(x)``: the lower-triangular factor ``L`` with ``L @ L.T = x``."""
    return torch.linalg.cholesky(_matrices(x, "cholesky"), upper=upper)


def qr(x: Any, mode: str = "reduced") -> tuple[Tensor, Tensor]:
    """``keras.ops.qr(x, mode="reduced")``: ``(q, r)``; mode ``"reduced"`` or ``"complete"``."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"keras.ops.qr: mode must be 'reduced' or 'complete'. Received: mode={mode!r}")
    q, r = torch.linalg.qr(_matrices(x, "qr", square=False), mode=mode)
    return q, r


def svd(x: Any, full_matrices: builtins.bool = True, compute_uv: builtins.bool = True) -> Any:
    """``keras.ops.svd(x, full_matrices=True, compute_uv=True)``: ``(u, s, vh)``, or ``s`` alone."""
    m = _matrices(x, "svd", square=False)
    if not compute_uv:
        return torch.linalg.svdvals(m)
    u, s, vh = torch.linalg.svd(m, full_matrices=full_matrices)
    return u, s, vh


def eig(x: Any) -> tuple[Tensor, Tensor]:
    """``keras.ops.eig(x)``: ``(eigenvalues, eigenvectors)``, complex in general."""
    w, v = torch.linalg.eig(_matrices(x, "eig"))
    return w, v


def eigh(x: Any) -> tuple[Tensor, Tensor]:
    """``keras.ops.eigh(x)``: of a symmetric matrix, eigenvalues ascending."""
    w, v = torch.linalg.eigh(_matrices(x, "eigh"))
    return w, v


def lu_factor(x: Any) -> tuple[Tensor, Tensor]:
    """``keras.ops.lu_factor(x)``: ``(lu, p)``, ``p`` the row permutation (``x[p] == L @ U``) as Keras on TF gives.

    LAPACK's pivots (torch's, 1-based row swaps applied in order) are turned into that permutation.
    """
    lu, pivots = torch.linalg.lu_factor(_matrices(x, "lu_factor"))
    perms = []
    for row_swaps in pivots.reshape(-1, pivots.shape[-1]).sub(1).tolist():
        perm = list(range(lu.shape[-2]))
        for i, j in enumerate(row_swaps):
            perm[i], perm[j] = perm[j], perm[i]
        perms.append(perm)
    permutation = torch.tensor(perms, dtype=torch.int32).reshape(pivots.shape)
    return lu, permutation


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.norm(x, ord=None, axis=None, keepdims=False)``: numpy's ``linalg.norm``.

    Without ``axis`` and ``ord`` it is the 2-norm of all values; an int ``axis`` gives vector norms,
    a pair of axes matrix norms (``ord`` ``"fro"``, ``"nuc"``, ``1``, ``2``, ``inf``...).
    """
    t = float_of(tensor(x))
    if axis is None and ord is None:
        return (
            torch.linalg.vector_norm(t, keepdim=keepdims)
            if not keepdims
            else torch.linalg.vector_norm(t, dim=tuple(builtins.range(t.dim())), keepdim=True)
        )
    if axis is None and t.dim() not in (1, 2):
        raise ValueError(
            f"keras.ops.norm: with ord={ord!r} and axis=None the input must be 1-D or 2-D. "
            f"Received shape {tuple(t.shape)}; pass axis=."
        )
    dim = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    return torch.linalg.norm(t, ord=ord, dim=dim, keepdim=keepdims)


__all__ = [
    "cholesky",
    "det",
    "eig",
    "eigh",
    "inv",
    "lstsq",
    "lu_factor",
    "norm",
    "qr",
    "slogdet",
    "solve",
    "solve_triangular",
    "svd",
]


# Symbolic keras.Input tensors defer these to the functional graph (see unison.ops._dispatch).
wrap_namespace(globals(), __all__)
__all__ = sorted([*__all__, *_more_names])  # wrapped in their own module
