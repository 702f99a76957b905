"""Keras's mask rules for a user's own layers, against Keras 3 on TF 2.21 and tf_keras 2.21.

A layer whose ``call`` declares ``mask`` receives the input's mask; a layer that supports masking
(``supports_masking = True``, or its own ``compute_mask``) gives its outputs ``compute_mask``'s
result; a symbolic tensor's ``_keras_mask`` reads the mask in a functional model. These are the
rules of TF's "Masking and padding" guide and of keras.io's Transformer examples.
"""

from __future__ import annotations

import numpy as np
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")
IDS = np.array([[3, 4, 0, 0], [5, 0, 0, 0]], "int32")


def _layers(tf, dialect="keras"):
    # Keras 3 calls compute_mask on symbolic tensors too, where only keras.ops work (keras.io uses them)

    class Scale(tf.keras.layers.Layer):  # supports masking: the mask passes through
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.supports_masking = True

        def call(self, inputs):
            return inputs * 2.0

    class MaskedMean(tf.keras.layers.Layer):  # reads the mask Keras hands to call()
        def call(self, inputs, mask=None):
            weights = tf.expand_dims(tf.cast(mask, inputs.dtype), -1)
            return tf.reduce_sum(inputs * weights, axis=1) / tf.reduce_sum(weights, axis=1)

    class Split(tf.keras.layers.Layer):  # its own compute_mask, a list of outputs
        def call(self, inputs):
            return tf.split(inputs, 2, axis=1)

        def compute_mask(self, inputs, mask=None):
            return None if mask is None else tf.split(mask, 2, axis=1)

    class NotZero(tf.keras.layers.Layer):  # makes a mask from ids, as keras.io's PositionalEmbedding
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.embed = tf.keras.layers.Embedding(10, 3, embeddings_initializer="ones")

        def call(self, inputs):
            return self.embed(inputs)

        def compute_mask(self, inputs, mask=None):
            not_equal = tf.keras.ops.not_equal if dialect == "keras" else tf.not_equal
            return not_equal(inputs, 0)

    return Scale, MaskedMean, Split, NotZero


@same_as_tf("keras:layers.Layer", dialects=BOTH)
def test_mask_reaches_call_and_passes_through_eagerly(tf):
    Scale, MaskedMean, _, _ = _layers(tf)
    x = tf.keras.layers.Embedding(10, 3, mask_zero=True, embeddings_initializer="ones")(IDS)
    y = Scale()(x)
    return y._keras_mask, MaskedMean()(y)


@same_as_tf("keras:layers.Layer", dialects=BOTH)
def test_compute_mask_gives_each_output_its_mask(tf):
    _, _, Split, _ = _layers(tf)
    x = tf.keras.layers.Embedding(10, 3, mask_zero=True)(IDS)
    first, second = Split()(x)
    return first._keras_mask, second._keras_mask


@same_as_tf("keras:layers.Layer", dialects=BOTH)
def test_own_compute_mask_feeds_the_next_layer_in_a_model(tf, dialect):
    _, MaskedMean, _, NotZero = _layers(tf, dialect)
    inputs = tf.keras.Input((4,), dtype="int32")
    x = NotZero()(inputs)
    outputs = MaskedMean()(x)
    model = tf.keras.Model(inputs, outputs)
    return model(IDS)


@same_as_tf("keras:layers.Layer", dialects=BOTH)
def test_a_layer_without_masking_support_drops_the_mask(tf):
    class Plain(tf.keras.layers.Layer):
        def call(self, inputs):
            return inputs + 1.0

    x = tf.keras.layers.Embedding(10, 3, mask_zero=True)(IDS)
    return getattr(Plain()(x), "_keras_mask", None) is None


@same_as_tf("keras:layers.Layer", dialects=("keras",))
def test_symbolic_keras_mask_in_a_functional_model(tf):
    Scale, _, _, _ = _layers(tf)
    inputs = tf.keras.Input((4,), dtype="int32")
    x = Scale()(tf.keras.layers.Embedding(10, 3, mask_zero=True, embeddings_initializer="ones")(inputs))
    mask = x._keras_mask
    model = tf.keras.Model(inputs, tf.keras.ops.cast(mask, "float32"))
    return model(IDS)


@same_as_tf("keras:layers.LSTM", dialects=BOTH)
def test_stateful_states_after_reset_are_zeros_of_the_batch(tf):
    layer = tf.keras.layers.LSTM(4, stateful=True)
    x = np.ones((3, 5, 2), "float32")
    layer(x)
    layer.reset_states()
    other = tf.keras.layers.LSTM(4)
    out = other(x, initial_state=layer.states)
    return [tf.convert_to_tensor(s) for s in layer.states], out.shape[0]


def _masked_model(tf):
    rng = np.random.default_rng(3)
    model = tf.keras.Sequential(
        [
            tf.keras.Input((4,), dtype="int32"),
            tf.keras.layers.Embedding(10, 3, mask_zero=True),
            tf.keras.layers.Dense(5),
        ]
    )
    model.set_weights(
        [rng.normal(size=(10, 3)).astype("float32"), rng.normal(size=(3, 5)).astype("float32"), np.zeros(5, "float32")]
    )
    # labels right everywhere but at one real step (0, 1): 2 of 3 real steps right, 7 of 8 with padding
    labels = np.argmax(np.asarray(model(IDS)), axis=-1).astype("int64")
    labels[0, 1] = (labels[0, 1] + 1) % 5
    return model, labels


@same_as_tf("keras:Model", "keras:losses.SparseCategoricalCrossentropy", dialects=BOTH)
def test_evaluate_leaves_masked_positions_out_of_loss_and_metrics(tf):
    model, labels = _masked_model(tf)
    model.compile(
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[tf.keras.metrics.SparseCategoricalAccuracy(name="acc")],
    )
    plain = model.evaluate(IDS, labels, return_dict=True, verbose=0)
    # per-step weights (Keras 3 refuses (batch,) weights on a masked (batch, steps) output)
    steps = np.array([[1.0, 2.0, 1.0, 1.0], [3.0, 1.0, 1.0, 1.0]], "float32")
    weighted = model.evaluate(IDS, labels, sample_weight=steps, return_dict=True, verbose=0)
    return plain["loss"], plain["acc"], weighted["loss"], weighted["acc"]


@same_as_tf("keras:losses.SparseCategoricalCrossentropy", "keras:losses.MeanSquaredError", dialects=BOTH)
def test_a_loss_called_on_a_masked_output_averages_the_positions_that_count(tf):
    model, labels = _masked_model(tf)
    y_pred = model(IDS)
    sce = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    mse = tf.keras.losses.MeanSquaredError()
    return sce(labels, y_pred), mse(np.ones((2, 4, 5), "float32"), y_pred)
