"""``tf.nn`` against TensorFlow 2.21: activations, losses, convolutions and pools of every rank.

Inputs are deterministic ramps (``np.sin`` of a range) so that both frameworks see the same values.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf


def op(tf, dotted):
    obj = tf
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def ramp(*shape, scale=1.0):
    return (np.sin(np.arange(int(np.prod(shape)), dtype=np.float32) * 0.7) * scale).reshape(shape)


ACTIVATIONS = (
    "nn.relu",
    "nn.relu6",
    "nn.elu",
    "nn.selu",
    "nn.gelu",
    "nn.leaky_relu",
    "nn.sigmoid",
    "nn.tanh",
    "nn.softplus",
    "nn.softsign",
    "nn.silu",
    "nn.swish",
    "nn.softmax",
    "nn.log_softmax",
    "nn.crelu",
)


@pytest.mark.parametrize("name", ACTIVATIONS)
@same_as_tf(*ACTIVATIONS, rtol=2e-5, atol=2e-6)
def test_activations(tf, name):
    return op(tf, name)(tf.constant(ramp(3, 4, scale=4.0)))


@pytest.mark.parametrize("name", ACTIVATIONS)
@same_as_tf(*ACTIVATIONS, edge=True, rtol=2e-5, atol=2e-6)
def test_activations_on_nan_infinities_and_empty(tf, name):
    fn = op(tf, name)
    if name.endswith("softmax"):  # NaN poisons a whole row; how much of it differs between kernels
        return fn(tf.constant([[-np.inf, 0.0, -30.0, 30.0]])), fn(tf.zeros([0, 3]))
    return fn(tf.constant([[np.nan, np.inf, -np.inf, 0.0, -30.0, 30.0]])), fn(tf.zeros([0, 3]))


@same_as_tf("nn.gelu", "nn.leaky_relu", "nn.silu", rtol=2e-5, atol=2e-6)
def test_activation_arguments(tf):
    x = tf.constant(ramp(5, scale=3.0))
    return tf.nn.gelu(x, approximate=True), tf.nn.leaky_relu(x, alpha=0.05), tf.nn.silu(x, beta=2.0)


LOSSES = ("nn.sigmoid_cross_entropy_with_logits", "nn.softmax_cross_entropy_with_logits", "nn.l2_loss")


@same_as_tf(
    *LOSSES,
    "nn.sparse_softmax_cross_entropy_with_logits",
    "nn.weighted_cross_entropy_with_logits",
    "nn.log_poisson_loss",
    rtol=1e-5,
)
def test_losses(tf):
    logits = tf.constant(ramp(3, 4, scale=3.0))
    probs = tf.constant([[0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]])
    return (
        tf.nn.sigmoid_cross_entropy_with_logits(labels=probs, logits=logits),
        tf.nn.softmax_cross_entropy_with_logits(labels=probs, logits=logits),
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([3, 0, 1]), logits=logits),
        tf.nn.l2_loss(logits),
        tf.nn.weighted_cross_entropy_with_logits(labels=probs, logits=logits, pos_weight=2.5),
        tf.nn.log_poisson_loss(tf.constant([0.0, 0.5, 2.0, 7.0]), tf.constant([0.1, -1.0, 0.7, 2.0])),
        tf.nn.log_poisson_loss(
            tf.constant([0.0, 0.5, 2.0, 7.0]), tf.constant([0.1, -1.0, 0.7, 2.0]), compute_full_loss=True
        ),
    )


@same_as_tf(
    *LOSSES,
    "nn.sparse_softmax_cross_entropy_with_logits",
    "nn.weighted_cross_entropy_with_logits",
    "nn.log_poisson_loss",
    edge=True,
)
def test_losses_on_extreme_logits(tf):
    logits = tf.constant([[100.0, -100.0, 0.0]])
    labels = tf.constant([[0.0, 1.0, 0.5]])
    return (
        tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits),
        tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits),
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([1]), logits=logits),
        tf.nn.l2_loss(tf.zeros([0])),
        tf.nn.weighted_cross_entropy_with_logits(labels=labels, logits=logits, pos_weight=0.5),
        tf.nn.log_poisson_loss(tf.constant([0.0, 1.0]), tf.constant([-50.0, 0.0]), compute_full_loss=True),
    )


PADDINGS = ("SAME", "VALID")


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("stride", [1, 2])
@same_as_tf("nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.convolution", rtol=1e-4, atol=1e-5)
def test_convolutions(tf, padding, stride):
    x1, x2, x3 = tf.constant(ramp(2, 7, 3)), tf.constant(ramp(2, 6, 5, 3)), tf.constant(ramp(1, 5, 4, 6, 2))
    return (
        tf.nn.conv1d(x1, tf.constant(ramp(3, 3, 4)), stride=stride, padding=padding),
        tf.nn.conv2d(x2, tf.constant(ramp(3, 2, 3, 4)), strides=stride, padding=padding),
        tf.nn.conv3d(x3, tf.constant(ramp(2, 3, 2, 2, 3)), strides=[1, stride, stride, stride, 1], padding=padding),
        tf.nn.convolution(x2, tf.constant(ramp(2, 2, 3, 2)), strides=stride, padding=padding, dilations=1),
    )


@same_as_tf(
    "nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.convolution", "nn.atrous_conv2d", edge=True, rtol=1e-4, atol=1e-5
)
def test_convolutions_dilated_explicit_and_channels_first(tf):
    x2 = tf.constant(ramp(1, 7, 7, 2))
    return (
        tf.nn.conv1d(tf.constant(ramp(1, 9, 2)), tf.constant(ramp(3, 2, 2)), stride=1, padding="SAME", dilations=2),
        tf.nn.conv2d(x2, tf.constant(ramp(3, 3, 2, 3)), strides=1, padding=[[0, 0], [1, 2], [0, 1], [0, 0]]),
        tf.nn.conv3d(
            tf.constant(ramp(1, 4, 4, 4, 1)),
            tf.constant(ramp(2, 2, 2, 1, 1)),
            strides=[1] * 5,
            padding="SAME",
            dilations=[1, 2, 1, 1, 1],
        ),
        tf.nn.convolution(x2, tf.constant(ramp(3, 3, 2, 1)), padding="SAME", dilations=2),
        tf.nn.atrous_conv2d(x2, tf.constant(ramp(2, 2, 2, 2)), rate=2, padding="SAME"),
    )


@same_as_tf("nn.atrous_conv2d", rtol=1e-4, atol=1e-5)
def test_atrous(tf):
    return tf.nn.atrous_conv2d(tf.constant(ramp(2, 8, 8, 3)), tf.constant(ramp(3, 3, 3, 2)), rate=3, padding="VALID")


@pytest.mark.parametrize("padding", PADDINGS)
@same_as_tf("nn.depthwise_conv2d", "nn.separable_conv2d", rtol=1e-4, atol=1e-5)
def test_depthwise_and_separable(tf, padding):
    x = tf.constant(ramp(2, 6, 6, 3))
    depth = tf.constant(ramp(3, 3, 3, 2))
    return (
        tf.nn.depthwise_conv2d(x, depth, strides=[1, 2, 2, 1], padding=padding),
        tf.nn.separable_conv2d(x, depth, tf.constant(ramp(1, 1, 6, 4)), strides=[1, 1, 1, 1], padding=padding),
    )


@same_as_tf("nn.depthwise_conv2d", "nn.separable_conv2d", edge=True, rtol=1e-4, atol=1e-5)
def test_depthwise_dilated(tf):
    x = tf.constant(ramp(1, 7, 7, 2))
    depth = tf.constant(ramp(2, 2, 2, 1))
    return (
        tf.nn.depthwise_conv2d(x, depth, strides=[1, 1, 1, 1], padding="SAME", dilations=[2, 2]),
        tf.nn.separable_conv2d(
            x, depth, tf.constant(ramp(1, 1, 2, 3)), strides=[1, 1, 1, 1], padding="VALID", dilations=[2, 2]
        ),
    )


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("stride", [1, 2, 3])
@same_as_tf(
    "nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose", "nn.conv_transpose", rtol=1e-4, atol=1e-5
)
def test_transposed_convolutions(tf, padding, stride):
    def size(n, k):
        return n * stride if padding == "SAME" else (n - 1) * stride + k

    x1, x2, x3 = tf.constant(ramp(2, 5, 3)), tf.constant(ramp(1, 4, 3, 2)), tf.constant(ramp(1, 3, 3, 2, 2))
    return (
        tf.nn.conv1d_transpose(x1, tf.constant(ramp(3, 4, 3)), [2, size(5, 3), 4], stride, padding),
        tf.nn.conv2d_transpose(x2, tf.constant(ramp(3, 2, 5, 2)), [1, size(4, 3), size(3, 2), 5], stride, padding),
        tf.nn.conv3d_transpose(
            x3, tf.constant(ramp(2, 2, 2, 3, 2)), [1, size(3, 2), size(3, 2), size(2, 2), 3], stride, padding
        ),
        tf.nn.conv_transpose(x2, tf.constant(ramp(2, 2, 1, 2)), [1, size(4, 2), size(3, 2), 1], stride, padding),
    )


@same_as_tf(
    "nn.conv1d_transpose",
    "nn.conv2d_transpose",
    "nn.conv3d_transpose",
    "nn.conv_transpose",
    edge=True,
    rtol=1e-4,
    atol=1e-5,
)
def test_transposed_convolutions_with_odd_output_sizes(tf):
    x = tf.constant(ramp(1, 3, 3, 2))
    return (
        tf.nn.conv2d_transpose(x, tf.constant(ramp(3, 3, 1, 2)), [1, 5, 6, 1], 2, "SAME"),
        tf.nn.conv2d_transpose(x, tf.constant(ramp(3, 3, 1, 2)), [1, 8, 7, 1], 2, "VALID"),
        tf.nn.conv1d_transpose(tf.constant(ramp(1, 4, 1)), tf.constant(ramp(2, 1, 1)), [1, 7, 1], 2, "SAME"),
        tf.nn.conv3d_transpose(
            tf.constant(ramp(1, 2, 2, 2, 1)), tf.constant(ramp(1, 1, 1, 1, 1)), [1, 3, 3, 3, 1], 2, "SAME"
        ),
        tf.nn.conv_transpose(tf.constant(ramp(1, 4, 2)), tf.constant(ramp(3, 1, 2)), [1, 8, 1], 2, "SAME", dilations=1),
    )


POOLS = (
    "nn.max_pool1d",
    "nn.max_pool2d",
    "nn.max_pool3d",
    "nn.avg_pool1d",
    "nn.avg_pool2d",
    "nn.avg_pool3d",
    "nn.max_pool",
    "nn.avg_pool",
    "nn.pool",
)


@pytest.mark.parametrize("padding", PADDINGS)
@same_as_tf(*POOLS, rtol=1e-5)
def test_pools(tf, padding):
    x1, x2, x3 = tf.constant(ramp(2, 7, 3)), tf.constant(ramp(2, 5, 7, 3)), tf.constant(ramp(1, 5, 4, 3, 2))
    return (
        tf.nn.max_pool1d(x1, 3, 2, padding),
        tf.nn.max_pool2d(x2, 3, 2, padding),
        tf.nn.max_pool3d(x3, 2, 2, padding),
        tf.nn.avg_pool1d(x1, 3, 2, padding),
        tf.nn.avg_pool2d(x2, [2, 3], [2, 1], padding),
        tf.nn.avg_pool3d(x3, 2, 2, padding),
        tf.nn.max_pool(x2, 2, 2, padding),
        tf.nn.avg_pool(x3, 3, 1, padding),
        tf.nn.pool(x2, [2, 2], "AVG", strides=[2, 2], padding=padding),
        tf.nn.pool(x1, [3], "MAX", strides=[1], padding=padding),
    )


@same_as_tf(*POOLS, edge=True)
def test_pools_window_larger_than_input_and_integers(tf):
    x = tf.constant(ramp(1, 2, 2, 1))
    return (
        tf.nn.max_pool1d(tf.constant([[[1], [5], [3]]], dtype=tf.int32), 2, 1, "SAME"),
        tf.nn.max_pool2d(x, 3, 3, "SAME"),
        tf.nn.max_pool3d(tf.constant(ramp(1, 1, 2, 2, 1)), 3, 3, "SAME"),
        tf.nn.avg_pool1d(tf.constant(ramp(1, 2, 1)), 3, 3, "SAME"),
        tf.nn.avg_pool2d(x, 3, 3, "SAME"),
        tf.nn.avg_pool3d(tf.constant(ramp(1, 1, 2, 2, 1)), 3, 3, "SAME"),
        tf.nn.max_pool(tf.constant(ramp(1, 3, 1)), 5, 1, "SAME"),
        tf.nn.avg_pool(tf.constant(ramp(1, 3, 1)), 5, 1, "SAME"),
        tf.nn.pool(x, [3, 3], "MAX", padding="SAME"),
    )


NORMS = (
    "nn.batch_normalization",
    "nn.batch_norm_with_global_normalization",
    "nn.moments",
    "nn.weighted_moments",
    "nn.sufficient_statistics",
    "nn.normalize_moments",
    "nn.local_response_normalization",
    "nn.lrn",
    "nn.l2_normalize",
    "nn.bias_add",
)


@same_as_tf(*NORMS, rtol=1e-5, atol=1e-6)
def test_normalisation(tf):
    x = tf.constant(ramp(2, 3, 3, 8, scale=2.0))
    mean, var = tf.nn.moments(x, axes=[0, 1, 2])
    count, mss, vss, shift = tf.nn.sufficient_statistics(x, axes=[0, 1], shift=tf.constant(0.5))
    return (
        tf.nn.batch_normalization(x, mean, var, tf.constant(ramp(8)), tf.constant(ramp(8) + 2), 1e-3),
        tf.nn.batch_norm_with_global_normalization(
            x, mean, var, tf.constant(ramp(8)), tf.constant(ramp(8) + 2), 1e-3, True
        ),
        (mean, var),
        tf.nn.weighted_moments(x, axes=[1, 2], frequency_weights=tf.constant(ramp(2, 3, 3, 1) + 1.5)),
        (count, mss, vss, shift),
        tf.nn.normalize_moments(count, mss, vss, shift),
        tf.nn.local_response_normalization(x, depth_radius=2, bias=1.5, alpha=0.3, beta=0.75),
        tf.nn.lrn(x),
        tf.nn.l2_normalize(x, axis=-1),
        tf.nn.bias_add(x, tf.constant(ramp(8))),
    )


@same_as_tf(*NORMS, edge=True, rtol=1e-5, atol=1e-6)
def test_normalisation_edges(tf):
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    return (
        tf.nn.batch_normalization(x, tf.constant(1.0), tf.constant(0.0), None, None, 1e-3),
        tf.nn.batch_norm_with_global_normalization(
            tf.zeros([1, 1, 1, 2]), tf.zeros([2]), tf.ones([2]), tf.ones([2]), tf.ones([2]), 0.0, False
        ),
        tf.nn.moments(x, axes=[0], keepdims=True),
        tf.nn.weighted_moments(x, axes=[1], frequency_weights=tf.zeros([2, 2])),
        tf.nn.sufficient_statistics(x, axes=[1], keepdims=True)[:3],
        tf.nn.normalize_moments(tf.constant(2.0), tf.constant([4.0]), tf.constant([10.0]), None),
        tf.nn.local_response_normalization(tf.zeros([1, 1, 1, 3]), depth_radius=0),
        tf.nn.lrn(tf.ones([1, 1, 1, 1])),
        tf.nn.l2_normalize(tf.zeros([3])),
        tf.nn.bias_add(tf.zeros([2, 3, 4]), tf.constant([1.0, 2.0, 3.0]), data_format="NCHW"),
    )


SHUFFLES = ("nn.depth_to_space", "nn.space_to_depth")


@same_as_tf(*SHUFFLES)
def test_depth_and_space(tf):
    x = tf.constant(ramp(2, 2, 3, 8))
    return tf.nn.depth_to_space(x, 2), tf.nn.space_to_depth(tf.constant(ramp(1, 4, 6, 2)), 2)


@same_as_tf(*SHUFFLES, edge=True)
def test_depth_to_space_needs_divisible_channels(tf):
    return tf.nn.depth_to_space(tf.zeros([1, 2, 2, 3]), 2)


@same_as_tf("nn.embedding_lookup", "nn.dropout", "nn.top_k", "nn.in_top_k", "nn.zero_fraction")
def test_lookups_and_selection(tf):
    table = tf.constant(ramp(5, 3))
    x = tf.constant(ramp(2, 6))
    values, indices = tf.nn.top_k(x, k=3)
    return (
        tf.nn.embedding_lookup(table, tf.constant([[4, 0], [1, 1]])),
        tf.nn.dropout(x, rate=0.0),
        values,
        indices,
        tf.nn.in_top_k(tf.constant([1, 5]), x, 2),
        tf.nn.zero_fraction(tf.nn.relu(x)),
    )


@same_as_tf("nn.embedding_lookup", "nn.dropout", "nn.top_k", "nn.in_top_k", "nn.zero_fraction", edge=True)
def test_lookups_and_selection_edges(tf):
    return (
        tf.nn.embedding_lookup(tf.constant(ramp(3, 2)), tf.constant([], dtype=tf.int32)),
        tf.nn.dropout(tf.zeros([0, 2]), rate=0.5),
        tf.nn.top_k(tf.constant([1.0, 1.0, 0.0]), k=2).indices,
        tf.nn.in_top_k(tf.constant([2]), tf.constant([[1.0, 1.0, 1.0]]), 1),
        tf.nn.zero_fraction(tf.zeros([4])),
    )


@same_as_tf("nn.dropout", values=False)
def test_dropout_keeps_shape_and_dtype(tf):
    return tf.nn.dropout(tf.ones([4, 5]), rate=0.5)


@same_as_tf("nn.dropout")
def test_dropout_noise_shape_makes_one_decision_per_entry(tf):
    # the draws differ between frameworks; what TF's rule fixes is compared: one keep/drop
    # decision per row (noise_shape [64, 1], None taking x's size), kept values x / (1 - rate)
    y = tf.nn.dropout(tf.ones([64, 5]), rate=0.5, noise_shape=[64, 1])
    z = tf.nn.dropout(tf.ones([64, 5]), rate=0.5, noise_shape=[None, 1])
    return (
        tf.reduce_all(tf.reduce_max(y, axis=1) == tf.reduce_min(y, axis=1)),
        tf.reduce_all(tf.reduce_max(z, axis=1) == tf.reduce_min(z, axis=1)),
        tf.reduce_all((y == 0.0) | (y == 2.0)),
        y.shape.as_list(),
    )
