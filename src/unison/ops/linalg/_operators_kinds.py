"""The basic ``tf.linalg.LinearOperator`` kinds: full matrix, lower triangular, diagonal, identity and
scaled identity, with the cheap formulas their structure allows.

Example:
    >>> import unison as tf
    >>> tf.linalg.LinearOperatorScaledIdentity(2, 3.0).determinant().item()
    9.0
"""

from __future__ import annotations

import builtins
from typing import Any

import torch

from unison.ops.dtypes import as_dtype, to_tensor
from unison.ops.linalg._basic import triangular_solve
from unison.ops.linalg._operators import KINDS, LinearOperator, _float_tensor, _num_rows


class LinearOperatorFullMatrix(LinearOperator):
    """``tf.linalg.LinearOperatorFullMatrix``: an operator that is a dense ``[..., M, N]`` matrix."""

    def __init__(
        self,
        matrix: Any,
        is_non_singular: builtins.bool | None = None,
        is_self_adjoint: builtins.bool | None = None,
        is_positive_definite: builtins.bool | None = None,
        is_square: builtins.bool | None = None,
        name: str = "LinearOperatorFullMatrix",
    ) -> None:
        self._matrix = _float_tensor(matrix, "LinearOperatorFullMatrix", "matrix")
        if self._matrix.dim() < 2:
            raise ValueError(
                f"tf.linalg.LinearOperatorFullMatrix: `matrix` must have rank >= 2. Received shape {list(self._matrix.shape)}."
            )
        super().__init__(
            self._matrix.dtype,
            None,
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            is_square,
            name,
            {"matrix": matrix},
        )

    def _to_dense(self) -> torch.Tensor:
        return self._matrix


class LinearOperatorLowerTriangular(LinearOperator):
    """``tf.linalg.LinearOperatorLowerTriangular``: the lower triangle of ``tril`` (the rest is ignored)."""

    def __init__(
        self,
        tril: Any,
        is_non_singular: builtins.bool | None = None,
        is_self_adjoint: builtins.bool | None = None,
        is_positive_definite: builtins.bool | None = None,
        is_square: builtins.bool | None = None,
        name: str = "LinearOperatorLowerTriangular",
    ) -> None:
        if is_square is False:
            raise ValueError(
                "tf.linalg.LinearOperatorLowerTriangular: only square lower triangular operators exist (is_square=False given)."
            )
        t = _float_tensor(tril, "LinearOperatorLowerTriangular", "tril")
        if t.dim() < 2:
            raise ValueError(
                f"tf.linalg.LinearOperatorLowerTriangular: `tril` must have rank >= 2. Received shape {list(t.shape)}."
            )
        self._tril = t.tril()
        super().__init__(
            t.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name, {"tril": tril}
        )

    def _to_dense(self) -> torch.Tensor:
        return self._tril

    def _solve(self, rhs: torch.Tensor, adjoint: builtins.bool) -> torch.Tensor:
        return triangular_solve(self._tril, rhs, lower=True, adjoint=adjoint)

    def _determinant(self) -> torch.Tensor:
        return torch.diagonal(self._tril, 0, -2, -1).prod(-1)

    def _log_abs_determinant(self) -> torch.Tensor:
        return torch.log(torch.diagonal(self._tril, 0, -2, -1).abs()).sum(-1)


class LinearOperatorDiag(LinearOperator):
    """``tf.linalg.LinearOperatorDiag``: a (batch of) diagonal matrices given by ``diag`` ``[..., N]``."""

    def __init__(
        self,
        diag: Any,
        is_non_singular: builtins.bool | None = None,
        is_self_adjoint: builtins.bool | None = None,
        is_positive_definite: builtins.bool | None = None,
        is_square: builtins.bool | None = None,
        name: str = "LinearOperatorDiag",
    ) -> None:
        if is_square is False:
            raise ValueError("tf.linalg.LinearOperatorDiag: only square diagonal operators currently supported.")
        d = _float_tensor(diag, "LinearOperatorDiag", "diag")
        if d.dim() < 1:
            raise ValueError("tf.linalg.LinearOperatorDiag: `diag` must have rank >= 1 ([..., N]). Received a scalar.")
        if is_self_adjoint is None and not d.is_complex():
            is_self_adjoint = True  # a real diagonal is its own adjoint
        self._diag = d
        super().__init__(
            d.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name, {"diag": diag}
        )

    def _shape(self) -> tuple[int, ...]:
        return (*self._diag.shape, self._diag.shape[-1])

    def _to_dense(self) -> torch.Tensor:
        return torch.diag_embed(self._diag)

    def _entries(self, adjoint: builtins.bool) -> torch.Tensor:
        return self._diag.conj() if adjoint and self._diag.is_complex() else self._diag

    def _matmul(
        self, x: torch.Tensor, adjoint: builtins.bool = False, adjoint_arg: builtins.bool = False
    ) -> torch.Tensor:
        return self._entries(adjoint).unsqueeze(-1) * x

    def _solve(self, rhs: torch.Tensor, adjoint: builtins.bool) -> torch.Tensor:
        return rhs / self._entries(adjoint).unsqueeze(-1)

    def _determinant(self) -> torch.Tensor:
        return self._diag.prod(-1)

    def _log_abs_determinant(self) -> torch.Tensor:
        return torch.log(self._diag.abs()).sum(-1)

    def _diag_part(self) -> torch.Tensor:
        return self._diag

    def inverse(self, name: str = "inverse") -> LinearOperator:
        return LinearOperatorDiag(
            1.0 / self._diag,
            is_non_singular=self._is_non_singular,
            is_self_adjoint=self._is_self_adjoint,
            is_positive_definite=self._is_positive_definite,
        )

    def adjoint(self, name: str = "adjoint") -> LinearOperator:
        return self if self._is_self_adjoint else LinearOperatorDiag(self._diag.conj().resolve_conj())

    H = property(adjoint)


class LinearOperatorScaledIdentity(LinearOperator):
    """``tf.linalg.LinearOperatorScaledIdentity``: ``multiplier * I`` (``multiplier`` of the batch shape)."""

    def __init__(
        self,
        num_rows: Any,
        multiplier: Any,
        is_non_singular: builtins.bool | None = None,
        is_self_adjoint: builtins.bool | None = None,
        is_positive_definite: builtins.bool | None = None,
        is_square: builtins.bool = True,
        assert_proper_shapes: builtins.bool = False,
        name: str = "LinearOperatorScaledIdentity",
    ) -> None:
        if not is_square:
            raise ValueError("tf.linalg.LinearOperatorScaledIdentity: an identity operator is always square.")
        self._num_rows = _num_rows(num_rows, type(self).__name__)
        self._multiplier = to_tensor(multiplier)
        if is_self_adjoint is None and not self._multiplier.is_complex():
            is_self_adjoint = True
        super().__init__(
            self._multiplier.dtype,
            None,
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            True,
            name,
            {"num_rows": num_rows, "multiplier": multiplier},
        )

    @property
    def multiplier(self) -> torch.Tensor:
        return self._multiplier

    def _shape(self) -> tuple[int, ...]:
        return (*self._multiplier.shape, self._num_rows, self._num_rows)

    def _to_dense(self) -> torch.Tensor:
        eye = torch.eye(self._num_rows, dtype=self._multiplier.dtype, device=self._multiplier.device)
        return self._multiplier[..., None, None] * eye

    def _scale(self, adjoint: builtins.bool) -> torch.Tensor:
        m = self._multiplier.conj() if adjoint and self._multiplier.is_complex() else self._multiplier
        return m[..., None, None]

    def _matmul(
        self, x: torch.Tensor, adjoint: builtins.bool = False, adjoint_arg: builtins.bool = False
    ) -> torch.Tensor:
        return self._scale(adjoint) * x

    def _solve(self, rhs: torch.Tensor, adjoint: builtins.bool) -> torch.Tensor:
        return rhs / self._scale(adjoint)

    def _determinant(self) -> torch.Tensor:
        return self._multiplier**self._num_rows

    def _log_abs_determinant(self) -> torch.Tensor:
        return self._num_rows * torch.log(self._multiplier.abs())

    def _diag_part(self) -> torch.Tensor:
        return self._multiplier.unsqueeze(-1).expand(*self._multiplier.shape, self._num_rows)

    def inverse(self, name: str = "inverse") -> LinearOperator:
        return LinearOperatorScaledIdentity(
            self._num_rows,
            1.0 / self._multiplier,
            is_non_singular=self._is_non_singular,
            is_self_adjoint=self._is_self_adjoint,
            is_positive_definite=self._is_positive_definite,
        )


class LinearOperatorIdentity(LinearOperatorScaledIdentity):
    """``tf.linalg.LinearOperatorIdentity``: the identity ``[*batch_shape, N, N]`` (``dtype`` default float32)."""

    def __init__(
        self,
        num_rows: Any,
        batch_shape: Any = None,
        dtype: Any = None,
        is_non_singular: builtins.bool = True,
        is_self_adjoint: builtins.bool = True,
        is_positive_definite: builtins.bool = True,
        is_square: builtins.bool = True,
        assert_proper_shapes: builtins.bool = False,
        name: str = "LinearOperatorIdentity",
    ) -> None:
        for hint, value in (
            ("is_non_singular", is_non_singular),
            ("is_self_adjoint", is_self_adjoint),
            ("is_positive_definite", is_positive_definite),
            ("is_square", is_square),
        ):
            if not value:
                raise ValueError(
                    f"tf.linalg.LinearOperatorIdentity: an identity operator is always {hint[3:]}. Received {hint}={value!r}."
                )
        batch = () if batch_shape is None else tuple(int(b) for b in to_tensor(batch_shape).reshape(-1).tolist())
        ones = torch.ones(batch, dtype=as_dtype(dtype) if dtype is not None else torch.float32)
        super().__init__(num_rows, ones, True, True, True, True, assert_proper_shapes, name)
        self._parameters = {"num_rows": num_rows, "batch_shape": batch_shape, "dtype": dtype}

    def _determinant(self) -> torch.Tensor:
        return torch.ones_like(self._multiplier)

    def _log_abs_determinant(self) -> torch.Tensor:
        return torch.zeros_like(self._multiplier)

    def inverse(self, name: str = "inverse") -> LinearOperator:
        return self  # the identity is its own inverse (TF returns it)


KINDS.update(
    LinearOperatorFullMatrix=LinearOperatorFullMatrix, LinearOperatorLowerTriangular=LinearOperatorLowerTriangular
)
