"""Layer and model calls without ``training=``: Keras runs them in inference mode (no dropout,
BatchNorm on its moving statistics, which the call does not update), unless an enclosing call,
the Keras 2 learning phase or the ``call`` signature's default says otherwise. Checked against
Keras 3 and Keras 2 on TF 2.21.
"""

from __future__ import annotations

import numpy as np
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")
NAMES = ("keras:layers.Dropout", "keras:layers.BatchNormalization", "keras:Model")


def _x():
    return np.arange(12, dtype="float32").reshape(3, 4) / 4.0


@same_as_tf(*NAMES, dialects=BOTH, rtol=1e-5, atol=1e-6)
def test_calls_without_training_run_in_inference_mode(tf):
    keras = tf.keras
    x = _x()
    drop, bn = keras.layers.Dropout(0.5), keras.layers.BatchNormalization()
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dropout(0.5), keras.layers.BatchNormalization()])
    out = np.asarray(model(x))
    stats = [np.asarray(w) for w in model.layers[1].get_weights()]
    return np.asarray(drop(x)), np.asarray(bn(x)), [np.asarray(w) for w in bn.get_weights()], out, stats


@same_as_tf(*NAMES, dialects=BOTH, rtol=1e-5, atol=1e-6)
def test_a_call_after_fit_and_after_a_training_call_is_inference_again(tf):
    keras = tf.keras
    x = _x()
    model = keras.Sequential([keras.Input((4,)), keras.layers.BatchNormalization(), keras.layers.Dense(1)])
    model.layers[1].set_weights([np.full((4, 1), 0.5, "float32"), np.zeros(1, "float32")])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0), loss="mse")
    model.fit(x, np.ones((3, 1), "float32"), batch_size=3, epochs=2, verbose=0)
    after_fit = np.asarray(model(x))
    moved = np.asarray(model(x, training=True))  # batch statistics, and one more update
    return after_fit, moved, np.asarray(model(x)), [np.asarray(w) for w in model.layers[0].get_weights()]


@same_as_tf("keras:layers.Dropout", "keras:layers.Layer", edge=True, dialects=BOTH)
def test_a_signature_default_of_true_reaches_inner_layers(tf):
    keras = tf.keras

    class Noisy(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.drop = keras.layers.Dropout(0.999)

        def call(self, inputs, training=True):
            return self.drop(inputs)

    dropped = float((np.asarray(Noisy()(np.ones((1, 400), "float32"))) == 0).mean())
    return dropped > 0.5


@same_as_tf("tf_keras:backend.learning_phase_scope", "tf_keras:layers.Dropout", edge=True, dialects=("tf_keras",))
def test_the_keras2_learning_phase_reaches_layers(tf):
    keras = tf.keras
    drop = keras.layers.Dropout(0.999)
    with keras.backend.learning_phase_scope(1):
        inside = float((np.asarray(drop(np.ones((1, 400), "float32"))) == 0).mean())
    outside = float((np.asarray(drop(np.ones((1, 400), "float32"))) == 0).mean())
    return inside > 0.5, outside
