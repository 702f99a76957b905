"""TF's top-level array, shape and control-flow functions against TensorFlow 2.21."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf


def op(tf, dotted):
    obj = tf
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


M = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

TOP_MATH = (
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "cos",
    "cosh",
    "exp",
    "floor",
    "negative",
    "round",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "tan",
    "tanh",
)


@pytest.mark.parametrize("name", TOP_MATH)
@same_as_tf(*TOP_MATH, rtol=2e-5, atol=2e-6)
def test_top_level_elementwise(tf, name):
    values = [1.5, 2.0, 3.5] if name == "acosh" else [-0.5, 0.0, 0.25, 0.75]
    return op(tf, name)(tf.constant(values))


@pytest.mark.parametrize("name", TOP_MATH)
@same_as_tf(*TOP_MATH, edge=True, rtol=2e-5, atol=2e-6)
def test_top_level_elementwise_on_nan_and_empty(tf, name):
    fn = op(tf, name)
    return fn(tf.constant([np.nan, 0.0], dtype=tf.float64)), fn(tf.zeros([0, 2]))


TOP_BINARY = (
    "add",
    "subtract",
    "multiply",
    "divide",
    "truediv",
    "realdiv",
    "truncatediv",
    "truncatemod",
    "maximum",
    "minimum",
    "pow",
    "atan2",
    "equal",
    "not_equal",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
)


@pytest.mark.parametrize("name", TOP_BINARY)
@same_as_tf(*TOP_BINARY, rtol=1e-5)
def test_top_level_binary(tf, name):
    return op(tf, name)(tf.constant([7.0, -7.0, 2.5, -0.5]), tf.constant([2.0, 2.0, -1.5, 4.0]))


@pytest.mark.parametrize("name", TOP_BINARY)
@same_as_tf(*TOP_BINARY, edge=True, rtol=1e-5)
def test_top_level_binary_broadcasting(tf, name):
    return op(tf, name)(tf.constant([[7.0], [-7.0]]), tf.constant([2.0, -3.0, 0.5]))


@same_as_tf("truncatediv", "truncatemod", "math.floordiv", "math.floormod", edge=True)
def test_integer_division_rounds_as_c_and_python(tf):
    a, b = tf.constant([7, -7, 7, -7]), tf.constant([2, 2, -2, -2])
    return tf.truncatediv(a, b), tf.truncatemod(a, b), tf.math.floordiv(a, b), tf.math.floormod(a, b)


@same_as_tf("truncatediv", edge=True)
def test_integer_division_by_zero(tf):
    return tf.truncatediv(tf.constant([1]), tf.constant([0]))


REDUCE = (
    "reduce_sum",
    "reduce_mean",
    "reduce_max",
    "reduce_min",
    "reduce_prod",
    "reduce_logsumexp",
    "reduce_all",
    "reduce_any",
)


@pytest.mark.parametrize("name", REDUCE)
@same_as_tf(*REDUCE, rtol=1e-5)
def test_top_level_reductions(tf, name):
    x = tf.constant(M) > 10 if name in ("reduce_all", "reduce_any") else tf.constant(M / 10)
    fn = op(tf, name)
    return fn(x), fn(x, axis=1), fn(x, axis=[0, 2], keepdims=True)


@pytest.mark.parametrize("name", REDUCE)
@same_as_tf(*REDUCE, edge=True, rtol=1e-5)
def test_top_level_reductions_of_empty(tf, name):
    x = tf.zeros([0, 3], dtype=tf.bool) if name in ("reduce_all", "reduce_any") else tf.zeros([0, 3])
    return op(tf, name)(x, axis=0)


@same_as_tf("slice", "strided_slice")
def test_slicing(tf):
    x = tf.constant(M)
    return (
        tf.slice(x, [0, 1, 1], [2, 2, -1]),
        tf.strided_slice(x, [0, 0, 0], [2, 3, 4], [1, 2, 3]),
        tf.strided_slice(x, [1, -1, 3], [0, 0, 0], [-1, -1, -2]),
        tf.strided_slice(x, [0, 1], [0, 2], [1, 1], begin_mask=1, end_mask=1, shrink_axis_mask=2),
        tf.strided_slice(x, [0, 0, 1], [0, 0, 3], [1, 1, 1], ellipsis_mask=1, new_axis_mask=2),
    )


NEGATIVE_STEP_INDEXES = {
    "reverse": np.s_[::-1],
    "rgb_to_bgr": np.s_[..., ::-1],
    "two_axes": np.s_[::-1, 2:0:-1],
    "stride_and_int": np.s_[1, ::-2, 3::-3],
    "newaxis": np.s_[None, ::-1, ..., -1],
    "empty": np.s_[:, 0:2:-1],
    "past_the_ends": np.s_[:, 10:-10:-2],
}


@pytest.mark.parametrize("case", sorted(NEGATIVE_STEP_INDEXES))
@same_as_tf("Tensor", "strided_slice")
def test_negative_slice_steps_index_as_tf(tf, case):
    # t[::-1] and image[..., ::-1] (torch's indexing takes positive steps only)
    return tf.constant(M)[NEGATIVE_STEP_INDEXES[case]]


@same_as_tf("GradientTape", "Tensor")
def test_gradient_through_a_negative_step_slice(tf):
    x = tf.Variable(M)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(x[::-1, ::-2, 1:3] * tf.constant(M[:, :2, :2]))
    return tape.gradient(y, x)


@same_as_tf("slice", "strided_slice", edge=True)
def test_slice_out_of_bounds_is_invalid_argument(tf):
    return tf.slice(tf.constant(M), [0, 2, 0], [1, 2, 1])


@same_as_tf("repeat", "sequence_mask", "reverse_sequence")
def test_sequences(tf):
    x = tf.constant(M[0])
    return (
        tf.repeat(x, 2, axis=0),
        tf.repeat(x, [1, 0, 2], axis=0),
        tf.repeat(tf.constant([[1, 2], [3, 4]]), 3),
        tf.sequence_mask([1, 3, 2], 5),
        tf.sequence_mask(tf.constant([[1, 2], [0, 3]]), dtype=tf.float32),
        tf.reverse_sequence(x, [2, 3, 1], seq_axis=1, batch_axis=0),
        tf.reverse_sequence(tf.constant(M), [1, 2], seq_axis=2, batch_axis=0),
    )


@same_as_tf("repeat", "sequence_mask", "reverse_sequence", edge=True)
def test_sequences_edges(tf):
    return (
        tf.repeat(tf.zeros([0, 2]), 3, axis=0),
        tf.sequence_mask(tf.constant([], dtype=tf.int32), 3),
        tf.reverse_sequence(tf.constant([[1, 2, 3], [4, 5, 6]]), tf.constant([0, 3]), seq_axis=1, batch_axis=0),
    )


@same_as_tf("unique", "unique_with_counts", "unravel_index")
def test_unique_and_unravel(tf):
    y, idx, count = tf.unique_with_counts(tf.constant([4, 1, 4, 2, 1, 4]))
    u, i = tf.unique(tf.constant([3.0, 3.0, 1.0]))
    return y, idx, count, u, i, tf.unravel_index(tf.constant([1, 5, 7]), [3, 3])


@same_as_tf("unique", "unique_with_counts", "unravel_index", edge=True)
def test_unique_and_unravel_edges(tf):
    y, idx, count = tf.unique_with_counts(tf.constant([], dtype=tf.int32))
    return (
        y,
        idx,
        count,
        tf.unique(tf.constant([1, 1], dtype=tf.int64), out_idx=tf.int64).idx,
        tf.unravel_index(tf.constant(5), [2, 3]),
    )


@same_as_tf("dynamic_partition", "dynamic_stitch")
def test_partition_and_stitch(tf):
    parts = tf.dynamic_partition(tf.constant(M[0]), tf.constant([1, 0, 1]), 2)
    stitched = tf.dynamic_stitch(
        [tf.constant([0, 2]), tf.constant([1, 3])], [tf.constant([[1.0], [3.0]]), tf.constant([[2.0], [4.0]])]
    )
    return parts, stitched


@same_as_tf("dynamic_partition", "dynamic_stitch", edge=True)
def test_partition_empty_and_stitch_overwrites(tf):
    parts = tf.dynamic_partition(tf.constant([1, 2]), tf.constant([0, 0]), 3)
    stitched = tf.dynamic_stitch([tf.constant([0, 1]), tf.constant([1])], [tf.constant([5, 6]), tf.constant([7])])
    return parts, stitched


SCATTER = (
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_update",
    "tensor_scatter_nd_max",
    "tensor_scatter_nd_min",
    "tensor_scatter_nd_sub",
    "scatter_nd",
)


@same_as_tf(*SCATTER)
def test_scatter(tf):
    t = tf.constant([[1.0, 5.0], [3.0, -2.0], [0.0, 0.0]])
    idx = tf.constant([[0], [2]])
    upd = tf.constant([[4.0, 4.0], [-1.0, 9.0]])
    return (
        tf.tensor_scatter_nd_add(t, idx, upd),
        tf.tensor_scatter_nd_update(t, idx, upd),
        tf.tensor_scatter_nd_max(t, idx, upd),
        tf.tensor_scatter_nd_min(t, idx, upd),
        tf.tensor_scatter_nd_sub(t, idx, upd),
        tf.scatter_nd(tf.constant([[1, 0], [0, 1]]), tf.constant([5, 6]), [2, 2]),
    )


@same_as_tf(*SCATTER, edge=True)
def test_scatter_repeated_indices(tf):
    t = tf.zeros([3])
    idx = tf.constant([[1], [1]])
    upd = tf.constant([2.0, 3.0])
    return (
        tf.tensor_scatter_nd_add(t, idx, upd),
        tf.tensor_scatter_nd_update(t, tf.constant([[2]]), tf.constant([7.0])),
        tf.tensor_scatter_nd_max(t, idx, upd),
        tf.tensor_scatter_nd_min(t, idx, -upd),
        tf.tensor_scatter_nd_sub(t, idx, upd),
        tf.scatter_nd(tf.constant([[0], [0]]), tf.constant([1, 2]), [2]),
    )


@same_as_tf("saturate_cast", "bitcast", "complex", "cast")
def test_casts(tf):
    return (
        tf.saturate_cast(tf.constant([-300.0, 12.7, 300.0]), tf.uint8),
        tf.saturate_cast(tf.constant([70000, -70000]), tf.int16),
        tf.bitcast(tf.constant([1.0, -2.0]), tf.int32),
        tf.bitcast(tf.constant([[1, 2], [3, 4]], dtype=tf.int16), tf.int32),
        tf.complex(tf.constant([1.0, 2.0]), tf.constant([0.5, -1.0])),
        tf.cast(tf.constant([1.9, -1.9]), tf.int64),
    )


@same_as_tf("saturate_cast", "bitcast", "complex", "cast", edge=True)
def test_casts_edges(tf):
    return (
        tf.saturate_cast(tf.constant([np.inf, -np.inf]), tf.int32),
        tf.bitcast(tf.constant(1, dtype=tf.int32), tf.uint8),
        tf.complex(tf.constant(1.0, dtype=tf.float64), tf.constant([0.0, 1.0], dtype=tf.float64)),
        tf.cast(tf.constant([True, False]), tf.float32),
    )


SHAPES = (
    "shape",
    "shape_n",
    "size",
    "rank",
    "identity",
    "identity_n",
    "ensure_shape",
    "broadcast_dynamic_shape",
    "broadcast_to",
)


@same_as_tf(*SHAPES)
def test_shapes(tf):
    x = tf.constant(M)
    return (
        tf.shape(x),
        tf.shape_n([x, tf.zeros([5])]),
        tf.size(x),
        tf.rank(x),
        tf.identity(x),
        tf.identity_n([x, tf.constant(1)]),
        tf.ensure_shape(x, [2, None, 4]),
        tf.broadcast_dynamic_shape(tf.constant([2, 1, 4]), tf.constant([3, 1])),
        tf.broadcast_to(tf.constant([1, 2]), [3, 2]),
    )


@same_as_tf(*SHAPES, edge=True)
def test_ensure_shape_mismatch(tf):
    return tf.ensure_shape(tf.zeros([2, 3]), [2, 4])


@same_as_tf("histogram_fixed_width", "histogram_fixed_width_bins")
def test_histograms(tf):
    v = tf.constant([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0])
    return tf.histogram_fixed_width(v, [0.0, 5.0], nbins=5), tf.histogram_fixed_width_bins(v, [0.0, 5.0], nbins=5)


@same_as_tf("histogram_fixed_width", "histogram_fixed_width_bins", edge=True)
def test_histograms_of_empty_and_ints(tf):
    empty = tf.histogram_fixed_width(tf.zeros([0]), [0.0, 1.0], nbins=3)
    return empty, tf.histogram_fixed_width_bins(tf.constant([0.0, 3.0, 9.0]), [2.0, 4.0], nbins=2)


FOLDS = ("foldl", "foldr", "scan", "map_fn", "while_loop", "cond", "case", "switch_case")


@same_as_tf(*FOLDS)
def test_control_flow(tf):
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    return (
        tf.foldl(lambda a, v: a * 2 + v, x),
        tf.foldr(lambda a, v: a * 2 + v, x, initializer=tf.constant(0.5)),
        tf.scan(lambda a, v: a + v, x),
        tf.scan(lambda a, v: a * v, x, initializer=tf.constant(2.0), reverse=True),
        tf.map_fn(lambda v: v * v, x),
        tf.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + x[i]), [tf.constant(0), tf.constant(0.0)]),
        tf.cond(tf.constant(True), lambda: x + 1, lambda: x - 1),
        tf.case(
            [(tf.constant(False), lambda: tf.constant(1)), (tf.constant(True), lambda: tf.constant(2))],
            default=lambda: tf.constant(3),
        ),
        tf.switch_case(tf.constant(1), [lambda: tf.constant(10), lambda: tf.constant(20)]),
    )


@same_as_tf(*FOLDS, edge=True)
def test_control_flow_defaults_and_nests(tf):
    pair = (tf.constant([1, 2, 3]), tf.constant([10, 20, 30]))
    return (
        tf.foldl(lambda a, v: a + v[0] * v[1], pair, initializer=tf.constant(0)),
        tf.foldr(lambda a, v: a - v, tf.constant([1, 2, 3])),
        tf.scan(
            lambda a, v: (a[0] + v, a[1] * v), tf.constant([1, 2, 3]), initializer=(tf.constant(0), tf.constant(1))
        ),
        tf.map_fn(lambda v: v[0] + v[1], pair, fn_output_signature=tf.int32),
        tf.while_loop(lambda i: i < 0, lambda i: (i + 1,), [tf.constant(5)]),
        tf.cond(tf.constant(False), lambda: tf.constant(1), lambda: tf.constant(2)),
        tf.case([(tf.constant(False), lambda: tf.constant(1))], default=lambda: tf.constant(3)),
        tf.switch_case(
            tf.constant(7), [lambda: tf.constant(10), lambda: tf.constant(20)], default=lambda: tf.constant(-1)
        ),
    )


@same_as_tf("gradients", "hessians")
def test_graph_gradients_are_refused_eagerly(tf):
    return tf.gradients(tf.constant(1.0), tf.constant(2.0))


@same_as_tf("gradients", "hessians", edge=True)
def test_graph_hessians_are_refused_eagerly(tf):
    return tf.hessians(tf.constant(1.0), tf.constant(2.0))


@same_as_tf(
    "group",
    "no_op",
    "tuple",
    "name_scope",
    "get_current_name_scope",
    "init_scope",
    "inside_function",
    "executing_eagerly",
    "get_static_value",
)
def test_graph_era_names_eagerly(tf):
    with tf.name_scope("outer") as outer:
        with tf.name_scope("inner") as inner:
            current = tf.get_current_name_scope()
    with tf.init_scope():
        inside = tf.inside_function()
    return (
        tf.group(tf.constant(1)),
        tf.no_op(),
        tf.tuple([tf.constant(1), tf.constant([2.0])]),
        outer,
        inner,
        current,
        inside,
        tf.executing_eagerly(),
        tf.get_static_value(tf.constant([1, 2])),
    )


@same_as_tf(
    "group",
    "no_op",
    "tuple",
    "name_scope",
    "get_current_name_scope",
    "init_scope",
    "inside_function",
    "executing_eagerly",
    "get_static_value",
    edge=True,
)
def test_graph_era_names_with_nothing(tf):
    return tf.group(), tf.tuple([]), tf.get_current_name_scope(), tf.get_static_value(None)


INITS = (
    "constant_initializer",
    "zeros_initializer",
    "ones_initializer",
    "random_normal_initializer",
    "random_uniform_initializer",
)


@same_as_tf(*INITS)
def test_initializers(tf):
    return (
        tf.constant_initializer(3.0)([2, 2]),
        tf.constant_initializer([1.0, 2.0, 3.0])([3]),
        tf.zeros_initializer()([2, 3]),
        tf.ones_initializer()([2], dtype=tf.int32),
    )


@same_as_tf(*INITS, edge=True, values=False)
def test_random_initializers_shapes(tf):
    return (
        tf.random_normal_initializer(stddev=2.0)([3, 4]),
        tf.random_uniform_initializer(-1.0, 1.0)([5]),
        tf.zeros_initializer()([0]),
    )


@same_as_tf("VariableAggregation", "VariableSynchronization", "AggregationMethod")
def test_enums(tf):
    return (
        tf.VariableAggregation.SUM.value,
        tf.VariableAggregation.ONLY_FIRST_REPLICA.value,
        tf.VariableSynchronization.ON_READ.value,
        tf.AggregationMethod.ADD_N,
        tf.AggregationMethod.DEFAULT,
    )


@same_as_tf("VariableAggregation", "VariableSynchronization", "AggregationMethod", edge=True)
def test_enum_names(tf):
    return (
        [m.name for m in tf.VariableAggregation],
        [m.name for m in tf.VariableSynchronization],
        tf.AggregationMethod.EXPERIMENTAL_TREE,
    )
