"""The structured ``tf.linalg.LinearOperator`` kinds: zeros, permutation, Householder, Toeplitz,
tridiagonal and circulant (1-D, 2-D, 3-D), each built from its defining parameters.

Example:
    >>> import unison as tf
    >>> op = tf.linalg.LinearOperatorToeplitz(col=[1.0, 2.0], row=[1.0, 5.0])
    >>> op.to_dense().tolist()
    [[1.0, 5.0], [2.0, 1.0]]
"""

from __future__ import annotations

import builtins
from typing import Any

import torch

from unison.ops.dtypes import as_dtype, to_tensor
from unison.ops.linalg._banded import _tridiagonal_parts
from unison.ops.linalg._operators import _float_tensor, _num_rows
from unison.ops.linalg._operators_composed import _Dense, _Hint


class LinearOperatorZeros(_Dense):
    """``tf.linalg.LinearOperatorZeros``: the all-zero ``[*batch_shape, num_rows, num_columns]`` operator."""

    def __init__(
        self,
        num_rows: Any,
        num_columns: Any = None,
        batch_shape: Any = None,
        dtype: Any = None,
        is_non_singular: builtins.bool = False,
        is_self_adjoint: builtins.bool = True,
        is_positive_definite: builtins.bool = False,
        is_square: builtins.bool = True,
        assert_proper_shapes: builtins.bool = False,
        name: str = "LinearOperatorZeros",
    ) -> None:
        rows = _num_rows(num_rows, "LinearOperatorZeros")
        cols = rows if num_columns is None else _num_rows(num_columns, "LinearOperatorZeros")
        if is_square and rows != cols:
            raise ValueError(
                f"tf.linalg.LinearOperatorZeros initialized as is_square=True, but got num_rows({rows}) != num_columns({cols})"
            )
        if is_non_singular or is_positive_definite:
            raise ValueError(
                "tf.linalg.LinearOperatorZeros is always singular and never positive definite: "
                f"received is_non_singular={is_non_singular}, is_positive_definite={is_positive_definite}."
            )
        batch = () if batch_shape is None else tuple(int(b) for b in to_tensor(batch_shape).reshape(-1).tolist())
        zeros = torch.zeros((*batch, rows, cols), dtype=as_dtype(dtype) if dtype is not None else torch.float32)
        super().__init__(
            zeros,
            (False, is_self_adjoint, False, is_square),
            name,
            {"num_rows": num_rows, "num_columns": num_columns, "batch_shape": batch_shape, "dtype": dtype},
        )


class LinearOperatorPermutation(_Dense):
    """``tf.linalg.LinearOperatorPermutation``: ``P`` with ``(P @ x)[i] = x[perm[i]]``."""

    def __init__(
        self,
        perm: Any,
        dtype: Any = torch.float32,
        is_non_singular: _Hint = None,
        is_self_adjoint: _Hint = None,
        is_positive_definite: _Hint = None,
        is_square: _Hint = None,
        name: str = "LinearOperatorPermutation",
    ) -> None:
        p = to_tensor(perm)
        if p.is_floating_point() or p.is_complex() or p.dim() < 1:
            raise TypeError(
                f"tf.linalg.LinearOperatorPermutation: `perm` must be an integer tensor [..., N]. Received {p.dtype} of shape {list(p.shape)}."
            )
        self.perm = p
        matrix = torch.nn.functional.one_hot(p.long(), p.shape[-1]).to(as_dtype(dtype))
        super().__init__(
            matrix,
            (True if is_non_singular is None else is_non_singular, is_self_adjoint, is_positive_definite, True),
            name,
            {"perm": perm, "dtype": dtype},
        )


class LinearOperatorHouseholder(_Dense):
    """``tf.linalg.LinearOperatorHouseholder``: the reflection ``I - 2 v v^H / (v^H v)`` about ``reflection_axis`` ``v``."""

    def __init__(
        self,
        reflection_axis: Any,
        is_non_singular: _Hint = None,
        is_self_adjoint: _Hint = None,
        is_positive_definite: _Hint = None,
        is_square: _Hint = None,
        name: str = "LinearOperatorHouseholder",
    ) -> None:
        v = _float_tensor(reflection_axis, "LinearOperatorHouseholder", "reflection_axis")
        if v.dim() < 1:
            raise ValueError(
                "tf.linalg.LinearOperatorHouseholder: `reflection_axis` must have rank >= 1. Received a scalar."
            )
        norm = (v.conj() * v).real.sum(-1)[..., None, None] if v.is_complex() else (v * v).sum(-1)[..., None, None]
        matrix = (
            torch.eye(v.shape[-1], dtype=v.dtype, device=v.device)
            - 2.0 * (v.unsqueeze(-1) @ v.conj().unsqueeze(-2)) / norm
        )
        super().__init__(
            matrix.resolve_conj(),
            (True, True, False if is_positive_definite is None else is_positive_definite, True),
            name,
            {"reflection_axis": reflection_axis},
        )
        self.reflection_axis = v


class LinearOperatorToeplitz(_Dense):
    """``tf.linalg.LinearOperatorToeplitz``: ``T[i, j] = col[i - j]`` on and below the diagonal, ``row[j - i]`` above."""

    def __init__(
        self,
        col: Any,
        row: Any,
        is_non_singular: _Hint = None,
        is_self_adjoint: _Hint = None,
        is_positive_definite: _Hint = None,
        is_square: _Hint = None,
        name: str = "LinearOperatorToeplitz",
    ) -> None:
        c = to_tensor(col)
        r = to_tensor(row).to(c.dtype)
        batch = torch.broadcast_shapes(c.shape[:-1], r.shape[:-1])
        c, r = c.expand(*batch, c.shape[-1]), r.expand(*batch, r.shape[-1])
        n = c.shape[-1]
        offset = torch.arange(n, device=c.device).unsqueeze(1) - torch.arange(n, device=c.device)
        below = c[..., offset.clamp(min=0)]
        above = r[..., (-offset).clamp(min=0)]
        super().__init__(
            torch.where(offset >= 0, below, above),
            (is_non_singular, is_self_adjoint, is_positive_definite, True),
            name,
            {"col": col, "row": row},
        )
        self.col, self.row = c, r


class LinearOperatorTridiag(_Dense):
    """``tf.linalg.LinearOperatorTridiag``: a tridiagonal matrix from its ``diagonals`` (``compact``, ``sequence`` or ``matrix``)."""

    def __init__(
        self,
        diagonals: Any,
        diagonals_format: str = "compact",
        is_non_singular: _Hint = None,
        is_self_adjoint: _Hint = None,
        is_positive_definite: _Hint = None,
        is_square: _Hint = None,
        name: str = "LinearOperatorTridiag",
    ) -> None:
        sup, main, sub, _ = _tridiagonal_parts(diagonals, diagonals_format, "LinearOperatorTridiag")
        _float_tensor(main, "LinearOperatorTridiag", "diagonals")
        if diagonals_format == "matrix":
            matrix = to_tensor(diagonals)  # TF keeps the given matrix as the operator's dense form
        else:
            matrix = torch.diag_embed(main) + torch.diag_embed(sup[..., :-1], 1) + torch.diag_embed(sub[..., 1:], -1)
        super().__init__(
            matrix,
            (is_non_singular, is_self_adjoint, is_positive_definite, True),
            name,
            {"diagonals": diagonals, "diagonals_format": diagonals_format},
        )
        self.diagonals, self.diagonals_format = diagonals, diagonals_format


class _Circulant(_Dense):
    _rank = 1

    def __init__(
        self,
        spectrum: Any,
        input_output_dtype: Any = torch.complex64,
        is_non_singular: _Hint = None,
        is_self_adjoint: _Hint = None,
        is_positive_definite: _Hint = None,
        is_square: builtins.bool = True,
        name: str | None = None,
    ) -> None:
        cls = type(self).__name__
        s = _float_tensor(spectrum, cls, "spectrum")
        if s.dim() < self._rank:
            raise ValueError(
                f"tf.linalg.{cls}: `spectrum` must have rank >= {self._rank}. Received shape {list(s.shape)}."
            )
        self.spectrum = s
        s = s if s.is_complex() else s.to(torch.complex128 if s.dtype == torch.float64 else torch.complex64)
        dims = tuple(range(-self._rank, 0))
        kernel = torch.fft.ifftn(s, dim=dims)  # the block-circulant matrix's first column
        sizes = tuple(s.shape[-self._rank :])
        grids = torch.meshgrid(*(torch.arange(n, device=s.device) for n in sizes), indexing="ij")
        flat = [g.reshape(-1) for g in grids]
        index = [(a.unsqueeze(1) - a.unsqueeze(0)) % n for a, n in zip(flat, sizes)]
        key = (Ellipsis, *index)
        matrix = kernel[key]
        out_dtype = as_dtype(input_output_dtype)
        matrix = matrix.to(out_dtype) if out_dtype.is_complex else matrix.real.to(out_dtype)
        super().__init__(
            matrix,
            (is_non_singular, is_self_adjoint, is_positive_definite, is_square),
            name or cls,
            {"spectrum": spectrum, "input_output_dtype": input_output_dtype},
        )


class LinearOperatorCirculant(_Circulant):
    """``tf.linalg.LinearOperatorCirculant``: the circulant matrix ``DFT^-1 diag(spectrum) DFT`` (real part when ``input_output_dtype`` is real)."""

    _rank = 1


class LinearOperatorCirculant2D(_Circulant):
    """``tf.linalg.LinearOperatorCirculant2D``: the block-circulant matrix of the 2-D ``spectrum`` ``[..., N0, N1]``."""

    _rank = 2


class LinearOperatorCirculant3D(_Circulant):
    """``tf.linalg.LinearOperatorCirculant3D``: the block-circulant matrix of the 3-D ``spectrum`` ``[..., N0, N1, N2]``."""

    _rank = 3
