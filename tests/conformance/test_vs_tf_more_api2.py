"""Still more of TF against TensorFlow 2.21: tf.fingerprint, tf.strings.to_hash_bucket, tf.approx_top_k,
tf.extract_volume_patches, tf.conv, tf.nn.isotonic_regression and tf.nn.with_space_to_batch."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

STRINGS = ["", "a", "hello world!", "0123456789abcdef", "x" * 37, "\u00e9t\u00e9 \u2603", "z" * 64]


@same_as_tf("fingerprint")
def test_fingerprint_of_strings_numbers_and_rows(tf):
    return (
        tf.fingerprint(tf.constant(STRINGS)),
        tf.fingerprint(tf.constant([[1, 2, 3], [4, 5, 6]], dtype=tf.int32)),
        tf.fingerprint(tf.constant([[0.5, -1.0], [2.0, 3.0]])),
        tf.fingerprint(tf.constant([["ab", "c"], ["d", ""]])),
    )


@same_as_tf("fingerprint", edge=True)
def test_fingerprint_of_a_scalar_is_an_error_and_of_no_rows_is_empty(tf):
    empty = tf.fingerprint(tf.zeros([0, 3], tf.int64))
    try:
        tf.fingerprint(tf.constant(5))
    except tf.errors.InvalidArgumentError:
        return empty, "scalar refused"
    return empty, "scalar accepted"


@same_as_tf("strings.to_hash_bucket")
def test_to_hash_bucket_uses_tfs_legacy_hash(tf):
    long_strings = [chr(97 + i % 26) * i for i in range(0, 40)]
    return tf.strings.to_hash_bucket(STRINGS, 1000003), tf.strings.to_hash_bucket(long_strings, 97)


@same_as_tf("strings.to_hash_bucket", edge=True)
def test_to_hash_bucket_of_a_matrix_with_one_bucket(tf):
    return tf.strings.to_hash_bucket(tf.constant([["a", "b"], ["", "c"]]), 1)


@same_as_tf("approx_top_k")
def test_approx_top_k_is_exact_on_cpu(tf):
    x = tf.constant(np.random.RandomState(0).randn(3, 10).astype(np.float32))
    values, indices = tf.approx_top_k(x, 4)
    return values, indices


@same_as_tf("approx_top_k", edge=True)
def test_approx_top_k_ties_keep_the_lower_index(tf):
    values, indices = tf.approx_top_k(tf.constant([[1.0, 3.0, 3.0, 1.0, 3.0]]), 3)
    return values, indices


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@same_as_tf("extract_volume_patches")
def test_extract_volume_patches(tf, padding):
    x = tf.reshape(tf.range(2 * 3 * 4 * 5 * 2, dtype=tf.float32), [2, 3, 4, 5, 2])
    return tf.extract_volume_patches(x, [1, 2, 2, 3, 1], [1, 1, 2, 2, 1], padding)


@same_as_tf("extract_volume_patches", edge=True)
def test_extract_volume_patches_with_a_kernel_larger_than_the_input(tf):
    x = tf.ones([1, 2, 2, 2, 1])
    return tf.extract_volume_patches(x, [1, 3, 3, 3, 1], [1, 1, 1, 1, 1], "VALID")


@same_as_tf("conv")
def test_conv_raw_op_2d_and_batch_dims(tf):
    rng = np.random.RandomState(1)
    x = tf.constant(rng.randn(2, 5, 5, 3).astype(np.float32))
    w = tf.constant(rng.randn(3, 3, 3, 4).astype(np.float32))
    x2 = tf.constant(rng.randn(2, 2, 6, 5, 2).astype(np.float32))
    w1 = tf.constant(rng.randn(2, 2, 2, 3).astype(np.float32))
    return (
        tf.conv(x, w, [1, 1, 1, 1], "SAME"),
        tf.conv(x, w, [1, 2, 2, 1], "VALID", dilations=[1, 1, 1, 1]),
        tf.conv(x, w, [1, 1, 1, 1], "EXPLICIT", explicit_paddings=[0, 0, 1, 2, 0, 1, 0, 0]),
        tf.conv(x2, w1, [1, 1, 1, 1], "VALID", batch_dims=2),
    )


@same_as_tf("conv", edge=True)
def test_conv_refuses_one_spatial_axis_and_takes_3d(tf):
    rng = np.random.RandomState(2)
    x = tf.constant(rng.randn(1, 4, 3, 4, 2).astype(np.float32))
    w = tf.constant(rng.randn(2, 2, 2, 2, 3).astype(np.float32))
    try:
        tf.conv(tf.ones([1, 5, 2]), tf.ones([2, 2, 2]), [1, 1, 1], "VALID")
    except tf.errors.InvalidArgumentError:
        refused = True
    else:
        refused = False
    return refused, tf.conv(x, w, [1, 1, 2, 1, 1], "SAME")


@same_as_tf("nn.isotonic_regression")
def test_isotonic_regression_both_directions_and_axes(tf):
    x = tf.constant(np.random.RandomState(3).randn(3, 7).astype(np.float32))
    dec = tf.nn.isotonic_regression(x)
    inc_output, inc_segments = tf.nn.isotonic_regression(x, decreasing=False)
    col_output, col_segments = tf.nn.isotonic_regression(x, axis=0)
    return dec.output, dec.segments, inc_output, inc_segments, col_output, col_segments


@same_as_tf("nn.isotonic_regression", edge=True)
def test_isotonic_regression_of_ties_and_integers(tf):
    ties = tf.nn.isotonic_regression(tf.constant([[1.0, 1.0, 2.0, 2.0, 0.0]]))
    ints = tf.nn.isotonic_regression(tf.constant([[1, 5, 2]]), decreasing=False)
    return ties.output, ties.segments, ints[0], ints[1]


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@same_as_tf("nn.with_space_to_batch")
def test_with_space_to_batch_runs_a_dilated_conv(tf, padding):
    rng = np.random.RandomState(4)
    x = tf.constant(rng.randn(2, 7, 6, 3).astype(np.float32))
    w = tf.constant(rng.randn(3, 2, 3, 2).astype(np.float32))

    def op(converted, num_spatial_dims, pad):
        return tf.nn.conv2d(converted, w, 1, pad)

    return tf.nn.with_space_to_batch(x, [2, 3], padding, op, filter_shape=[3, 2])


@same_as_tf("nn.with_space_to_batch", edge=True)
def test_with_space_to_batch_rate_one_calls_op_directly(tf):
    seen = []

    def op(x, n, pad):
        seen.append((n, pad))
        return x * 2.0

    out = tf.nn.with_space_to_batch(tf.ones([1, 3, 1]), [1], "SAME", op)
    return out, seen


PROTO_VALUES = [
    ("float", [1.0, 2.5]),
    ("scalar", 3),
    ("big int", [2**40, 1]),
    ("bools", [True, False, True]),
    ("strings", [["a", "bc"], ["", "d"]]),
    ("nested", [[1, 2, 3], [4, 5, 6]]),
]


@pytest.mark.parametrize("case", [c for c, _ in PROTO_VALUES])
@same_as_tf("make_tensor_proto", "make_ndarray")
def test_make_tensor_proto_bytes_and_make_ndarray_round_trip(tf, case):
    values = dict(PROTO_VALUES)[case]
    proto = tf.make_tensor_proto(values)
    return proto.SerializeToString(), tf.make_ndarray(proto)


@same_as_tf("make_tensor_proto", "make_ndarray", edge=True)
def test_make_tensor_proto_with_dtype_shape_broadcast_and_errors(tf):
    out = []
    for kwargs in (
        {"values": 5.0, "shape": [2, 2]},
        {"values": [1, 2], "dtype": tf.float64},
        {"values": np.arange(6, dtype=np.int16).reshape(2, 3)},
        {"values": np.array([1.5, 2.5], dtype=np.float16)},
        {"values": [1.0], "shape": [3], "allow_broadcast": True},
        {"values": [], "shape": [0, 2]},
        {"values": [1 + 2j, 3j]},
    ):
        proto = tf.make_tensor_proto(**kwargs)
        out.append((proto.SerializeToString(), tf.make_ndarray(proto)))
    errors = []
    for kwargs in (
        {"values": [1, 2, 3], "shape": [2]},
        {"values": None},
        {"values": [1, 2], "shape": [3], "verify_shape": True},
    ):
        try:
            tf.make_tensor_proto(**kwargs)
        except (TypeError, ValueError) as exc:
            errors.append(type(exc).__name__)
    return out, errors


def _variable_kwargs(kwargs):
    return {k: (v.name if hasattr(v, "name") and not isinstance(v, str) else v) for k, v in kwargs.items()}


@same_as_tf("variable_creator_scope")
def test_variable_creator_scope_nests_innermost_first_and_sees_tfs_kwargs(tf):
    calls = []

    def outer(next_creator, **kwargs):
        calls.append(("outer", kwargs["name"]))
        kwargs["trainable"] = False
        return next_creator(**kwargs)

    def inner(next_creator, **kwargs):
        calls.append(("inner", sorted(_variable_kwargs(kwargs).items())))
        kwargs["name"] = "renamed"
        return next_creator(**kwargs)

    with tf.variable_creator_scope(outer):
        with tf.variable_creator_scope(inner):
            v = tf.Variable(2.0, name="x")
        w = tf.Variable(3.0, name="y")
    z = tf.Variable(4.0, name="z")
    return calls, (v.name, v.trainable, v.numpy()), (w.name, w.trainable), (z.name, z.trainable)


@same_as_tf("variable_creator_scope", edge=True)
def test_variable_creator_scope_creator_may_return_its_own_object(tf):
    with tf.variable_creator_scope(lambda next_creator, **kwargs: ("made by creator", kwargs["initial_value"])):
        made = tf.Variable(5)
    return made


JSON_EXAMPLES = [
    '{"features": {"feature": {"b": {"int64List": {"value": [1, "300", -2]}},'
    ' "a": {"bytesList": {"value": ["aGk=", ""]}}, "c": {"floatList": {"value": [1.5, 2, "NaN"]}}}}}',
    "{}",
    '{"features": {}}',
    '{"features": {"feature": {"z": {}, "y": {"float_list": {"value": []}}}}}',
]


@same_as_tf("io.decode_json_example")
def test_decode_json_example_gives_tfs_bytes(tf):
    out = tf.io.decode_json_example(JSON_EXAMPLES)
    parsed = tf.io.parse_example(out[:1], {"b": tf.io.VarLenFeature(tf.int64), "a": tf.io.VarLenFeature(tf.string)})
    return out, tf.sparse.to_dense(parsed["b"]), tf.sparse.to_dense(parsed["a"])


@pytest.mark.parametrize(
    "bad",
    ['{"features": 3}', "not json", '{"foo": 1}', '{"features": {"feature": {"a": {"int64List": {"value": [1.5]}}}}}'],
)
@same_as_tf("io.decode_json_example", edge=True)
def test_decode_json_example_refuses_what_is_not_an_example(tf, bad):
    try:
        tf.io.decode_json_example([bad])
    except tf.errors.InvalidArgumentError:
        return "InvalidArgumentError"
    return "accepted"


def _masked_type(tf):
    class Masked(tf.experimental.ExtensionType):
        __annotations__ = {"values": tf.Tensor, "mask": tf.Tensor}

    return Masked


@same_as_tf("experimental.dispatch_for_api", "experimental.unregister_dispatch_for")
def test_dispatch_for_api_overrides_a_function_for_an_extension_type(tf):
    Masked = _masked_type(tf)

    def masked_sum(input_tensor, axis=None, keepdims=False, name=None):
        kept = tf.where(input_tensor.mask, input_tensor.values, tf.zeros_like(input_tensor.values))
        return tf.math.reduce_sum(kept, axis=axis, keepdims=keepdims)

    tf.experimental.dispatch_for_api(tf.math.reduce_sum, {"input_tensor": Masked})(masked_sum)
    m = Masked([1.0, 2.0, 4.0], [True, False, True])
    dispatched = (tf.math.reduce_sum(m), tf.reduce_sum(m, axis=0), tf.math.reduce_sum(tf.constant([1.0, 2.0])))
    tf.experimental.unregister_dispatch_for(masked_sum)
    try:
        tf.math.reduce_sum(m)
    except (TypeError, ValueError):
        after = "not dispatched"
    else:
        after = "still dispatched"
    return dispatched, after


@same_as_tf("experimental.dispatch_for_api", "experimental.unregister_dispatch_for", edge=True)
def test_dispatch_for_api_checks_signatures_and_unknown_targets(tf):
    Masked = _masked_type(tf)
    out = []
    try:
        tf.experimental.dispatch_for_api(tf.math.reduce_sum, {"nope": Masked})
    except ValueError:
        out.append("bad parameter refused")

    def wrong_params(x, name=None):
        return x

    try:
        tf.experimental.dispatch_for_api(tf.math.reduce_sum, {"input_tensor": Masked})(wrong_params)
    except ValueError:
        out.append("bad target refused")
    try:
        tf.experimental.unregister_dispatch_for(wrong_params)
    except ValueError:
        out.append("unknown target refused")
    return out


@same_as_tf("experimental.dispatch_for_unary_elementwise_apis", "experimental.dispatch_for_binary_elementwise_apis")
def test_elementwise_dispatch_handlers(tf):
    Masked = _masked_type(tf)

    def unary(api_func, x):
        return Masked(api_func(x.values), x.mask)

    def binary(api_func, x, y):
        return Masked(api_func(x.values, y.values), tf.logical_and(x.mask, y.mask))

    tf.experimental.dispatch_for_unary_elementwise_apis(Masked)(unary)
    tf.experimental.dispatch_for_binary_elementwise_apis(Masked, Masked)(binary)
    a = Masked([-1.0, 4.0], [True, False])
    b = Masked([2.0, 3.0], [True, True])
    results = [tf.math.abs(a), tf.math.sqrt(b), tf.math.add(a, b), tf.math.maximum(a, b), tf.math.multiply(a, b)]
    tf.experimental.unregister_dispatch_for(unary)
    tf.experimental.unregister_dispatch_for(binary)
    return [(r.values, r.mask) for r in results]


@same_as_tf("experimental.dispatch_for_binary_elementwise_apis", "experimental.extension_type.as_dict", edge=True)
def test_binary_dispatch_needs_both_types_and_as_dict(tf):
    Masked = _masked_type(tf)

    def binary(api_func, x, y):
        return Masked(api_func(x.values, y.values), x.mask)

    tf.experimental.dispatch_for_binary_elementwise_apis(Masked, Masked)(binary)
    a = Masked([1.0, 2.0], [True, False])
    try:
        tf.math.add(a, tf.constant([1.0, 1.0]))
    except (TypeError, ValueError):
        mixed = "not dispatched"
    else:
        mixed = "dispatched"
    fields = tf.experimental.extension_type.as_dict(tf.math.subtract(a, a))
    tf.experimental.unregister_dispatch_for(binary)
    return mixed, sorted(fields), fields["values"], fields["mask"]


@same_as_tf("experimental.extension_type.as_dict")
def test_as_dict_lists_fields_in_order(tf):
    class Point(tf.experimental.ExtensionType):
        __annotations__ = {"x": int, "y": int, "label": str}

    return list(tf.experimental.extension_type.as_dict(Point(1, 2, "p")).items())


@same_as_tf("experimental.dispatch_for_unary_elementwise_apis", edge=True)
def test_unary_dispatch_leaves_other_types_and_apis_alone(tf):
    Masked = _masked_type(tf)
    Other = _masked_type(tf)

    def unary(api_func, x):
        return Masked(api_func(x.values), x.mask)

    tf.experimental.dispatch_for_unary_elementwise_apis(Masked)(unary)
    plain = tf.math.negative(tf.constant([1.0, -2.0]))
    try:
        tf.math.abs(Other([1.0], [True]))
    except (TypeError, ValueError):
        other = "not dispatched"
    else:
        other = "dispatched"
    tf.experimental.unregister_dispatch_for(unary)
    return plain, other


OPAQUE = ("resource", "variant", "dtypes.resource", "dtypes.variant")


@pytest.mark.parametrize("which", ["resource", "variant"])
@same_as_tf(*OPAQUE)
def test_resource_and_variant_dtypes(tf, which):
    d = getattr(tf, which)
    flags = (d.is_numpy_compatible, d.is_floating, d.is_integer, d.is_bool, d.is_complex, d.is_quantized, d.is_unsigned)
    return repr(d), str(d), d.name, d.as_datatype_enum, flags, d.size, d.base_dtype is d, d.real_dtype is d


@same_as_tf(*OPAQUE, edge=True)
def test_resource_and_variant_by_name_and_comparisons(tf):
    return (
        tf.as_dtype("resource") == tf.resource,
        tf.as_dtype("variant") == tf.dtypes.variant,
        tf.resource == tf.variant,
        tf.resource == tf.float32,
        tf.dtypes.resource == tf.resource,
        tf.variant == tf.dtypes.variant,
        len({tf.resource, tf.dtypes.resource, tf.variant}),
    )


@same_as_tf("types.experimental.distributed.PerReplica", "types.experimental.distributed.Mirrored")
def test_per_replica_and_mirrored_are_distributed_values_interfaces(tf):
    d = tf.types.experimental.distributed
    return (
        issubclass(d.PerReplica, tf.distribute.DistributedValues),
        issubclass(d.Mirrored, tf.distribute.DistributedValues),
        issubclass(d.PerReplica, d.Mirrored),
        d.PerReplica.__name__,
        d.Mirrored.__name__,
    )


@same_as_tf("types.experimental.distributed.PerReplica", "types.experimental.distributed.Mirrored", edge=True)
def test_one_replica_values_are_plain(tf):
    d = tf.types.experimental.distributed
    strategy = tf.distribute.get_strategy()
    result = strategy.run(lambda: tf.constant(2.0))
    with strategy.scope():
        v = tf.Variable(1.0)
    return isinstance(result, d.PerReplica), isinstance(v, d.Mirrored), isinstance(tf.constant(1.0), d.PerReplica)


def _sparse(st):
    return st.indices, st.values, st.dense_shape


@same_as_tf("nn.ctc_beam_search_decoder")
def test_ctc_beam_search_decoder_top_paths(tf):
    logits = tf.constant(np.random.RandomState(5).randn(4, 2, 3).astype(np.float32) * 2.0)
    decoded, log_probs = tf.nn.ctc_beam_search_decoder(logits, [4, 3], beam_width=50, top_paths=3)
    return [_sparse(d) for d in decoded], log_probs


@same_as_tf("nn.ctc_beam_search_decoder", edge=True)
def test_ctc_beam_search_decoder_repeats_need_a_blank_and_empty_sequences(tf):
    # class 2 is the blank: "a a" decodes to [0] unless a blank separates them
    probs = np.array(
        [[[0.9, 0.05, 0.05]], [[0.9, 0.05, 0.05]], [[0.05, 0.05, 0.9]], [[0.9, 0.05, 0.05]]], dtype=np.float32
    )
    logits = tf.math.log(tf.constant(np.concatenate([probs, probs], axis=1)))
    decoded, log_probs = tf.nn.ctc_beam_search_decoder(logits, [4, 0], beam_width=30, top_paths=1)
    try:
        tf.nn.ctc_beam_search_decoder(logits, [4, 0], beam_width=30, top_paths=2)
    except tf.errors.InvalidArgumentError:
        too_few = "refused"
    else:
        too_few = "accepted"
    return [_sparse(d) for d in decoded], log_probs, too_few


FRACTIONAL = ("nn.fractional_max_pool", "nn.fractional_avg_pool")


@pytest.mark.parametrize("overlapping", [False, True])
@pytest.mark.parametrize("pseudo_random", [False, True])
@same_as_tf(*FRACTIONAL)
def test_fractional_pools_with_even_cells_are_deterministic(tf, overlapping, pseudo_random):
    x = tf.constant(np.random.RandomState(6).randn(2, 6, 8, 3).astype(np.float32))
    out = []
    for pool in (tf.nn.fractional_max_pool, tf.nn.fractional_avg_pool):
        value, rows, cols = pool(x, [1.0, 2.0, 2.0, 1.0], pseudo_random=pseudo_random, overlapping=overlapping, seed=7)
        out.append((value, rows, cols))
        value, rows, cols = pool(x, [1.0, 3.0, 4.0, 1.0], pseudo_random=pseudo_random, overlapping=overlapping)
        out.append((value, rows, cols))
    return out


@pytest.mark.parametrize("pseudo_random", [False, True])
@same_as_tf(*FRACTIONAL, edge=True)
def test_fractional_pools_with_uneven_cells_keep_tfs_rules(tf, pseudo_random):
    # widths are random here (TF's own draw cannot be reproduced): check the rules every draw keeps
    x = np.random.RandomState(8).randn(1, 7, 9, 2).astype(np.float32)
    results = []
    for pool, reduce in ((tf.nn.fractional_max_pool, np.max), (tf.nn.fractional_avg_pool, np.mean)):
        value, rows, cols = pool(tf.constant(x), [1.0, 1.6, 2.2, 1.0], pseudo_random=pseudo_random)
        rows, cols, value = rows.numpy().tolist(), cols.numpy().tolist(), value.numpy()
        widths = sorted({b - a for a, b in zip(rows, rows[1:])} | {b - a for a, b in zip(cols, cols[1:])})
        expected = np.array(
            [
                [
                    reduce(x[0, rows[i] : rows[i + 1], cols[j] : cols[j + 1], :], axis=(0, 1))
                    for j in range(len(cols) - 1)
                ]
                for i in range(len(rows) - 1)
            ]
        )
        results.append(
            (
                value.shape,
                rows[0],
                rows[-1],
                cols[0],
                cols[-1],
                widths[0] >= 1,
                bool(np.allclose(value[0], expected, atol=1e-6)),
            )
        )
    return results


def _kind(tf, obj):
    if isinstance(obj, tf.train.Checkpoint):
        return "checkpoint"
    if isinstance(obj, tf.Variable):
        return f"variable {float(obj.numpy())}"
    if isinstance(obj, tf.Module):
        return "module"
    if isinstance(obj, dict):
        return "dict"
    if isinstance(obj, (list, tuple)):
        return "list"
    return type(obj).__name__


def _module_tree(tf):
    m = tf.Module()
    m.w = tf.Variable(1.0)
    m.sub = tf.Module()
    m.sub.v = tf.Variable(2.0)
    m.items = [tf.Variable(3.0), 7]
    m.table = {"k": tf.Variable(4.0)}
    m.count = 5
    return m


@same_as_tf("train.TrackableView")
def test_trackable_view_children_and_descendants(tf):
    m = _module_tree(tf)
    ckpt = tf.train.Checkpoint(model=m, step=tf.Variable(0.0))
    view = tf.train.TrackableView(ckpt)
    return (
        {k: _kind(tf, v) for k, v in view.children(ckpt).items()},
        {k: _kind(tf, v) for k, v in view.children(m).items()},
        {k: _kind(tf, v) for k, v in tf.train.TrackableView.children(m.items).items()},
        sorted(_kind(tf, v) for v in view.descendants()),
        view.root is ckpt,
    )


@same_as_tf("train.TrackableView", edge=True)
def test_trackable_view_counts_a_shared_variable_once(tf):
    v = tf.Variable(9.0)
    m = tf.Module()
    m.only_numbers = [1, 2]
    ckpt = tf.train.Checkpoint(a=v, b=v, m=m)  # the view holds its root weakly, as TF's
    shared = tf.train.TrackableView(ckpt)
    return (
        len(shared.descendants()),
        {k: _kind(tf, x) for k, x in shared.children(m).items()},
        shared.children(m.only_numbers),
    )


def _write_example_files(tf, directory):
    import os

    paths = []
    for f in range(2):
        path = os.path.join(directory, f"part-{f}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for i in range(5):
                n = f * 10 + i
                feature = {
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=[n * 0.5, n * 1.0])),
                    "tokens": tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(i % 3)))),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[n % 2])),
                }
                writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
        paths.append(path)
    return os.path.join(directory, "part-*.tfrecord")


@same_as_tf("data.experimental.make_batched_features_dataset")
def test_make_batched_features_dataset_reads_parses_and_splits_labels(tf):
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        pattern = _write_example_files(tf, directory)
        features = {
            "x": tf.io.FixedLenFeature([2], tf.float32),
            "tokens": tf.io.VarLenFeature(tf.int64),
            "label": tf.io.FixedLenFeature([], tf.int64),
        }
        ds = tf.data.experimental.make_batched_features_dataset(
            pattern, 4, features, label_key="label", num_epochs=1, shuffle=False
        )
        out = [(f["x"], tf.sparse.to_dense(f["tokens"]), label) for f, label in ds]
        forever = tf.data.experimental.make_batched_features_dataset(
            pattern, 3, features, num_epochs=None, shuffle=False
        )
        repeated = [b["label"] for b in forever.take(5)]
    return out, repeated


@same_as_tf("data.experimental.make_batched_features_dataset", edge=True)
def test_make_batched_features_dataset_checks_the_label_key_and_drops_the_last_batch(tf):
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        pattern = _write_example_files(tf, directory)
        features = {"label": tf.io.FixedLenFeature([], tf.int64)}
        try:
            tf.data.experimental.make_batched_features_dataset(pattern, 2, features, label_key="y", num_epochs=1)
        except ValueError:
            refused = True
        else:
            refused = False
        ds = tf.data.experimental.make_batched_features_dataset(
            pattern, 3, features, num_epochs=2, shuffle=False, drop_final_batch=True
        )
        sizes = [int(b["label"].shape[0]) for b in ds]
    return refused, sizes


@same_as_tf("saved_model.experimental.TrackableResource")
def test_trackable_resource_creates_its_handle_once(tf):
    class Table(tf.saved_model.experimental.TrackableResource):
        def __init__(self):
            super().__init__()
            self.created = 0

        def _create_resource(self):
            self.created += 1
            return tf.constant([1, 2, 3])

        def _initialize(self):
            pass

    table = Table()
    before = table.created
    first, second = table.resource_handle, table.resource_handle
    return before, table.created, first is second, first, table._resource_device


@same_as_tf("saved_model.experimental.TrackableResource", edge=True)
def test_trackable_resource_without_create_resource_is_an_error(tf):
    class Empty(tf.saved_model.experimental.TrackableResource):
        pass

    try:
        _ = Empty().resource_handle
    except NotImplementedError:
        return "NotImplementedError"
    return "made a handle"


@same_as_tf("saved_model.Asset")
def test_asset_file_travels_with_the_saved_model(tf):
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        vocab = os.path.join(directory, "vocab.txt")
        with open(vocab, "w") as f:
            f.write("a\nb\nc\n")
        module = tf.Module()
        module.vocab = tf.saved_model.Asset(vocab)
        module.w = tf.Variable(1.0)
        before = module.vocab.asset_path.numpy() == vocab.encode()
        export = os.path.join(directory, "saved")
        tf.saved_model.save(module, export)
        os.remove(vocab)  # the SavedModel carries its own copy
        loaded = tf.saved_model.load(export)
        path = loaded.vocab.asset_path.numpy().decode()
        with open(path) as f:
            content = f.read()
        return (
            before,
            os.path.basename(path),
            os.path.relpath(os.path.dirname(path), export),
            content,
            sorted(os.listdir(os.path.join(export, "assets"))),
            loaded.vocab.asset_path.dtype == tf.string,
        )


@same_as_tf("saved_model.Asset", edge=True)
def test_asset_path_is_a_scalar_string_tensor(tf):
    asset = tf.saved_model.Asset("some/file.txt")
    return asset.asset_path, len(asset.asset_path.shape)


def _encodings(p):
    return (
        p.row_splits(),
        p.value_rowids(),
        p.nrows(),
        p.nvals(),
        p.row_starts(),
        p.row_limits(),
        p.row_lengths(),
        p.offsets_in_rows(),
        p.is_uniform(),
        p.uniform_row_length(),
        p.static_nrows,
        p.static_uniform_row_length,
    )


@same_as_tf("experimental.RowPartition")
def test_row_partition_constructors_and_encodings(tf):
    RP = tf.experimental.RowPartition
    parts = [
        RP.from_row_lengths([2, 0, 3]),
        RP.from_row_splits([0, 1, 1, 4]),
        RP.from_value_rowids([0, 0, 2], nrows=4),
        RP.from_row_starts([0, 2], nvals=5),
        RP.from_row_limits([2, 5]),
        RP.from_uniform_row_length(3, nvals=6),
        RP.from_row_splits([0, 1, 1], dtype=tf.int32),
    ]
    return (
        [_encodings(p) for p in parts],
        [p.dtype == tf.int64 for p in parts],
        parts[0].with_dtype(tf.int32).row_splits(),
    )


@pytest.mark.parametrize("case", ["splits not from zero", "splits decreasing", "negative length", "rowids unsorted"])
@same_as_tf("experimental.RowPartition", edge=True)
def test_row_partition_validates_its_argument(tf, case):
    RP = tf.experimental.RowPartition
    make = {
        "splits not from zero": lambda: RP.from_row_splits([1, 2]),
        "splits decreasing": lambda: RP.from_row_splits([0, 3, 2]),
        "negative length": lambda: RP.from_row_lengths([1, -1]),
        "rowids unsorted": lambda: RP.from_value_rowids([1, 0]),
    }[case]
    try:
        make()
    except tf.errors.InvalidArgumentError:
        return "InvalidArgumentError"
    return "accepted"
