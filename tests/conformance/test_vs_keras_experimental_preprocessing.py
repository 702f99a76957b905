"""Keras 2's ``keras.layers.experimental.preprocessing`` path on unison against tf_keras 2.21.

tf_keras exports its preprocessing layers a second time under this path (the same classes), with
the ``PreprocessingLayer`` base that the adaptable ones derive from. Each layer is built from the
path, called on the same input at inference and rebuilt from its config; the random layers are
compared at inference (the identity) and, for ``RandomCrop``, on images of the crop's size (Keras 2
resizes larger images at inference, Keras 3 and unison pass them through: see the Keras 3 tests).
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

K2 = ("tf_keras",)

_IMAGES = (np.sin(np.arange(2 * 6 * 6 * 3)) * 100 + 120).reshape(2, 6, 6, 3).astype(np.float32)
_WORDS = np.array([["a", "b"], ["c", "a"], ["z", "b"]])
_INTS = np.array([[1, 2], [3, 7], [2, 2]], np.int64)

# (layer name, constructor kwargs, input, adapt data or None)
LAYERS = (
    ("CategoryEncoding", {"num_tokens": 8, "output_mode": "multi_hot"}, _INTS, None),
    ("CenterCrop", {"height": 4, "width": 3}, _IMAGES, None),
    ("HashedCrossing", {"num_bins": 7}, (np.array([1, 2, 3]), np.array([b"x", b"y", b"x"])), None),
    ("Hashing", {"num_bins": 5}, _WORDS, None),
    ("IntegerLookup", {}, _INTS, np.array([1, 2, 2, 3, 3, 3])),
    ("Normalization", {"axis": -1}, np.array([[1.0, 2.0], [3.0, 8.0]], np.float32), np.arange(12.0).reshape(6, 2)),
    ("RandomContrast", {"factor": 0.3}, _IMAGES, None),
    ("RandomCrop", {"height": 6, "width": 6}, _IMAGES, None),
    ("RandomFlip", {"mode": "horizontal"}, _IMAGES, None),
    ("RandomHeight", {"factor": 0.3}, _IMAGES, None),
    ("RandomRotation", {"factor": 0.2}, _IMAGES, None),
    ("RandomTranslation", {"height_factor": 0.2, "width_factor": 0.1}, _IMAGES, None),
    ("RandomWidth", {"factor": 0.3}, _IMAGES, None),
    ("RandomZoom", {"height_factor": 0.2}, _IMAGES, None),
    ("Rescaling", {"scale": 1 / 255.0, "offset": -0.5}, _IMAGES, None),
    ("Resizing", {"height": 3, "width": 4}, _IMAGES, None),
    ("StringLookup", {"num_oov_indices": 1}, _WORDS, np.array(["a", "b", "b", "c", "c", "c"])),
    (
        "TextVectorization",
        {"output_sequence_length": 4},
        np.array(["the cat sat", "a cat"]),
        np.array(["cat the cat a"]),
    ),
)
NAMES = (
    "tf_keras:layers.experimental.preprocessing.CategoryEncoding",
    "tf_keras:layers.experimental.preprocessing.CenterCrop",
    "tf_keras:layers.experimental.preprocessing.HashedCrossing",
    "tf_keras:layers.experimental.preprocessing.Hashing",
    "tf_keras:layers.experimental.preprocessing.IntegerLookup",
    "tf_keras:layers.experimental.preprocessing.Normalization",
    "tf_keras:layers.experimental.preprocessing.RandomContrast",
    "tf_keras:layers.experimental.preprocessing.RandomCrop",
    "tf_keras:layers.experimental.preprocessing.RandomFlip",
    "tf_keras:layers.experimental.preprocessing.RandomHeight",
    "tf_keras:layers.experimental.preprocessing.RandomRotation",
    "tf_keras:layers.experimental.preprocessing.RandomTranslation",
    "tf_keras:layers.experimental.preprocessing.RandomWidth",
    "tf_keras:layers.experimental.preprocessing.RandomZoom",
    "tf_keras:layers.experimental.preprocessing.Rescaling",
    "tf_keras:layers.experimental.preprocessing.Resizing",
    "tf_keras:layers.experimental.preprocessing.StringLookup",
    "tf_keras:layers.experimental.preprocessing.TextVectorization",
    "tf_keras:layers.experimental.preprocessing.Discretization",
)


def _value(out):
    return out.numpy() if hasattr(out, "numpy") else np.asarray(out)


@pytest.mark.parametrize(("name", "kwargs", "inputs", "adapt"), LAYERS)
@same_as_tf(*NAMES, dialects=K2)
def test_experimental_preprocessing_layer(tf, name, kwargs, inputs, adapt):
    layer = getattr(tf.keras.layers.experimental.preprocessing, name)(**kwargs)
    if adapt is not None:
        layer.adapt(adapt)
    x = tuple(tf.constant(i) for i in inputs) if isinstance(inputs, tuple) else tf.constant(inputs)
    config = layer.get_config()
    clone = type(layer).from_config(config)
    if adapt is not None:
        clone.adapt(adapt)
    kept = sorted(k for k in kwargs if k in config)  # the constructor arguments the config carries back
    return _value(layer(x, training=False)), _value(clone(x, training=False)), kept, layer is not None


@same_as_tf(
    "tf_keras:layers.experimental.preprocessing.Discretization",
    dialects=K2,
    differs="Discretization gives int32 bin indices, as Keras 3 does; Keras 2 gave int64 (compared as int64)",
)
def test_experimental_discretization(tf):
    layer = tf.keras.layers.experimental.preprocessing.Discretization(num_bins=4)
    layer.adapt(np.arange(16.0, dtype=np.float32))
    out = layer(tf.constant([[-2.0, 3.5], [7.9, 20.0]]))
    return _value(out).astype(np.int64), layer.is_adapted


@same_as_tf(*NAMES, dialects=K2)
def test_the_path_holds_keras_layers_classes(tf):
    path = tf.keras.layers.experimental.preprocessing
    names = [n.rsplit(".", 1)[1] for n in NAMES]
    same = [getattr(path, n) is getattr(tf.keras.layers, n) for n in names]
    adaptable = [issubclass(getattr(path, n), path.PreprocessingLayer) for n in names]
    return same, adaptable


@same_as_tf("tf_keras:layers.experimental.preprocessing.PreprocessingLayer", dialects=K2)
def test_a_preprocessing_layer_subclass_adapts_batch_by_batch(tf):
    class RunningMax(tf.keras.layers.experimental.preprocessing.PreprocessingLayer):
        def build(self, input_shape):  # adapt builds the layer on the first batch, then resets nothing
            self.reset_state()
            self.built = True

        def reset_state(self):
            self.peak, self.batches = -np.inf, 0

        def update_state(self, data):
            self.peak, self.batches = max(self.peak, float(np.max(np.asarray(data)))), self.batches + 1

        def finalize_state(self):
            self.scale = 1.0 / self.peak

        def call(self, inputs):
            return inputs * self.scale

    layer = RunningMax()
    layer.compile(run_eagerly=True)  # update_state reads NumPy values: tf_keras must not trace it
    before = layer.is_adapted
    layer.adapt(np.array([[1.0], [5.0], [2.0], [3.0], [4.0]], np.float32), batch_size=2)
    out = layer(tf.constant([[2.5]]))
    return before, layer.is_adapted, layer.peak, layer.batches, _value(out)


@same_as_tf(
    "tf_keras:layers.experimental.preprocessing.PreprocessingLayer",
    "tf_keras:layers.experimental.preprocessing.Normalization",
    edge=True,
    dialects=K2,
)
def test_is_adapted_after_adapt_of_a_dataset_with_steps(tf):
    norm = tf.keras.layers.experimental.preprocessing.Normalization()
    before = norm.is_adapted
    data = tf.data.Dataset.from_tensor_slices(np.arange(8.0, dtype=np.float32).reshape(8, 1)).batch(2)
    norm.adapt(data, steps=2)  # the first two batches: 0, 1, 2, 3
    return before, norm.is_adapted, _value(norm(tf.constant([[1.5]])))


@same_as_tf(
    "tf_keras:layers.experimental.preprocessing.Resizing",
    "tf_keras:layers.experimental.preprocessing.Hashing",
    edge=True,
    dialects=K2,
)
def test_a_bad_argument_is_an_error(tf):
    return tf.keras.layers.experimental.preprocessing.Hashing(num_bins=0)


def test_the_table_names_its_layers():
    assert len(NAMES) == 19 and len(set(NAMES)) == 19
    assert [n.rsplit(".", 1)[1] for n in NAMES[:-1]] == [row[0] for row in LAYERS]


@pytest.mark.parametrize(("name", "kwargs", "inputs", "adapt"), LAYERS)
@same_as_tf(*NAMES, edge=True, dialects=K2)
def test_experimental_preprocessing_layer_on_an_empty_batch(tf, name, kwargs, inputs, adapt):
    layer = getattr(tf.keras.layers.experimental.preprocessing, name)(**kwargs)
    if adapt is not None:
        layer.adapt(adapt)
    x = tuple(tf.constant(i[:0]) for i in inputs) if isinstance(inputs, tuple) else tf.constant(inputs[:0])
    return _value(layer(x, training=False)).shape


@same_as_tf("tf_keras:layers.experimental.preprocessing.Discretization", edge=True, dialects=K2)
def test_experimental_discretization_of_an_empty_batch_and_nan(tf):
    layer = tf.keras.layers.experimental.preprocessing.Discretization(bin_boundaries=[0.0, 1.0])
    return _value(layer(tf.constant(np.zeros((0, 2), np.float32)))).shape, _value(
        layer(tf.constant([[-1.0, 2.0]]))
    ).tolist()
