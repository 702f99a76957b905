"""``tf.linalg`` against TensorFlow 2.21 (see tf_oracle.py for the rules).

Decompositions whose factors are defined only up to signs or phases (svd, eig, eigh) are compared
through what is unique: the values, ``|vectors|`` and the reconstruction.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

A = [[4.0, 1.0, 2.0], [1.0, 5.0, 3.0], [2.0, 3.0, 6.0]]  # symmetric positive definite
G = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]]  # general, non-singular


@same_as_tf("linalg.matmul")
def test_matmul(tf):
    a = tf.constant(G)
    return tf.linalg.matmul(a, a, transpose_b=True), tf.linalg.matmul(a, a, adjoint_a=True)


@same_as_tf("linalg.matmul", edge=True)
def test_matmul_broadcasts_batches(tf):
    return tf.linalg.matmul(tf.ones([2, 1, 3, 4]), tf.ones([5, 4, 2]))


@same_as_tf("linalg.matvec")
def test_matvec(tf):
    return tf.linalg.matvec(tf.constant(G), tf.constant([1.0, -1.0, 2.0]), transpose_a=True)


@same_as_tf("linalg.matvec", edge=True)
def test_matvec_broadcasts(tf):
    return tf.linalg.matvec(tf.ones([2, 3]), tf.ones([4, 3]))


@same_as_tf("linalg.det", "linalg.slogdet")
def test_det_slogdet(tf):
    m = tf.constant([G, A], tf.float64)
    return tf.linalg.det(m), tf.linalg.slogdet(m), tf.linalg.det(tf.constant(G))


@same_as_tf("linalg.det", "linalg.slogdet", edge=True)
def test_det_of_ints_is_refused(tf):
    return tf.linalg.det(tf.constant([[1, 2], [3, 4]]))


@same_as_tf("linalg.det", edge=True)
def test_det_of_an_empty_batch_and_a_singular_matrix(tf):
    return tf.linalg.det(tf.zeros([0, 3, 3])), tf.linalg.slogdet(tf.constant([[1.0, 2.0], [2.0, 4.0]]))


@same_as_tf("linalg.slogdet", edge=True, match=r"slogdet.*square")
def test_slogdet_of_a_non_square(tf):
    return tf.linalg.slogdet(tf.ones([2, 3]))


@same_as_tf("linalg.logdet")
def test_logdet(tf):
    return tf.linalg.logdet(tf.constant([A, [[2.0, 0, 0], [0, 3, 0], [0, 0, 4]]]))


@same_as_tf("linalg.logdet", edge=True)
def test_logdet_complex(tf):
    return tf.linalg.logdet(tf.constant(np.array([[2.0 + 0j, 1j], [-1j, 3.0]])))


@same_as_tf("linalg.inv")
def test_inv(tf):
    return tf.linalg.inv(tf.constant(G, tf.float64)), tf.linalg.inv(tf.constant(G, tf.float64), adjoint=True)


@same_as_tf("linalg.inv", edge=True, match=r"inv.*not invertible")
def test_inv_of_a_singular_matrix(tf):
    return tf.linalg.inv(tf.constant([[1.0, 2.0], [2.0, 4.0]]))


@same_as_tf("linalg.inv", edge=True, rtol=1e-2)
def test_inv_half(tf):
    return tf.linalg.inv(tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float16))


@same_as_tf("linalg.solve")
def test_solve(tf):
    b = tf.constant([[1.0, 0.0], [2.0, 1.0], [3.0, -1.0]], tf.float64)
    return tf.linalg.solve(tf.constant(G, tf.float64), b), tf.linalg.solve(tf.constant(G, tf.float64), b, adjoint=True)


@same_as_tf("linalg.solve", edge=True)
def test_solve_does_not_broadcast(tf):
    return tf.linalg.solve(tf.eye(2, batch_shape=[3]), tf.ones([2, 1]))


@same_as_tf("linalg.solve", edge=True, match=r"solve.*not invertible")
def test_solve_singular(tf):
    return tf.linalg.solve(tf.zeros([2, 2]), tf.ones([2, 1]))


@same_as_tf("linalg.triangular_solve")
def test_triangular_solve(tf):
    m = tf.constant(G, tf.float64)
    b = tf.constant([[1.0], [2.0], [3.0]], tf.float64)
    return (
        tf.linalg.triangular_solve(m, b),
        tf.linalg.triangular_solve(m, b, lower=False),
        tf.linalg.triangular_solve(m, b, adjoint=True),
    )


@same_as_tf("linalg.triangular_solve", edge=True)
def test_triangular_solve_broadcasts(tf):
    return tf.linalg.triangular_solve(tf.eye(2, batch_shape=[3]) * 2.0, tf.ones([2, 1]))


@same_as_tf("linalg.cholesky", "linalg.cholesky_solve")
def test_cholesky(tf):
    chol = tf.linalg.cholesky(tf.constant(A, tf.float64))
    return chol, tf.linalg.cholesky_solve(chol, tf.constant([[1.0], [2.0], [3.0]], tf.float64))


@same_as_tf("linalg.cholesky", "linalg.cholesky_solve", edge=True)
def test_cholesky_of_an_empty_batch(tf):
    chol = tf.linalg.cholesky(tf.zeros([0, 2, 2]))
    return chol, tf.linalg.cholesky_solve(tf.eye(2, batch_shape=[2]), tf.ones([2, 2, 3]))


@same_as_tf("linalg.qr")
def test_qr(tf):
    m = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], tf.float64)
    return tf.linalg.qr(m), tf.linalg.qr(m, full_matrices=True).r


@same_as_tf("linalg.qr", edge=True)
def test_qr_of_a_wide_batch(tf):
    q, r = tf.linalg.qr(tf.reshape(tf.range(12, dtype=tf.float64), [2, 2, 3]) ** 2)
    return tf.abs(q), tf.abs(r)


@same_as_tf("linalg.svd")
def test_svd(tf):
    m = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], tf.float64)
    s, u, v = tf.linalg.svd(m)
    return s, tf.abs(u), tf.abs(v), tf.matmul(u * s, v, adjoint_b=True), tf.linalg.svd(m, compute_uv=False)


@same_as_tf("linalg.svd", edge=True)
def test_svd_full_matrices_shapes_and_complex(tf):
    s, u, v = tf.linalg.svd(tf.ones([2, 4, 3]), full_matrices=True)
    c = tf.linalg.svd(tf.constant(np.array([[1.0 + 1j, 2.0], [0.0, 1j]])), compute_uv=False)
    return s, tf.shape(u), tf.shape(v), c


@same_as_tf("linalg.eigh", "linalg.eigvalsh")
def test_eigh(tf):
    e, v = tf.linalg.eigh(tf.constant(A, tf.float64))
    return e, tf.abs(v), tf.linalg.eigvalsh(tf.constant(A, tf.float64))


@same_as_tf("linalg.eigh", "linalg.eigvalsh", edge=True)
def test_eigh_reads_the_lower_triangle(tf):
    m = tf.constant([[2.0, 100.0], [1.0, 2.0]], tf.float64)
    return tf.linalg.eigvalsh(m), tf.abs(tf.linalg.eigh(m)[1])


@same_as_tf("linalg.eig", "linalg.eigvals")
def test_eig(tf):
    m = tf.constant([[2.0, 1.0], [1.0, 2.0]], tf.float64)
    e, v = tf.linalg.eig(m)
    residual = tf.abs(tf.matmul(tf.cast(m, tf.complex128), v) - v * e)
    rotation = tf.linalg.eigvals(tf.constant([[0.0, 1.0], [-1.0, 0.0]]))
    return tf.sort(tf.abs(e)), tf.abs(v), tf.reduce_max(residual) < 1e-12, tf.abs(rotation), rotation * rotation


@same_as_tf("linalg.eig", "linalg.eigvals", edge=True)
def test_eig_of_an_empty_batch(tf):
    e, v = tf.linalg.eig(tf.zeros([0, 2, 2]))
    return e, v, tf.linalg.eigvals(tf.zeros([0, 3, 3], tf.float64))


@same_as_tf("linalg.expm")
def test_expm(tf):
    return tf.linalg.expm(tf.constant([[0.0, 1.0], [-1.0, 0.0]], tf.float64)), tf.linalg.expm(tf.zeros([2, 3, 3]))


@same_as_tf("linalg.expm", edge=True)
def test_expm_of_ints_is_refused(tf):
    return tf.linalg.expm(tf.constant([[1, 2], [3, 4]]))


@same_as_tf("linalg.logm")
def test_logm(tf):
    return tf.linalg.logm(tf.constant([[4.0, 1.0], [0.0, 9.0]], tf.complex128))


@same_as_tf("linalg.logm", edge=True)
def test_logm_of_reals_is_refused(tf):
    return tf.linalg.logm(tf.constant([[4.0, 1.0], [0.0, 9.0]]))


@same_as_tf("linalg.sqrtm")
def test_sqrtm(tf):
    return tf.linalg.sqrtm(tf.constant([[4.0, 1.0], [0.0, 9.0]], tf.float64)), tf.linalg.sqrtm(
        tf.constant(A, tf.float64)
    )


@same_as_tf("linalg.sqrtm", edge=True)
def test_sqrtm_of_a_rotation(tf):
    return tf.linalg.sqrtm(tf.constant([[0.0, -1.0], [1.0, 0.0]], tf.float64))


@same_as_tf("linalg.lu", "linalg.lu_reconstruct", "linalg.lu_solve", "linalg.lu_matrix_inverse")
def test_lu(tf):
    m = tf.constant(G, tf.float64)
    lu, p = tf.linalg.lu(m)
    rhs = tf.constant([[1.0], [2.0], [3.0]], tf.float64)
    return lu, p, tf.linalg.lu_reconstruct(lu, p), tf.linalg.lu_solve(lu, p, rhs), tf.linalg.lu_matrix_inverse(lu, p)


@same_as_tf("linalg.lu", "linalg.lu_reconstruct", "linalg.lu_solve", "linalg.lu_matrix_inverse", edge=True)
def test_lu_batched(tf):
    m = tf.constant([G, A], tf.float64)
    lu, p = tf.linalg.lu(m)
    return (
        tf.linalg.lu(m, output_idx_type=tf.int64).p,
        tf.linalg.lu_reconstruct(lu, p),
        tf.linalg.lu_solve(lu, p, tf.ones([2, 3, 2], tf.float64)),
        tf.linalg.lu_matrix_inverse(lu, p),
    )


@same_as_tf("linalg.lstsq")
def test_lstsq(tf):
    m = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], tf.float64)
    b = tf.constant([[1.0], [2.0], [4.0]], tf.float64)
    wide = tf.constant([[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]], tf.float64)
    return (
        tf.linalg.lstsq(m, b),
        tf.linalg.lstsq(m, b, l2_regularizer=0.5),
        tf.linalg.lstsq(m, b, fast=False),
        tf.linalg.lstsq(wide, b[:2], fast=False),
    )


@same_as_tf("linalg.lstsq", edge=True)
def test_lstsq_underdetermined_regularized(tf):
    wide = tf.constant([[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]], tf.float64)
    return tf.linalg.lstsq(wide, tf.constant([[1.0], [2.0]], tf.float64), l2_regularizer=0.1)


@same_as_tf("linalg.pinv")
def test_pinv(tf):
    return tf.linalg.pinv(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], tf.float64))


@same_as_tf("linalg.pinv", edge=True)
def test_pinv_of_a_rank_deficient_matrix(tf):
    return tf.linalg.pinv(tf.constant([[1.0, 2.0], [2.0, 4.0]], tf.float64)), tf.linalg.pinv(
        tf.constant([[1.0, 0.0], [0.0, 1e-9]]), rcond=1e-3
    )


@same_as_tf("linalg.matrix_rank")
def test_matrix_rank(tf):
    return tf.linalg.matrix_rank(tf.constant([[1.0, 2.0], [2.0, 4.0]])), tf.linalg.matrix_rank(tf.constant([G, A]))


@same_as_tf("linalg.matrix_rank", edge=True)
def test_matrix_rank_with_tol(tf):
    return tf.linalg.matrix_rank(tf.constant([[1.0, 0.0], [0.0, 1e-3]]), tol=1e-2)


@same_as_tf("linalg.norm", "linalg.normalize")
def test_norm_normalize(tf):
    x = tf.constant([[3.0, -4.0], [0.0, 1.0]])
    return (
        tf.linalg.norm(x),
        tf.linalg.norm(x, ord=1, axis=[-2, -1]),
        tf.linalg.normalize(x, axis=1),
        tf.linalg.normalize(x),
    )


@same_as_tf("linalg.norm", "linalg.normalize", edge=True)
def test_normalize_a_zero_vector_is_nan(tf):
    return tf.linalg.normalize(tf.zeros([2])), tf.linalg.norm(tf.zeros([0, 3]), axis=1)


@same_as_tf("linalg.trace")
def test_trace(tf):
    return tf.linalg.trace(tf.constant([[1, 2], [3, 4]])), tf.linalg.trace(tf.ones([2, 3, 4]))


@same_as_tf("linalg.trace", edge=True)
def test_trace_of_a_vector_is_refused(tf):
    return tf.linalg.trace(tf.ones([3]))


@pytest.mark.parametrize("align", ["RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"])
@same_as_tf("linalg.diag_part", "linalg.diag", "linalg.set_diag")
def test_diagonals_with_a_range_of_k(tf, align):
    m = tf.reshape(tf.range(12), [3, 4])
    part = tf.linalg.diag_part(m, k=(-1, 2), align=align, padding_value=-9)
    return (
        part,
        tf.linalg.diag(part, k=(-1, 2), num_rows=3, num_cols=4, align=align),
        tf.linalg.set_diag(m, part * 0 - 1, k=(-1, 2), align=align),
    )


@same_as_tf("linalg.diag_part", "linalg.diag", "linalg.set_diag", edge=True)
def test_diagonals_with_one_k(tf):
    m = tf.reshape(tf.range(24.0), [2, 3, 4])
    return (
        tf.linalg.diag_part(m),
        tf.linalg.diag_part(m, k=-2),
        tf.linalg.diag(tf.constant([1, 2]), k=1),
        tf.linalg.diag(tf.constant([1, 2]), k=-1, num_cols=4),
        tf.linalg.set_diag(m, tf.ones([2, 3])),
        tf.linalg.diag(tf.zeros([0])),
    )


@same_as_tf("linalg.band_part")
def test_band_part(tf):
    m = tf.reshape(tf.range(16), [4, 4])
    return tf.linalg.band_part(m, 1, -1), tf.linalg.band_part(m, 0, 0), tf.linalg.band_part(m, -1, 1)


@same_as_tf("linalg.band_part", edge=True)
def test_band_part_of_a_vector(tf):
    return tf.linalg.band_part(tf.range(4), 1, -1)


@same_as_tf("linalg.tensor_diag", "linalg.tensor_diag_part")
def test_tensor_diag(tf):
    d = tf.constant([[1, 2], [3, 4]])
    return tf.linalg.tensor_diag(d), tf.linalg.tensor_diag_part(tf.linalg.tensor_diag(d))


@same_as_tf("linalg.tensor_diag", "linalg.tensor_diag_part", edge=True)
def test_tensor_diag_part_of_an_odd_rank(tf):
    return tf.linalg.tensor_diag_part(tf.ones([2, 2, 2]))


@same_as_tf("linalg.adjoint", "linalg.matrix_transpose")
def test_adjoint(tf):
    c = tf.constant(np.array([[1 + 1j, 2 - 1j], [3j, 4.0]]))
    return tf.linalg.adjoint(c), tf.linalg.matrix_transpose(c), tf.linalg.matrix_transpose(c, conjugate=True)


@same_as_tf("linalg.adjoint", "linalg.matrix_transpose", edge=True)
def test_adjoint_of_a_vector_is_refused(tf):
    return tf.linalg.adjoint(tf.ones([3]))


@same_as_tf("linalg.cross")
def test_cross(tf):
    return tf.linalg.cross(tf.constant([[1.0, 2.0, 3.0]]), tf.constant([[4.0, 5.0, 6.0]])), tf.linalg.cross(
        tf.constant([1, 0, 0]), tf.constant([0, 1, 0])
    )


@same_as_tf("linalg.cross", edge=True)
def test_cross_does_not_broadcast(tf):
    return tf.linalg.cross(tf.ones([2, 3]), tf.ones([3]))


@same_as_tf("linalg.eye", "linalg.einsum", "linalg.tensordot", "linalg.global_norm", "linalg.l2_normalize")
def test_reexported_names(tf):
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    return (
        tf.linalg.eye(2, 3, batch_shape=[2]),
        tf.linalg.einsum("ij,jk->ik", x, x),
        tf.linalg.tensordot(x, x, 1),
        tf.linalg.global_norm([x, x]),
        tf.linalg.l2_normalize(x, axis=1),
    )


@same_as_tf("linalg.eye", "linalg.einsum", "linalg.tensordot", "linalg.global_norm", "linalg.l2_normalize", edge=True)
def test_reexported_names_on_empties(tf):
    e = tf.zeros([0, 2])
    return (
        tf.linalg.eye(0),
        tf.linalg.einsum("ij->j", e),
        tf.linalg.tensordot(e, tf.ones([2, 3]), 1),
        tf.linalg.global_norm([e]),
        tf.linalg.l2_normalize(tf.zeros([3])),
    )


@same_as_tf("linalg.tridiagonal_solve")
def test_tridiagonal_solve(tf):
    d = tf.constant([[1.0, 1.0, 0.0], [3.0, 3.0, 3.0], [0.0, 1.0, 1.0]], tf.float64)
    rhs = tf.constant([[1.0, 2.0], [2.0, 0.0], [3.0, 1.0]], tf.float64)
    seq = (d[0], d[1], d[2])
    full = tf.constant([[3.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 3.0]], tf.float64)
    return (
        tf.linalg.tridiagonal_solve(d, rhs),
        tf.linalg.tridiagonal_solve(d, rhs[:, 0]),
        tf.linalg.tridiagonal_solve(seq, rhs, diagonals_format="sequence"),
        tf.linalg.tridiagonal_solve(full, rhs, diagonals_format="matrix", partial_pivoting=False),
        tf.linalg.tridiagonal_solve(d, tf.transpose(rhs), transpose_rhs=True),
    )


@same_as_tf("linalg.tridiagonal_solve", edge=True)
def test_tridiagonal_solve_singular_is_nan(tf):
    return tf.linalg.tridiagonal_solve(tf.zeros([3, 3]), tf.constant([[1.0], [2.0], [3.0]]))


@same_as_tf("linalg.tridiagonal_matmul")
def test_tridiagonal_matmul(tf):
    d = tf.constant([[1.0, 2.0, 0.0], [3.0, 3.0, 3.0], [0.0, 1.0, 4.0]])
    rhs = tf.constant([[1.0, 2.0], [2.0, 0.0], [3.0, 1.0]])
    full = tf.constant([[3.0, 1.0, 0.0], [1.0, 3.0, 2.0], [0.0, 4.0, 3.0]])
    return (
        tf.linalg.tridiagonal_matmul(d, rhs),
        tf.linalg.tridiagonal_matmul((d[0], d[1], d[2]), rhs, diagonals_format="sequence"),
        tf.linalg.tridiagonal_matmul(full, rhs, diagonals_format="matrix"),
    )


@same_as_tf("linalg.tridiagonal_matmul", edge=True)
def test_tridiagonal_matmul_needs_a_matrix_rhs(tf):
    return tf.linalg.tridiagonal_matmul(tf.ones([3, 3]), tf.ones([3]))


@pytest.mark.parametrize("lower", [True, False])
@same_as_tf("linalg.banded_triangular_solve")
def test_banded_triangular_solve(tf, lower):
    bands = tf.constant([[2.0, 3.0, 4.0, 5.0], [1.0, 1.0, 1.0, 1.0]], tf.float64)
    rhs = tf.constant([[1.0], [2.0], [3.0], [4.0]], tf.float64)
    return tf.linalg.banded_triangular_solve(bands, rhs, lower=lower), tf.linalg.banded_triangular_solve(
        bands, rhs, lower=lower, adjoint=True
    )


@same_as_tf("linalg.banded_triangular_solve", edge=True)
def test_banded_triangular_solve_one_band(tf):
    return tf.linalg.banded_triangular_solve(tf.constant([[2.0, 4.0]]), tf.constant([[2.0, 4.0], [8.0, 4.0]]))


@same_as_tf("linalg.experimental.conjugate_gradient")
def test_conjugate_gradient(tf):
    op = tf.linalg.LinearOperatorFullMatrix(tf.constant(A, tf.float64), is_self_adjoint=True, is_positive_definite=True)
    state = tf.linalg.experimental.conjugate_gradient(op, tf.constant([1.0, 2.0, 3.0], tf.float64))
    return state.i, state.x, state.gamma


@same_as_tf("linalg.experimental.conjugate_gradient", edge=True)
def test_conjugate_gradient_needs_a_positive_definite_operator(tf):
    op = tf.linalg.LinearOperatorFullMatrix(tf.constant(A))
    return tf.linalg.experimental.conjugate_gradient(op, tf.ones([3])).x


@same_as_tf("linalg.LinearOperator", "linalg.LinearOperatorFullMatrix")
def test_full_matrix_operator(tf):
    op = tf.linalg.LinearOperatorFullMatrix(tf.constant(G, tf.float64))
    x = tf.constant([[1.0], [2.0], [3.0]], tf.float64)
    return (
        isinstance(op, tf.linalg.LinearOperator),
        op.shape,
        op.batch_shape,
        int(op.domain_dimension),
        op.to_dense(),
        op.matmul(x),
        op.matmul(x, adjoint=True),
        op.matvec(x[:, 0]),
        op.solve(x),
        op.determinant(),
        op.log_abs_determinant(),
        op.inverse().to_dense(),
        op.adjoint().to_dense(),
        op.trace(),
        op.diag_part(),
        op.is_square,
    )


@same_as_tf("linalg.LinearOperator", "linalg.LinearOperatorFullMatrix", edge=True)
def test_full_matrix_operator_refuses_ints(tf):
    return tf.linalg.LinearOperatorFullMatrix(tf.constant([[1, 2], [3, 4]])).to_dense()


@same_as_tf("linalg.LinearOperatorDiag")
def test_diag_operator(tf):
    op = tf.linalg.LinearOperatorDiag(tf.constant([[1.0, 2.0, 4.0], [-1.0, 3.0, 0.5]]))
    x = tf.ones([2, 3, 2])
    return (
        op.shape,
        op.to_dense(),
        op.matmul(x),
        op.solve(x),
        op.determinant(),
        op.log_abs_determinant(),
        op.inverse().to_dense(),
        op.matvec(tf.ones([2, 3])),
        op.is_self_adjoint,
    )


@same_as_tf("linalg.LinearOperatorDiag", edge=True)
def test_diag_operator_of_a_scalar_is_refused(tf):
    return tf.linalg.LinearOperatorDiag(tf.constant(1.0)).to_dense()


@same_as_tf("linalg.LinearOperatorIdentity", "linalg.LinearOperatorScaledIdentity")
def test_identity_operators(tf):
    eye = tf.linalg.LinearOperatorIdentity(3, batch_shape=[2])
    scaled = tf.linalg.LinearOperatorScaledIdentity(3, tf.constant([2.0, -0.5]))
    x = tf.ones([2, 3, 1])
    return (
        eye.shape,
        eye.to_dense(),
        eye.matmul(x),
        eye.determinant(),
        eye.log_abs_determinant(),
        scaled.shape,
        scaled.to_dense(),
        scaled.matmul(x),
        scaled.solve(x),
        scaled.determinant(),
        scaled.log_abs_determinant(),
        scaled.inverse().to_dense(),
    )


@same_as_tf("linalg.LinearOperatorIdentity", "linalg.LinearOperatorScaledIdentity", edge=True)
def test_identity_operator_hints_must_hold(tf):
    return tf.linalg.LinearOperatorIdentity(2, is_self_adjoint=False).to_dense()


@same_as_tf("linalg.LinearOperatorLowerTriangular")
def test_lower_triangular_operator(tf):
    op = tf.linalg.LinearOperatorLowerTriangular(tf.constant(G, tf.float64))
    x = tf.constant([[1.0], [2.0], [3.0]], tf.float64)
    return (
        op.to_dense(),
        op.matmul(x),
        op.solve(x),
        op.solve(x, adjoint=True),
        op.determinant(),
        op.log_abs_determinant(),
    )


@same_as_tf("linalg.LinearOperatorLowerTriangular", edge=True)
def test_lower_triangular_operator_of_a_wide_matrix(tf):
    return tf.linalg.LinearOperatorLowerTriangular(tf.ones([2, 3])).to_dense()


def _methods(tf, op, x):
    return (
        op.shape,
        op.to_dense(),
        op.matmul(x),
        op.matmul(x, adjoint=True),
        op.determinant(),
        op.log_abs_determinant(),
        op.trace(),
    )


@same_as_tf("linalg.eigh_tridiagonal")
def test_eigh_tridiagonal(tf):
    alpha, beta = tf.constant([1.0, 2.0, 3.0], tf.float64), tf.constant([1.0, 1.0], tf.float64)
    values, vectors = tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False)
    return (
        tf.linalg.eigh_tridiagonal(alpha, beta),
        values,
        tf.abs(vectors),
        tf.linalg.eigh_tridiagonal(alpha, beta, select="i", select_range=[1, 2]),
        tf.linalg.eigh_tridiagonal(alpha, beta, select="v", select_range=[0.0, 3.0]),
    )


@same_as_tf("linalg.eigh_tridiagonal", edge=True)
def test_eigh_tridiagonal_of_one_element(tf):
    return tf.linalg.eigh_tridiagonal(tf.constant([2.0], tf.float64), tf.zeros([0], tf.float64))


@same_as_tf("linalg.LinearOperatorAdjoint", "linalg.LinearOperatorInversion", "linalg.LinearOperatorComposition")
def test_adjoint_inversion_composition_operators(tf):
    a = tf.linalg.LinearOperatorFullMatrix(tf.constant(G, tf.float64))
    b = tf.linalg.LinearOperatorLowerTriangular(tf.constant(A, tf.float64))
    x = tf.constant([[1.0], [2.0], [3.0]], tf.float64)
    return (
        _methods(tf, tf.linalg.LinearOperatorAdjoint(a), x),
        _methods(tf, tf.linalg.LinearOperatorInversion(a), x),
        _methods(tf, tf.linalg.LinearOperatorComposition([a, b]), x),
        tf.linalg.LinearOperatorComposition([a, b]).solve(x),
        type(a.matmul(b)).__name__,
        a.matmul(b, adjoint=True, adjoint_arg=True).to_dense(),
    )


@same_as_tf(
    "linalg.LinearOperatorAdjoint", "linalg.LinearOperatorInversion", "linalg.LinearOperatorComposition", edge=True
)
def test_composition_of_complex_operators(tf):
    c = tf.linalg.LinearOperatorFullMatrix(tf.constant(np.array([[1 + 1j, 2.0], [0.5j, 3.0]])))
    return (
        tf.linalg.LinearOperatorAdjoint(c).to_dense(),
        tf.linalg.LinearOperatorComposition([c, c]).to_dense(),
        tf.linalg.LinearOperatorInversion(c).to_dense(),
    )


@same_as_tf(
    "linalg.LinearOperatorKronecker", "linalg.LinearOperatorBlockDiag", "linalg.LinearOperatorBlockLowerTriangular"
)
def test_kronecker_and_block_operators(tf):
    a = tf.linalg.LinearOperatorFullMatrix(tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float64))
    b = tf.linalg.LinearOperatorDiag(tf.constant([2.0, -1.0, 3.0], tf.float64))
    c = tf.linalg.LinearOperatorFullMatrix(tf.ones([3, 2], tf.float64))
    x5 = tf.reshape(tf.range(10, dtype=tf.float64), [5, 2])
    x6 = tf.reshape(tf.range(12, dtype=tf.float64), [6, 2])
    return (
        _methods(tf, tf.linalg.LinearOperatorKronecker([a, b]), x6),
        _methods(tf, tf.linalg.LinearOperatorBlockDiag([a, b]), x5),
        _methods(tf, tf.linalg.LinearOperatorBlockLowerTriangular([[a], [c, b]]), x5),
    )


@same_as_tf(
    "linalg.LinearOperatorKronecker",
    "linalg.LinearOperatorBlockDiag",
    "linalg.LinearOperatorBlockLowerTriangular",
    edge=True,
)
def test_block_operators_broadcast_batches(tf):
    a = tf.linalg.LinearOperatorFullMatrix(tf.ones([2, 2, 2]))
    b = tf.linalg.LinearOperatorIdentity(2)
    return (
        tf.linalg.LinearOperatorKronecker([a, b]).to_dense(),
        tf.linalg.LinearOperatorBlockDiag([a, b]).to_dense(),
        tf.linalg.LinearOperatorBlockLowerTriangular([[a], [b, a]]).to_dense(),
    )


@same_as_tf("linalg.LinearOperatorLowRankUpdate")
def test_low_rank_update_operator(tf):
    base = tf.linalg.LinearOperatorDiag(tf.constant([1.0, 2.0, 3.0], tf.float64))
    u = tf.constant([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], tf.float64)
    x = tf.constant([[1.0], [2.0], [3.0]], tf.float64)
    return (
        _methods(tf, tf.linalg.LinearOperatorLowRankUpdate(base, u), x),
        _methods(
            tf,
            tf.linalg.LinearOperatorLowRankUpdate(base, u, diag_update=tf.constant([2.0, 0.5], tf.float64), v=u * 2.0),
            x,
        ),
        tf.linalg.LinearOperatorLowRankUpdate(base, u).solve(x),
    )


@same_as_tf("linalg.LinearOperatorLowRankUpdate", edge=True)
def test_low_rank_update_broadcasts_the_base_batch(tf):
    base = tf.linalg.LinearOperatorDiag(tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    op = tf.linalg.LinearOperatorLowRankUpdate(base, tf.constant([[1.0], [2.0], [3.0]]))
    return op.to_dense(), op.shape


@same_as_tf("linalg.LinearOperatorZeros", "linalg.LinearOperatorPermutation", "linalg.LinearOperatorHouseholder")
def test_zeros_permutation_householder_operators(tf):
    x = tf.constant([[1.0], [2.0], [3.0]])
    zeros = tf.linalg.LinearOperatorZeros(3, 2, is_square=False, is_self_adjoint=False)
    return (
        zeros.to_dense(),
        zeros.shape,
        tf.linalg.LinearOperatorZeros(3, batch_shape=[2]).determinant(),
        _methods(tf, tf.linalg.LinearOperatorPermutation([1, 2, 0]), x),
        tf.linalg.LinearOperatorPermutation([1, 2, 0]).solve(x),
        _methods(tf, tf.linalg.LinearOperatorHouseholder([1.0, 2.0, 2.0]), x),
    )


@same_as_tf("linalg.LinearOperatorZeros", edge=True)
def test_zeros_operator_square_by_default(tf):
    return tf.linalg.LinearOperatorZeros(2, 3).to_dense()


@same_as_tf("linalg.LinearOperatorPermutation", "linalg.LinearOperatorHouseholder", edge=True)
def test_permutation_and_householder_batches(tf):
    perm = tf.linalg.LinearOperatorPermutation(tf.constant([[1, 0, 2], [2, 1, 0]]), dtype=tf.float64)
    house = tf.linalg.LinearOperatorHouseholder(tf.constant([[1.0, 0.0], [1.0, 1.0]]))
    return perm.to_dense(), perm.determinant(), house.to_dense(), house.determinant()


@same_as_tf("linalg.LinearOperatorToeplitz", "linalg.LinearOperatorTridiag")
def test_toeplitz_and_tridiag_operators(tf):
    x = tf.constant([[1.0], [2.0], [3.0]], tf.float64)
    toeplitz = tf.linalg.LinearOperatorToeplitz(
        tf.constant([4.0, 2.0, 1.0], tf.float64), tf.constant([9.0, 5.0, 6.0], tf.float64)
    )
    compact = tf.constant([[1.0, 2.0, 0.0], [4.0, 5.0, 6.0], [0.0, 1.0, 1.0]], tf.float64)
    return (
        _methods(tf, toeplitz, x),
        toeplitz.solve(x),
        _methods(tf, tf.linalg.LinearOperatorTridiag(compact), x),
        tf.linalg.LinearOperatorTridiag((compact[0], compact[1], compact[2]), diagonals_format="sequence").to_dense(),
    )


@same_as_tf("linalg.LinearOperatorToeplitz", "linalg.LinearOperatorTridiag", edge=True)
def test_toeplitz_broadcasts_and_tridiag_from_a_matrix(tf):
    toeplitz = tf.linalg.LinearOperatorToeplitz(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([1.0, 7.0]))
    tri = tf.linalg.LinearOperatorTridiag(tf.constant(G), diagonals_format="matrix")
    return toeplitz.to_dense(), tri.to_dense()


@same_as_tf("linalg.LinearOperatorCirculant", "linalg.LinearOperatorCirculant2D", "linalg.LinearOperatorCirculant3D")
def test_circulant_operators(tf):
    spectrum = tf.constant(np.array([6.0, -2.0 + 1j, 2.0, -2.0 - 1j]), tf.complex128)
    x = tf.cast(tf.constant([[1.0], [2.0], [3.0], [4.0]]), tf.complex128)
    two = tf.constant(np.arange(6.0).reshape(2, 3) + 1.0)
    three = tf.constant(np.arange(8.0).reshape(2, 2, 2) + 1.0)
    return (
        _methods(tf, tf.linalg.LinearOperatorCirculant(spectrum, input_output_dtype=tf.complex128), x),
        tf.linalg.LinearOperatorCirculant(spectrum, input_output_dtype=tf.float64).to_dense(),
        tf.linalg.LinearOperatorCirculant2D(two, input_output_dtype=tf.complex128).to_dense(),
        tf.linalg.LinearOperatorCirculant3D(three, input_output_dtype=tf.complex128).to_dense(),
    )


@same_as_tf(
    "linalg.LinearOperatorCirculant", "linalg.LinearOperatorCirculant2D", "linalg.LinearOperatorCirculant3D", edge=True
)
def test_circulant_of_a_real_spectrum_defaults_to_complex64(tf):
    return (
        tf.linalg.LinearOperatorCirculant(tf.constant([6.0, -2.0, 2.0])).to_dense(),
        tf.linalg.LinearOperatorCirculant2D(tf.ones([2, 2, 2])).shape,
        tf.linalg.LinearOperatorCirculant3D(tf.ones([1, 2, 2])).to_dense(),
    )


@same_as_tf("eig", "eigvals", "matrix_square_root")
def test_top_level_aliases(tf):
    m = tf.constant([[4.0, 1.0], [0.0, 9.0]], tf.float64)
    e, v = tf.eig(m)
    return tf.sort(tf.abs(e)), tf.sort(tf.abs(tf.eigvals(m))), tf.abs(v), tf.matrix_square_root(m)


@same_as_tf("eig", "eigvals", "matrix_square_root", edge=True)
def test_top_level_aliases_refuse_ints(tf):
    return tf.matrix_square_root(tf.constant([[1, 0], [0, 1]]))


@same_as_tf("linalg.logdet", "linalg.diag_part", "linalg.band_part", "linalg.svd", "linalg.solve")
def test_gradients_flow_as_in_tf(tf):
    x = tf.Variable(tf.constant(A, tf.float64))
    with tf.GradientTape(persistent=True) as tape:
        losses = (
            tf.linalg.logdet(x),
            tf.reduce_sum(tf.linalg.diag_part(x, k=(-1, 1)) ** 2),
            tf.reduce_sum(tf.linalg.band_part(x, 0, -1) ** 2),
            tf.reduce_sum(tf.linalg.svd(x, compute_uv=False)),
            tf.reduce_sum(tf.linalg.solve(x, tf.ones([3, 1], tf.float64))),
        )
    return tuple(tape.gradient(loss, x) for loss in losses)


@same_as_tf("linalg.sqrtm", "linalg.logm", edge=True)
def test_matrix_functions_of_defective_matrices(tf):
    jordan = tf.constant([[1.0, 1.0], [0.0, 1.0]], tf.float64)
    return (
        tf.linalg.sqrtm(jordan),
        tf.linalg.logm(tf.cast(jordan, tf.complex128)),
        tf.linalg.sqrtm(tf.constant([[-4.0, 0.0], [0.0, 1.0]], tf.float64)),
        tf.linalg.sqrtm(tf.constant([[0.0, 0.0], [0.0, 1.0]], tf.float64)),
    )


@same_as_tf("linalg.slogdet", "linalg.eigh", "linalg.eigvalsh", edge=True)
def test_complex_inputs_keep_complex_dtypes(tf):
    c = tf.constant(np.array([[2.0, 1j], [-1j, 3.0]]))
    return tf.linalg.slogdet(c), tf.linalg.eigvalsh(c), tf.linalg.eigh(c)[0]


@pytest.mark.parametrize("op", ["cholesky", "svd", "eigvalsh", "lu", "matrix_rank", "solve", "expm"])
@same_as_tf(
    "linalg.cholesky",
    "linalg.svd",
    "linalg.eigvalsh",
    "linalg.lu",
    "linalg.matrix_rank",
    "linalg.solve",
    "linalg.expm",
    edge=True,
)
def test_half_precision_has_no_kernel(tf, op):
    h = tf.constant([[2.0, 1.0], [1.0, 2.0]], tf.float16)
    return getattr(tf.linalg, op)(*((h, h) if op == "solve" else (h,)))


@same_as_tf("linalg.diag_part", "linalg.set_diag", edge=True, match=r"diag_part.*out of bound")
def test_diag_part_k_out_of_bound(tf):
    return tf.linalg.diag_part(tf.ones([3, 3]), k=5)


@same_as_tf("linalg.diag", edge=True, match=r"tf.linalg.diag.*num_rows")
def test_diag_with_inconsistent_sizes(tf):
    return tf.linalg.diag(tf.ones([2]), k=1, num_rows=4, num_cols=5, padding_value=9)


@same_as_tf("linalg.cross", edge=True, match=r"cross.*3-element")
def test_cross_of_2_vectors(tf):
    return tf.linalg.cross(tf.ones([2]), tf.ones([2]))


@same_as_tf("linalg.lu", edge=True, match=r"lu.*not invertible")
def test_lu_of_a_singular_matrix(tf):
    return tf.linalg.lu(tf.constant([[1.0, 2.0], [2.0, 4.0]]))


@same_as_tf("linalg.lu", "linalg.lu_reconstruct", edge=True)
def test_lu_complex(tf):
    lu, p = tf.linalg.lu(tf.constant(np.array([[1 + 1j, 2.0], [3.0, 4j]])))
    return lu, p, tf.linalg.lu_reconstruct(lu, p)


@same_as_tf("linalg.pinv", edge=True)
def test_pinv_of_complex_is_refused(tf):
    return tf.linalg.pinv(tf.constant(np.array([[1 + 1j, 2.0], [3.0, 4j]])))


@same_as_tf("linalg.LinearOperator", edge=True)
def test_operator_inverse_and_adjoint_kinds(tf):
    full = tf.linalg.LinearOperatorFullMatrix(tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    diag = tf.linalg.LinearOperatorDiag(tf.constant([1.0, 2.0]))
    return tuple(type(op).__name__ for op in (full.inverse(), full.adjoint(), diag.inverse(), diag.adjoint(), full.H))


@same_as_tf(
    "linalg.LinearOperatorIdentity",
    "linalg.LinearOperatorScaledIdentity",
    "linalg.LinearOperatorToeplitz",
    "linalg.LinearOperatorTridiag",
    edge=True,
)
def test_operators_of_ints_and_half(tf):
    return (
        type(tf.linalg.LinearOperatorIdentity(3).inverse()).__name__,
        tf.linalg.LinearOperatorScaledIdentity(2, 3).to_dense(),
        tf.linalg.LinearOperatorToeplitz([1, 2], [1, 3]).to_dense(),
        tf.linalg.LinearOperatorTridiag(tf.ones([3, 3], tf.float16)).to_dense(),
    )


@same_as_tf("linalg.LinearOperatorComposition", edge=True)
def test_composition_through_a_rectangular_factor_is_not_square(tf):
    wide = tf.linalg.LinearOperatorFullMatrix(tf.ones([2, 3]))
    tall = tf.linalg.LinearOperatorFullMatrix(tf.ones([3, 2]))
    return tf.linalg.LinearOperatorComposition([wide, tall]).determinant()


def _tf_style_operator(tf):
    class Doubling(tf.linalg.LinearOperator):
        """A user's operator written for TF: only _shape, _shape_tensor and _matmul."""

        def __init__(self, n):
            self._n = n
            super().__init__(dtype=tf.float32, is_square=True, is_self_adjoint=True, parameters={"n": n})

        def _shape(self):
            return tf.TensorShape([self._n, self._n])

        def _shape_tensor(self):
            return tf.constant([self._n, self._n])

        def _matmul(self, x, adjoint=False, adjoint_arg=False):
            return 2.0 * x

    return Doubling(3)


@same_as_tf("linalg.LinearOperator")
def test_a_user_operator_written_for_tf(tf):
    op = _tf_style_operator(tf)
    x = tf.reshape(tf.range(6.0), [3, 2])
    return op.shape, op.to_dense(), op.matmul(x), op.matvec(tf.ones([3])), op.determinant(), op.solve(x), op.trace()


_LONG = np.random.default_rng(0).normal(size=(2, 3, 1100))
_LONG_RHS = np.random.default_rng(1).normal(size=(2, 1100, 2))


@same_as_tf("linalg.tridiagonal_solve", edge=True, rtol=1e-9, atol=1e-9)
def test_tridiagonal_solve_of_a_long_system_pivots(tf):
    # Not diagonally dominant: row interchanges happen; long enough for the O(M) elimination.
    return tf.linalg.tridiagonal_solve(tf.constant(_LONG), tf.constant(_LONG_RHS)), tf.linalg.tridiagonal_solve(
        tf.zeros([3, 200]), tf.ones([200, 1])
    )
