"""``TerminateOnNaN`` and ``ModelCheckpoint`` on unison against Keras 3.15 and Keras 2 (tf_keras) on TF 2.21:
what training does with them (batches run, epochs logged, files written)."""

from __future__ import annotations

import numpy as np
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")


def _model(tf):
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
    return model


NAN_NAMES = ("keras:callbacks.TerminateOnNaN",)


def _nan_run(tf, poison: bool):
    # a frozen model: the NaN reaches the logged loss only (unison refuses to apply a NaN gradient,
    # with an error naming the step, where Keras applies it and TerminateOnNaN stops afterwards)
    x = np.ones((12, 2), np.float32)
    if poison:
        x[6:8] = np.nan  # the fourth batch of two
    batches = []
    seen = tf.keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: batches.append(batch))
    model = _model(tf)
    model.layers[0].trainable = False
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
    history = model.fit(
        x, np.ones((12, 1), np.float32), batch_size=2, epochs=3, shuffle=False, verbose=0,
        callbacks=[tf.keras.callbacks.TerminateOnNaN(), seen],
    )  # fmt: skip
    return len(batches), len(history.history["loss"])


@same_as_tf(*NAN_NAMES, dialects=BOTH)
def test_terminate_on_nan_stops_training(tf):
    return _nan_run(tf, True)


@same_as_tf(*NAN_NAMES, edge=True, dialects=BOTH)
def test_terminate_on_nan_lets_finite_training_finish(tf):
    return _nan_run(tf, False)


CHECKPOINT_NAMES = ("keras:callbacks.ModelCheckpoint",)


def _checkpoint_run(tf, **kwargs):
    import os
    import tempfile

    losses = iter([3.0, 1.0, 2.0, 0.5])
    x, y = np.ones((4, 2), np.float32), np.ones((4, 1), np.float32)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "ckpt_{epoch:02d}.weights.h5")
        model = _model(tf)

        class FakeLoss(tf.keras.callbacks.Callback):
            # replaces the logged loss before the checkpoint reads it (callbacks run in order)
            def on_epoch_end(self, epoch, logs=None):
                logs["loss"] = next(losses)

        model.fit(x, y, epochs=4, verbose=0, callbacks=[FakeLoss(), tf.keras.callbacks.ModelCheckpoint(path, **kwargs)])
        return sorted(os.listdir(folder))


@same_as_tf(*CHECKPOINT_NAMES, dialects=BOTH)
def test_model_checkpoint_keeps_the_best_epochs(tf):
    return _checkpoint_run(tf, monitor="loss", save_best_only=True, save_weights_only=True)


@same_as_tf(*CHECKPOINT_NAMES, edge=True, dialects=BOTH)
def test_model_checkpoint_every_epoch_and_a_bad_mode(tf):
    every = _checkpoint_run(tf, save_weights_only=True)
    return every, _checkpoint_run(tf, monitor="loss", mode="max", save_best_only=True, save_weights_only=True)
