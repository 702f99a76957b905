"""``activity_regularizer=`` on a layer: the penalty of each call's outputs, divided by the batch
size, joins the layer's ``losses`` and ``fit``'s and ``evaluate``'s loss. Keras 3 and Keras 2 on
TF 2.21."""

from __future__ import annotations

import numpy as np
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")


@same_as_tf("keras:layers.Layer", "keras:layers.Dense", "keras:regularizers.L1", dialects=BOTH, rtol=1e-5, atol=1e-6)
def test_the_penalty_of_the_outputs_joins_the_losses_and_the_training_loss(tf):
    keras = tf.keras
    x = np.linspace(-1.0, 1.0, 12, dtype="float32").reshape(4, 3)
    dense = keras.layers.Dense(2, kernel_initializer="ones", activity_regularizer=keras.regularizers.L1(0.5))
    dense(x)
    layer_losses = [float(v) for v in dense.losses]
    model = keras.Sequential(
        [keras.Input((3,)), keras.layers.Dense(2, kernel_initializer="ones", activity_regularizer="l2")]
    )
    model(x)
    model_losses = [float(v) for v in model.losses]
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss="mse")
    history = model.fit(x, np.zeros((4, 2), "float32"), batch_size=4, epochs=2, verbose=0).history["loss"]
    evaluated = model.evaluate(x, np.zeros((4, 2), "float32"), verbose=0)
    config = dense.get_config()["activity_regularizer"]
    return layer_losses, model_losses, history, evaluated, config["class_name"], config["config"]


@same_as_tf("keras:layers.LSTM", "keras:layers.Conv1D", edge=True, dialects=BOTH, rtol=1e-5, atol=1e-6)
def test_recurrent_and_convolution_layers_take_one_too(tf):
    keras = tf.keras
    seq = np.linspace(0.0, 1.0, 24, dtype="float32").reshape(2, 3, 4)
    lstm = keras.layers.LSTM(2, kernel_initializer="ones", recurrent_initializer="zeros", activity_regularizer="l1")
    conv = keras.layers.Conv1D(2, 2, kernel_initializer="ones", activity_regularizer=keras.regularizers.L2(0.1))
    lstm(seq)
    conv(seq)
    return [float(v) for v in lstm.losses], [float(v) for v in conv.losses]
