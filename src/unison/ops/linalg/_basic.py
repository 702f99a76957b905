"""``tf.linalg``'s structural and direct-solve functions: diagonals, bands, traces, determinants,
inverses and solves, over ``torch.linalg``.

TF's matrix ops take ``[..., M, N]`` tensors and refuse dtypes their kernels lack with
``InvalidArgumentError``; float16 runs in float32 here (torch's CPU linear algebra has no half
kernels) and comes back as float16, as TF's does.

Example:
    >>> import unison as tf
    >>> m = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> round(tf.linalg.det(m).item(), 4), tf.linalg.trace(m).item()
    (-2.0, 5.0)
    >>> tf.linalg.diag_part(m).tolist()
    [1.0, 4.0]
"""

from __future__ import annotations

import builtins
from collections import namedtuple
from typing import Any

import numpy as np
import torch

from unison.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from unison.ops.dtypes import to_tensor
from unison.ops.math import matmul

LogMatrixDeterminant = namedtuple("LogMatrixDeterminant", ["sign", "log_abs_determinant"])
FLOATS = (torch.float16, torch.float32, torch.float64, torch.complex64, torch.complex128)
_NAMES = {torch.float16: "half", torch.float32: "float", torch.float64: "double"}


def dtype_name(dtype: torch.dtype) -> str:
    """TF's short name of a torch dtype (``float``, ``double``, ``int32``...), as TF's errors spell it."""
    return _NAMES.get(dtype, str(dtype).replace("torch.", ""))


def check_dtype(t: torch.Tensor, op: str, arg: str, allowed: tuple[torch.dtype, ...] = FLOATS) -> None:
    """Refuse a dtype the TF kernel of ``op`` lacks, as TF does (``InvalidArgumentError``)."""
    if t.dtype not in allowed:
        names = ", ".join(dtype_name(d) for d in allowed)
        raise InvalidArgumentError(
            f"tf.linalg.{op}: `{arg}` has dtype {dtype_name(t.dtype)}, which is not in the list of allowed values: "
            f"{names}. Cast it first (tf.cast(x, tf.float32))."
        )


_HALF_KERNELS = frozenset({"inv", "qr"})


def as_matrix(
    value: Any, op: str, arg: str = "input", *, square: builtins.bool = False, allowed: tuple[torch.dtype, ...] = FLOATS
) -> torch.Tensor:
    """``value`` as a ``[..., M, N]`` tensor of an allowed dtype, or TF's InvalidArgumentError.

    float16 passes TF's type check but most linear-algebra kernels are not registered for it:
    those ops raise TF's NotFoundError for it (only ``inv`` and ``qr`` compute in half).
    """
    t = to_tensor(value)
    if t.dtype == torch.float16 and op not in _HALF_KERNELS:
        raise NotFoundError(
            f"tf.linalg.{op}: TF has no float16 kernel for this op (Could not find device for node, T=DT_HALF). "
            f"Cast `{arg}` to float32 first."
        )
    check_dtype(t, op, arg, allowed)
    if t.dim() < 2:
        raise InvalidArgumentError(
            f"tf.linalg.{op}: `{arg}` must have rank >= 2 (a [..., M, N] batch of matrices). "
            f"Received shape {list(t.shape)}."
        )
    if square and t.shape[-1] != t.shape[-2]:
        raise InvalidArgumentError(
            f"tf.linalg.{op}: `{arg}` must be square (Input matrix must be square). Received shape {list(t.shape)}."
        )
    return t


def widen(t: torch.Tensor) -> torch.Tensor:
    """float16 as float32 (torch's CPU linear algebra has no half kernels)."""
    return t.float() if t.dtype in (torch.float16, torch.bfloat16) else t


# --- transposes, bands, traces ------------------------------------------------------------------


def _rank2(value: Any, op: str, arg: str) -> torch.Tensor:
    t = to_tensor(value)
    if t.dim() < 2:
        raise ValueError(
            f"tf.linalg.{op}: argument `{arg}` should be a (batch) matrix with rank >= 2. "
            f"Received shape {list(t.shape)}."
        )
    return t


def matrix_transpose(a: Any, name: str = "matrix_transpose", conjugate: builtins.bool = False) -> torch.Tensor:
    """``tf.linalg.matrix_transpose``: swap the last two axes (conjugating when ``conjugate``)."""
    t = _rank2(a, "matrix_transpose", "a").transpose(-1, -2)
    return t.conj().resolve_conj() if conjugate and t.is_complex() else t.contiguous()


def adjoint(matrix: Any, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.adjoint``: the conjugate transpose of the last two axes."""
    t = _rank2(matrix, "adjoint", "matrix").transpose(-1, -2)
    return t.conj().resolve_conj() if t.is_complex() else t.contiguous()


def band_part(input: Any, num_lower: Any, num_upper: Any, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.band_part``: zero everything outside the band (a negative count keeps that whole triangle).

    Example:
        >>> import unison as tf
        >>> tf.linalg.band_part(tf.ones([3, 3]), 0, -1).tolist()
        [[1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]
    """
    t = to_tensor(input)
    if t.dim() < 2:
        raise InvalidArgumentError(
            f"tf.linalg.band_part: `input` must be at least 2-dim. Received shape {list(t.shape)}."
        )
    lower, upper = int(num_lower), int(num_upper)
    rows = torch.arange(t.shape[-2], device=t.device).unsqueeze(-1)
    cols = torch.arange(t.shape[-1], device=t.device)
    keep = torch.ones(t.shape[-2:], dtype=torch.bool, device=t.device)
    if lower >= 0:
        keep &= rows - cols <= lower
    if upper >= 0:
        keep &= cols - rows <= upper
    return torch.where(keep, t, torch.zeros((), dtype=t.dtype, device=t.device))


def trace(x: Any, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.trace``: the sum of each matrix's main diagonal (any numeric dtype)."""
    t = to_tensor(x)
    if t.dim() < 2:
        raise InvalidArgumentError(f"tf.linalg.trace: `x` must be at least 2-dim. Received shape {list(t.shape)}.")
    return torch.diagonal(t, dim1=-2, dim2=-1).sum(-1).to(t.dtype)


# --- diagonals (TF's MatrixDiagV3 family: k a diagonal or a (low, high) range, aligned) ---------


def _k_range(k: Any) -> tuple[int, int, builtins.bool]:
    if isinstance(k, torch.Tensor):
        k = k.tolist()
    if isinstance(k, (list, tuple)):
        if len(k) != 2 or int(k[0]) > int(k[1]):
            raise InvalidArgumentError(
                f"tf.linalg: `k` must be an int or a pair (low, high) with low <= high. Received: k={k!r}"
            )
        return int(k[0]), int(k[1]), True
    return int(k), int(k), False


_ALIGNS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")


def _diag_index(rows: int, cols: int, k0: int, k1: int, width: int, align: str) -> tuple[np.ndarray, ...]:
    """(packed row, packed column, matrix row, matrix column) of every stored diagonal entry.

    Packed row 0 holds diagonal ``k1`` (the highest); a diagonal shorter than ``width`` is padded on
    the left when it is right-aligned (``align``'s first word for superdiagonals, second for subs).
    """
    if align not in _ALIGNS:
        raise ValueError(f"tf.linalg: `align` must be one of {list(_ALIGNS)}. Received: align={align!r}")
    super_right, sub_right = align.split("_")[0] == "RIGHT", align.split("_")[1] == "RIGHT"
    parts = []
    for d in range(k1, k0 - 1, -1):  # one step per stored diagonal, not per element
        length = min(rows, cols - d) if d >= 0 else min(rows + d, cols)
        if length <= 0:
            continue
        i = np.arange(length)
        offset = width - length if (super_right if d >= 0 else sub_right) else 0
        row, col = (i, i + d) if d >= 0 else (i - d, i)
        parts.append((np.full(length, k1 - d), i + offset, row, col))
    if not parts:
        return tuple(np.zeros(0, dtype=np.int64) for _ in range(4))
    return tuple(np.concatenate(p) for p in zip(*parts))


def _check_k(rows: int, cols: int, k0: int, k1: int, op: str) -> None:
    for which, k in (("lower_diag_index", k0), ("upper_diag_index", k1)):
        if not (-rows < k < cols or k == 0):
            raise InvalidArgumentError(
                f"tf.linalg.{op}: {which} is out of bound: {k}. It must be between {-rows} and {cols} for a "
                f"[{rows}, {cols}] matrix; check `k`."
            )


def _max_len(rows: int, cols: int, k0: int, k1: int) -> int:
    return builtins.max(min(rows + builtins.min(k1, 0), cols - builtins.max(k0, 0)), 0)


def diag_part(
    input: Any, name: str = "diag_part", k: Any = 0, padding_value: Any = 0, align: str = "RIGHT_LEFT"
) -> torch.Tensor:
    """``tf.linalg.diag_part``: diagonal ``k`` (or the diagonals ``k[0]..k[1]``, highest first, padded).

    Example:
        >>> import unison as tf
        >>> tf.linalg.diag_part(tf.reshape(tf.range(9), [3, 3]), k=1).tolist()
        [1, 5]
    """
    t = _rank2(input, "diag_part", "input")
    k0, k1, ranged = _k_range(k)
    rows, cols = t.shape[-2], t.shape[-1]
    _check_k(rows, cols, k0, k1, "diag_part")
    width = _max_len(rows, cols, k0, k1)
    pr, pc, r, c = (
        torch.as_tensor(a, dtype=torch.long, device=t.device) for a in _diag_index(rows, cols, k0, k1, width, align)
    )
    out = torch.full((*t.shape[:-2], k1 - k0 + 1, width), padding_value, dtype=t.dtype, device=t.device)
    out[..., pr, pc] = t[..., r, c]
    return out if ranged else out.squeeze(-2)


def set_diag(input: Any, diagonal: Any, name: str = "set_diag", k: Any = 0, align: str = "RIGHT_LEFT") -> torch.Tensor:
    """``tf.linalg.set_diag``: ``input`` with diagonal ``k`` (or diagonals ``k[0]..k[1]``) replaced."""
    t = _rank2(input, "set_diag", "input")
    d = to_tensor(diagonal).to(t.dtype)
    k0, k1, ranged = _k_range(k)
    if not ranged:
        d = d.unsqueeze(-2)
    rows, cols = t.shape[-2], t.shape[-1]
    _check_k(rows, cols, k0, k1, "set_diag")
    width = _max_len(rows, cols, k0, k1)
    if tuple(d.shape) != (*t.shape[:-2], k1 - k0 + 1, width):
        expected = [*t.shape[:-2], *([k1 - k0 + 1] if ranged else []), width]
        raise InvalidArgumentError(
            f"tf.linalg.set_diag: `diagonal` must have shape {expected} for input of shape {list(t.shape)} and "
            f"k={k!r}. Received shape {list(to_tensor(diagonal).shape)}."
        )
    pr, pc, r, c = (
        torch.as_tensor(a, dtype=torch.long, device=t.device) for a in _diag_index(rows, cols, k0, k1, width, align)
    )
    out = t.clone()
    out[..., r, c] = d[..., pr, pc]
    return out


def diag(
    diagonal: Any,
    name: str = "diag",
    k: Any = 0,
    num_rows: Any = -1,
    num_cols: Any = -1,
    padding_value: Any = 0,
    align: str = "RIGHT_LEFT",
) -> torch.Tensor:
    """``tf.linalg.diag``: a batch of matrices with ``diagonal`` on diagonal ``k`` (or ``k[0]..k[1]``).

    Example:
        >>> import unison as tf
        >>> tf.linalg.diag(tf.constant([1, 2])).tolist()
        [[1, 0], [0, 2]]
    """
    d = to_tensor(diagonal)
    k0, k1, ranged = _k_range(k)
    if not ranged:
        d = d.unsqueeze(-2)
    if d.dim() < 2 or d.shape[-2] != k1 - k0 + 1:
        raise InvalidArgumentError(
            f"tf.linalg.diag: with k={k!r}, `diagonal` needs {k1 - k0 + 1} diagonals on its second-to-last axis. "
            f"Received shape {list(to_tensor(diagonal).shape)}."
        )
    width = d.shape[-1]
    min_rows, min_cols = width - builtins.min(k1, 0), width + builtins.max(k0, 0)
    rows, cols = int(num_rows), int(num_cols)
    if rows == -1 and cols == -1:
        rows = cols = builtins.max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    if rows < min_rows or cols < min_cols or (rows != min_rows and cols != min_cols):
        raise InvalidArgumentError(
            f"tf.linalg.diag: num_rows={rows}, num_cols={cols} cannot hold diagonals of length {width} at k={k!r}; "
            f"they must be at least {min_rows} and {min_cols}."
        )
    pr, pc, r, c = (
        torch.as_tensor(a, dtype=torch.long, device=d.device) for a in _diag_index(rows, cols, k0, k1, width, align)
    )
    out = torch.full((*d.shape[:-2], rows, cols), padding_value, dtype=d.dtype, device=d.device)
    out[..., r, c] = d[..., pr, pc]
    return out


def tensor_diag(diagonal: Any, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.tensor_diag``: a tensor of shape ``s + s`` with ``diagonal`` (shape ``s``) on its diagonal."""
    d = to_tensor(diagonal)
    if d.dim() == 0:
        raise InvalidArgumentError("tf.linalg.tensor_diag: `diagonal` must be at least 1-dim. Received a scalar.")
    return torch.diag(d.reshape(-1)).reshape(*d.shape, *d.shape)


def tensor_diag_part(input: Any, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.tensor_diag_part``: the diagonal of a tensor of shape ``s + s`` (shape ``s``)."""
    t = to_tensor(input)
    half = t.dim() // 2
    if t.dim() == 0 or t.dim() % 2 or t.shape[:half] != t.shape[half:]:
        raise InvalidArgumentError(
            f"tf.linalg.tensor_diag_part: `input` must have an even rank and shape s + s. Received shape {list(t.shape)}."
        )
    n = int(np.prod(t.shape[:half]))
    return torch.diagonal(t.reshape(n, n)).reshape(t.shape[:half])


# --- products, determinants ---------------------------------------------------------------------


def cross(a: Any, b: Any, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.cross``: the cross product of 3-vectors on the last axis (same shapes, no broadcasting)."""
    x, y = to_tensor(a), to_tensor(b)
    if x.shape != y.shape or x.dim() == 0:
        raise InvalidArgumentError(
            f"tf.linalg.cross: `a` and `b` must have the same shape [..., 3]. Received {list(x.shape)} and {list(y.shape)}."
        )
    if x.shape[-1] != 3:
        raise FailedPreconditionError(
            f"tf.linalg.cross: Cross-products are only defined for 3-element vectors. Received shape {list(x.shape)}."
        )
    return torch.linalg.cross(x, y.to(x.dtype))


def det(input: Any, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.det``: the determinant of each matrix of ``[..., M, M]``."""
    t = as_matrix(input, "det", square=True)
    return torch.linalg.det(t)


def slogdet(input: Any, name: str | None = None) -> LogMatrixDeterminant:
    """``tf.linalg.slogdet``: ``(sign, log_abs_determinant)`` of each matrix."""
    t = as_matrix(input, "slogdet", square=True)
    sign, logabs = torch.linalg.slogdet(t)
    return LogMatrixDeterminant(sign, logabs.to(t.dtype))  # complex for a complex input, as in TF


def logdet(matrix: Any, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.logdet``: ``log(det(matrix))`` of a Hermitian positive definite matrix, via Cholesky."""
    chol = cholesky(matrix)
    return 2.0 * torch.log(torch.diagonal(chol, dim1=-2, dim2=-1).real).sum(-1)


def inv(input: Any, adjoint: builtins.bool = False, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.inv``: the inverse (of the adjoint when ``adjoint``); a singular matrix is an error."""
    t = as_matrix(input, "inv", square=True)
    w = widen(t)
    out, info = torch.linalg.inv_ex(w.mH if adjoint else w)
    if bool((info != 0).any()):
        raise InvalidArgumentError("tf.linalg.inv: Input is not invertible (a singular matrix in `input`).")
    return out.to(t.dtype)


def solve(matrix: Any, rhs: Any, adjoint: builtins.bool = False, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.solve``: ``X`` with ``matrix @ X = rhs`` (``adjoint(matrix)`` when ``adjoint``)."""
    a = as_matrix(matrix, "solve", "matrix", square=True)
    b = as_matrix(rhs, "solve", "rhs")
    if a.dim() != b.dim():
        raise InvalidArgumentError(
            f"tf.linalg.solve: `matrix` and `rhs` must have the same rank (All input tensors must have the same rank). "
            f"Received shapes {list(a.shape)} and {list(b.shape)}."
        )
    if a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
        raise InvalidArgumentError(
            f"tf.linalg.solve: `rhs` must be [..., M, K] for `matrix` [..., M, M] with the same batch shape. "
            f"Received shapes {list(a.shape)} and {list(b.shape)}."
        )
    w = widen(a)
    out, info = torch.linalg.solve_ex(w.mH if adjoint else w, widen(b).to(w.dtype))
    if bool((info != 0).any()):
        raise InvalidArgumentError("tf.linalg.solve: Input matrix is not invertible (a singular `matrix`).")
    return out.to(a.dtype)


def triangular_solve(
    matrix: Any,
    rhs: Any,
    lower: builtins.bool = True,
    adjoint: builtins.bool = False,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.linalg.triangular_solve``: solve with the lower (or upper) triangle of ``matrix``; batches broadcast."""
    a = as_matrix(matrix, "triangular_solve", "matrix", square=True)
    b = as_matrix(rhs, "triangular_solve", "rhs")
    if a.shape[-1] != b.shape[-2]:
        raise InvalidArgumentError(
            f"tf.linalg.triangular_solve: `rhs` must have {a.shape[-1]} rows for `matrix` of shape {list(a.shape)}. "
            f"Received shape {list(b.shape)}."
        )
    w = widen(a)
    # Only the named triangle is read, as TF's kernel does.
    if adjoint:
        out = torch.linalg.solve_triangular(w.mH, widen(b).to(w.dtype), upper=lower)
    else:
        out = torch.linalg.solve_triangular(w, widen(b).to(w.dtype), upper=not lower)
    return out.to(a.dtype)


def cholesky(input: Any, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.cholesky``: the lower Cholesky factor; a matrix that is not positive definite gives NaNs, as in TF."""
    t = as_matrix(input, "cholesky", square=True)
    w = widen(t)
    out, info = torch.linalg.cholesky_ex(w)
    failed = info != 0
    if bool(failed.any()):
        nan = torch.full_like(out, float("nan")).tril()
        out = torch.where(failed[..., None, None], nan, out)
    return out.to(t.dtype)


def cholesky_solve(chol: Any, rhs: Any, name: str | None = None) -> torch.Tensor:
    """``tf.linalg.cholesky_solve``: ``X`` with ``A @ X = rhs`` given ``chol``, the Cholesky factor of ``A``."""
    c = as_matrix(chol, "cholesky_solve", "chol", square=True)
    b = as_matrix(rhs, "cholesky_solve", "rhs")
    y = triangular_solve(c, b, lower=True)
    return triangular_solve(c, y, lower=True, adjoint=True)


def matvec(
    a: Any,
    b: Any,
    transpose_a: builtins.bool = False,
    adjoint_a: builtins.bool = False,
    a_is_sparse: builtins.bool = False,
    b_is_sparse: builtins.bool = False,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.linalg.matvec``: ``a @ b`` for a batch of matrices and vectors (batches broadcast)."""
    return matmul(a, to_tensor(b).unsqueeze(-1), transpose_a=transpose_a, adjoint_a=adjoint_a).squeeze(-1)
