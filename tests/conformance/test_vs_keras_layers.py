"""Keras 3 layers on unison against ``tf.keras`` (Keras 3.15) on TensorFlow 2.21.

Each layer is built on the same input in both, given the same deterministic weights (``np.sin`` of a
range, reshaped to each weight's shape, in ``get_weights()`` order) and compared on: its outputs
(inference, and training where they differ), ``compute_output_shape``, ``count_params()`` and the
outputs of the layer rebuilt by ``from_config(get_config())``. The tables below drive one generic
body; ``NAMES`` lists what the tables cover, for the coverage report.
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


def _keras2_has(dialect: str, name: str) -> None:
    """Skip a Keras 3 layer's row in the Keras 2 run when tf_keras has no such layer."""
    if dialect == "tf_keras" and f"layers.{name}" not in _KERAS2_NAMES:
        pytest.skip(f"tf_keras has no layers.{name}")


# Single-input layers: (name, constructor kwargs, input shape, also run with training=True).
SINGLE = (
    ("Dense", {"units": 3}, (2, 4), False),
    ("Conv1D", {"filters": 3, "kernel_size": 2}, (2, 5, 4), False),
    ("Conv2D", {"filters": 3, "kernel_size": 3, "padding": "same"}, (2, 5, 5, 2), False),
    ("Conv2DTranspose", {"filters": 3, "kernel_size": 3, "strides": 2}, (2, 4, 4, 2), False),
    ("SeparableConv2D", {"filters": 3, "kernel_size": 3, "depth_multiplier": 2}, (2, 5, 5, 2), False),
    ("DepthwiseConv2D", {"kernel_size": 3, "depth_multiplier": 2}, (2, 5, 5, 2), False),
    ("MaxPooling1D", {"pool_size": 2}, (2, 6, 3), False),
    ("MaxPooling2D", {"pool_size": 2}, (2, 6, 6, 3), False),
    ("AveragePooling1D", {"pool_size": 2}, (2, 6, 3), False),
    ("AveragePooling2D", {"pool_size": 2}, (2, 6, 6, 3), False),
    ("GlobalAveragePooling1D", {}, (2, 6, 3), False),
    ("GlobalAveragePooling2D", {}, (2, 4, 4, 3), False),
    ("GlobalMaxPooling1D", {}, (2, 6, 3), False),
    ("GlobalMaxPooling2D", {}, (2, 4, 4, 3), False),
    ("Flatten", {}, (2, 3, 4), False),
    ("Reshape", {"target_shape": (4, 3)}, (2, 3, 4), False),
    ("Permute", {"dims": (2, 1)}, (2, 3, 4), False),
    ("RepeatVector", {"n": 3}, (2, 4), False),
    ("Dropout", {"rate": 0.5}, (2, 4), False),
    ("BatchNormalization", {}, (4, 3), True),
    ("LayerNormalization", {}, (2, 3, 4), False),
    ("LSTM", {"units": 3, "return_sequences": True}, (2, 4, 3), False),
    ("GRU", {"units": 3}, (2, 4, 3), False),
    ("SimpleRNN", {"units": 3, "return_sequences": True}, (2, 4, 3), False),
    ("Activation", {"activation": "tanh"}, (2, 4), False),
    ("ReLU", {"max_value": 0.5}, (2, 4), False),
    ("LeakyReLU", {"negative_slope": 0.2}, (2, 4), False),
    ("Softmax", {}, (2, 4), False),
    ("ELU", {}, (2, 4), False),
    ("PReLU", {}, (2, 4), False),
    ("ZeroPadding1D", {"padding": (1, 2)}, (2, 3, 2), False),
    ("ZeroPadding2D", {"padding": ((1, 0), (0, 2))}, (2, 3, 3, 2), False),
    ("Cropping1D", {"cropping": (1, 1)}, (2, 5, 2), False),
    ("Cropping2D", {"cropping": ((1, 0), (0, 2))}, (2, 5, 5, 2), False),
    ("UpSampling1D", {"size": 2}, (2, 3, 2), False),
    ("UpSampling2D", {"size": (2, 3)}, (2, 3, 3, 2), False),
    ("Rescaling", {"scale": 0.5, "offset": 1.0}, (2, 4), False),
    ("Convolution1D", {"filters": 2, "kernel_size": 3, "dilation_rate": 2}, (2, 7, 3), False),
    ("Convolution2D", {"filters": 2, "kernel_size": (2, 3), "use_bias": False}, (2, 4, 5, 2), False),
    ("Convolution2DTranspose", {"filters": 2, "kernel_size": 2}, (2, 3, 3, 2), False),
    ("SeparableConvolution2D", {"filters": 2, "kernel_size": 2}, (2, 4, 4, 2), False),
    ("AvgPool1D", {"pool_size": 3, "strides": 1}, (2, 6, 3), False),
    ("AvgPool2D", {"pool_size": (2, 3)}, (2, 6, 6, 3), False),
    ("MaxPool1D", {"pool_size": 3, "strides": 1}, (2, 6, 3), False),
    ("MaxPool2D", {"pool_size": (2, 3)}, (2, 6, 6, 3), False),
    ("GlobalAvgPool1D", {}, (2, 6, 3), False),
    ("GlobalAvgPool2D", {}, (2, 4, 4, 3), False),
    ("GlobalMaxPool1D", {}, (2, 6, 3), False),
    ("GlobalMaxPool2D", {}, (2, 4, 4, 3), False),
    ("Identity", {}, (2, 4), False),
    ("GaussianNoise", {"stddev": 0.3}, (2, 4), False),
    ("GaussianDropout", {"rate": 0.3}, (2, 4), False),
    ("SpatialDropout1D", {"rate": 0.5}, (2, 3, 4), False),
    ("SpatialDropout2D", {"rate": 0.5}, (2, 3, 3, 4), False),
    ("AlphaDropout", {"rate": 0.5}, (2, 4), False),
    ("ActivityRegularization", {"l1": 0.1, "l2": 0.2}, (2, 4), False),
    ("GroupNormalization", {"groups": 2}, (2, 3, 4), False),
    ("UnitNormalization", {}, (2, 4), False),
    ("Resizing", {"height": 4, "width": 6}, (2, 3, 3, 2), False),
    ("CenterCrop", {"height": 2, "width": 3}, (2, 4, 5, 2), False),
)

# Edge cases: a batch of 0 or 1, strides with "same" padding, a None time dimension.
SINGLE_EDGE = (
    ("Dense", {"units": 3}, (0, 4), False),
    ("Conv1D", {"filters": 3, "kernel_size": 3, "strides": 2, "padding": "same"}, (1, 7, 4), False),
    ("Conv2D", {"filters": 3, "kernel_size": 3, "strides": 2, "padding": "same"}, (1, 5, 5, 2), False),
    ("Conv2DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same"}, (1, 3, 3, 2), False),
    ("SeparableConv2D", {"filters": 3, "kernel_size": 3, "strides": 2, "padding": "same"}, (1, 5, 5, 2), False),
    ("DepthwiseConv2D", {"kernel_size": 3, "strides": 2, "padding": "same"}, (1, 5, 5, 2), False),
    ("MaxPooling1D", {"pool_size": 2, "strides": 2, "padding": "same"}, (1, 5, 3), False),
    ("MaxPooling2D", {"pool_size": 3, "strides": 2, "padding": "same"}, (1, 5, 5, 3), False),
    ("AveragePooling1D", {"pool_size": 2, "strides": 2, "padding": "same"}, (1, 5, 3), False),
    ("AveragePooling2D", {"pool_size": 3, "strides": 2, "padding": "same"}, (1, 5, 5, 3), False),
    ("GlobalAveragePooling1D", {"keepdims": True}, (1, 6, 3), False),
    ("GlobalAveragePooling2D", {"keepdims": True}, (1, 4, 4, 3), False),
    ("GlobalMaxPooling1D", {"keepdims": True}, (1, 6, 3), False),
    ("GlobalMaxPooling2D", {"keepdims": True}, (1, 4, 4, 3), False),
    ("Flatten", {}, (0, 3, 4), False),
    ("Reshape", {"target_shape": (-1, 2)}, (1, 3, 4), False),
    ("Permute", {"dims": (3, 1, 2)}, (1, 2, 3, 4), False),
    ("RepeatVector", {"n": 1}, (0, 4), False),
    ("Dropout", {"rate": 0.0}, (1, 4), True),
    ("BatchNormalization", {"axis": 1, "momentum": 0.5, "center": False}, (3, 2, 4), True),
    ("LayerNormalization", {"axis": (1, 2), "scale": False}, (1, 3, 4), False),
    ("LSTM", {"units": 2, "go_backwards": True, "return_state": True}, (1, 3, 2), False),
    ("GRU", {"units": 2, "reset_after": False, "return_sequences": True}, (1, 3, 2), False),
    ("SimpleRNN", {"units": 2, "return_state": True}, (1, 3, 2), False),
    ("Activation", {"activation": "softplus"}, (0, 4), False),
    ("ReLU", {"negative_slope": 0.1, "threshold": 0.2}, (1, 4), False),
    ("LeakyReLU", {}, (0, 4), False),
    ("Softmax", {"axis": 1}, (1, 3, 4), False),
    ("ELU", {"alpha": 0.5}, (1, 4), False),
    ("PReLU", {"shared_axes": [1]}, (1, 3, 4), False),
    ("ZeroPadding1D", {"padding": 0}, (0, 3, 2), False),
    ("ZeroPadding2D", {"padding": 1, "data_format": "channels_first"}, (1, 2, 3, 3), False),
    ("Cropping1D", {"cropping": 2}, (1, 5, 2), False),
    ("Cropping2D", {"cropping": 1, "data_format": "channels_first"}, (1, 2, 5, 5), False),
    ("UpSampling1D", {"size": 1}, (0, 3, 2), False),
    ("UpSampling2D", {"size": 2, "interpolation": "bilinear"}, (1, 3, 3, 2), False),
    ("Rescaling", {"scale": 2.0}, (0, 4), False),
    ("Convolution1D", {"filters": 2, "kernel_size": 2, "padding": "causal"}, (1, 4, 3), False),
    (
        "Convolution2D",
        {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same", "data_format": "channels_first"},
        (1, 2, 5, 5),
        False,
    ),
    (
        "Convolution2DTranspose",
        {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same", "output_padding": 1},
        (1, 3, 3, 2),
        False,
    ),
    ("SeparableConvolution2D", {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same"}, (1, 5, 5, 2), False),
    ("AvgPool1D", {"pool_size": 2, "padding": "same"}, (0, 5, 3), False),
    ("AvgPool2D", {"pool_size": 2, "strides": 2, "padding": "same"}, (1, 5, 3, 2), False),
    ("MaxPool1D", {"pool_size": 2, "padding": "same"}, (0, 5, 3), False),
    ("MaxPool2D", {"pool_size": 2, "strides": 2, "padding": "same"}, (1, 5, 3, 2), False),
    ("GlobalAvgPool1D", {"data_format": "channels_first"}, (1, 3, 6), False),
    ("GlobalAvgPool2D", {"data_format": "channels_first"}, (1, 3, 4, 4), False),
    ("GlobalMaxPool1D", {"data_format": "channels_first"}, (1, 3, 6), False),
    ("GlobalMaxPool2D", {"data_format": "channels_first"}, (1, 3, 4, 4), False),
    ("Identity", {}, (0, 4), False),
    ("GaussianNoise", {"stddev": 1.0}, (0, 4), False),
    ("GaussianDropout", {"rate": 0.9}, (0, 4), False),
    ("SpatialDropout1D", {"rate": 0.0}, (1, 3, 4), False),
    ("SpatialDropout2D", {"rate": 0.0}, (1, 3, 3, 4), False),
    ("AlphaDropout", {"rate": 0.9}, (0, 4), False),
    ("ActivityRegularization", {}, (0, 4), False),
    ("GroupNormalization", {"groups": -1, "center": False}, (1, 2, 4), False),
    ("UnitNormalization", {"axis": (1, 2)}, (1, 2, 3), False),
    (
        "Resizing",
        {"height": 2, "width": 2, "interpolation": "nearest", "crop_to_aspect_ratio": True},
        (1, 3, 5, 2),
        False,
    ),
    ("CenterCrop", {"height": 4, "width": 4}, (1, 2, 2, 2), False),
)

SINGLE_NAMES = (
    "keras:layers.Dense",
    "keras:layers.Conv1D",
    "keras:layers.Conv2D",
    "keras:layers.Conv2DTranspose",
    "keras:layers.SeparableConv2D",
    "keras:layers.DepthwiseConv2D",
    "keras:layers.MaxPooling1D",
    "keras:layers.MaxPooling2D",
    "keras:layers.AveragePooling1D",
    "keras:layers.AveragePooling2D",
    "keras:layers.GlobalAveragePooling1D",
    "keras:layers.GlobalAveragePooling2D",
    "keras:layers.GlobalMaxPooling1D",
    "keras:layers.GlobalMaxPooling2D",
    "keras:layers.Flatten",
    "keras:layers.Reshape",
    "keras:layers.Permute",
    "keras:layers.RepeatVector",
    "keras:layers.Dropout",
    "keras:layers.BatchNormalization",
    "keras:layers.LayerNormalization",
    "keras:layers.LSTM",
    "keras:layers.GRU",
    "keras:layers.SimpleRNN",
    "keras:layers.Activation",
    "keras:layers.ReLU",
    "keras:layers.LeakyReLU",
    "keras:layers.Softmax",
    "keras:layers.ELU",
    "keras:layers.PReLU",
    "keras:layers.ZeroPadding1D",
    "keras:layers.ZeroPadding2D",
    "keras:layers.Cropping1D",
    "keras:layers.Cropping2D",
    "keras:layers.UpSampling1D",
    "keras:layers.UpSampling2D",
    "keras:layers.Rescaling",
    "keras:layers.Convolution1D",
    "keras:layers.Convolution2D",
    "keras:layers.Convolution2DTranspose",
    "keras:layers.SeparableConvolution2D",
    "keras:layers.AvgPool1D",
    "keras:layers.AvgPool2D",
    "keras:layers.MaxPool1D",
    "keras:layers.MaxPool2D",
    "keras:layers.GlobalAvgPool1D",
    "keras:layers.GlobalAvgPool2D",
    "keras:layers.GlobalMaxPool1D",
    "keras:layers.GlobalMaxPool2D",
    "keras:layers.Identity",
    "keras:layers.GaussianNoise",
    "keras:layers.GaussianDropout",
    "keras:layers.SpatialDropout1D",
    "keras:layers.SpatialDropout2D",
    "keras:layers.AlphaDropout",
    "keras:layers.ActivityRegularization",
    "keras:layers.GroupNormalization",
    "keras:layers.UnitNormalization",
    "keras:layers.Resizing",
    "keras:layers.CenterCrop",
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


def _run(tf, name: str, kwargs: dict, shape: tuple, training: bool) -> dict:
    x = tf.constant((np.sin(np.arange(int(np.prod(shape)))) * 2.0).reshape(shape).astype(np.float32))
    layer = getattr(tf.keras.layers, name)(**kwargs)
    layer(x)  # builds the weights
    weights = _fill(layer.get_weights())
    layer.set_weights(weights)
    result = {
        "out": layer(x, training=False),
        "count_params": layer.count_params(),
        "n_weights": len(layer.get_weights()),
    }
    if training:
        result["train"] = layer(x, training=True)
        result["weights_after"] = layer.get_weights()
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
    if dialect == "tf_keras" and "negative_slope" in kwargs and name == "LeakyReLU":
        kwargs = {"alpha": kwargs["negative_slope"]}  # Keras 2's name of the argument (unison takes both)
    return _run(tf, name, kwargs, shape, training)


@pytest.mark.parametrize(("name", "kwargs", "shape", "training"), SINGLE_EDGE)
@same_as_tf(*SINGLE_NAMES, edge=True, dialects=BOTH, rtol=1e-4, atol=1e-5)
def test_single_input_layer_edge(tf, name, kwargs, shape, training, dialect):
    _keras2_has(dialect, name)
    return _run(tf, name, kwargs, shape, training)


def test_the_tables_cover_the_listed_names():
    assert [r[0] for r in SINGLE] == [n.split(".")[-1] for n in SINGLE_NAMES]
    assert [r[0] for r in SINGLE_EDGE] == [n.split(".")[-1] for n in SINGLE_NAMES]


# Layers of several inputs: (name, constructor kwargs, input shapes).
MERGE = (
    ("Concatenate", {"axis": -1}, ((2, 3), (2, 4))),
    ("Add", {}, ((2, 3), (2, 3), (2, 3))),
    ("Multiply", {}, ((2, 3), (2, 3))),
    ("Average", {}, ((2, 3), (2, 3))),
    ("Maximum", {}, ((2, 3), (2, 3))),
    ("Minimum", {}, ((2, 3), (2, 3))),
    ("Subtract", {}, ((2, 3), (2, 3))),
    ("Dot", {"axes": 1}, ((2, 3), (2, 3))),
)
MERGE_EDGE = (
    ("Concatenate", {"axis": 1}, ((0, 2, 3), (0, 1, 3))),
    ("Add", {}, ((1, 2, 3), (1, 2, 3))),
    ("Multiply", {}, ((1, 2, 3), (1, 2, 3), (1, 2, 3))),
    ("Average", {}, ((1, 3), (1, 3), (1, 3))),
    ("Maximum", {}, ((1, 2, 3), (1, 2, 3))),
    ("Minimum", {}, ((0, 3), (0, 3))),
    ("Subtract", {}, ((0, 2, 3), (0, 2, 3))),
    ("Dot", {"axes": (1, 2), "normalize": True}, ((1, 3, 2), (1, 2, 3))),
)
MERGE_NAMES = (
    "keras:layers.Concatenate",
    "keras:layers.Add",
    "keras:layers.Multiply",
    "keras:layers.Average",
    "keras:layers.Maximum",
    "keras:layers.Minimum",
    "keras:layers.Subtract",
    "keras:layers.Dot",
)


def _run_merge(tf, name: str, kwargs: dict, shapes: tuple) -> dict:
    xs = [
        tf.constant((np.sin(np.arange(int(np.prod(s))) + 3 * i) * 2.0).reshape(s).astype(np.float32))
        for i, s in enumerate(shapes)
    ]
    layer = getattr(tf.keras.layers, name)(**kwargs)
    clone = type(layer).from_config(layer.get_config())
    return {
        "out": layer(xs),
        "count_params": layer.count_params(),
        "output_shape": _shape(layer.compute_output_shape([tuple(s) for s in shapes])),
        "clone_out": clone(xs),
    }


@pytest.mark.parametrize(("name", "kwargs", "shapes"), MERGE)
@same_as_tf(*MERGE_NAMES, dialects=BOTH, rtol=1e-5, atol=1e-6)
def test_merging_layer(tf, name, kwargs, shapes):
    return _run_merge(tf, name, kwargs, shapes)


@pytest.mark.parametrize("name", ["Maximum", "Minimum"])
@same_as_tf("keras:layers.Maximum", "keras:layers.Minimum", edge=True, dialects=BOTH)
def test_maximum_minimum_gradient_at_ties(tf, name):
    # TF sends a tie's whole gradient to the first input (torch's own maximum splits it in half)
    a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = tf.constant([[1.0, 3.0, 3.0], [0.0, 9.0, 6.0]])
    c = tf.constant([[1.0, 0.0, 7.0], [4.0, 5.0, -1.0]])
    with tf.GradientTape() as tape:
        tape.watch([a, b, c])
        out = getattr(tf.keras.layers, name)()([a, b, c])
        loss = tf.reduce_sum(out * tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    return out, tape.gradient(loss, [a, b, c])


@pytest.mark.parametrize(("name", "kwargs", "shapes"), MERGE_EDGE)
@same_as_tf(*MERGE_NAMES, edge=True, dialects=BOTH, rtol=1e-5, atol=1e-6)
def test_merging_layer_edge(tf, name, kwargs, shapes):
    return _run_merge(tf, name, kwargs, shapes)


def test_the_merge_tables_cover_the_listed_names():
    assert [r[0] for r in MERGE] == [n.split(".")[-1] for n in MERGE_NAMES]
    assert [r[0] for r in MERGE_EDGE] == [n.split(".")[-1] for n in MERGE_NAMES]


def _ids(shape: tuple, high: int) -> np.ndarray:
    return (np.arange(int(np.prod(shape))) * 7 % high).reshape(shape).astype(np.int32)


@same_as_tf("keras:layers.Embedding", dialects=BOTH)
def test_embedding(tf):
    layer = tf.keras.layers.Embedding(6, 3)
    x = tf.constant(_ids((2, 4), 6))
    layer(x)
    layer.set_weights(_fill(layer.get_weights()))
    clone = tf.keras.layers.Embedding.from_config(layer.get_config())
    clone(x)
    clone.set_weights(layer.get_weights())
    return layer(x), layer.count_params(), _shape(layer.compute_output_shape((2, 4))), clone(x)


@same_as_tf("keras:layers.Embedding", edge=True, dialects=BOTH)
def test_embedding_mask_zero(tf):
    layer = tf.keras.layers.Embedding(6, 3, mask_zero=True)
    x = tf.constant(_ids((2, 4), 3))
    layer(x)
    layer.set_weights(_fill(layer.get_weights()))
    return layer(x), layer.compute_mask(x)


def _bidirectional(tf, merge_mode: str, return_sequences: bool):
    layer = tf.keras.layers.Bidirectional(
        tf.keras.layers.LSTM(2, return_sequences=return_sequences), merge_mode=merge_mode
    )
    x = tf.constant(np.sin(np.arange(18)).reshape(1 if not return_sequences else 3, -1, 2).astype(np.float32))
    layer(x)
    layer.set_weights(_fill(layer.get_weights()))
    return layer(x), layer.count_params(), len(layer.get_weights())


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave"])
@same_as_tf("keras:layers.Bidirectional", rtol=1e-4, atol=1e-5, dialects=BOTH)
def test_bidirectional(tf, merge_mode):
    return _bidirectional(tf, merge_mode, True)


@same_as_tf("keras:layers.Bidirectional", edge=True, rtol=1e-4, atol=1e-5, dialects=BOTH)
def test_bidirectional_last_output_of_one_row(tf):
    return _bidirectional(tf, "concat", False)


def _attention(tf, kwargs: dict, q_shape: tuple, v_shape: tuple, mask: bool):
    layer = tf.keras.layers.MultiHeadAttention(**kwargs)
    q = tf.constant(np.sin(np.arange(int(np.prod(q_shape)))).reshape(q_shape).astype(np.float32))
    v = tf.constant(np.cos(np.arange(int(np.prod(v_shape)))).reshape(v_shape).astype(np.float32))
    layer(q, v)
    layer.set_weights(_fill(layer.get_weights()))
    attention_mask = None
    if mask:
        attention_mask = tf.constant(np.tril(np.ones((q_shape[0], q_shape[1], v_shape[1]), dtype=bool)))
    out, scores = layer(q, v, attention_mask=attention_mask, return_attention_scores=True)
    return out, scores, layer.count_params(), len(layer.get_weights())


@same_as_tf("keras:layers.MultiHeadAttention", rtol=1e-4, atol=1e-5, dialects=BOTH)
def test_multi_head_attention(tf):
    return _attention(tf, {"num_heads": 2, "key_dim": 3}, (2, 4, 5), (2, 3, 5), False)


@same_as_tf("keras:layers.MultiHeadAttention", edge=True, rtol=1e-4, atol=1e-5, dialects=BOTH)
def test_multi_head_attention_with_a_mask(tf):
    return _attention(tf, {"num_heads": 1, "key_dim": 2, "value_dim": 3, "output_shape": 4}, (1, 3, 2), (1, 3, 2), True)


# ---------------------------------------------------------------------------------------------
# preprocessing layers


@same_as_tf("keras:layers.Normalization", dialects=BOTH)
def test_normalization_adapt(tf):
    layer = tf.keras.layers.Normalization()
    data = (np.sin(np.arange(12)) * 3.0 + 1.0).reshape(4, 3).astype(np.float32)
    layer.adapt(data)
    x = tf.constant(data[:2])
    clone = tf.keras.layers.Normalization.from_config(layer.get_config())
    clone.adapt(data)
    inverse = tf.keras.layers.Normalization(invert=True, mean=2.0, variance=4.0)
    return layer(x), clone(x), inverse(x), layer.count_params()


@same_as_tf("keras:layers.Normalization", edge=True, dialects=BOTH)
def test_normalization_given_statistics_on_an_axis(tf):
    layer = tf.keras.layers.Normalization(axis=1, mean=[1.0, 2.0], variance=[4.0, 0.0])
    x = tf.constant(np.arange(8, dtype=np.float32).reshape(2, 2, 2))
    return layer(x), _shape(layer.compute_output_shape((2, 2, 2)))


@pytest.mark.parametrize("mode", ["one_hot", "multi_hot", "count"])
@same_as_tf("keras:layers.CategoryEncoding", dialects=BOTH)
def test_category_encoding(tf, mode):
    layer = tf.keras.layers.CategoryEncoding(num_tokens=5, output_mode=mode)
    x = tf.constant([3, 0, 4, 4] if mode == "one_hot" else [[0, 1, 1], [4, 4, 2]])
    clone = tf.keras.layers.CategoryEncoding.from_config(layer.get_config())
    return layer(x), clone(x)


@same_as_tf("keras:layers.CategoryEncoding", edge=True, dialects=BOTH)
def test_category_encoding_count_weights(tf):
    layer = tf.keras.layers.CategoryEncoding(num_tokens=4, output_mode="count")
    x = tf.constant([[0, 1, 1], [3, 3, 2]])
    return layer(x, count_weights=tf.constant([[0.5, 1.0, 2.0], [1.0, 1.0, 0.25]]))


@same_as_tf("keras:layers.Hashing", dialects=BOTH)
def test_hashing(tf):
    strings = tf.keras.layers.Hashing(num_bins=7)
    ints = tf.keras.layers.Hashing(num_bins=5, mask_value=0)
    words = tf.constant([["cat"], ["dog"], ["a bird"]])
    return strings(words), ints(tf.constant([[0], [1], [22], [333]]))


@same_as_tf("keras:layers.Hashing", edge=True, dialects=BOTH)
def test_hashing_with_a_mask_value(tf):
    layer = tf.keras.layers.Hashing(num_bins=4, mask_value="")
    return layer(tf.constant([["a", ""], ["c", "c"]]))


@same_as_tf("keras:layers.Hashing", dialects=BOTH)
def test_hashing_with_a_salt(tf):
    words = tf.constant([["cat"], ["dog"], ["a bird"], [""], ["a much longer string"]])
    pair = tf.keras.layers.Hashing(num_bins=7, salt=[7, 11])
    single = tf.keras.layers.Hashing(num_bins=5, salt=13)
    return pair(words), single(words), single(tf.constant([[1], [22], [333]]))


@pytest.mark.parametrize("mode", ["one_hot", "multi_hot", "count"])
@same_as_tf("keras:layers.Hashing", edge=True, dialects=BOTH)
def test_hashing_encoded(tf, mode):
    layer = tf.keras.layers.Hashing(num_bins=4, output_mode=mode)
    x = tf.constant(["a", "b", "c"]) if mode == "one_hot" else tf.constant([["a", "b"], ["c", "c"]])
    return layer(x)


@same_as_tf("keras:layers.StringLookup", dialects=BOTH)
def test_string_lookup(tf):
    layer = tf.keras.layers.StringLookup(vocabulary=["a", "b", "c"])
    inverse = tf.keras.layers.StringLookup(vocabulary=["a", "b", "c"], invert=True)
    adapted = tf.keras.layers.StringLookup()
    adapted.adapt(np.array(["z", "y", "z", "x", "z", "y"]))
    x = tf.constant([["a", "c"], ["d", "b"]])
    return layer(x), inverse(tf.constant([1, 3, 0])), adapted.get_vocabulary(), adapted.vocabulary_size()


@same_as_tf("keras:layers.StringLookup", edge=True, dialects=BOTH)
def test_string_lookup_mask_and_two_oov_indices(tf):
    masked = tf.keras.layers.StringLookup(vocabulary=["a", "b"], mask_token="", num_oov_indices=2)
    x = tf.constant([["a", ""], ["q", "b"]])
    return masked(x), masked.get_vocabulary()


@same_as_tf(
    "keras:layers.StringLookup",
    "keras:layers.IntegerLookup",
    check_dtype=False,
    differs="unison's lookup layers give float32 multi-hot/count vectors (what a model's next layer takes); "
    "Keras 3 on TensorFlow gives int64 ones",
)
def test_lookup_multi_hot_and_count(tf):
    hot = tf.keras.layers.StringLookup(vocabulary=["a", "b"], output_mode="multi_hot")
    count = tf.keras.layers.IntegerLookup(vocabulary=[5, 7], output_mode="count")
    return hot(tf.constant([["a", "q"], ["b", "b"]])), count(tf.constant([[5, 5, 9], [7, 1, 1]]))


@same_as_tf("keras:layers.IntegerLookup", dialects=BOTH)
def test_integer_lookup(tf):
    layer = tf.keras.layers.IntegerLookup(vocabulary=[12, 36, 1138])
    adapted = tf.keras.layers.IntegerLookup()
    adapted.adapt(np.array([7, 7, 3, 9, 7, 3]))
    x = tf.constant([[12, 1138], [42, 36]])
    return layer(x), adapted(x), adapted.get_vocabulary()


@same_as_tf("keras:layers.IntegerLookup", edge=True, dialects=BOTH)
def test_integer_lookup_inverted_with_a_mask(tf):
    layer = tf.keras.layers.IntegerLookup(vocabulary=[12, 36], mask_token=0, invert=True)
    return layer(tf.constant([[0, 1, 2, 3]])), layer.get_vocabulary()


@same_as_tf("keras:layers.TextVectorization", dialects=BOTH)
def test_text_vectorization(tf):
    layer = tf.keras.layers.TextVectorization(max_tokens=6, output_sequence_length=4)
    layer.adapt(np.array(["The cat sat", "the dog sat down", "A cat!"]))
    return layer(tf.constant(["the cat sat on the mat", "dog"])), layer.get_vocabulary()


@same_as_tf(
    "keras:layers.TextVectorization",
    edge=True,
    check_dtype=False,
    differs="float32 count vectors, Keras 3 on TensorFlow int64 (documented in layers/text_vectorization.py)",
)
def test_text_vectorization_bigram_counts(tf):
    layer = tf.keras.layers.TextVectorization(ngrams=2, output_mode="count")
    layer.adapt(np.array(["a b a", "b c"]))
    return layer(tf.constant(["a b c", ""])), layer.get_vocabulary()


@same_as_tf("keras:layers.Discretization")
def test_discretization(tf):
    layer = tf.keras.layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0], output_mode="multi_hot")
    ids = tf.keras.layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0])
    x = tf.constant([[-1.5, 1.0, 2.5], [0.5, 3.0, 0.0]])
    clone = tf.keras.layers.Discretization.from_config(layer.get_config())
    return layer(x), clone(x), ids(x)


@same_as_tf("keras:layers.Discretization", edge=True, dialects=BOTH)
def test_discretization_adapt_one_hot(tf):
    layer = tf.keras.layers.Discretization(num_bins=3, output_mode="one_hot")
    layer.adapt(np.arange(9, dtype=np.float32))
    return layer(tf.constant([0.0, 4.0, 8.0]))


# ---------------------------------------------------------------------------------------------
# the functional merge names, masking, attention, wrappers and RNN cells

FUNCTIONAL_MERGE = (
    "keras:layers.add",
    "keras:layers.average",
    "keras:layers.concatenate",
    "keras:layers.dot",
    "keras:layers.maximum",
    "keras:layers.minimum",
    "keras:layers.multiply",
    "keras:layers.subtract",
)


def _functional_merge(tf, rows: int):
    a = tf.constant(np.sin(np.arange(rows * 3)).reshape(rows, 3).astype(np.float32))
    b = tf.constant(np.cos(np.arange(rows * 3)).reshape(rows, 3).astype(np.float32))
    layers = tf.keras.layers
    return (
        layers.add([a, b]),
        layers.average([a, b]),
        layers.concatenate([a, b], axis=0),
        layers.dot([a, b], axes=1),
        layers.maximum([a, b]),
        layers.minimum([a, b]),
        layers.multiply([a, b]),
        layers.subtract([a, b]),
    )


@same_as_tf(*FUNCTIONAL_MERGE, dialects=BOTH)
def test_functional_merges(tf):
    return _functional_merge(tf, 2)


@same_as_tf(*FUNCTIONAL_MERGE, edge=True, dialects=BOTH)
def test_functional_merges_of_one_row(tf):
    return _functional_merge(tf, 1)


def _masked_sequence(tf):
    x = np.sin(np.arange(24)).reshape(2, 4, 3).astype(np.float32)
    x[0, 2:] = 0.0  # padded steps
    return tf.constant(x)


@same_as_tf("keras:layers.Masking", dialects=BOTH)
def test_masking(tf):
    layer = tf.keras.layers.Masking(mask_value=0.0)
    x = _masked_sequence(tf)
    return layer(x), layer.compute_mask(x)


@same_as_tf("keras:layers.Masking", edge=True, dialects=BOTH)
def test_masking_feeds_an_lstm(tf):
    inputs = tf.keras.Input((4, 3))
    lstm = tf.keras.layers.LSTM(2)
    model = tf.keras.Model(inputs, lstm(tf.keras.layers.Masking()(inputs)))
    lstm.set_weights(_fill(lstm.get_weights()))
    return model(_masked_sequence(tf))


@pytest.mark.parametrize("name", ["Attention", "AdditiveAttention"])
@same_as_tf("keras:layers.Attention", "keras:layers.AdditiveAttention", rtol=1e-4, atol=1e-5, dialects=BOTH)
def test_dot_attention(tf, name):
    layer = getattr(tf.keras.layers, name)()
    q = tf.constant(np.sin(np.arange(24)).reshape(2, 4, 3).astype(np.float32))
    v = tf.constant(np.cos(np.arange(18)).reshape(2, 3, 3).astype(np.float32))
    layer([q, v])
    layer.set_weights(_fill(layer.get_weights()))
    out, scores = layer([q, v], return_attention_scores=True)
    return out, scores, layer.count_params()


@pytest.mark.parametrize("name", ["Attention", "AdditiveAttention"])
@same_as_tf("keras:layers.Attention", "keras:layers.AdditiveAttention", edge=True, rtol=1e-4, atol=1e-5, dialects=BOTH)
def test_dot_attention_with_masks_and_scale(tf, name):
    layer = getattr(tf.keras.layers, name)(use_scale=True)
    q = tf.constant(np.sin(np.arange(12)).reshape(1, 4, 3).astype(np.float32))
    v = tf.constant(np.cos(np.arange(9)).reshape(1, 3, 3).astype(np.float32))
    layer([q, v])
    layer.set_weights(_fill(layer.get_weights()))
    mask = [tf.constant([[True, True, False, True]]), tf.constant([[True, False, True]])]
    return layer([q, v], mask=mask)


def _time_distributed(tf, rows: int):
    layer = tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(2))
    x = tf.constant(np.sin(np.arange(rows * 9)).reshape(rows, 3, 3).astype(np.float32))
    layer(x)
    layer.set_weights(_fill(layer.get_weights()))
    return layer(x), layer.count_params(), _shape(layer.compute_output_shape((rows, 3, 3)))


@same_as_tf("keras:layers.TimeDistributed", dialects=BOTH)
def test_time_distributed(tf):
    return _time_distributed(tf, 2)


@same_as_tf("keras:layers.TimeDistributed", edge=True, dialects=BOTH)
def test_time_distributed_one_row(tf):
    return _time_distributed(tf, 1)


CELLS = (
    "keras:layers.RNN",
    "keras:layers.LSTMCell",
    "keras:layers.GRUCell",
    "keras:layers.SimpleRNNCell",
    "keras:layers.StackedRNNCells",
)


def _cells(tf, rows: int, return_sequences: bool):
    layers = tf.keras.layers
    x = tf.constant(np.sin(np.arange(rows * 8)).reshape(rows, 4, 2).astype(np.float32))
    outs = []
    for cell in (
        layers.LSTMCell(3),
        layers.GRUCell(3),
        layers.SimpleRNNCell(3),
        layers.StackedRNNCells([layers.SimpleRNNCell(2), layers.GRUCell(3)]),
    ):
        rnn = layers.RNN(cell, return_sequences=return_sequences)
        rnn(x)
        rnn.set_weights(_fill(rnn.get_weights()))
        outs.append((rnn(x), rnn.count_params()))
    return outs


@same_as_tf(*CELLS, rtol=1e-4, atol=1e-5, dialects=BOTH)
def test_rnn_cells(tf):
    return _cells(tf, 2, True)


@same_as_tf(*CELLS, edge=True, rtol=1e-4, atol=1e-5, dialects=BOTH)
def test_rnn_cells_one_row_last_output(tf):
    return _cells(tf, 1, False)


# ---------------------------------------------------------------------------------------------
# unknown sizes in compute_output_shape, and bad arguments (the same error class as Keras)

UNKNOWN_SIZES = (
    ("Dense", {"units": 3}, (None, None, 4)),
    ("Conv1D", {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same"}, (None, None, 4)),
    ("Conv2D", {"filters": 2, "kernel_size": 3}, (None, None, 7, 2)),
    ("MaxPooling2D", {"pool_size": 2}, (None, None, None, 3)),
    ("GlobalAveragePooling1D", {}, (None, None, 3)),
    ("Flatten", {}, (None, 3, 4)),
    ("LSTM", {"units": 3, "return_sequences": True}, (None, None, 2)),
    ("GRU", {"units": 3}, (None, None, 2)),
    ("Embedding", {"input_dim": 5, "output_dim": 2}, (None, None)),
    ("UpSampling1D", {"size": 3}, (None, None, 2)),
    ("RepeatVector", {"n": 4}, (None, 3)),
)


UNKNOWN_SIZES_NAMES = (
    "keras:layers.Dense",
    "keras:layers.Conv1D",
    "keras:layers.Conv2D",
    "keras:layers.MaxPooling2D",
    "keras:layers.GlobalAveragePooling1D",
    "keras:layers.Flatten",
    "keras:layers.LSTM",
    "keras:layers.GRU",
    "keras:layers.Embedding",
    "keras:layers.UpSampling1D",
    "keras:layers.RepeatVector",
)


@pytest.mark.parametrize(("name", "kwargs", "shape"), UNKNOWN_SIZES)
@same_as_tf(*UNKNOWN_SIZES_NAMES, edge=True, dialects=BOTH)
def test_output_shape_with_unknown_sizes(tf, name, kwargs, shape):
    return _shape(getattr(tf.keras.layers, name)(**kwargs).compute_output_shape(shape))


BAD_ARGUMENTS = (
    ("Dense", {"units": 0}),
    ("Dense", {"units": 2, "activation": "no_such_activation"}),
    ("Conv2D", {"filters": 2, "kernel_size": 3, "padding": "full"}),
    ("Dropout", {"rate": 1.5}),
    ("Reshape", {"target_shape": (5, 5)}),
    ("LSTM", {"units": 0}),
    ("Cropping1D", {"cropping": (3, 3)}),
)


BAD_ARGUMENT_NAMES = (
    "keras:layers.Dense",
    "keras:layers.Conv2D",
    "keras:layers.Dropout",
    "keras:layers.Reshape",
    "keras:layers.LSTM",
    "keras:layers.Cropping1D",
)


@pytest.mark.parametrize(("name", "kwargs"), BAD_ARGUMENTS)
@same_as_tf(*BAD_ARGUMENT_NAMES, edge=True)
def test_bad_arguments(tf, name, kwargs):
    layer = getattr(tf.keras.layers, name)(**kwargs)
    return layer(tf.constant(np.ones((2, 4, 4, 2) if "2D" in name else (2, 4, 3), np.float32)))


def test_the_edge_tables_name_their_layers():
    assert sorted({r[0] for r in UNKNOWN_SIZES}) == sorted(n.split(".")[-1] for n in UNKNOWN_SIZES_NAMES)
    assert sorted({r[0] for r in BAD_ARGUMENTS}) == sorted(n.split(".")[-1] for n in BAD_ARGUMENT_NAMES)


# ---------------------------------------------------------------------------------------------
# random augmentation layers: inference passes the images through (compared exactly); training
# draws other random numbers than Keras, so its result is compared by dtype and shape only

AUGMENTATION = (
    ("RandomFlip", {"mode": "horizontal"}),
    ("RandomRotation", {"factor": 0.2}),
    ("RandomTranslation", {"height_factor": 0.2, "width_factor": 0.1}),
    ("RandomZoom", {"height_factor": 0.2}),
    ("RandomContrast", {"factor": 0.3}),
    ("RandomBrightness", {"factor": 0.2}),
)
AUGMENTATION_NAMES = (
    "keras:layers.RandomFlip",
    "keras:layers.RandomRotation",
    "keras:layers.RandomTranslation",
    "keras:layers.RandomZoom",
    "keras:layers.RandomContrast",
    "keras:layers.RandomBrightness",
)


def _images(tf, rows: int):
    return tf.constant((np.sin(np.arange(rows * 48)) * 100 + 120).reshape(rows, 4, 4, 3).astype(np.float32))


@pytest.mark.parametrize(("name", "kwargs"), AUGMENTATION)
@same_as_tf(*AUGMENTATION_NAMES, dialects=BOTH)
def test_augmentation_at_inference(tf, name, kwargs):
    layer = getattr(tf.keras.layers, name)(**kwargs)
    clone = type(layer).from_config(layer.get_config())
    x = _images(tf, 2)
    return layer(x, training=False), clone(x, training=False)


@pytest.mark.parametrize(("name", "kwargs"), AUGMENTATION)
@same_as_tf(*AUGMENTATION_NAMES, edge=True, values=False, dialects=BOTH)
def test_augmentation_in_training_of_one_image(tf, name, kwargs):
    layer = getattr(tf.keras.layers, name)(seed=3, **kwargs)
    return layer(_images(tf, 1), training=True)


def test_the_augmentation_table_names_its_layers():
    assert [r[0] for r in AUGMENTATION] == [n.split(".")[-1] for n in AUGMENTATION_NAMES]


# ---------------------------------------------------------------------------------------------
# Input, InputLayer, Lambda, a Layer subclass, HashedCrossing


def _dtype(dtype) -> str:
    """A dtype's name on either side (Keras's KerasTensor has a string, unison's a torch dtype)."""
    return str(getattr(dtype, "name", dtype)).replace("torch.", "")


@same_as_tf("keras:layers.Input", "keras:Input")
def test_input(tf):
    x = tf.keras.layers.Input(shape=(3,))
    y = tf.keras.Input(shape=(2, 3), dtype="float64")
    return _shape(x.shape), x.ndim, _dtype(x.dtype), _shape(y.shape), _dtype(y.dtype)


@same_as_tf("keras:layers.Input", "keras:Input", edge=True)
def test_input_of_unknown_sizes_and_int_dtype(tf):
    x = tf.keras.layers.Input(shape=(None, 2), dtype="int32")
    return _shape(x.shape), x.ndim, _dtype(x.dtype), _dtype(tf.keras.Input((1,), dtype="int64").dtype)


@same_as_tf("keras:layers.InputLayer")
def test_input_layer(tf):
    layer = tf.keras.layers.InputLayer(shape=(3, 2))
    return _shape(layer.batch_shape), _shape(layer.output.shape), _dtype(layer.output.dtype)


@same_as_tf("keras:layers.InputLayer", edge=True)
def test_input_layer_of_ints_in_a_sequential_model(tf):
    layer = tf.keras.layers.InputLayer(shape=(None,), dtype="int32")
    model = tf.keras.Sequential([layer, tf.keras.layers.Embedding(5, 2)])
    model.layers[-1].set_weights([np.arange(10, dtype=np.float32).reshape(5, 2)])
    return _shape(layer.batch_shape), _dtype(layer.output.dtype), model(np.array([[1, 4, 0]], np.int32))


@same_as_tf(
    "keras:layers.RandomCrop",
    differs="RandomCrop(training=False) passes the images through unchanged, as Keras 3.15 does; Keras 2 "
    "(tf_keras) center-crops and resizes them instead",
)
def test_random_crop_at_inference(tf):
    x = _images(tf, 2)
    # (compute_output_shape is left out: Keras 3.15 says (3, 2) there while its call gives the input's size)
    return tf.keras.layers.RandomCrop(3, 2)(x, training=False)


@same_as_tf("keras:layers.RandomCrop", edge=True, values=False, dialects=BOTH)
def test_random_crop_in_training_of_one_image(tf):
    return tf.keras.layers.RandomCrop(3, 2, seed=1)(_images(tf, 1), training=True)


@same_as_tf("keras:layers.Lambda", dialects=BOTH)
def test_lambda(tf):
    layer = tf.keras.layers.Lambda(lambda t: t * 2.0 + 1.0)
    return layer(tf.constant([[1.0, 2.0]])), layer.count_params()


@same_as_tf("keras:layers.Lambda", edge=True, dialects=BOTH)
def test_lambda_of_an_empty_batch_with_arguments(tf):
    layer = tf.keras.layers.Lambda(lambda t, k: t * k, arguments={"k": 3.0})
    return layer(tf.zeros([0, 2]))


def _scaled_layer(tf):
    class Scale(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")

        def call(self, inputs):
            return inputs * self.w

    return Scale()


@same_as_tf("keras:layers.Layer", dialects=BOTH)
def test_layer_subclass(tf):
    layer = _scaled_layer(tf)
    x = tf.constant([[1.0, 2.0, 3.0]])
    layer(x)
    layer.set_weights([np.array([0.5, 1.5, -1.0], np.float32)])
    return layer(x), layer.count_params(), len(layer.trainable_weights)


@same_as_tf("keras:layers.Layer", edge=True, dialects=BOTH)
def test_layer_subclass_frozen_on_an_empty_batch(tf):
    layer = _scaled_layer(tf)
    out = layer(tf.zeros([0, 2]))
    layer.trainable = False
    return out, len(layer.trainable_weights), len(layer.non_trainable_weights)


@same_as_tf("keras:layers.HashedCrossing", dialects=BOTH)
def test_hashed_crossing(tf):
    layer = tf.keras.layers.HashedCrossing(num_bins=5)
    return layer((tf.constant(["a", "b", "c"]), tf.constant([1, 2, 2])))


@same_as_tf("keras:layers.HashedCrossing", edge=True)
def test_hashed_crossing_one_hot(tf):
    layer = tf.keras.layers.HashedCrossing(num_bins=4, output_mode="one_hot")
    return layer((tf.constant(["x"]), tf.constant(["y"])))
