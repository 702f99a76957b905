"""``tf.SparseTensorSpec``, ``tf.RaggedTensorSpec``, ``tf.IndexedSlicesSpec`` and ``tf.TensorArraySpec``
against TensorFlow 2.21 (see tf_oracle.py for the rules)."""

from __future__ import annotations

from tf_oracle import same_as_tf


@same_as_tf("SparseTensorSpec")
def test_sparse_tensor_spec(tf):
    spec = tf.SparseTensorSpec([None, 3], tf.float32)
    st = tf.sparse.SparseTensor([[0, 1]], [1.0], [2, 3])
    return (
        repr(spec),
        spec.shape,
        spec.dtype == tf.float32,
        spec.is_compatible_with(st),
        spec.is_compatible_with(tf.SparseTensorSpec([4, 3])),
        spec.is_compatible_with(tf.SparseTensorSpec([4, 4])),
        repr(tf.SparseTensorSpec.from_value(st)),
        spec == tf.SparseTensorSpec([None, 3], tf.float32),
        repr(tf.SparseTensorSpec()),
    )


@same_as_tf("SparseTensorSpec", edge=True)
def test_sparse_tensor_spec_wrong_dtype_or_rank(tf):
    spec = tf.SparseTensorSpec([None, 3], tf.float32)
    ints = tf.sparse.SparseTensor([[0, 1]], [1], [2, 3])
    return spec.is_compatible_with(ints), spec.is_compatible_with(tf.SparseTensorSpec([3], tf.float32))


@same_as_tf("RaggedTensorSpec")
def test_ragged_tensor_spec(tf):
    spec = tf.RaggedTensorSpec([None, None], tf.int32)
    rt = tf.ragged.constant([[1, 2], [3]])

    @tf.function(input_signature=[spec])
    def lengths(x):
        return x.row_lengths()

    return (
        repr(spec),
        spec.ragged_rank,
        spec.row_splits_dtype == tf.int64,
        spec.is_compatible_with(rt),
        repr(tf.RaggedTensorSpec.from_value(rt)),
        tf.RaggedTensorSpec([2, None, 3], tf.float32).ragged_rank,
        repr(tf.RaggedTensorSpec([2, None, None], tf.float32)),
        lengths(rt),
    )


@same_as_tf("RaggedTensorSpec", edge=True)
def test_ragged_tensor_spec_needs_a_rank(tf):
    return tf.RaggedTensorSpec()


@same_as_tf("RaggedTensorSpec", edge=True)
def test_ragged_tensor_spec_signature_refuses_another_dtype(tf):
    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.int32)])
    def lengths(x):
        return x.row_lengths()

    return lengths(tf.ragged.constant([[1.0]]))


@same_as_tf("IndexedSlicesSpec")
def test_indexed_slices_spec(tf):
    spec = tf.IndexedSlicesSpec([None, 3], tf.float32, tf.int64, tf.int64, None)
    return repr(spec), spec == tf.IndexedSlicesSpec([None, 3], tf.float32, tf.int64, tf.int64, None)


@same_as_tf("IndexedSlicesSpec", edge=True)
def test_indexed_slices_spec_defaults(tf):
    return repr(tf.IndexedSlicesSpec()), tf.IndexedSlicesSpec() == tf.IndexedSlicesSpec([None, 3])


@same_as_tf("TensorArraySpec")
def test_tensor_array_spec(tf):
    spec = tf.TensorArraySpec([2], tf.float32)
    return repr(spec), spec == tf.TensorArraySpec([2], tf.float32), spec == tf.TensorArraySpec([3], tf.float32)


@same_as_tf("TensorArraySpec", edge=True)
def test_tensor_array_spec_unknown_shape(tf):
    return repr(tf.TensorArraySpec(element_shape=None, dtype=tf.int32, dynamic_size=True, infer_shape=False))
