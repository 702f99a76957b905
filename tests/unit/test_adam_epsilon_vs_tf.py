"""Adam/AdamW add epsilon to sqrt(v) before the bias correction, as Keras 3 does.

Keras 3 (keras/src/optimizers/adam.py) updates ``w -= alpha * m / (sqrt(v) + epsilon)`` with
``alpha = lr * sqrt(1 - beta_2**t) / (1 - beta_1**t)``; torch's Adam divides by
``sqrt(v_hat) + eps`` (after the correction). For tiny gradients the two differ by far more than
rounding: an ``l2(1e-6)`` regularizer's gradient on the embedding rows no batch touched (keras.io's
collaborative-filtering example) moved those rows by 0.5 lr per step under torch's placement and
by 0.03 lr under Keras's. Expected values printed by TensorFlow 2.21 + Keras 3.15
(``apply_gradients`` on a ``tf.Variable``; ``fit`` on a one-weight model).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from unison import keras

pytestmark = pytest.mark.timeout(60)

# Gradients from 1e-8 (epsilon-dominated) to 0.5 (epsilon irrelevant), three steps.
GRADS = [[1e-7, -3e-8, 0.5, 2e-6], [2e-7, 1e-8, -0.25, 0.0], [-1e-7, 5e-8, 0.125, 1e-6]]

TF_ADAM = [
    [0.9996934533119202, -1.999906063079834, 0.4900001287460327, 2.9961256980895996],
    [0.9990561008453369, -1.9998664855957031, 0.48733681440353394, 2.993530511856079],
    [0.9987542629241943, -1.999935269355774, 0.4839325547218323, 2.990429162979126],
]
TF_AMSGRAD = [
    [0.9996934533119202, -1.999906063079834, 0.4900001287460327, 2.9961256980895996],
    [0.9990561008453369, -1.9998664855957031, 0.48733681440353394, 2.9935309886932373],
    [0.9987542629241943, -1.999935269355774, 0.4839325547218323, 2.990429639816284],
]
TF_ADAMW = [
    [0.9986934661865234, -1.9979060888290405, 0.48950013518333435, 2.9931256771087646],
    [0.9970574378967285, -1.9958685636520386, 0.4863473176956177, 2.987537384033203],
    [0.9957585334777832, -1.9939414262771606, 0.4824567139148712, 2.9814484119415283],
]


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda: keras.optimizers.Adam(learning_rate=0.01), TF_ADAM),
        (lambda: keras.optimizers.Adam(learning_rate=0.01, amsgrad=True), TF_AMSGRAD),
        (lambda: keras.optimizers.AdamW(learning_rate=0.01, weight_decay=0.1), TF_ADAMW),
    ],
    ids=["adam", "amsgrad", "adamw"],
)
def test_apply_gradients_matches_keras_for_tiny_and_large_gradients(make, expected):
    opt = make()
    var = keras.Variable(np.array([1.0, -2.0, 0.5, 3.0], np.float32))
    for grad, want in zip(GRADS, expected):
        opt.apply_gradients([(torch.tensor(grad), var)])
        # torch's placement gives 0.99000 (not 0.99969) for the first weight after step 1
        np.testing.assert_allclose(np.asarray(var.detach()), want, rtol=2e-6, atol=2e-7)


def test_fit_matches_keras_where_epsilon_dominates():
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1, use_bias=False, kernel_initializer="ones")])
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.01), loss="mse")
    x = np.array([[1e-4], [2e-4]], "float32")
    y = np.array([[3e-4], [-1e-4]], "float32")  # gradients of about 1e-8
    got = []
    for _ in range(3):
        model.fit(x, y, batch_size=2, epochs=1, shuffle=False, verbose=0)
        got.append(float(model.get_weights()[0][0, 0]))
    np.testing.assert_allclose(got, [0.9998750686645508, 0.9996994137763977, 0.999485194683075], rtol=1e-7)


def test_loss_scale_optimizer_passes_the_step_on_to_its_adam():
    # TF 2.21 + Keras 3.15 prints TF_ADAM for this wrapper too (scale 1: the gradients pass unchanged)
    opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam(learning_rate=0.01), initial_scale=1.0)
    var = keras.Variable(np.array([1.0, -2.0, 0.5, 3.0], np.float32))
    for grad, want in zip(GRADS, TF_ADAM):
        opt.apply_gradients([(torch.tensor(grad), var)])
        np.testing.assert_allclose(np.asarray(var.detach()), want, rtol=2e-6, atol=2e-7)
