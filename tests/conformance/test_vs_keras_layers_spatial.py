"""Keras's 3-D, transposed, separable-1-D, adaptive-pooling, ConvLSTM and Keras-2-only layers, unison
against Keras 3.15 and tf_keras 2.21 on TensorFlow 2.21 (issue 35).

Each layer is built on the same input in both, given the same deterministic weights (``np.sin`` of
a range, reshaped to each weight's shape, set with ``set_weights`` in Keras's ``get_weights()``
order: Keras's weights, transferred) and compared on: its weights' shapes, its outputs, the
gradient of their sum with respect to the input, ``compute_output_shape``, ``count_params()`` and
the outputs of the layer rebuilt by ``from_config(get_config())``. Rows cover ``"same"``/``"valid"``
padding, strides, dilation and ``data_format="channels_first"``.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")
_KERAS2_NAMES = frozenset(
    line.strip()
    for line in open(__file__.rsplit("/", 1)[0] + "/api/tf_keras.txt", encoding="utf-8")
    if line.strip() and not line.startswith("#")
)
CF = {"data_format": "channels_first"}


def _keras2_has(dialect: str, name: str) -> None:
    """Skip a Keras 3 layer's row in the Keras 2 run when tf_keras has no such layer."""
    if dialect == "tf_keras" and f"layers.{name}" not in _KERAS2_NAMES:
        pytest.skip(f"tf_keras has no layers.{name}")


# (name, constructor kwargs, input shape, also run with training=True)
SINGLE = (
    ("Conv1DTranspose", {"filters": 3, "kernel_size": 3, "strides": 2}, (2, 4, 2), False),
    ("Convolution1DTranspose", {"filters": 2, "kernel_size": 2, "padding": "same"}, (2, 5, 3), False),
    ("Conv3D", {"filters": 3, "kernel_size": 2, "padding": "same"}, (2, 3, 4, 5, 2), False),
    ("Convolution3D", {"filters": 2, "kernel_size": (1, 2, 3), "dilation_rate": 2}, (1, 4, 5, 6, 2), False),
    ("Conv3DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2}, (1, 2, 3, 3, 2), False),
    ("Convolution3DTranspose", {"filters": 2, "kernel_size": 2, "padding": "same"}, (1, 2, 3, 3, 2), False),
    ("SeparableConv1D", {"filters": 3, "kernel_size": 3, "depth_multiplier": 2}, (2, 6, 2), False),
    ("SeparableConvolution1D", {"filters": 2, "kernel_size": 2, "dilation_rate": 2}, (2, 6, 3), False),
    ("DepthwiseConv1D", {"kernel_size": 3, "depth_multiplier": 2}, (2, 6, 3), False),
    ("AveragePooling3D", {"pool_size": 2}, (2, 4, 4, 4, 2), False),
    ("AvgPool3D", {"pool_size": (1, 2, 3), "strides": 1}, (1, 3, 4, 5, 2), False),
    ("MaxPooling3D", {"pool_size": 2}, (2, 4, 4, 4, 2), False),
    ("MaxPool3D", {"pool_size": (2, 1, 2), "strides": (1, 2, 1)}, (1, 3, 4, 5, 2), False),
    ("GlobalAveragePooling3D", {}, (2, 3, 3, 3, 2), False),
    ("GlobalAvgPool3D", {}, (2, 2, 3, 4, 2), False),
    ("GlobalMaxPooling3D", {}, (2, 3, 3, 3, 2), False),
    ("GlobalMaxPool3D", {}, (2, 2, 3, 4, 2), False),
    ("Cropping3D", {"cropping": ((1, 0), (0, 2), (1, 1))}, (2, 3, 4, 5, 2), False),
    ("ZeroPadding3D", {"padding": ((1, 0), (0, 2), (1, 1))}, (2, 2, 3, 2, 2), False),
    ("UpSampling3D", {"size": (1, 2, 3)}, (2, 2, 3, 2, 2), False),
    ("SpatialDropout3D", {"rate": 0.5}, (2, 2, 2, 2, 3), False),
    ("ConvLSTM1D", {"filters": 2, "kernel_size": 3, "return_sequences": True}, (2, 3, 6, 2), False),
    ("ConvLSTM2D", {"filters": 2, "kernel_size": 3, "padding": "same"}, (2, 3, 4, 4, 2), False),
    ("ConvLSTM3D", {"filters": 2, "kernel_size": 2, "return_sequences": True}, (1, 2, 3, 3, 3, 2), False),
)

# Edge cases: a batch of 1 (or 0), strides with "same" padding, channels_first, states.
SINGLE_EDGE = (
    ("Conv1DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same", **CF}, (1, 3, 4), False),
    (
        "Convolution1DTranspose",
        {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same", "output_padding": 1},
        (1, 4, 2),
        False,
    ),
    # (Keras 3.15 adds a channels-first Conv3D's bias along the last axis when its size is `filters`)
    ("Conv3D", {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same", **CF}, (1, 2, 5, 4, 5), False),
    ("Convolution3D", {"filters": 4, "kernel_size": 1, "groups": 2, "use_bias": False}, (1, 2, 2, 2, 4), False),
    (
        "Conv3DTranspose",
        {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same", **CF},
        (1, 2, 2, 3, 2),
        False,
    ),
    (
        "Convolution3DTranspose",
        {"filters": 2, "kernel_size": 3, "strides": (1, 2, 2), "output_padding": (0, 1, 0)},
        (1, 2, 2, 2, 2),
        False,
    ),
    ("SeparableConv1D", {"filters": 3, "kernel_size": 3, "strides": 2, "padding": "same", **CF}, (1, 2, 7), False),
    ("SeparableConvolution1D", {"filters": 2, "kernel_size": 2, "use_bias": False}, (1, 5, 2), False),
    ("DepthwiseConv1D", {"kernel_size": 3, "strides": 2, "padding": "same", **CF}, (1, 3, 7), False),
    ("AveragePooling3D", {"pool_size": 2, "strides": 2, "padding": "same"}, (1, 3, 5, 3, 2), False),
    ("AvgPool3D", {"pool_size": 2, **CF}, (1, 2, 4, 4, 4), False),
    ("MaxPooling3D", {"pool_size": 3, "strides": 2, "padding": "same"}, (1, 3, 5, 4, 2), False),
    ("MaxPool3D", {"pool_size": 2, "padding": "same", **CF}, (1, 2, 3, 3, 3), False),
    ("GlobalAveragePooling3D", {"keepdims": True}, (1, 2, 2, 2, 3), False),
    ("GlobalAvgPool3D", CF, (1, 3, 2, 2, 2), False),
    ("GlobalMaxPooling3D", {"keepdims": True}, (1, 2, 2, 2, 3), False),
    ("GlobalMaxPool3D", CF, (1, 3, 2, 2, 2), False),
    ("Cropping3D", {"cropping": 1, **CF}, (1, 2, 3, 4, 5), False),
    ("ZeroPadding3D", {"padding": 1, **CF}, (1, 2, 2, 2, 2), False),
    ("UpSampling3D", {"size": 2, **CF}, (1, 2, 2, 1, 2), False),
    ("SpatialDropout3D", {"rate": 0.0}, (1, 2, 2, 2, 3), True),
    (
        "ConvLSTM1D",
        {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same", "return_state": True, **CF},
        (1, 3, 2, 7),
        False,
    ),
    (
        "ConvLSTM2D",
        {"filters": 3, "kernel_size": 2, "go_backwards": True, "return_sequences": True, "unit_forget_bias": False},
        (1, 3, 4, 3, 2),
        False,
    ),
    ("ConvLSTM3D", {"filters": 2, "kernel_size": 2, "padding": "same", **CF}, (1, 2, 2, 2, 3, 2), False),
)

SINGLE_NAMES = (
    "keras:layers.Conv1DTranspose",
    "keras:layers.Convolution1DTranspose",
    "keras:layers.Conv3D",
    "keras:layers.Convolution3D",
    "keras:layers.Conv3DTranspose",
    "keras:layers.Convolution3DTranspose",
    "keras:layers.SeparableConv1D",
    "keras:layers.SeparableConvolution1D",
    "keras:layers.DepthwiseConv1D",
    "keras:layers.AveragePooling3D",
    "keras:layers.AvgPool3D",
    "keras:layers.MaxPooling3D",
    "keras:layers.MaxPool3D",
    "keras:layers.GlobalAveragePooling3D",
    "keras:layers.GlobalAvgPool3D",
    "keras:layers.GlobalMaxPooling3D",
    "keras:layers.GlobalMaxPool3D",
    "keras:layers.Cropping3D",
    "keras:layers.ZeroPadding3D",
    "keras:layers.UpSampling3D",
    "keras:layers.SpatialDropout3D",
    "keras:layers.ConvLSTM1D",
    "keras:layers.ConvLSTM2D",
    "keras:layers.ConvLSTM3D",
)

# More variants of the convolutions (ordinary cases): padding, strides, dilation, both formats.
MORE = (
    ("Conv3D", {"filters": 2, "kernel_size": (2, 3, 2), "strides": (1, 2, 2)}, (1, 3, 5, 5, 2), False),
    (
        "Conv3D",
        {"filters": 2, "kernel_size": 2, "dilation_rate": (1, 2, 1), "padding": "same", **CF},
        (1, 2, 3, 4, 5),
        False,
    ),
    ("Conv1DTranspose", {"filters": 2, "kernel_size": 3, "dilation_rate": 2, **CF}, (2, 3, 4), False),
    (
        "Conv3DTranspose",
        {"filters": 2, "kernel_size": (2, 3, 1), "strides": (1, 2, 2), "padding": "same"},
        (1, 2, 3, 2, 2),
        False,
    ),
    (
        "SeparableConv1D",
        {"filters": 2, "kernel_size": 3, "padding": "same", "depth_multiplier": 2, **CF},
        (2, 3, 5),
        False,
    ),
    ("DepthwiseConv1D", {"kernel_size": 2, "dilation_rate": 2, "padding": "same"}, (2, 6, 2), False),
    ("AveragePooling3D", {"pool_size": (2, 3, 2), "strides": 1, "padding": "same", **CF}, (1, 2, 3, 4, 3), False),
    (
        "ConvLSTM2D",
        {"filters": 2, "kernel_size": 3, "padding": "same", "return_state": True, **CF},
        (1, 2, 2, 4, 3),
        False,
    ),
    ("ConvLSTM2D", {"filters": 2, "kernel_size": 2, "dilation_rate": 2, "activation": "relu"}, (2, 2, 5, 5, 1), False),
)
MORE_NAMES = (
    "keras:layers.Conv3D",
    "keras:layers.Conv1DTranspose",
    "keras:layers.Conv3DTranspose",
    "keras:layers.SeparableConv1D",
    "keras:layers.DepthwiseConv1D",
    "keras:layers.AveragePooling3D",
    "keras:layers.ConvLSTM2D",
)


def _fill(weights: list) -> list:
    """Deterministic weights of the same shapes (sin of a range keeps them small and distinct)."""
    out = []
    for i, w in enumerate(weights):
        w = np.asarray(w)
        out.append((np.sin(np.arange(w.size) + i) * 0.5).reshape(w.shape).astype(w.dtype))
    return out


def _shape(shape) -> list:
    """A shape as a list of ints (-1 for an unknown dimension), comparable across both sides."""
    if hasattr(shape, "as_list"):  # Keras 2's TensorShape
        shape = shape.as_list()
    if any(isinstance(s, (tuple, list)) or hasattr(s, "as_list") for s in shape):  # several outputs
        return [_shape(s) for s in shape]
    return [-1 if d is None else int(d) for d in shape]


def _sum(tf, out):
    """The sum of every output (a list for layers that return states)."""
    if isinstance(out, (list, tuple)):
        return tf.add_n([tf.reduce_sum(o) for o in out])
    return tf.reduce_sum(out)


def _dialect_kwargs(dialect: str, name: str, kwargs: dict) -> dict:
    """tf_keras's ConvLSTMs default to ``recurrent_activation="hard_sigmoid"``, Keras 3's (and unison's)
    to ``"sigmoid"``: the Keras 2 run names it (see test_conv_lstm_default_recurrent_activation)."""
    if dialect == "tf_keras" and name.startswith("ConvLSTM"):
        return {"recurrent_activation": "sigmoid", **kwargs}
    return kwargs


def _run(tf, name: str, kwargs: dict, shape: tuple, training: bool) -> dict:
    x = tf.constant((np.sin(np.arange(int(np.prod(shape)))) * 2.0).reshape(shape).astype(np.float32))
    layer = getattr(tf.keras.layers, name)(**kwargs)
    layer(x)  # builds the weights
    weights = _fill(layer.get_weights())
    layer.set_weights(weights)
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = layer(x, training=False)
        total = _sum(tf, out)
    result = {
        "out": out,
        "grad": tape.gradient(total, x),
        "count_params": layer.count_params(),
        "weight_shapes": [list(np.shape(w)) for w in layer.get_weights()],
    }
    if training:
        result["train"] = layer(x, training=True)
    try:
        result["output_shape"] = _shape(layer.compute_output_shape(tuple(shape)))
    except NotImplementedError:
        result["output_shape"] = None
    clone = type(layer).from_config(layer.get_config())
    clone(x)
    clone.set_weights(weights)
    result["clone_out"] = clone(x, training=False)
    return result


@pytest.mark.parametrize(("name", "kwargs", "shape", "training"), SINGLE)
@same_as_tf(*SINGLE_NAMES, dialects=BOTH, rtol=1e-4, atol=1e-5)
def test_single_input_layer(tf, name, kwargs, shape, training, dialect):
    _keras2_has(dialect, name)
    return _run(tf, name, _dialect_kwargs(dialect, name, kwargs), shape, training)


@pytest.mark.parametrize(("name", "kwargs", "shape", "training"), SINGLE_EDGE)
@same_as_tf(*SINGLE_NAMES, edge=True, dialects=BOTH, rtol=1e-4, atol=1e-5)
def test_single_input_layer_edge(tf, name, kwargs, shape, training, dialect):
    _keras2_has(dialect, name)
    return _run(tf, name, _dialect_kwargs(dialect, name, kwargs), shape, training)


@pytest.mark.parametrize(("name", "kwargs", "shape", "training"), MORE)
@same_as_tf(*MORE_NAMES, dialects=BOTH, rtol=1e-4, atol=1e-5)
def test_more_convolution_variants(tf, name, kwargs, shape, training, dialect):
    _keras2_has(dialect, name)
    return _run(tf, name, _dialect_kwargs(dialect, name, kwargs), shape, training)


@same_as_tf(
    "keras:layers.ConvLSTM2D",
    differs="unison follows Keras 3: recurrent_activation defaults to 'sigmoid'; tf_keras's ConvLSTM1D/2D/3D "
    "default to 'hard_sigmoid' (pass recurrent_activation='hard_sigmoid' for Keras 2's)",
    rtol=1e-4,
    atol=1e-5,
)
def test_conv_lstm_default_recurrent_activation(tf):
    return _run(tf, "ConvLSTM2D", {"filters": 2, "kernel_size": 2}, (1, 2, 3, 3, 2), False)


def test_the_tables_cover_the_listed_names():
    assert [r[0] for r in SINGLE] == [n.split(".")[-1] for n in SINGLE_NAMES]
    assert [r[0] for r in SINGLE_EDGE] == [n.split(".")[-1] for n in SINGLE_NAMES]
    assert {r[0] for r in MORE} == {n.split(".")[-1] for n in MORE_NAMES}


# Keras 2 only (Keras 3 dropped them): (name, kwargs, input shape)
KERAS2 = (
    ("LocallyConnected1D", {"filters": 3, "kernel_size": 3, "strides": 2}, (2, 7, 2)),
    ("LocallyConnected2D", {"filters": 2, "kernel_size": (2, 3), "strides": (1, 2)}, (2, 4, 5, 3)),
    ("ThresholdedReLU", {"theta": 0.5}, (2, 3, 4)),
)
KERAS2_EDGE = (
    ("LocallyConnected1D", {"filters": 2, "kernel_size": 2, "use_bias": True, **CF}, (1, 3, 5)),
    ("LocallyConnected2D", {"filters": 3, "kernel_size": 2, "activation": "relu", **CF}, (1, 2, 3, 4)),
    ("ThresholdedReLU", {"theta": 0.0}, (0, 4)),
)
KERAS2_NAMES = (
    "tf_keras:layers.LocallyConnected1D",
    "tf_keras:layers.LocallyConnected2D",
    "tf_keras:layers.ThresholdedReLU",
)


@pytest.mark.parametrize(("name", "kwargs", "shape"), KERAS2)
@same_as_tf(*KERAS2_NAMES, dialects=("tf_keras",), rtol=1e-4, atol=1e-5)
def test_keras2_only_layer(tf, name, kwargs, shape):
    return _run(tf, name, kwargs, shape, False)


@pytest.mark.parametrize(("name", "kwargs", "shape"), KERAS2_EDGE)
@same_as_tf(*KERAS2_NAMES, edge=True, dialects=("tf_keras",), rtol=1e-4, atol=1e-5)
def test_keras2_only_layer_edge(tf, name, kwargs, shape):
    return _run(tf, name, kwargs, shape, False)


def test_the_keras2_tables_cover_the_listed_names():
    assert [r[0] for r in KERAS2] == [n.split(".")[-1] for n in KERAS2_NAMES]
    assert [r[0] for r in KERAS2_EDGE] == [n.split(".")[-1] for n in KERAS2_NAMES]


# Keras 3 only (tf_keras has no adaptive pooling): windows [floor(i * n / out), ceil((i + 1) * n / out)).
ADAPTIVE = (
    ("AdaptiveAveragePooling1D", {"output_size": 3}, (2, 7, 2), False),
    ("AdaptiveAveragePooling2D", {"output_size": (2, 3)}, (2, 5, 7, 2), False),
    ("AdaptiveAveragePooling3D", {"output_size": 2}, (1, 5, 4, 3, 2), False),
    ("AdaptiveMaxPooling1D", {"output_size": 3}, (2, 7, 2), False),
    ("AdaptiveMaxPooling2D", {"output_size": (2, 3)}, (2, 5, 7, 2), False),
    ("AdaptiveMaxPooling3D", {"output_size": 2}, (1, 5, 4, 3, 2), False),
)
ADAPTIVE_EDGE = (
    ("AdaptiveAveragePooling1D", {"output_size": 4, **CF}, (1, 2, 6), False),
    ("AdaptiveAveragePooling2D", {"output_size": 3, **CF}, (1, 2, 4, 5), False),
    ("AdaptiveAveragePooling3D", {"output_size": (1, 2, 3)}, (1, 3, 5, 6, 1), False),
    ("AdaptiveMaxPooling1D", {"output_size": 4, **CF}, (1, 2, 6), False),
    ("AdaptiveMaxPooling2D", {"output_size": 3, **CF}, (1, 2, 4, 5), False),
    ("AdaptiveMaxPooling3D", {"output_size": (1, 2, 3)}, (1, 3, 5, 6, 1), False),
)
ADAPTIVE_NAMES = (
    "keras:layers.AdaptiveAveragePooling1D",
    "keras:layers.AdaptiveAveragePooling2D",
    "keras:layers.AdaptiveAveragePooling3D",
    "keras:layers.AdaptiveMaxPooling1D",
    "keras:layers.AdaptiveMaxPooling2D",
    "keras:layers.AdaptiveMaxPooling3D",
)


@pytest.mark.parametrize(("name", "kwargs", "shape", "training"), ADAPTIVE)
@same_as_tf(*ADAPTIVE_NAMES, rtol=1e-4, atol=1e-5)
def test_adaptive_pooling(tf, name, kwargs, shape, training):
    return _run(tf, name, kwargs, shape, training)


@pytest.mark.parametrize(("name", "kwargs", "shape", "training"), ADAPTIVE_EDGE)
@same_as_tf(*ADAPTIVE_NAMES, edge=True, rtol=1e-4, atol=1e-5)
def test_adaptive_pooling_edge(tf, name, kwargs, shape, training):
    return _run(tf, name, kwargs, shape, training)


def test_the_adaptive_tables_cover_the_listed_names():
    assert [r[0] for r in ADAPTIVE] == [n.split(".")[-1] for n in ADAPTIVE_NAMES]
    assert [r[0] for r in ADAPTIVE_EDGE] == [n.split(".")[-1] for n in ADAPTIVE_NAMES]


# An input of the wrong rank: both raise ValueError (Keras's input_spec; unison's own check). Keras 3's
# Conv1DTranspose raises IndexError there and tf_keras's SeparableConv1D InvalidArgumentError: unison's
# ValueError names the expected rank (tests/unit/test_keras_layers_spatial.py).
WRONG_RANK = (
    ("Conv3D", {"filters": 2, "kernel_size": 2}, (1, 4, 4, 2)),
    ("DepthwiseConv1D", {"kernel_size": 2}, (1, 4, 4, 2)),
    ("MaxPooling3D", {}, (1, 4, 4, 2)),
    ("Cropping3D", {}, (1, 4, 4, 2)),
    ("ConvLSTM2D", {"filters": 2, "kernel_size": 2}, (1, 3, 4, 2)),
)
WRONG_RANK_NAMES = (
    "keras:layers.Conv3D",
    "keras:layers.DepthwiseConv1D",
    "keras:layers.MaxPooling3D",
    "keras:layers.Cropping3D",
    "keras:layers.ConvLSTM2D",
)


@pytest.mark.parametrize(("name", "kwargs", "shape"), WRONG_RANK)
@same_as_tf(*WRONG_RANK_NAMES, edge=True, dialects=BOTH)
def test_an_input_of_the_wrong_rank_raises(tf, name, kwargs, shape):
    x = tf.constant(np.zeros(shape, dtype=np.float32))
    return getattr(tf.keras.layers, name)(**kwargs)(x)
