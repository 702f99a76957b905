"""apply_gradients pairs each gradient element with its own variable element, whatever the memory layouts.

Conv kernels keep Keras's shape over channels-last storage, so a kernel's strides can differ from
those of a contiguous gradient; torch's fused/foreach Adam kernels pair elements by
memory order, and without the fix TF's DCGAN tutorial trained its discriminator with half of each
conv kernel's update signs flipped (its loss fell 5x slower than TF's from the same weights).
"""

from __future__ import annotations

import numpy as np
import pytest

import unison as tf

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("optimizer", ["adam", "adamw", "rmsprop", "sgd_momentum"])
def test_first_step_follows_each_elements_own_gradient(optimizer):
    layers = tf.keras.layers
    model = tf.keras.Sequential(
        [
            layers.Conv2D(4, (3, 3), strides=(2, 2), padding="same", input_shape=[6, 6, 3]),
            layers.Flatten(),
            layers.Dense(1),
        ]
    )
    rng = np.random.default_rng(0)
    start = [rng.normal(0, 0.5, w.shape).astype("float32") for w in model.get_weights()]
    model.set_weights(start)
    x = rng.normal(0, 1, (4, 6, 6, 3)).astype("float32")
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x) ** 2)
    # Conv2D's kernel lives channels-last (its gradient comes back in its strides); a gradient
    # computed some other way is contiguous, which is the case this test is about
    grads = [g.contiguous() for g in tape.gradient(loss, model.trainable_variables)]
    assert grads[0].stride() != model.trainable_variables[0].stride()  # the case this test is about
    opt = {
        "adam": lambda: tf.keras.optimizers.Adam(0.1),
        "adamw": lambda: tf.keras.optimizers.AdamW(0.1, weight_decay=0.0),
        "rmsprop": lambda: tf.keras.optimizers.RMSprop(0.1),
        "sgd_momentum": lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9),
    }[optimizer]()
    opt.apply_gradients(zip(grads, model.trainable_variables))
    delta = model.get_weights()[0] - start[0]
    g = np.asarray(grads[0])
    # every optimizer here moves an element against its own gradient's sign on the first step
    np.testing.assert_array_equal(np.sign(delta), -np.sign(g))
    if optimizer == "sgd_momentum":
        np.testing.assert_allclose(delta, -0.1 * g, rtol=1e-5, atol=1e-7)
    if optimizer in ("adam", "adamw"):
        np.testing.assert_allclose(delta, -0.1 * np.sign(g), rtol=1e-4)  # Adam's first step: lr * sign(g)
