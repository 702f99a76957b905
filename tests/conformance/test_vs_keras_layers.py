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
    if any(isinstance(s, (tuple, list)) for s in shape):  # several outputs
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
@same_as_tf(*SINGLE_NAMES, rtol=1e-4, atol=1e-5)
def test_single_input_layer(tf, name, kwargs, shape, training):
    return _run(tf, name, kwargs, shape, training)


@pytest.mark.parametrize(("name", "kwargs", "shape", "training"), SINGLE_EDGE)
@same_as_tf(*SINGLE_NAMES, edge=True, rtol=1e-4, atol=1e-5)
def test_single_input_layer_edge(tf, name, kwargs, shape, training):
    return _run(tf, name, kwargs, shape, training)


def test_the_tables_cover_the_listed_names():
    assert [r[0] for r in SINGLE] == [n.split(".")[-1] for n in SINGLE_NAMES]
    assert [r[0] for r in SINGLE_EDGE] == [n.split(".")[-1] for n in SINGLE_NAMES]
