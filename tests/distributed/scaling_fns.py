"""What tests/distributed/test_scaling_report.py runs in each replica (module level, so picklable)."""

from __future__ import annotations

import contextlib
import io

import numpy as np

import unison as tf
from unison.keras.utils import scaling


def fit_and_report(kind: str) -> dict:
    """A verbose 2-replica fit on arrays or a tf.data dataset; what it printed and the figures it measured."""
    seen: list[scaling.ScalingFigures] = []
    end_of_fit = scaling.end_of_fit

    def recording(fig: scaling.ScalingFigures, path=None):  # type: ignore[no-untyped-def]
        seen.append(fig)
        return end_of_fit(fig, path)

    scaling.end_of_fit = recording  # type: ignore[assignment]
    strategy = tf.distribute.MirroredStrategy()
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(96, 8)).astype("float32"), rng.integers(0, 2, 96)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(2, activation="softmax")])
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if kind == "dataset":  # fit's batch_size is not the dataset's: the steps' own batches count
            model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(16), epochs=2, verbose=2)
        else:
            model.fit(x, y, batch_size=40, epochs=2, verbose=2)
    return {
        "rank": strategy.extended.communicator.rank,
        "printed": out.getvalue(),
        "figures": [(f.replicas, f.samples, f.global_batch, f.parameters) for f in seen],
    }
