"""The composed ``tf.linalg.LinearOperator`` kinds: adjoint, inversion, composition, Kronecker,
block-diagonal, block-lower-triangular and low-rank update.

Each gives its matrix through ``_to_dense``; the base class derives ``matmul``, ``solve``,
``determinant``... from it, so every kind answers every method with TF's values.

Example:
    >>> import unison as tf
    >>> op = tf.linalg.LinearOperatorBlockDiag([tf.linalg.LinearOperatorIdentity(1), tf.linalg.LinearOperatorDiag([2.0])])
    >>> op.to_dense().tolist()
    [[1.0, 0.0], [0.0, 2.0]]
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import torch

from unison.ops.dtypes import to_tensor
from unison.ops.linalg._basic import widen
from unison.ops.linalg._operators import KINDS, LinearOperator, _float_tensor

_Hint = builtins.bool | None


def _dense(operators: Sequence[LinearOperator], cls: str) -> list[torch.Tensor]:
    if not operators:
        raise ValueError(f"tf.linalg.{cls}: expected a non-empty list of operators. Received: {operators!r}")
    dense = [op.to_dense() for op in operators]
    if len({d.dtype for d in dense}) > 1:
        raise TypeError(
            f"tf.linalg.{cls}: all operators must have the same dtype. Received: {[str(d.dtype) for d in dense]}"
        )
    return dense


class _Dense(LinearOperator):
    """An operator whose matrix is computed once, at construction."""

    def __init__(
        self, matrix: torch.Tensor, hints: tuple[_Hint, _Hint, _Hint, _Hint], name: str, parameters: dict[str, Any]
    ) -> None:
        self._matrix = matrix
        super().__init__(matrix.dtype, None, *hints, name, parameters)

    def _to_dense(self) -> torch.Tensor:
        return self._matrix


class LinearOperatorAdjoint(_Dense):
    """``tf.linalg.LinearOperatorAdjoint``: the conjugate transpose of ``operator``."""

    def __init__(
        self,
        operator: LinearOperator,
        is_non_singular: _Hint = None,
        is_self_adjoint: _Hint = None,
        is_positive_definite: _Hint = None,
        is_square: _Hint = None,
        name: str | None = None,
    ) -> None:
        hints = (
            operator.is_non_singular if is_non_singular is None else is_non_singular,
            operator.is_self_adjoint if is_self_adjoint is None else is_self_adjoint,
            operator.is_positive_definite if is_positive_definite is None else is_positive_definite,
            is_square,
        )
        super().__init__(
            operator.to_dense().mH.resolve_conj().contiguous(),
            hints,
            name or f"{operator.name}_adjoint",
            {"operator": operator},
        )
        self.operator = operator


class LinearOperatorInversion(_Dense):
    """``tf.linalg.LinearOperatorInversion``: the inverse of a square, non-singular ``operator``."""

    def __init__(
        self,
        operator: LinearOperator,
        is_non_singular: _Hint = None,
        is_self_adjoint: _Hint = None,
        is_positive_definite: _Hint = None,
        is_square: _Hint = None,
        name: str | None = None,
    ) -> None:
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError(
                "tf.linalg.LinearOperatorInversion: the operator is singular (is_non_singular=False); it has no inverse."
            )
        dense = operator.to_dense()
        inverse = torch.linalg.inv(widen(dense)).to(dense.dtype)
        hints = (
            True,
            operator.is_self_adjoint if is_self_adjoint is None else is_self_adjoint,
            operator.is_positive_definite if is_positive_definite is None else is_positive_definite,
            True,
        )
        super().__init__(inverse, hints, name or f"{operator.name}_inv", {"operator": operator})
        self.operator = operator


class LinearOperatorComposition(_Dense):
    """``tf.linalg.LinearOperatorComposition``: the product ``operators[0] @ operators[1] @ ...``."""

    def __init__(
        self,
        operators: Sequence[LinearOperator],
        is_non_singular: _Hint = None,
        is_self_adjoint: _Hint = None,
        is_positive_definite: _Hint = None,
        is_square: _Hint = None,
        name: str | None = None,
    ) -> None:
        dense = _dense(operators, "LinearOperatorComposition")
        product = dense[0]
        for d in dense[1:]:
            product = product @ d
        if is_non_singular is None and all(op.is_non_singular for op in operators):
            is_non_singular = True
        if is_square is None and not all(op.is_square for op in operators):
            is_square = False  # TF's hint: a product through a non-square factor is not treated as square
        super().__init__(
            product,
            (is_non_singular, is_self_adjoint, is_positive_definite, is_square),
            name or "_o_".join(op.name for op in operators),
            {"operators": operators},
        )
        self.operators = list(operators)


class LinearOperatorKronecker(_Dense):
    """``tf.linalg.LinearOperatorKronecker``: the Kronecker product of ``operators`` (batches broadcast)."""

    def __init__(
        self,
        operators: Sequence[LinearOperator],
        is_non_singular: _Hint = None,
        is_self_adjoint: _Hint = None,
        is_positive_definite: _Hint = None,
        is_square: _Hint = None,
        name: str | None = None,
    ) -> None:
        dense = _dense(operators, "LinearOperatorKronecker")
        out = dense[0]
        for d in dense[1:]:
            rows, cols = out.shape[-2] * d.shape[-2], out.shape[-1] * d.shape[-1]
            product = out[..., :, None, :, None] * d[..., None, :, None, :]
            out = product.reshape(*product.shape[:-4], rows, cols)
        super().__init__(
            out,
            (is_non_singular, is_self_adjoint, is_positive_definite, is_square),
            name or "_x_".join(op.name for op in operators),
            {"operators": operators},
        )
        self.operators = list(operators)


def _place(blocks: list[tuple[int, int, torch.Tensor]], rows: int, cols: int) -> torch.Tensor:
    batch = torch.broadcast_shapes(*(b.shape[:-2] for _, _, b in blocks))
    out = torch.zeros((*batch, rows, cols), dtype=blocks[0][2].dtype, device=blocks[0][2].device)
    for r, c, block in blocks:  # one copy per block
        out[..., r : r + block.shape[-2], c : c + block.shape[-1]] = block
    return out


class LinearOperatorBlockDiag(_Dense):
    """``tf.linalg.LinearOperatorBlockDiag``: ``operators`` along the diagonal, zeros elsewhere."""

    def __init__(
        self,
        operators: Sequence[LinearOperator],
        is_non_singular: _Hint = None,
        is_self_adjoint: _Hint = None,
        is_positive_definite: _Hint = None,
        is_square: _Hint = True,
        name: str | None = None,
    ) -> None:
        dense = _dense(operators, "LinearOperatorBlockDiag")
        blocks, r, c = [], 0, 0
        for d in dense:
            blocks.append((r, c, d))
            r, c = r + d.shape[-2], c + d.shape[-1]
        super().__init__(
            _place(blocks, r, c),
            (is_non_singular, is_self_adjoint, is_positive_definite, is_square),
            name or "_ds_".join(op.name for op in operators),
            {"operators": operators},
        )
        self.operators = list(operators)


class LinearOperatorBlockLowerTriangular(_Dense):
    """``tf.linalg.LinearOperatorBlockLowerTriangular``: row ``i`` of ``operators`` holds the ``i + 1`` blocks left of and on the diagonal."""

    def __init__(
        self,
        operators: Sequence[Sequence[LinearOperator]],
        is_non_singular: _Hint = None,
        is_self_adjoint: _Hint = None,
        is_positive_definite: _Hint = None,
        is_square: _Hint = None,
        name: str = "LinearOperatorBlockLowerTriangular",
    ) -> None:
        for i, row in enumerate(operators):
            if len(row) != i + 1:
                raise ValueError(
                    f"tf.linalg.LinearOperatorBlockLowerTriangular: row {i} of `operators` must hold {i + 1} operators "
                    f"(a lower-triangular block layout). Received {len(row)}."
                )
        diagonal = _dense([row[-1] for row in operators], "LinearOperatorBlockLowerTriangular")
        starts = [0]
        for d in diagonal:
            starts.append(starts[-1] + d.shape[-1])
        blocks = [(starts[i], starts[j], op.to_dense()) for i, row in enumerate(operators) for j, op in enumerate(row)]
        super().__init__(
            _place(blocks, starts[-1], starts[-1]),
            (is_non_singular, is_self_adjoint, is_positive_definite, is_square),
            name,
            {"operators": operators},
        )
        self.operators = [list(row) for row in operators]


class LinearOperatorLowRankUpdate(_Dense):
    """``tf.linalg.LinearOperatorLowRankUpdate``: ``base_operator + u @ diag(diag_update) @ adjoint(v)`` (``v`` defaults to ``u``)."""

    def __init__(
        self,
        base_operator: LinearOperator,
        u: Any,
        diag_update: Any = None,
        v: Any = None,
        is_diag_update_positive: _Hint = None,
        is_non_singular: _Hint = None,
        is_self_adjoint: _Hint = None,
        is_positive_definite: _Hint = None,
        is_square: _Hint = None,
        name: str = "LinearOperatorLowRankUpdate",
    ) -> None:
        base = base_operator.to_dense()
        uu = _float_tensor(u, "LinearOperatorLowRankUpdate", "u").to(base.dtype)
        vv = uu if v is None else _float_tensor(v, "LinearOperatorLowRankUpdate", "v").to(base.dtype)
        scaled = uu if diag_update is None else uu * to_tensor(diag_update).to(base.dtype).unsqueeze(-2)
        if v is None and is_self_adjoint is None and base_operator.is_self_adjoint:
            is_self_adjoint = True
        super().__init__(
            base + scaled @ vv.mH,
            (is_non_singular, is_self_adjoint, is_positive_definite, is_square),
            name,
            {"base_operator": base_operator, "u": u, "diag_update": diag_update, "v": v},
        )
        self.base_operator, self.u, self.v, self.diag_update = base_operator, uu, vv, diag_update


KINDS.update(
    LinearOperatorAdjoint=LinearOperatorAdjoint,
    LinearOperatorComposition=LinearOperatorComposition,
    LinearOperatorInversion=LinearOperatorInversion,
)
