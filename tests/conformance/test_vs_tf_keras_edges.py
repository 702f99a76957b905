"""The Keras 2 (tf_keras) half of names compared so far in one kind only: ``Sequential``'s mistakes,
``Discretization`` and ``RandomCrop`` on ordinary input, ``HashedCrossing``'s and
``TextVectorization``'s edge cases, ``LossScaleOptimizer``'s fixed scale and the nesting of
``custom_object_scope``, against tf_keras 2.21 (and Keras 3.15 where the test runs in both)."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

K2 = ("tf_keras",)
BOTH = ("keras", "tf_keras")


@pytest.mark.parametrize("case", ["add_not_a_layer", "call_unbuilt_empty"])
@same_as_tf("tf_keras:Sequential", edge=True, dialects=K2)
def test_sequential_mistakes(tf, case):
    # Keras 2's rules (Keras 3 refuses these with ValueErrors, compared in test_vs_keras_training_api.py)
    keras = tf.keras
    model = keras.Sequential()
    if case == "add_not_a_layer":
        return model.add(3)
    return model(np.ones((1, 2), "float32"))


@same_as_tf("keras:layers.Discretization", dialects=BOTH)
def test_discretization_bins(tf):
    x = tf.constant([[-1.5, 0.0, 0.5], [1.0, 2.5, 9.0]])
    index = tf.keras.layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0])(x)
    multi = tf.keras.layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0], output_mode="multi_hot")(x)
    count = tf.keras.layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0], output_mode="count")(x)
    # Keras 2 gives int64 bin indices, Keras 3 and unison int32 (listed with the experimental path's test)
    return tf.cast(index, "int64"), multi, count


@same_as_tf("keras:layers.RandomCrop", dialects=BOTH)
def test_random_crop_of_the_crop_size(tf):
    images = tf.constant(np.arange(2 * 3 * 4 * 2, dtype="float32").reshape(2, 3, 4, 2))
    layer = tf.keras.layers.RandomCrop(3, 4, seed=3)
    return layer(images, training=True), layer(images), tuple(layer.compute_output_shape((None, 3, 4, 2)))


@pytest.mark.parametrize("case", ["one_hot", "int_pair", "wrong_number"])
@same_as_tf("keras:layers.HashedCrossing", edge=True, dialects=BOTH)
def test_hashed_crossing_edges(tf, case):
    if case == "one_hot":
        layer = tf.keras.layers.HashedCrossing(num_bins=4, output_mode="one_hot")
        return layer((tf.constant(["x", "y"]), tf.constant(["y", "x"])))
    if case == "int_pair":
        layer = tf.keras.layers.HashedCrossing(num_bins=7)
        return layer((tf.constant([[1], [2]]), tf.constant([[3], [-4]])))
    return tf.keras.layers.HashedCrossing(num_bins=3)((tf.constant(["a"]),))


@pytest.mark.parametrize("case", ["empty_strings", "bad_output_mode", "tf_idf"])
@same_as_tf(
    "keras:layers.TextVectorization",
    edge=True,
    check_dtype=False,
    dialects=BOTH,
    differs="float32 count vectors, Keras 3 on TensorFlow int64 (documented in layers/text_vectorization.py)",
)
def test_text_vectorization_edges(tf, case):
    if case == "bad_output_mode":
        return tf.keras.layers.TextVectorization(output_mode="words")
    if case == "tf_idf":
        layer = tf.keras.layers.TextVectorization(output_mode="tf_idf")
        layer.adapt(np.array(["a b a", "b c", "c c d"]))
        return layer(tf.constant(["a c", "d d e"])), layer.get_vocabulary()
    layer = tf.keras.layers.TextVectorization(output_sequence_length=3)
    layer.adapt(np.array(["x y", ""]))
    return layer(tf.constant(["", "y y y y", "z"])), layer.get_vocabulary()


@same_as_tf("tf_keras:mixed_precision.LossScaleOptimizer", edge=True, rtol=1e-6, atol=1e-7, dialects=K2)
def test_loss_scale_optimizer_fixed_scale(tf):
    opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), dynamic=False, initial_scale=8.0)
    scaled = opt.get_scaled_loss(tf.constant(2.0))
    grads = opt.get_unscaled_gradients([tf.constant([8.0, 16.0]), None])
    return float(opt.loss_scale), opt.dynamic, scaled, grads[0], grads[1] is None, opt.initial_scale


@pytest.mark.parametrize("case", ["no_scale", "growth_steps", "dynamic_not_bool"])
@same_as_tf("tf_keras:mixed_precision.LossScaleOptimizer", edge=True, dialects=K2)
def test_loss_scale_optimizer_fixed_scale_mistakes(tf, case):
    sgd = tf.keras.optimizers.SGD(0.1)
    lso = tf.keras.mixed_precision.LossScaleOptimizer
    if case == "no_scale":
        return lso(sgd, dynamic=False)
    if case == "growth_steps":
        return lso(sgd, dynamic=False, initial_scale=4.0, dynamic_growth_steps=10)
    return lso(sgd, dynamic="yes")


@same_as_tf("tf_keras:saving.custom_object_scope", "tf_keras:utils.CustomObjectScope", edge=True, dialects=K2)
def test_custom_object_scopes_nest(tf):
    def first(x):
        return x

    def second(x):
        return x

    get = tf.keras.utils.get_registered_object
    with tf.keras.utils.CustomObjectScope({"fn": first}, {"other": second}):
        with tf.keras.saving.custom_object_scope({"fn": second}):
            inner = get("fn") is second
        outer = get("fn") is first, get("other") is second
    try:
        with tf.keras.saving.custom_object_scope({"fn": second}):
            raise KeyError("inside")
    except KeyError:
        pass
    return inner, outer, get("fn") is None
