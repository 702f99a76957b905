"""``tf.linalg.LinearOperator``, the base of matrices known by their structure, with ``matmul``, ``matvec``,
``solve``, ``to_dense``, ``determinant``, ``log_abs_determinant``, ``inverse``, ``adjoint``...

A subclass states its structure through ``_to_dense`` (and may override any ``_name`` method for a
cheaper formula, as the diagonal kinds do); the public methods check arguments and convert.

Example:
    >>> import unison as tf
    >>> op = tf.linalg.LinearOperatorDiag([2.0, 4.0])
    >>> op.matvec(tf.constant([1.0, 1.0])).tolist(), op.determinant().item()
    ([2.0, 4.0], 8.0)
"""

from __future__ import annotations

import builtins
from typing import Any

import torch

from unison.ops.control_flow import TensorShape
from unison.ops.dtypes import as_dtype, to_tensor
from unison.ops.linalg._basic import FLOATS, cholesky, dtype_name, widen

# The kinds the base's methods return (a product is a composition, an inverse a full matrix...):
# their modules import this one and register them here, so the imports point one way.
KINDS: dict[str, Any] = {}


def _float_tensor(value: Any, cls: str, arg: str) -> torch.Tensor:
    t = to_tensor(value)
    if t.dtype not in FLOATS:
        raise TypeError(
            f"tf.linalg.{cls}: `{arg}` must be float16, float32, float64, complex64 or complex128. "
            f"Received dtype {dtype_name(t.dtype)}: cast it first (tf.cast)."
        )
    return t


class LinearOperator:
    """``tf.linalg.LinearOperator``: the base of operators acting like a batch of ``[M, N]`` matrices.

    Subclasses implement ``_to_dense`` and may override ``_matmul``, ``_solve``,
    ``_determinant``, ``_log_abs_determinant`` and ``_diag_part`` with cheaper formulas.
    """

    def __init__(
        self,
        dtype: Any,
        graph_parents: Any = None,
        is_non_singular: builtins.bool | None = None,
        is_self_adjoint: builtins.bool | None = None,
        is_positive_definite: builtins.bool | None = None,
        is_square: builtins.bool | None = None,
        name: str | None = None,
        parameters: dict[str, Any] | None = None,
    ) -> None:
        if is_positive_definite and is_non_singular is False:
            raise ValueError("tf.linalg.LinearOperator: a positive definite operator is always non-singular.")
        if is_positive_definite:
            is_non_singular = True
        if is_non_singular and is_square is False:
            raise ValueError("tf.linalg.LinearOperator: a non-singular operator is always square.")
        if is_self_adjoint and is_square is False:
            raise ValueError(
                "tf.linalg.LinearOperator: A self-adjoint matrix is always square (is_square=False given)."
            )
        if is_non_singular or is_self_adjoint:
            is_square = True if is_square is None else is_square
        self._dtype = as_dtype(dtype) if dtype is not None else None
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square = is_square
        self._name = name or type(self).__name__
        self._parameters = dict(parameters or {})

    # --- properties ----------------------------------------------------------------------
    @property
    def dtype(self) -> Any:
        return self._dtype

    @property
    def name(self) -> str:
        return self._name

    @property
    def parameters(self) -> dict[str, Any]:
        return dict(self._parameters)

    @property
    def is_non_singular(self) -> builtins.bool | None:
        return self._is_non_singular

    @property
    def is_self_adjoint(self) -> builtins.bool | None:
        return self._is_self_adjoint

    @property
    def is_positive_definite(self) -> builtins.bool | None:
        return self._is_positive_definite

    @property
    def is_square(self) -> builtins.bool | None:
        if self._is_square is None:
            shape = self._dims()
            return shape[-1] == shape[-2]
        return self._is_square

    def _shape(self) -> Any:
        return tuple(self._to_dense().shape)

    def _dims(self) -> tuple[int, ...]:
        """The static shape as ints, whether ``_shape`` gives a tuple or (a TF-style subclass) a TensorShape."""
        return tuple(int(d) for d in self._shape())

    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._dims())

    @property
    def batch_shape(self) -> TensorShape:
        return TensorShape(self._dims()[:-2])

    @property
    def tensor_rank(self) -> int:
        return len(self._dims())

    @property
    def domain_dimension(self) -> int:
        return self._dims()[-1]

    @property
    def range_dimension(self) -> int:
        return self._dims()[-2]

    def shape_tensor(self, name: str = "shape_tensor") -> torch.Tensor:
        return torch.tensor(self._dims(), dtype=torch.int32)

    def batch_shape_tensor(self, name: str = "batch_shape_tensor") -> torch.Tensor:
        return torch.tensor(self._dims()[:-2], dtype=torch.int32)

    def tensor_rank_tensor(self, name: str = "tensor_rank_tensor") -> torch.Tensor:
        return torch.tensor(self.tensor_rank, dtype=torch.int32)

    def domain_dimension_tensor(self, name: str = "domain_dimension_tensor") -> torch.Tensor:
        return torch.tensor(self.domain_dimension, dtype=torch.int32)

    def range_dimension_tensor(self, name: str = "range_dimension_tensor") -> torch.Tensor:
        return torch.tensor(self.range_dimension, dtype=torch.int32)

    # --- the structure a subclass gives ----------------------------------------------------------
    def _to_dense(self) -> torch.Tensor:
        if type(self)._matmul is LinearOperator._matmul:
            raise NotImplementedError(f"{type(self).__name__} must implement _to_dense or _matmul (and _shape)")
        # TF's default: the operator applied to the identity.
        dims = self._dims()
        eye = torch.eye(dims[-1], dtype=self.dtype).expand(*dims[:-2], dims[-1], dims[-1])
        return self._matmul(eye, adjoint=False)

    def _matmul(
        self, x: torch.Tensor, adjoint: builtins.bool = False, adjoint_arg: builtins.bool = False
    ) -> torch.Tensor:
        dense = self._to_dense()
        return (dense.mH if adjoint else dense) @ x

    def _solve(self, rhs: torch.Tensor, adjoint: builtins.bool) -> torch.Tensor:
        dense = widen(self._to_dense())
        return torch.linalg.solve(dense.mH if adjoint else dense, widen(rhs)).to(rhs.dtype)

    def _determinant(self) -> torch.Tensor:
        dense = self._to_dense()
        return torch.linalg.det(widen(dense)).to(dense.dtype)

    def _log_abs_determinant(self) -> torch.Tensor:
        dense = self._to_dense()
        if self._is_positive_definite and self._is_self_adjoint:
            chol = cholesky(dense)
            return 2.0 * torch.log(torch.diagonal(chol, 0, -2, -1).real).sum(-1)
        return torch.linalg.slogdet(widen(dense))[1].to(dense.real.dtype)

    def _diag_part(self) -> torch.Tensor:
        return torch.diagonal(self._to_dense(), 0, -2, -1)

    # --- public methods ------------------------------------------------------------------
    def _check_square(self, what: str) -> None:
        if self.is_square is False:
            raise NotImplementedError(f"tf.linalg.{type(self).__name__}.{what} needs a square operator.")

    def _arg(self, value: Any) -> torch.Tensor:
        t = to_tensor(value)
        if t.dtype != self.dtype:
            raise TypeError(
                f"tf.linalg.{type(self).__name__}: the argument's dtype {dtype_name(t.dtype)} does not match the "
                f"operator's {dtype_name(self.dtype)}: cast it first (tf.cast)."
            )
        return t

    def to_dense(self, name: str = "to_dense") -> torch.Tensor:
        """The operator as a dense ``[..., M, N]`` tensor."""
        return self._to_dense()

    def matmul(
        self, x: Any, adjoint: builtins.bool = False, adjoint_arg: builtins.bool = False, name: str = "matmul"
    ) -> Any:
        """``A @ x`` (``A^H`` when ``adjoint``, ``x^H`` when ``adjoint_arg``); for an operator ``x``, their
        ``LinearOperatorComposition``, as TF returns."""
        if isinstance(x, LinearOperator):
            return KINDS["LinearOperatorComposition"](
                [self.adjoint() if adjoint else self, x.adjoint() if adjoint_arg else x]
            )
        t = self._arg(x)
        rows = self._dims()[-1] if not adjoint else self._dims()[-2]
        arg = t.mH if adjoint_arg else t
        if arg.dim() < 2 or arg.shape[-2] != rows:
            raise ValueError(
                f"tf.linalg.{type(self).__name__}.matmul: `x` must be [..., {rows}, R] for an operator of shape "
                f"{list(self._dims())}. Received shape {list(t.shape)}."
            )
        return self._matmul(arg, adjoint=adjoint)

    def matvec(self, x: Any, adjoint: builtins.bool = False, name: str = "matvec") -> torch.Tensor:
        """``A @ x`` for a batch of vectors ``x`` of shape ``[..., N]``."""
        return self.matmul(self._arg(x).unsqueeze(-1), adjoint=adjoint).squeeze(-1)

    def __matmul__(self, other: Any) -> Any:
        return self.matmul(other)

    def solve(
        self, rhs: Any, adjoint: builtins.bool = False, adjoint_arg: builtins.bool = False, name: str = "solve"
    ) -> Any:
        """``X`` with ``A @ X = rhs``."""
        self._check_square("solve")
        if self._is_non_singular is False:
            raise NotImplementedError(f"tf.linalg.{type(self).__name__}: cannot solve with a singular operator.")
        t = self._arg(rhs.to_dense() if isinstance(rhs, LinearOperator) else rhs)
        out = self._solve(t.mH if adjoint_arg else t, adjoint)
        return KINDS["LinearOperatorFullMatrix"](out) if isinstance(rhs, LinearOperator) else out

    def solvevec(self, rhs: Any, adjoint: builtins.bool = False, name: str = "solve") -> torch.Tensor:
        """``x`` with ``A @ x = rhs`` for vectors ``rhs`` of shape ``[..., M]``."""
        return self.solve(self._arg(rhs).unsqueeze(-1), adjoint=adjoint).squeeze(-1)

    def determinant(self, name: str = "det") -> torch.Tensor:
        """The determinant of each matrix."""
        self._check_square("determinant")
        return self._determinant()

    def log_abs_determinant(self, name: str = "log_abs_det") -> torch.Tensor:
        """``log|det|`` of each matrix."""
        self._check_square("log_abs_determinant")
        return self._log_abs_determinant().to(self.dtype)  # TF keeps the operator's dtype, complex too

    def diag_part(self, name: str = "diag_part") -> torch.Tensor:
        """The main diagonal, ``[..., min(M, N)]``."""
        return self._diag_part()

    def trace(self, name: str = "trace") -> torch.Tensor:
        """The sum of the main diagonal."""
        return self._diag_part().sum(-1)

    def add_to_tensor(self, x: Any, name: str = "add_to_tensor") -> torch.Tensor:
        """``A + x`` as a dense tensor."""
        return self._to_dense() + self._arg(x)

    def eigvals(self, name: str = "eigvals") -> torch.Tensor:
        """The eigenvalues of a self-adjoint operator (ascending)."""
        if not self._is_self_adjoint:
            raise NotImplementedError("tf.linalg.LinearOperator.eigvals needs is_self_adjoint=True.")
        return torch.linalg.eigvalsh(widen(self._to_dense())).to(self.dtype)

    def cond(self, name: str = "cond") -> torch.Tensor:
        """The condition number: the largest over the smallest singular value."""
        s = torch.linalg.svdvals(widen(self._to_dense()))
        return (s[..., 0] / s[..., -1]).to(self.dtype)

    def cholesky(self, name: str = "cholesky") -> LinearOperator:
        """The lower Cholesky factor of a self-adjoint positive definite operator."""
        if not (self._is_self_adjoint and self._is_positive_definite):
            raise ValueError(
                "tf.linalg.LinearOperator.cholesky needs is_self_adjoint=True and is_positive_definite=True."
            )
        return KINDS["LinearOperatorLowerTriangular"](cholesky(self._to_dense()), is_non_singular=True, is_square=True)

    def adjoint(self, name: str = "adjoint") -> LinearOperator:
        """The conjugate transpose as an operator."""
        if self._is_self_adjoint:
            return self
        return KINDS["LinearOperatorAdjoint"](self)

    H = property(adjoint)

    def inverse(self, name: str = "inverse") -> LinearOperator:
        """The inverse as an operator (square, non-singular operators)."""
        self._check_square("inverse")
        if self._is_non_singular is False:
            raise ValueError(f"tf.linalg.{type(self).__name__}.inverse: the operator is singular.")
        return KINDS["LinearOperatorInversion"](self)

    def __repr__(self) -> str:
        return f"<tf.linalg.{type(self).__name__} '{self.name}' shape={list(self._dims())} dtype={self.dtype}>"


def _num_rows(value: Any, cls: str) -> int:
    n = int(to_tensor(value).item()) if not isinstance(value, int) else value
    if n < 0:
        raise ValueError(f"tf.linalg.{cls}: `num_rows` must be non-negative. Received: num_rows={n}")
    return n
