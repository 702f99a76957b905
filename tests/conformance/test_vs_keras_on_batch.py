"""``Model.train_on_batch``, ``test_on_batch`` and ``predict_on_batch`` on unison and on ``tf.keras`` (Keras 3).

The same model and weights on both sides; each body returns what a Keras program reads back: the
loss alone or ``[loss, *metrics]``, the dict of ``return_dict=True``, the metrics of one batch
(they are reset before each call), the weights after the steps, ``class_weight`` and
``sample_weight`` (Keras's ValueError when both are given), and the outputs of
``predict_on_batch``.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

pytestmark = pytest.mark.timeout(300)

X = (np.sin(np.arange(24, dtype="float32")) * 2).reshape(8, 3)
Y = np.array([0, 1, 1, 0, 1, 0, 0, 1], "int64")


def _model(tf, metrics=("accuracy",)):
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2, activation="softmax")])
    model.set_weights([np.cos(np.arange(6, dtype="float32")).reshape(3, 2) * 0.5, np.array([0.1, -0.1], "float32")])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy", metrics=list(metrics))
    return model


@same_as_tf(rtol=1e-4, atol=1e-5)
def test_train_on_batch_returns_loss_and_metrics_of_each_batch(tf):
    model = _model(tf)
    first = model.train_on_batch(X[:4], Y[:4])
    second = model.train_on_batch(X[4:], Y[4:])  # this batch's metrics alone (reset before the step)
    as_dict = model.train_on_batch(X, Y, return_dict=True)
    return (
        np.array(first, "float32"),
        np.array(second, "float32"),
        sorted(as_dict),
        np.array([as_dict[k] for k in sorted(as_dict)], "float32"),
        [np.asarray(w) for w in model.get_weights()],
        np.array(int(model.optimizer.iterations)),
    )


@same_as_tf(rtol=1e-4, atol=1e-5)
def test_train_on_batch_with_only_a_loss_returns_a_float(tf):
    model = _model(tf, metrics=())
    loss = model.train_on_batch(X, Y)
    return np.array(isinstance(loss, float)), np.array(loss, "float32")


@same_as_tf(rtol=1e-4, atol=1e-5)
def test_train_on_batch_with_weights(tf):
    a, b = _model(tf), _model(tf)
    by_class = a.train_on_batch(X, Y, class_weight={0: 1.0, 1: 3.0}, return_dict=True)
    by_sample = b.train_on_batch(X, Y, sample_weight=np.where(Y == 1, 3.0, 1.0).astype("float32"), return_dict=True)
    return (
        np.array(by_class["loss"], "float32"),
        np.array(by_sample["loss"], "float32"),
        [np.asarray(w) for w in a.get_weights()],
        [np.asarray(w) for w in b.get_weights()],
    )


@same_as_tf(edge=False)
def test_train_on_batch_refuses_class_and_sample_weight(tf):
    return _model(tf).train_on_batch(X, Y, sample_weight=np.ones(8, "float32"), class_weight={0: 1.0})


@same_as_tf(rtol=1e-5, atol=1e-6)
def test_test_on_batch_and_predict_on_batch(tf):
    model = _model(tf)
    loss_acc = model.test_on_batch(X, Y)
    as_dict = model.test_on_batch(X[:4], Y[:4], return_dict=True)
    weighted = model.test_on_batch(X, Y, sample_weight=np.arange(8, dtype="float32"))
    return (
        np.array(loss_acc, "float32"),
        np.array([as_dict[k] for k in sorted(as_dict)], "float32"),
        np.array(weighted, "float32"),
        np.asarray(model.predict_on_batch(X)),
        [np.asarray(w) for w in model.get_weights()],  # test_on_batch does not train
    )
