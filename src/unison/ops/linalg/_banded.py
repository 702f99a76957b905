"""``tf.linalg``'s tridiagonal and banded systems: solve, multiply, banded triangular solve and the
tridiagonal eigenproblem, in TF's three diagonal formats (``compact``, ``sequence``, ``matrix``).

Example:
    >>> import unison as tf
    >>> diagonals = tf.constant([[1.0, 1.0, 0.0], [4.0, 4.0, 4.0], [0.0, 1.0, 1.0]])
    >>> tf.linalg.tridiagonal_matmul(diagonals, tf.ones([3, 1])).tolist()
    [[5.0], [6.0], [5.0]]
"""

from __future__ import annotations

import builtins
from typing import Any

import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import to_tensor
from unison.ops.linalg._basic import as_matrix, check_dtype, diag, triangular_solve, widen

_REAL = (torch.float32, torch.float64)
_COMPLEX = (torch.complex64, torch.complex128)


def _tridiagonals(diagonals: Any, fmt: str, op: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """(superdiagonal, diagonal, subdiagonal, the rank of a matrix-shaped rhs), each ``[..., M]``."""
    parts = _tridiagonal_parts(diagonals, fmt, op)
    check_dtype(parts[1], op, "diagonals", _REAL + _COMPLEX)
    return parts


def _tridiagonal_parts(diagonals: Any, fmt: str, op: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    if fmt == "sequence":
        sup, main, sub = (to_tensor(d) for d in diagonals)
        return sup, main.to(sup.dtype), sub.to(sup.dtype), main.dim() + 1
    d = to_tensor(diagonals)
    if fmt == "compact":
        if d.dim() < 2 or d.shape[-2] != 3:
            raise ValueError(
                f"tf.linalg.{op}: compact `diagonals` must have shape [..., 3, M]. Received {list(d.shape)}."
            )
        return d[..., 0, :], d[..., 1, :], d[..., 2, :], d.dim()
    if fmt == "matrix":
        if d.dim() < 2 or d.shape[-1] != d.shape[-2]:
            raise ValueError(
                f"tf.linalg.{op}: matrix `diagonals` must have shape [..., M, M]. Received {list(d.shape)}."
            )
        zero = torch.zeros((*d.shape[:-2], 1), dtype=d.dtype, device=d.device)
        sup = torch.cat([torch.diagonal(d, 1, -2, -1), zero], -1)
        sub = torch.cat([zero, torch.diagonal(d, -1, -2, -1)], -1)
        return sup, torch.diagonal(d, 0, -2, -1), sub, d.dim()
    raise ValueError(f"tf.linalg.{op}: `diagonals_format` must be 'compact', 'sequence' or 'matrix'. Received: {fmt!r}")


def tridiagonal_solve(
    diagonals: Any,
    rhs: Any,
    diagonals_format: str = "compact",
    transpose_rhs: builtins.bool = False,
    conjugate_rhs: builtins.bool = False,
    name: str | None = None,
    partial_pivoting: builtins.bool = True,
    perturb_singular: builtins.bool = False,
) -> torch.Tensor:
    """``tf.linalg.tridiagonal_solve``: solve a tridiagonal system (``rhs`` ``[..., M]`` or ``[..., M, K]``).

    A singular system gives NaNs, as TF's does.
    """
    if perturb_singular:
        raise ValueError(
            "tf.linalg.tridiagonal_solve: unison does not implement perturb_singular=True (TF's pivot "
            "perturbation); solve with perturb_singular=False or add a small multiple of the identity."
        )
    sup, main, sub, matrix_rank_ = _tridiagonals(diagonals, diagonals_format, "tridiagonal_solve")
    b = to_tensor(rhs).to(main.dtype)
    vector = b.dim() == matrix_rank_ - 1
    if vector:
        b = b.unsqueeze(-1)
    elif transpose_rhs:
        b = b.transpose(-1, -2)
    if conjugate_rhs and b.is_complex():
        b = b.conj()
    batch = torch.broadcast_shapes(main.shape[:-1], b.shape[:-2])
    sup, main, sub = (x.expand(*batch, x.shape[-1]) for x in (sup, main, sub))
    b = b.expand(*batch, *b.shape[-2:])
    if main.shape[-1] > _DENSE_UP_TO:
        out = _gaussian_elimination_with_pivoting(sup, main, sub, b)
    else:
        dense = torch.diag_embed(main) + torch.diag_embed(sup[..., :-1], 1) + torch.diag_embed(sub[..., 1:], -1)
        w = widen(dense)
        out, info = torch.linalg.solve_ex(w, widen(b).to(w.dtype))
        out = torch.where((info != 0)[..., None, None], torch.full_like(out, float("nan")), out).to(main.dtype)
    return out.squeeze(-1) if vector else out


# Up to this size a dense batched solve is fastest; beyond it the O(M) elimination below is (a
# dense [M, M] matrix would cost M^2 memory and M^3 time).
_DENSE_UP_TO = 1024


def _gaussian_elimination_with_pivoting(
    sup: torch.Tensor, main: torch.Tensor, sub: torch.Tensor, rhs: torch.Tensor
) -> torch.Tensor:
    """LAPACK's gtsv: tridiagonal Gaussian elimination with partial (row) pivoting, O(M).

    The recurrence runs along M in Python, each step one set of whole-batch tensor operations.
    """
    n = main.shape[-1]
    d, du = list(main.unbind(-1)), list(sup.unbind(-1))
    dl = list(sub[..., 1:].unbind(-1))  # dl[i] = A[i + 1, i]
    b = list(rhs.unbind(-2))
    du2 = [torch.zeros_like(d[0]) for _ in range(n)]  # the second superdiagonal that row swaps create
    for i in range(n - 1):
        swap = dl[i].abs() > d[i].abs()
        keep_fact, swap_fact = dl[i] / d[i], d[i] / dl[i]
        d_i, d_next = (
            torch.where(swap, dl[i], d[i]),
            torch.where(swap, du[i] - swap_fact * d[i + 1], d[i + 1] - keep_fact * du[i]),
        )
        if i < n - 2:
            du2[i] = torch.where(swap, du[i + 1], du2[i])
            du[i + 1] = torch.where(swap, -swap_fact * du[i + 1], du[i + 1])
        du[i] = torch.where(swap, d[i + 1], du[i])
        s = swap.unsqueeze(-1)
        b[i], b[i + 1] = (
            torch.where(s, b[i + 1], b[i]),
            torch.where(s, b[i] - swap_fact.unsqueeze(-1) * b[i + 1], b[i + 1] - keep_fact.unsqueeze(-1) * b[i]),
        )
        d[i], d[i + 1] = d_i, d_next
    x = [torch.zeros_like(b[0])] * n
    for i in range(n - 1, -1, -1):
        value = b[i]
        if i + 1 < n:
            value = value - du[i].unsqueeze(-1) * x[i + 1]
        if i + 2 < n:
            value = value - du2[i].unsqueeze(-1) * x[i + 2]
        x[i] = value / d[i].unsqueeze(-1)
    return torch.stack(x, dim=-2)


def tridiagonal_matmul(
    diagonals: Any, rhs: Any, diagonals_format: str = "compact", name: str | None = None
) -> torch.Tensor:
    """``tf.linalg.tridiagonal_matmul``: a tridiagonal matrix (given by its diagonals) times ``rhs`` ``[..., M, N]``."""
    sup, main, sub, rank = _tridiagonals(diagonals, diagonals_format, "tridiagonal_matmul")
    b = to_tensor(rhs).to(main.dtype)
    if b.dim() != rank:
        raise InvalidArgumentError(
            f"tf.linalg.tridiagonal_matmul: `rhs` must be [..., M, N] with the rank of the diagonals' matrix "
            f"(All input tensors must have the same rank). Received shape {list(b.shape)}."
        )
    out = main.unsqueeze(-1) * b
    out[..., :-1, :] += sup[..., :-1, None] * b[..., 1:, :]
    out[..., 1:, :] += sub[..., 1:, None] * b[..., :-1, :]
    return out


def banded_triangular_solve(
    bands: Any, rhs: Any, lower: builtins.bool = True, adjoint: builtins.bool = False, name: str | None = None
) -> torch.Tensor:
    """``tf.linalg.banded_triangular_solve``: solve with a triangular matrix given by its ``K`` bands ``[..., K, M]``.

    Lower: row 0 is the diagonal, row j the j-th subdiagonal (padded on the left); upper: the last
    row is the diagonal (superdiagonals padded on the right).
    """
    b = as_matrix(bands, "banded_triangular_solve", "bands")
    k, m = b.shape[-2], b.shape[-1]
    dense = diag(b, k=(-(k - 1), 0) if lower else (0, k - 1), num_rows=m, num_cols=m, align="LEFT_RIGHT")
    return triangular_solve(dense, rhs, lower=lower, adjoint=adjoint)


def eigh_tridiagonal(
    alpha: Any,
    beta: Any,
    eigvals_only: builtins.bool = True,
    select: str = "a",
    select_range: Any = None,
    tol: Any = None,
    name: str | None = None,
) -> Any:
    """``tf.linalg.eigh_tridiagonal``: eigenvalues (and vectors) of the Hermitian tridiagonal matrix
    with diagonal ``alpha`` ``[N]`` and off-diagonal ``beta`` ``[N - 1]``.

    ``select``: ``'a'`` all, ``'v'`` those in ``(select_range[0], select_range[1]]``, ``'i'`` the
    ascending indices ``select_range[0]..select_range[1]``.
    """
    a, b = to_tensor(alpha), to_tensor(beta)
    if a.dim() != 1 or b.dim() != 1 or b.shape[0] != builtins.max(a.shape[0] - 1, 0):
        raise ValueError(
            f"tf.linalg.eigh_tridiagonal: `alpha` must be [N] and `beta` [N - 1]. Received shapes {list(a.shape)} and {list(b.shape)}."
        )
    if select not in ("a", "v", "i"):
        raise ValueError(f"tf.linalg.eigh_tridiagonal: `select` must be 'a', 'v' or 'i'. Received: select={select!r}")
    dtype = b.dtype if b.is_complex() else a.dtype
    matrix = torch.diag_embed(a.to(dtype)) + torch.diag_embed(b.to(dtype), -1) + torch.diag_embed(b.conj().to(dtype), 1)
    values, vectors = torch.linalg.eigh(widen(matrix))
    values, vectors = values.to(a.real.dtype), vectors.to(dtype)
    if select == "v":
        lo, hi = (float(v) for v in to_tensor(select_range).reshape(-1).tolist())
        keep = (values > lo) & (values <= hi)
        values, vectors = values[keep], vectors[:, keep]
    elif select == "i":
        lo_i, hi_i = (int(v) for v in to_tensor(select_range).reshape(-1).tolist())
        values, vectors = values[lo_i : hi_i + 1], vectors[:, lo_i : hi_i + 1]
    return values if eigvals_only else (values, vectors)
