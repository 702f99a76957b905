"""space_to_batch & co, tf.nn's morphology, max_pool_with_argmax and CTC functions against TensorFlow 2.21."""

from __future__ import annotations

import numpy as np
from tf_oracle import same_as_tf

SPACE = ("space_to_batch", "space_to_batch_nd", "batch_to_space", "nn.space_to_batch")


def _image(tf, shape):
    return tf.reshape(tf.range(int(np.prod(shape)), dtype=tf.float32), shape)


@same_as_tf(*SPACE)
def test_space_to_batch_round_trip(tf):
    x = _image(tf, [2, 4, 6, 3])
    y = tf.space_to_batch(x, [2, 3], [[0, 0], [0, 0]])
    z = tf.space_to_batch_nd(_image(tf, [1, 3, 5, 1]), [2, 2], [[1, 0], [0, 1]])
    n = tf.nn.space_to_batch(x, [2, 2], [[1, 1], [0, 2]])
    return y, z, n, tf.batch_to_space(y, [2, 3], [[0, 0], [0, 0]]), tf.batch_to_space(z, [2, 2], [[1, 0], [0, 1]])


@same_as_tf(*SPACE, edge=True)
def test_space_to_batch_not_divisible(tf):
    out = [tf.space_to_batch(tf.zeros([0, 2, 2, 1]), [2, 2], [[0, 0], [0, 0]])]
    try:
        tf.space_to_batch(_image(tf, [1, 3, 3, 1]), [2, 2], [[0, 0], [0, 0]])
    except (tf.errors.InvalidArgumentError, ValueError) as error:
        out.append(type(error).__name__ in ("InvalidArgumentError", "ValueError"))
    return out


@same_as_tf("required_space_to_batch_paddings")
def test_required_space_to_batch_paddings(tf):
    return (
        tf.required_space_to_batch_paddings([5, 7], [2, 3]),
        tf.required_space_to_batch_paddings(tf.constant([4, 4]), [2, 2], base_paddings=[[1, 0], [1, 2]]),
    )


@same_as_tf("required_space_to_batch_paddings", edge=True)
def test_required_space_to_batch_paddings_already_divisible(tf):
    return tf.required_space_to_batch_paddings([6, 0], [3, 2])


MORPHOLOGY = ("nn.dilation2d", "nn.erosion2d")


@same_as_tf(*MORPHOLOGY)
def test_dilation_and_erosion(tf):
    x = tf.sin(_image(tf, [2, 5, 6, 2]))
    w = tf.cos(_image(tf, [3, 2, 2]))
    return (
        tf.nn.dilation2d(x, w, strides=[1, 1, 1, 1], padding="SAME", data_format="NHWC", dilations=[1, 1, 1, 1]),
        tf.nn.dilation2d(x, w, strides=[1, 2, 1, 1], padding="VALID", data_format="NHWC", dilations=[1, 1, 2, 1]),
        tf.nn.erosion2d(x, w, strides=[1, 1, 1, 1], padding="SAME", data_format="NHWC", dilations=[1, 1, 1, 1]),
        tf.nn.erosion2d(x, w, strides=[1, 2, 2, 1], padding="VALID", data_format="NHWC", dilations=[1, 2, 1, 1]),
    )


@same_as_tf(*MORPHOLOGY, edge=True)
def test_morphology_of_an_empty_batch(tf):
    w = tf.zeros([2, 2, 1])
    x = tf.zeros([0, 4, 4, 1])
    return (
        tf.nn.dilation2d(x, w, [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1]),
        tf.nn.erosion2d(x, w, [1, 1, 1, 1], "VALID", "NHWC", [1, 1, 1, 1]),
    )


@same_as_tf("nn.max_pool_with_argmax")
def test_max_pool_with_argmax(tf):
    x = tf.sin(_image(tf, [2, 5, 5, 3]) * 0.37)
    return (
        tf.nn.max_pool_with_argmax(x, 2, 2, "VALID"),
        tf.nn.max_pool_with_argmax(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME", include_batch_in_index=True),
        tf.nn.max_pool_with_argmax(x, 2, 1, "SAME", output_dtype=tf.int32),
    )


@same_as_tf("nn.max_pool_with_argmax", edge=True)
def test_max_pool_with_argmax_ties_pick_the_first(tf):
    return tf.nn.max_pool_with_argmax(tf.ones([1, 4, 4, 2]), 2, 2, "VALID", include_batch_in_index=True)


CTC = ("nn.ctc_loss",)


def _logits(tf, time=6, batch=2, classes=5):
    return tf.sin(tf.reshape(tf.range(time * batch * classes, dtype=tf.float32), [time, batch, classes]) * 0.7)


@same_as_tf(*CTC)
def test_ctc_loss(tf):
    logits = _logits(tf)
    labels = tf.constant([[1, 2, 2], [3, 1, 0]])
    return (
        tf.nn.ctc_loss(labels, logits, tf.constant([3, 2]), tf.constant([6, 5]), blank_index=0),
        tf.nn.ctc_loss(labels, logits, tf.constant([3, 2]), tf.constant([6, 6]), blank_index=-1),
        tf.nn.ctc_loss(
            labels,
            tf.transpose(logits, [1, 0, 2]),
            tf.constant([3, 2]),
            tf.constant([6, 6]),
            logits_time_major=False,
            blank_index=4,
        ),
    )


@same_as_tf(*CTC, edge=True)
def test_ctc_loss_repeats_and_padding_past_the_length(tf):
    logits = _logits(tf, time=5, batch=2)
    return tf.nn.ctc_loss(
        tf.constant([[2, 2, 9], [1, 7, 7]]), logits, tf.constant([2, 1]), tf.constant([5, 3]), blank_index=0
    )


DECODE = ("nn.ctc_greedy_decoder",)


@same_as_tf(*DECODE)
def test_ctc_greedy_decoder(tf):
    logits = _logits(tf, time=8, batch=3)
    return (
        tf.nn.ctc_greedy_decoder(logits, tf.constant([8, 5, 8])),
        tf.nn.ctc_greedy_decoder(logits, tf.constant([8, 8, 3]), merge_repeated=False),
        tf.nn.ctc_greedy_decoder(logits, tf.constant([8, 8, 8]), blank_index=0),
    )


@same_as_tf(*DECODE, edge=True)
def test_ctc_greedy_decoder_all_blank(tf):
    logits = tf.one_hot(tf.fill([4, 2], 4), 5)
    return tf.nn.ctc_greedy_decoder(logits, tf.constant([4, 0]))


@same_as_tf("nn.collapse_repeated", "nn.ctc_unique_labels")
def test_collapse_repeated_and_unique_labels(tf):
    labels = tf.constant([[1, 1, 2, 2, 3, 1], [4, 4, 4, 5, 5, 0]])
    return tf.nn.collapse_repeated(labels, tf.constant([6, 5])), tf.nn.ctc_unique_labels(labels)


@same_as_tf("nn.collapse_repeated", "nn.ctc_unique_labels", edge=True)
def test_collapse_repeated_and_unique_labels_short_rows(tf):
    labels = tf.constant([[7, 7, 7], [0, 0, 0]], tf.int64)
    return tf.nn.collapse_repeated(labels, tf.constant([1, 0])), tf.nn.ctc_unique_labels(labels)


DROPOUT = ("nn.experimental.general_dropout", "nn.experimental.stateless_dropout")


@same_as_tf(*DROPOUT)
def test_dropout_with_a_sampler_and_a_seed(tf):
    x = tf.reshape(tf.range(1, 13, dtype=tf.float32), [3, 4])
    samples = tf.reshape(tf.range(12, dtype=tf.float32) / 12.0, [3, 4])
    general = tf.nn.experimental.general_dropout(x, 0.5, lambda shape, dtype: tf.reshape(samples, shape))
    columns = tf.nn.experimental.general_dropout(
        x, 0.25, lambda shape, dtype: tf.constant([[0.1, 0.9, 0.3, 0.2]]), noise_shape=[1, 4]
    )
    a = tf.nn.experimental.stateless_dropout(x, 0.5, seed=[1, 2])
    b = tf.nn.experimental.stateless_dropout(x, 0.5, seed=[1, 2])
    kept = tf.boolean_mask(a, a != 0)
    return (
        general,
        columns,
        bool(tf.reduce_all(a == b)),
        bool(tf.reduce_all(tf.logical_or(a == 0, a == 2 * x))),
        kept.dtype == tf.float32,
    )


@same_as_tf(*DROPOUT, edge=True)
def test_dropout_rate_zero_and_bad_rates(tf):
    x = tf.constant([1.0, 2.0])
    out = [
        tf.nn.experimental.stateless_dropout(x, 0.0, seed=[3, 4]),
        tf.nn.experimental.stateless_dropout(tf.zeros([0]), 0.3, seed=[1, 1]),
    ]
    for rate in (1.0, -0.1):
        try:
            tf.nn.experimental.stateless_dropout(x, rate, seed=[1, 2])
        except ValueError:
            out.append(f"rate {rate}")
    try:
        tf.nn.experimental.general_dropout(tf.constant([1, 2]), 0.5, lambda shape, dtype: tf.zeros(shape))
    except ValueError:
        out.append("ints")
    return out


BACKPROP = (  # tf.conv2d_backprop_*_v2 are left out: TF 2.21 has no CPU kernel for them
    "nn.depthwise_conv2d_backprop_input",
    "nn.depthwise_conv2d_backprop_filter",
    "nn.atrous_conv2d_transpose",
)


@same_as_tf(*BACKPROP)
def test_convolution_backprops(tf):
    x = tf.sin(_image(tf, [2, 5, 6, 3]) * 0.3)
    dw = tf.cos(_image(tf, [2, 2, 3, 2]) * 0.5)
    dyd = tf.sin(_image(tf, [2, 5, 6, 6]) * 0.1)
    return (
        tf.nn.depthwise_conv2d_backprop_input([2, 5, 6, 3], dw, dyd, [1, 1, 1, 1], "SAME"),
        tf.nn.depthwise_conv2d_backprop_filter(x, [2, 2, 3, 2], dyd, [1, 1, 1, 1], "SAME"),
        tf.nn.atrous_conv2d_transpose(tf.sin(_image(tf, [1, 4, 4, 2])), tf.ones([3, 3, 3, 2]), [1, 4, 4, 3], 2, "SAME"),
    )


@same_as_tf(*BACKPROP, edge=True)
def test_convolution_backprops_valid_and_dilated(tf):
    x = tf.sin(_image(tf, [1, 6, 6, 2]))
    return (
        tf.nn.depthwise_conv2d_backprop_input(
            [1, 6, 6, 2], tf.ones([3, 3, 2, 1]), tf.ones([1, 4, 4, 2]), [1, 1, 1, 1], "VALID"
        ),
        tf.nn.depthwise_conv2d_backprop_filter(x, [3, 3, 2, 1], tf.ones([1, 4, 4, 2]), [1, 1, 1, 1], "VALID"),
        tf.nn.atrous_conv2d_transpose(tf.ones([1, 2, 2, 1]), tf.ones([2, 2, 1, 1]), [1, 4, 4, 1], 2, "VALID"),
    )
