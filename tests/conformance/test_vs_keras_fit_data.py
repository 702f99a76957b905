"""What ``fit`` does with data it cannot use as given, on unison and on ``tf.keras`` (Keras 3).

The audit's low cases (issue 40): ``steps_per_epoch`` beyond a finite dataset (Keras 3 ends the
epoch where the data ends, warns, and starts the next epoch on a new pass), a list of lists or an
``object()`` as ``x`` (Keras's "Unrecognized data type" ValueError), a dict given to a
``Sequential`` model (ValueError). Each body returns what it observed: the batches each epoch ran
and how many times the run-out warning came, or the error.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

pytestmark = pytest.mark.timeout(300)


def _model(tf):
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    return model


def _batches_per_epoch(tf, data, **fit_args):
    """(batches run in each epoch, number of "ran out of data" warnings)."""
    import warnings

    counts = []

    class Count(tf.keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            counts.append(0)

        def on_train_batch_end(self, batch, logs=None):
            counts[-1] += 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _model(tf).fit(*data, verbose=0, callbacks=[Count()], **fit_args)
    ran_out = sum("ran out of data" in str(w.message) for w in caught)
    return np.array(counts), np.array(ran_out)


X = np.arange(20, dtype="float32").reshape(10, 2)
Y = np.ones((10, 1), "float32")


@pytest.mark.parametrize("steps_per_epoch,epochs", [(3, 4), (5, 3), (7, 3)])
@same_as_tf()
def test_steps_per_epoch_beyond_arrays(tf, steps_per_epoch, epochs):
    return _batches_per_epoch(tf, (X, Y), batch_size=2, steps_per_epoch=steps_per_epoch, epochs=epochs)


@pytest.mark.parametrize("steps_per_epoch,epochs", [(3, 4), (5, 3), (7, 3)])
@same_as_tf()
def test_steps_per_epoch_beyond_a_finite_dataset(tf, steps_per_epoch, epochs):
    data = tf.data.Dataset.from_tensor_slices((X, Y)).batch(2)
    return _batches_per_epoch(tf, (data,), steps_per_epoch=steps_per_epoch, epochs=epochs)


@same_as_tf()
def test_evaluate_steps_beyond_a_finite_dataset(tf):
    import warnings

    data = tf.data.Dataset.from_tensor_slices((X, Y)).batch(2)
    model = _model(tf)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loss = model.evaluate(data, steps=9, verbose=0)
    want = model.evaluate(data, verbose=0)  # the same 5 batches: the loss over the whole data
    return np.array(abs(loss - want) < 1e-6), np.array(sum("ran out of data" in str(w.message) for w in caught))


@pytest.mark.parametrize("x", ["list_of_lists", "object"])
@same_as_tf(match="Unrecognized data type")
def test_x_that_is_no_data(tf, x):
    value = [[1.0, 2.0], [3.0, 4.0]] if x == "list_of_lists" else object()
    return _model(tf).fit(value, np.array([0.0, 1.0]), verbose=0)


@same_as_tf(match="doesn't match the expected structure")
def test_a_dict_into_a_sequential_model(tf):
    return _model(tf).fit({"a": np.ones((4, 2), "float32")}, np.ones((4, 1), "float32"), verbose=0)
