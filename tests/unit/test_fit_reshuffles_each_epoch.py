"""``fit(shuffle=True)`` on arrays draws a new order every epoch, also under a global seed.

Keras documents ``shuffle`` as "whether to shuffle the training data before each epoch", and its JAX
and torch backends do so. TF 2.21 + Keras 3.15 does not once ``tf.random.set_seed`` (or
``keras.utils.set_random_seed``) has run: its array adapter draws the permutation with
``tf.random.shuffle`` inside a ``tf.data`` map, and a seeded stateful op restarts with each epoch's
new iterator, so every epoch repeats the first one's order (printed by TF on 10 rows in batches of 4:
``[2, 0, 5, 8], [7, 1, 9, 6], [3, 4]`` in all three epochs; unseeded, TF reshuffles). unison keeps the
documented behaviour, seeded or not: comparisons with a seeded TF differ where the order matters
(keras.io's collaborative filtering; see BENCHMARKS.md, "Tutorial programs vs TensorFlow").
"""

from __future__ import annotations

import numpy as np
import pytest

from unison import keras

pytestmark = pytest.mark.timeout(60)


def _epoch_orders(seed: int) -> list[list[int]]:
    keras.utils.set_random_seed(seed)
    seen: list[int] = []

    class Recorder(keras.Model):
        def __init__(self) -> None:
            super().__init__()
            self.dense = keras.layers.Dense(1)

        def call(self, x):
            if len(x) > 1:  # fit's batches (4, 4, 2); not the one-row calls that build the model
                seen.extend(np.asarray(x)[:, 0].astype(int).tolist())
            return self.dense(x)

    model = Recorder()
    model.compile(loss="mse", optimizer="sgd")
    x = np.arange(10, dtype="float32").reshape(10, 1)
    model.fit(x, x, batch_size=4, epochs=3, verbose=0)
    return [seen[i : i + 10] for i in range(0, 30, 10)]


def test_each_epoch_is_a_new_permutation_under_a_global_seed():
    orders = _epoch_orders(0)
    assert all(sorted(order) == list(range(10)) for order in orders)
    assert orders[0] != orders[1] and orders[1] != orders[2] and orders[0] != orders[2]
    assert _epoch_orders(0) == orders  # reproducible with the same seed
    assert _epoch_orders(1) != orders
