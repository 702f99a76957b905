"""``tf.linalg``'s factorizations and the functions built on them: QR, SVD, eigen-decompositions,
LU, least squares, pseudo-inverse, rank and matrix functions (expm, logm, sqrtm).

TF's conventions, where torch's differ: ``svd`` returns ``(s, u, v)`` with ``v`` (not its adjoint);
``lu`` returns ``(lu, p)`` with ``p`` a permutation (``input[p] == L @ U``), not LAPACK's swaps.

Example:
    >>> import unison as tf
    >>> s = tf.linalg.svd(tf.constant([[3.0, 0.0], [0.0, 4.0]]), compute_uv=False)
    >>> s.tolist()
    [4.0, 3.0]
"""

from __future__ import annotations

import builtins
from collections import namedtuple
from typing import Any

import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import as_dtype, to_tensor
from unison.ops.linalg._basic import (
    FLOATS,
    as_matrix,
    cholesky,
    cholesky_solve,
    triangular_solve,
    widen,
)
from unison.ops.math import norm

Qr = namedtuple("Qr", ["q", "r"])
Lu = namedtuple("Lu", ["lu", "p"])
_REAL = (torch.float32, torch.float64)
_COMPLEX = (torch.complex64, torch.complex128)


def qr(input: Any, full_matrices: builtins.bool = False, name: str | None = None) -> Qr:
    """``tf.linalg.qr``: ``(q, r)`` with ``input = q @ r`` (reduced unless ``full_matrices``)."""
    t = as_matrix(input, "qr")
    q, r = torch.linalg.qr(widen(t), mode="complete" if full_matrices else "reduced")
    return Qr(q.to(t.dtype), r.to(t.dtype))


def svd(
    tensor: Any, full_matrices: builtins.bool = False, compute_uv: builtins.bool = True, name: str | None = None
) -> Any:
    """``tf.linalg.svd``: ``s`` alone, or ``(s, u, v)`` with ``tensor = u @ diag(s) @ adjoint(v)``.

    ``s`` is real and descending (TF's order); ``v`` is the right singular vectors themselves, not
    torch's ``Vh``.
    """
    t = as_matrix(tensor, "svd")
    w = widen(t)
    if not compute_uv:
        return torch.linalg.svdvals(w).to(t.real.dtype)
    u, s, vh = torch.linalg.svd(w, full_matrices=full_matrices)
    return s.to(t.real.dtype), u.to(t.dtype), vh.mH.to(t.dtype)


def eig(tensor: Any, name: str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``tf.linalg.eig``: complex ``(eigenvalues, eigenvectors)`` of a general square matrix."""
    t = as_matrix(tensor, "eig", "tensor", square=True, allowed=_REAL + _COMPLEX)
    e, v = torch.linalg.eig(t)
    return e, v


def eigvals(tensor: Any, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.eigvals``: the complex eigenvalues of a general square matrix."""
    return torch.linalg.eigvals(as_matrix(tensor, "eigvals", "tensor", square=True, allowed=_REAL + _COMPLEX))


def eigh(tensor: Any, name: str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``tf.linalg.eigh``: ascending real eigenvalues and eigenvectors of a self-adjoint matrix (lower triangle read)."""
    t = as_matrix(tensor, "eigh", "tensor", square=True)
    e, v = torch.linalg.eigh(t)
    return e.to(t.dtype), v  # TF gives a complex input's eigenvalues in its complex dtype


def eigvalsh(tensor: Any, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.eigvalsh``: ascending real eigenvalues of a self-adjoint matrix."""
    t = as_matrix(tensor, "eigvalsh", "tensor", square=True)
    return torch.linalg.eigvalsh(t).to(t.dtype)


def expm(input: Any, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.expm``: the matrix exponential."""
    t = to_tensor(input)
    if t.dtype not in FLOATS:
        raise ValueError(f"tf.linalg.expm does not support matrices of type {t.dtype}: cast `input` to a float type.")
    t = as_matrix(t, "expm", square=True)
    return torch.linalg.matrix_exp(widen(t)).to(t.dtype)


def _eye_like(a: torch.Tensor) -> torch.Tensor:
    return torch.eye(a.shape[-1], dtype=a.dtype, device=a.device).expand(a.shape)


def _sqrt_denman_beavers(a: torch.Tensor) -> torch.Tensor:
    """The principal square root by Denman-Beavers iteration: defective matrices included (no
    eigenvalue may lie on the closed negative real axis). One step per iteration, whole batch."""
    y, z = a, _eye_like(a)
    for _ in range(100):
        y_next = 0.5 * (y + torch.linalg.inv_ex(z)[0])
        z = 0.5 * (z + torch.linalg.inv_ex(y)[0])
        change = (y_next - y).abs().amax()
        y = y_next
        if not bool(change > 1e-14 * y.abs().amax()):
            break
    return y


def _log_inverse_scaling_squaring(a: torch.Tensor) -> torch.Tensor:
    """``log(A) = 2^k log(A^(1/2^k))``: square roots until ``A`` is near ``I``, then log's series."""
    x, k = a, 0
    eye = _eye_like(a)
    while k < 60 and bool(torch.linalg.matrix_norm(x - eye, ord=1).amax() > 0.25):
        x, k = _sqrt_denman_beavers(x), k + 1
    y = x - eye
    term, out = eye, torch.zeros_like(a)
    for j in range(1, 60):  # ||y|| <= 1/4: 60 terms reach double precision
        term = term @ y
        out = out + term * ((-1.0) ** (j + 1) / j)
    return out * (2.0**k)


def _matrix_function(t: torch.Tensor, fn: Any, fallback: Any) -> torch.Tensor:
    """``f(A)`` in complex double: ``V f(L) V^-1`` when ``A`` is safely diagonalizable, else ``fallback``.

    TF computes these through a Schur decomposition, which torch lacks; the eigenvector basis gives
    the same matrix whenever it is well conditioned, and the iterations cover defective matrices.
    """
    wide = t.to(torch.complex128)
    e, v = torch.linalg.eig(wide)
    # X V = V f(L), solved rather than inverted.
    out = torch.linalg.solve_ex(v, v * fn(e).unsqueeze(-2), left=False)[0].resolve_conj()
    cond = torch.linalg.cond(v)
    shaky = ~torch.isfinite(cond) | (cond > 1e6)
    if bool(shaky.any()):
        out = torch.where(shaky[..., None, None], fallback(wide), out)
    return out


def logm(input: Any, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.logm``: the principal matrix logarithm of a complex matrix (TF accepts complex only)."""
    t = as_matrix(input, "logm", square=True, allowed=_COMPLEX)
    return _matrix_function(t, torch.log, _log_inverse_scaling_squaring).to(t.dtype)


def sqrtm(input: Any, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.sqrtm``: the principal matrix square root.

    A real matrix with a negative real eigenvalue has no real square root: NaNs, as TF's real
    Schur method gives.
    """
    t = as_matrix(input, "sqrtm", square=True, allowed=_REAL + _COMPLEX)
    out = _matrix_function(t, torch.sqrt, _sqrt_denman_beavers)
    if t.is_complex():
        return out.to(t.dtype)
    e = torch.linalg.eigvals(t)
    negative = ((e.imag == 0) & (e.real < 0)).any(-1)
    real = out.real.to(t.dtype)
    return torch.where(negative[..., None, None], torch.full_like(real, float("nan")), real)


# --- LU -----------------------------------------------------------------------------------------


def lu(input: Any, output_idx_type: Any = torch.int32, name: str | None = None) -> Lu:
    """``tf.linalg.lu``: ``(lu, p)``: unit-lower ``L`` and ``U`` packed in ``lu``, ``input[p] = L @ U``."""
    t = as_matrix(input, "lu", square=True)
    packed, pivots, info = torch.linalg.lu_factor_ex(t)
    if bool((info != 0).any()):
        raise InvalidArgumentError("tf.linalg.lu: Input is not invertible (a singular matrix in `input`).")
    perm_matrix = torch.lu_unpack(packed, pivots, unpack_data=False)[0]
    return Lu(packed, perm_matrix.abs().argmax(dim=-2).to(as_dtype(output_idx_type)))


def _lu_parts(lower_upper: Any, op: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    t = as_matrix(lower_upper, op, "lower_upper", square=True)
    eye = torch.eye(t.shape[-1], dtype=t.dtype, device=t.device)
    return t, t.tril(-1) + eye, t.triu()


def _permutation(perm: Any, batch: tuple[int, ...], n: int) -> torch.Tensor:
    p = to_tensor(perm).long()
    return p.expand(*batch, n)


def lu_reconstruct(
    lower_upper: Any, perm: Any, validate_args: builtins.bool = False, name: str | None = None
) -> torch.Tensor:
    """``tf.linalg.lu_reconstruct``: the matrix that ``tf.linalg.lu`` factored."""
    t, lower, upper = _lu_parts(lower_upper, "lu_reconstruct")
    product = lower @ upper
    inverse = torch.argsort(_permutation(perm, product.shape[:-2], t.shape[-1]), dim=-1)
    return torch.gather(product, -2, inverse.unsqueeze(-1).expand(product.shape))


def lu_solve(
    lower_upper: Any, perm: Any, rhs: Any, validate_args: builtins.bool = False, name: str | None = None
) -> torch.Tensor:
    """``tf.linalg.lu_solve``: ``X`` with ``A @ X = rhs`` given ``tf.linalg.lu(A)``; batches broadcast."""
    t, lower, upper = _lu_parts(lower_upper, "lu_solve")
    b = as_matrix(rhs, "lu_solve", "rhs").to(t.dtype)
    batch = torch.broadcast_shapes(t.shape[:-2], b.shape[:-2], to_tensor(perm).shape[:-1])
    b = b.expand(*batch, *b.shape[-2:])
    p = _permutation(perm, batch, t.shape[-1])
    permuted = torch.gather(b, -2, p.unsqueeze(-1).expand(b.shape))
    y = triangular_solve(lower.expand(*batch, *lower.shape[-2:]), permuted, lower=True)
    return triangular_solve(upper.expand(*batch, *upper.shape[-2:]), y, lower=False)


def lu_matrix_inverse(
    lower_upper: Any, perm: Any, validate_args: builtins.bool = False, name: str | None = None
) -> torch.Tensor:
    """``tf.linalg.lu_matrix_inverse``: the inverse of ``A`` given ``tf.linalg.lu(A)``."""
    t = as_matrix(lower_upper, "lu_matrix_inverse", "lower_upper", square=True)
    eye = torch.eye(t.shape[-1], dtype=t.dtype, device=t.device).expand(t.shape)
    return lu_solve(t, perm, eye)


# --- least squares, pseudo-inverse, rank ---------------------------------------------------------


def lstsq(
    matrix: Any, rhs: Any, l2_regularizer: Any = 0.0, fast: builtins.bool = True, name: str | None = None
) -> torch.Tensor:
    """``tf.linalg.lstsq``: the (regularized) least-squares solution of ``matrix @ X = rhs``.

    ``fast=True`` solves the normal equations by Cholesky, as TF does (``l2_regularizer`` adds
    ``lambda * I``); ``fast=False`` is the minimum-norm solution (TF ignores the regularizer there).
    """
    a = as_matrix(matrix, "lstsq", "matrix")
    b = as_matrix(rhs, "lstsq", "rhs").to(a.dtype)
    if a.shape[-2] != b.shape[-2]:
        raise InvalidArgumentError(
            f"tf.linalg.lstsq: `matrix` and `rhs` must have the same number of rows. "
            f"Received shapes {list(a.shape)} and {list(b.shape)}."
        )
    w, wb = widen(a), widen(b)
    if not fast:
        return (torch.linalg.pinv(w) @ wb).to(a.dtype)
    lam = float(l2_regularizer)
    m, n = w.shape[-2], w.shape[-1]
    if m >= n:
        gram = w.mH @ w + lam * torch.eye(n, dtype=w.dtype, device=w.device)
        out = cholesky_solve(cholesky(gram), w.mH @ wb)
    else:
        gram = w @ w.mH + lam * torch.eye(m, dtype=w.dtype, device=w.device)
        out = w.mH @ cholesky_solve(cholesky(gram), wb)
    return out.to(a.dtype)


def _eps(dtype: torch.dtype) -> float:
    return float(torch.finfo(dtype).eps)


def pinv(a: Any, rcond: Any = None, validate_args: builtins.bool = False, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.pinv``: the Moore-Penrose pseudo-inverse; singular values at or below
    ``rcond * max(s)`` count as zero (default ``rcond``: ``10 * max(M, N) * eps``)."""
    t = as_matrix(a, "pinv", "a")
    if t.is_complex():
        raise TypeError(
            f"tf.linalg.pinv: Input `a` must have `float`-like `dtype` (saw {t.dtype}). Received a complex matrix."
        )
    if rcond is None:
        rcond = 10.0 * builtins.max(t.shape[-2], t.shape[-1]) * _eps(t.dtype)
    s_cut = to_tensor(rcond, t.dtype)
    u, s, vh = torch.linalg.svd(t, full_matrices=False)
    cutoff = s_cut * s.max(dim=-1, keepdim=True).values if s.shape[-1] else s
    inverse = torch.where(s > cutoff, 1.0 / s, torch.zeros((), dtype=s.dtype, device=s.device))
    return (vh.mH * inverse.unsqueeze(-2)) @ u.mH


def matrix_rank(a: Any, tol: Any = None, validate_args: builtins.bool = False, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.matrix_rank``: the number of singular values above ``tol`` (int32).

    Default ``tol``: ``eps * max(M, N) * max(s)``.
    """
    t = as_matrix(a, "matrix_rank", "a")
    s = torch.linalg.svdvals(widen(t))
    if tol is None:
        largest = s.max(dim=-1, keepdim=True).values if s.shape[-1] else s
        cut = _eps(t.real.dtype) * builtins.max(t.shape[-2], t.shape[-1]) * largest
    else:
        cut = to_tensor(tol, s.dtype).unsqueeze(-1)
    return (s > cut).sum(-1).to(torch.int32)


def normalize(
    tensor: Any, ord: Any = "euclidean", axis: Any = None, name: str | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``tf.linalg.normalize``: ``(tensor / norm, norm)`` with the norm kept on its axes (``tf.norm``'s ``ord``)."""
    t = to_tensor(tensor)
    n = norm(t, ord=ord, axis=axis, keepdims=True)
    return t / n, n
