"""``tf.linalg``: TF's linear algebra over ``torch.linalg``.

Example:
    >>> import unison as tf
    >>> a = tf.constant([[2.0, 0.0], [0.0, 4.0]])
    >>> tf.linalg.inv(a).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    >>> tf.linalg.matvec(a, tf.constant([1.0, 1.0])).tolist()
    [2.0, 4.0]
"""

from __future__ import annotations

from unison.ops._dispatch import wrap_namespace
from unison.ops.indexing import eye
from unison.ops.linalg import experimental
from unison.ops.linalg._banded import (
    banded_triangular_solve,
    eigh_tridiagonal,
    tridiagonal_matmul,
    tridiagonal_solve,
)
from unison.ops.linalg._basic import (
    adjoint,
    band_part,
    cholesky,
    cholesky_solve,
    cross,
    det,
    diag,
    diag_part,
    inv,
    logdet,
    matrix_transpose,
    matvec,
    set_diag,
    slogdet,
    solve,
    tensor_diag,
    tensor_diag_part,
    trace,
    triangular_solve,
)
from unison.ops.linalg._decomp import (
    eig,
    eigh,
    eigvals,
    eigvalsh,
    expm,
    logm,
    lstsq,
    lu,
    lu_matrix_inverse,
    lu_reconstruct,
    lu_solve,
    matrix_rank,
    normalize,
    pinv,
    qr,
    sqrtm,
    svd,
)
from unison.ops.linalg._operators import LinearOperator
from unison.ops.linalg._operators_composed import (
    LinearOperatorAdjoint,
    LinearOperatorBlockDiag,
    LinearOperatorBlockLowerTriangular,
    LinearOperatorComposition,
    LinearOperatorInversion,
    LinearOperatorKronecker,
    LinearOperatorLowRankUpdate,
)
from unison.ops.linalg._operators_kinds import (
    LinearOperatorDiag,
    LinearOperatorFullMatrix,
    LinearOperatorIdentity,
    LinearOperatorLowerTriangular,
    LinearOperatorScaledIdentity,
)
from unison.ops.linalg._operators_structured import (
    LinearOperatorCirculant,
    LinearOperatorCirculant2D,
    LinearOperatorCirculant3D,
    LinearOperatorHouseholder,
    LinearOperatorPermutation,
    LinearOperatorToeplitz,
    LinearOperatorTridiag,
    LinearOperatorZeros,
)
from unison.ops.math import einsum, global_norm, l2_normalize, matmul, norm, tensordot

__all__ = [
    "LinearOperator",
    "LinearOperatorAdjoint",
    "LinearOperatorBlockDiag",
    "LinearOperatorBlockLowerTriangular",
    "LinearOperatorCirculant",
    "LinearOperatorCirculant2D",
    "LinearOperatorCirculant3D",
    "LinearOperatorComposition",
    "LinearOperatorHouseholder",
    "LinearOperatorInversion",
    "LinearOperatorKronecker",
    "LinearOperatorLowRankUpdate",
    "LinearOperatorPermutation",
    "LinearOperatorToeplitz",
    "LinearOperatorTridiag",
    "LinearOperatorZeros",
    "LinearOperatorDiag",
    "LinearOperatorFullMatrix",
    "LinearOperatorIdentity",
    "LinearOperatorLowerTriangular",
    "LinearOperatorScaledIdentity",
    "adjoint",
    "band_part",
    "banded_triangular_solve",
    "cholesky",
    "cholesky_solve",
    "cross",
    "det",
    "diag",
    "diag_part",
    "eig",
    "eigh",
    "eigh_tridiagonal",
    "eigvals",
    "eigvalsh",
    "einsum",
    "experimental",
    "expm",
    "eye",
    "global_norm",
    "inv",
    "l2_normalize",
    "logdet",
    "logm",
    "lstsq",
    "lu",
    "lu_matrix_inverse",
    "lu_reconstruct",
    "lu_solve",
    "matmul",
    "matrix_rank",
    "matrix_transpose",
    "matvec",
    "norm",
    "normalize",
    "pinv",
    "qr",
    "set_diag",
    "slogdet",
    "solve",
    "sqrtm",
    "svd",
    "tensor_diag",
    "tensor_diag_part",
    "tensordot",
    "trace",
    "triangular_solve",
    "tridiagonal_matmul",
    "tridiagonal_solve",
]

# Only this package's functions: the re-exported ones (matmul, eye...) are wrapped where they live.
wrap_namespace(globals(), [n for n in __all__ if getattr(globals()[n], "__module__", "").startswith(__name__ + "._")])


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.linalg", name)
