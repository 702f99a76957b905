"""Keras 2's ``K.*`` network functions and settings helpers on unison against ``tf_keras.backend`` on TF 2.21.

``CALLS`` holds each function's ordinary call and ``EDGE`` its edge case (another data format,
padding, an empty batch or a bad argument), run through one generic body as in
``test_vs_keras_backend.py``; stateful ones (variables, scopes, loops) have their own tests.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

KERAS2 = ("tf_keras",)


def _inputs() -> dict:
    r = np.random.default_rng(0)
    return {
        "X4": r.standard_normal((2, 5, 5, 3)).astype(np.float32),
        "X4F": r.standard_normal((2, 3, 5, 5)).astype(np.float32),
        "X3": r.standard_normal((2, 6, 3)).astype(np.float32),
        "X5": r.standard_normal((1, 4, 4, 4, 2)).astype(np.float32),
        "X2": r.standard_normal((3, 4)).astype(np.float32),
        "E4": np.zeros((0, 5, 5, 3), np.float32),
        "K2": r.standard_normal((3, 3, 3, 4)).astype(np.float32),
        "K1": r.standard_normal((3, 3, 4)).astype(np.float32),
        "K3": r.standard_normal((2, 2, 2, 2, 3)).astype(np.float32),
        "KT": r.standard_normal((3, 3, 4, 3)).astype(np.float32),
        "DK": r.standard_normal((3, 3, 3, 2)).astype(np.float32),
        "PK": r.standard_normal((1, 1, 6, 4)).astype(np.float32),
        "B3": np.array([0.5, -1.0, 2.0], np.float32),
        "B4": np.array([0.5, -1.0, 2.0, 0.1], np.float32),
        "BIN": np.array([[1.0, 0.0, 1.0, 0.0]] * 3, np.float32),
        "PROB": np.array([[0.8, 0.1, 0.6, 0.3], [0.2, 0.4, 0.9, 0.7], [0.55, 0.65, 0.05, 0.45]], np.float32),
        "ONEHOT": np.eye(4, dtype=np.float32)[[1, 0, 3]],
        "SOFT": np.array([[0.2, 0.5, 0.1, 0.2], [0.25, 0.25, 0.4, 0.1], [0.7, 0.1, 0.1, 0.1]], np.float32),
        "LOGITS": np.array([[2.0, -1.0, 0.5, 0.0], [0.0, 3.0, -2.0, 1.0], [1.0, 1.0, 1.0, -1.0]], np.float32),
        "T": np.array([1, 0, 3], np.int32),
        "MEAN": np.array([0.1, -0.2, 0.3, 0.0], np.float32),
        "VAR": np.array([1.0, 0.5, 2.0, 0.1], np.float32),
    }


def _arg(tf, value, inputs: dict):
    if isinstance(value, str) and value.startswith("@"):
        return tf.constant(inputs[value[1:]])
    return value


CALLS = (
    ("bias_add", ("@X4", "@B3"), {}),
    ("cast_to_floatx", ([1, 2, 3],), {}),
    ("conv1d", ("@X3", "@K1"), {"strides": 2}),
    ("conv2d", ("@X4", "@K2"), {"padding": "same"}),
    ("conv3d", ("@X5", "@K3"), {"padding": "valid"}),
    ("conv2d_transpose", ("@X4", "@KT", (2, 11, 11, 4)), {"strides": (2, 2), "padding": "valid"}),
    ("depthwise_conv2d", ("@X4", "@DK"), {"padding": "same"}),
    ("separable_conv2d", ("@X4", "@DK", "@PK"), {}),
    ("pool2d", ("@X4", (2, 2)), {"strides": (2, 2)}),
    ("pool3d", ("@X5", (2, 2, 2)), {"strides": (2, 2, 2), "pool_mode": "avg"}),
    ("temporal_padding", ("@X3", (2, 1)), {}),
    ("spatial_2d_padding", ("@X4", ((1, 0), (2, 1))), {}),
    ("spatial_3d_padding", ("@X5",), {}),
    ("repeat", ("@X2", 3), {}),
    ("reverse", ("@X2", 1), {}),
    ("resize_images", ("@X4", 2, 3, "channels_last"), {}),
    ("resize_volumes", ("@X5", 2, 1, 2, "channels_last"), {}),
    ("to_dense", ("@X2",), {}),
    ("in_top_k", ("@SOFT", "@T", 2), {}),
    ("batch_normalization", ("@X2", "@MEAN", "@VAR", "@B4", "@B4"), {}),
    ("binary_focal_crossentropy", ("@BIN", "@PROB"), {}),
    ("categorical_focal_crossentropy", ("@ONEHOT", "@SOFT"), {}),
)
EDGE = (
    ("bias_add", ("@X4F", "@B3"), {"data_format": "channels_first"}),
    ("cast_to_floatx", ("@T",), {}),
    ("conv1d", ("@X3", "@K1"), {"padding": "causal", "dilation_rate": 2}),
    ("conv2d", ("@X4F", "@K2"), {"data_format": "channels_first", "strides": (2, 2)}),
    ("conv3d", ("@X5", "@K3"), {"padding": "same", "strides": (2, 2, 2)}),
    ("conv2d_transpose", ("@X4", "@KT", (2, 10, 10, 4)), {"strides": (2, 2), "padding": "same"}),
    ("depthwise_conv2d", ("@X4", "@DK"), {"strides": (2, 2), "dilation_rate": (1, 1)}),
    ("separable_conv2d", ("@X4", "@DK", "@PK"), {"padding": "bogus"}),
    ("pool2d", ("@X4", (3, 3)), {"padding": "same", "pool_mode": "avg"}),
    ("pool3d", ("@X5", (2, 2, 2)), {"pool_mode": "median"}),
    ("temporal_padding", ("@X3", (0, 0)), {}),
    ("spatial_2d_padding", ("@X4F",), {"data_format": "channels_first"}),
    ("spatial_3d_padding", ("@X5", ((0, 1), (1, 0), (2, 2))), {}),
    ("repeat", ("@X2", 0), {}),
    ("reverse", ("@X4", [0, 2]), {}),
    ("resize_images", ("@X4", 2, 2, "channels_last"), {"interpolation": "bilinear"}),
    ("resize_volumes", ("@X5", 1, 1, 1, "channels_first"), {}),
    ("to_dense", ("@E4",), {}),
    ("in_top_k", ("@SOFT", "@T", 4), {}),
    ("batch_normalization", ("@X2", "@MEAN", "@VAR", None, None), {"epsilon": 0.5}),
    ("binary_focal_crossentropy", ("@BIN", "@LOGITS"), {"from_logits": True, "apply_class_balancing": True}),
    ("categorical_focal_crossentropy", ("@ONEHOT", "@LOGITS"), {"from_logits": True, "gamma": 0.0}),
)
NAMES = (
    "tf_keras:backend.bias_add",
    "tf_keras:backend.cast_to_floatx",
    "tf_keras:backend.conv1d",
    "tf_keras:backend.conv2d",
    "tf_keras:backend.conv3d",
    "tf_keras:backend.conv2d_transpose",
    "tf_keras:backend.depthwise_conv2d",
    "tf_keras:backend.separable_conv2d",
    "tf_keras:backend.pool2d",
    "tf_keras:backend.pool3d",
    "tf_keras:backend.temporal_padding",
    "tf_keras:backend.spatial_2d_padding",
    "tf_keras:backend.spatial_3d_padding",
    "tf_keras:backend.repeat",
    "tf_keras:backend.reverse",
    "tf_keras:backend.resize_images",
    "tf_keras:backend.resize_volumes",
    "tf_keras:backend.to_dense",
    "tf_keras:backend.in_top_k",
    "tf_keras:backend.batch_normalization",
    "tf_keras:backend.binary_focal_crossentropy",
    "tf_keras:backend.categorical_focal_crossentropy",
)


def _call(tf, name, args, kwargs):
    inputs = _inputs()
    fn = getattr(tf.keras.backend, name)
    return fn(*[_arg(tf, a, inputs) for a in args], **{k: _arg(tf, v, inputs) for k, v in kwargs.items()})


@pytest.mark.parametrize(("name", "args", "kwargs"), CALLS, ids=[r[0] for r in CALLS])
@same_as_tf(*NAMES, dialects=KERAS2, rtol=1e-4, atol=1e-5)
def test_network_function(tf, name, args, kwargs):
    return _call(tf, name, args, kwargs)


@pytest.mark.parametrize(("name", "args", "kwargs"), EDGE, ids=[r[0] for r in EDGE])
@same_as_tf(*NAMES, edge=True, dialects=KERAS2, rtol=1e-4, atol=1e-5)
def test_network_function_edge(tf, name, args, kwargs):
    return _call(tf, name, args, kwargs)


def test_the_tables_cover_the_listed_names():
    assert [r[0] for r in CALLS] == [n.rsplit(".", 1)[1] for n in NAMES] == [r[0] for r in EDGE]


VARIABLE_NAMES = (
    "tf_keras:backend.update",
    "tf_keras:backend.update_add",
    "tf_keras:backend.update_sub",
    "tf_keras:backend.moving_average_update",
    "tf_keras:backend.variable",
    "tf_keras:backend.set_value",
    "tf_keras:backend.batch_get_value",
    "tf_keras:backend.batch_set_value",
)


@same_as_tf(*VARIABLE_NAMES, dialects=KERAS2)
def test_variable_updates(tf):
    K = tf.keras.backend
    v = K.variable(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    seen = []
    K.update(v, np.full((2, 2), 5.0, np.float32))
    seen.append(K.get_value(v))
    K.update_add(v, np.ones((2, 2), np.float32))
    seen.append(K.get_value(v))
    K.update_sub(v, np.full((2, 2), 2.0, np.float32))
    seen.append(K.get_value(v))
    K.moving_average_update(v, np.zeros((2, 2), np.float32), 0.9)
    seen.append(K.get_value(v))
    K.set_value(v, np.eye(2, dtype=np.float32))
    w = K.variable(np.zeros(3, np.float32))
    K.batch_set_value([(w, np.arange(3, dtype=np.float32))])
    return seen, K.batch_get_value([v, w])


@same_as_tf(*VARIABLE_NAMES, edge=True, dialects=KERAS2)
def test_variable_update_of_the_wrong_shape(tf):
    K = tf.keras.backend
    v = K.variable(np.zeros((2, 2), np.float32))
    try:
        K.update(v, np.ones((3,), np.float32))
    except (ValueError, RuntimeError) as e:  # TF: ValueError; the class is compared below
        return type(e).__name__ in ("ValueError", "InvalidArgumentError", "RuntimeError"), K.get_value(v)
    return "no error", K.get_value(v)


RANDOM_NAMES = (
    "tf_keras:backend.random_normal",
    "tf_keras:backend.random_uniform",
    "tf_keras:backend.random_bernoulli",
    "tf_keras:backend.random_binomial",
    "tf_keras:backend.truncated_normal",
    "tf_keras:backend.random_normal_variable",
    "tf_keras:backend.random_uniform_variable",
    "tf_keras:backend.dropout",
)


def _stats(x):
    a = np.asarray(x)
    return list(a.shape), str(a.dtype), float(a.mean()), float(a.std())


# 40,000 draws put a mean or standard deviation within ~0.01 of its true value (the largest standard
# error here is 2/200); 0.06 is six of those. Rounding to one decimal instead failed about one run in
# thirty, whenever the two samples fell either side of a rounding boundary (uniform's std is 1.1547).
@same_as_tf(*RANDOM_NAMES, dialects=KERAS2, rtol=0, atol=0.06)
def test_random_draws(tf):
    K = tf.keras.backend
    n = (200, 200)
    return (
        _stats(K.random_normal(n, mean=1.0, stddev=2.0)),
        _stats(K.random_uniform(n, minval=-1.0, maxval=3.0)),
        _stats(K.random_bernoulli(n, p=0.3)),
        _stats(K.random_binomial(n, p=0.7)),
        _stats(K.truncated_normal(n, stddev=0.5)),
        float(np.abs(np.asarray(K.truncated_normal(n, stddev=0.5))).max()) <= 1.0,
        _stats(K.random_normal_variable(n, 0.5, 1.0)),
        _stats(K.random_uniform_variable(n, 0.0, 2.0)),
        _stats(K.dropout(tf.ones(n), 0.5)),
    )


@pytest.mark.parametrize("case", ["dropout_rate", "float64"])
@same_as_tf(*RANDOM_NAMES, edge=True, dialects=KERAS2)
def test_random_draws_edge(tf, case):
    K = tf.keras.backend
    if case == "dropout_rate":
        return K.dropout(tf.ones((2, 2)), 1.5)
    return (
        str(np.asarray(K.random_normal((3,), dtype="float64")).dtype),
        str(np.asarray(K.random_uniform((0, 3))).shape),
        str(np.asarray(K.random_bernoulli((2,), p=1.0, dtype="float64"))),
        str(np.asarray(K.truncated_normal((2,), dtype="float64")).dtype),
        str(np.asarray(K.random_normal_variable((2,), 0, 1, dtype="float64")).dtype),
        str(np.asarray(K.random_uniform_variable((2,), 0, 1, dtype="float64")).dtype),
        str(np.asarray(K.random_binomial((1, 2), p=0.0))),
        str(np.asarray(K.dropout(tf.zeros((0, 2)), 0.5)).shape),
    )


LOOP_NAMES = ("tf_keras:backend.foldl", "tf_keras:backend.foldr", "tf_keras:backend.map_fn", "tf_keras:backend.rnn")


@same_as_tf(*LOOP_NAMES, dialects=KERAS2, rtol=1e-5, atol=1e-6)
def test_loops(tf):
    K = tf.keras.backend
    x = tf.constant(np.arange(1, 7, dtype=np.float32).reshape(3, 2))
    seq = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 4, 3) / 10.0)

    def step(inp, states):
        out = inp + states[0] * 0.5
        return out, [out]

    last, outs, states = K.rnn(step, seq, [tf.zeros((2, 3))])
    return (
        K.foldl(lambda acc, e: acc * 2.0 + e, x),
        K.foldr(lambda acc, e: acc * 2.0 + e, x, initializer=tf.zeros(2)),
        K.map_fn(lambda e: e * e, x),
        last,
        outs,
        states[0],
    )


@same_as_tf(*LOOP_NAMES, edge=True, dialects=KERAS2, rtol=1e-5, atol=1e-6)
def test_loops_backwards_with_a_mask(tf):
    K = tf.keras.backend
    seq = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 4, 3) / 10.0)
    mask = tf.constant(np.array([[True, True, False, False], [True, True, True, True]]))

    def step(inp, states):
        out = inp + states[0]
        return out, [out]

    last, outs, states = K.rnn(step, seq, [tf.zeros((2, 3))], go_backwards=True, mask=mask)
    single = K.foldl(lambda acc, e: acc + e, tf.constant([[1.0, 2.0]]))
    return last, outs, states[0], single


PHASE_NAMES = (
    "tf_keras:backend.learning_phase",
    "tf_keras:backend.learning_phase_scope",
    "tf_keras:backend.in_train_phase",
    "tf_keras:backend.in_test_phase",
    "tf_keras:backend.reset_uids",
    "tf_keras:backend.get_uid",
    "tf_keras:backend.manual_variable_initialization",
)


@same_as_tf(*PHASE_NAMES, dialects=KERAS2)
def test_learning_phase_scope(tf):
    K = tf.keras.backend
    a, b = tf.constant([1.0]), tf.constant([2.0])
    before = K.learning_phase()
    with K.learning_phase_scope(1):
        inside = (K.learning_phase(), K.in_train_phase(a, b), K.in_test_phase(a, b))
    K.reset_uids()
    uids = (K.get_uid("kmisc_prefix"), K.get_uid("kmisc_prefix"))
    K.reset_uids()
    K.manual_variable_initialization(False)
    return before, inside, K.learning_phase(), uids, K.get_uid("kmisc_prefix"), K.in_train_phase(a, b, training=True)


@same_as_tf(*PHASE_NAMES, edge=True, dialects=KERAS2)
def test_learning_phase_scope_refuses_other_values(tf):
    with tf.keras.backend.learning_phase_scope(2):
        pass


MISC_NAMES = (
    "tf_keras:backend.placeholder",
    "tf_keras:backend.function",
    "tf_keras:backend.gradients",
    "tf_keras:backend.is_sparse",
    "tf_keras:backend.name_scope",
    "tf_keras:backend.print_tensor",
    "tf_keras:backend.hard_sigmoid",
    "tf_keras:backend.normalize_batch_in_training",
)


@same_as_tf(*MISC_NAMES, dialects=KERAS2, rtol=1e-5, atol=1e-6)
def test_placeholder_function_and_helpers(tf):
    K = tf.keras.backend
    p = K.placeholder(shape=(None, 3))
    f = K.function([p], [p * 2.0 + 1.0])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with K.name_scope("kmisc"):
        printed = K.print_tensor(tf.constant([1.0, 2.0]), message="kmisc ")
    normed, mean, var = K.normalize_batch_in_training(
        tf.constant(x), tf.constant([1.0, 2.0, 0.5]), tf.constant([0.0, 1.0, -1.0]), [0]
    )
    return (
        K.int_shape(p),
        K.is_keras_tensor(p),
        f([x]),
        K.is_sparse(tf.constant(x)),
        printed,
        K.hard_sigmoid(tf.constant([-3.0, -1.0, 0.0, 1.0, 3.0])),
        normed,
        mean,
        var,
    )


@same_as_tf(*MISC_NAMES, edge=True, dialects=KERAS2)
def test_gradients_need_a_graph(tf):
    K = tf.keras.backend
    v = K.variable(np.ones(2, np.float32))
    return K.gradients(K.sum(v * v), [v])


LOCAL_NAMES = ("tf_keras:backend.local_conv1d", "tf_keras:backend.local_conv2d")


def _local(tf, fmt):
    K = tf.keras.backend
    r = np.random.default_rng(1)
    x1 = r.standard_normal((2, 7, 3)).astype(np.float32)
    k1 = r.standard_normal((3, 3 * 3, 4)).astype(np.float32)  # output_length 3, kernel 3, stride 2
    x2 = r.standard_normal((2, 5, 5, 2)).astype(np.float32)
    k2 = r.standard_normal((4, 2 * 2 * 2, 3)).astype(np.float32)  # 2x2 outputs, 2x2 kernel, stride 2
    if fmt == "channels_first":
        x1, x2 = x1.transpose(0, 2, 1).copy(), x2.transpose(0, 3, 1, 2).copy()
    return (
        K.local_conv1d(tf.constant(x1), tf.constant(k1), (3,), (2,), data_format=fmt),
        K.local_conv2d(tf.constant(x2), tf.constant(k2), (2, 2), (2, 2), (2, 2), data_format=fmt),
    )


@same_as_tf(*LOCAL_NAMES, dialects=KERAS2, rtol=1e-5, atol=1e-5)
def test_local_conv(tf):
    return _local(tf, "channels_last")


@same_as_tf(*LOCAL_NAMES, edge=True, dialects=KERAS2, rtol=1e-5, atol=1e-5)
def test_local_conv_channels_first(tf):
    return _local(tf, "channels_first")
